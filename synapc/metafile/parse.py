"""Reading a metafile: YAML (safe loader only), substitutions, and validation of every key
of METAFILE.md into the dataclasses of `synapc.metafile.model`.

Each problem raises `MetafileError` with one line naming the file, the field path
(`inputs[1].means`, `quantization.data_type`) and what was expected, so a user never sees
a traceback for a bad metafile. Unknown keys are errors that suggest the closest valid keys.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from synapc.limits import limits
from synapc.metafile.model import (
    ALGORITHMS,
    DATA_LAYOUTS,
    DATA_TYPES,
    DELEGATES,
    INPUT_FORMATS,
    InputSpec,
    Metafile,
    MetafileError,
    MixedPrecisionSpec,
    OutputSpec,
    PreprocessSpec,
    QuantizationSpec,
)
from synapc.metafile.substitute import (
    FormatSubstituter,
    ReadProblem,
    read_regular_file,
    shown,
    substitute_env,
)
from synapc.preprocess_types import COLOR_MATRICES, COLOR_RANGES, RESIZE_MODES
from synapc.preprocess_types import TYPES as PREPROCESS_TYPES
from synapc.quant_schemes import QUANTIZATION_MODES as MODES
from synapc.quant_schemes import SCHEMES

__all__ = ["load_metafile", "parse_metafile"]

TOP_KEYS = (
    "delegate",
    "data_layout",
    "input_format",
    "output_format",
    "dequantize_outputs",
    "security",
    "inputs",
    "outputs",
    "quantization",
    "custom",
)
INPUT_KEYS = ("name", "shape", "means", "scale", "format", "security", "preprocess")
OUTPUT_KEYS = ("name", "dequantize", "format", "security", "shape")
QUANTIZATION_KEYS = (
    "dataset",
    "data_type",
    "scheme",
    "mode",
    "algorithm",
    "options",
    "mixed_precision",
)
#: Keys of `quantization.mixed_precision` (extension).
MIXED_PRECISION_KEYS = ("data_type", "target_sqnr_db", "max_fraction")
#: Keys of `quantization.options` that switch quality steps on or off (booleans); the
#: other options belong to the range algorithm.
QUALITY_OPTIONS = (
    "equalize",
    "bias_correction",
    "channel_activations",
    "fused_activations",
)
PREPROCESS_KEYS = ("type", "size", "crop", "color_range", "color_matrix", "resize")

#: Delegates a per-layer delegate map may assign.
_MAP_DELEGATES = ("default", "npu", "gpu", "cpu")
#: `preprocess.type` values meaning "no preprocessing".
_NO_PREPROCESS = ("", "none")
#: Values a metafile may hold with its aliases expanded.
_MAX_VALUES = 100_000
#: The random dataset keyword of `quantization.dataset`.
_RANDOM = "random"
#: Characters of an int or float scalar (no real number needs more; ints stay far
#: below the 4300 digits Python converts to text, and parse in linear time).
_MAX_NUMBER_CHARS = 1000
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"


def load_metafile(
    path: str | os.PathLike[str], anchors: Callable[[], str] | None = None
) -> Metafile:
    """Read, substitute and validate the metafile at `path`; `anchors` supplies the text
    of `${ANCHORS}` (see `model_anchors`). The file must be a regular file of at most
    `limits().max_metafile_bytes` (checked before it is opened, so a device or FIFO is
    never read). Any problem raises `MetafileError`."""
    path = Path(path)
    try:
        data = read_regular_file(path, limits().max_metafile_bytes, "max_metafile_bytes")
    except ReadProblem as problem:
        if problem.missing:
            raise MetafileError(f"{path}: no such metafile") from None
        if problem.reason.startswith("is a directory"):
            raise MetafileError(f"{path}: is a directory, not a metafile") from None
        raise MetafileError(f"{path}: metafile {problem.reason}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MetafileError(f"{path}: not a UTF-8 text file") from None
    return parse_metafile(text, path, anchors)


def parse_metafile(
    text: str, path: Path | None = None, anchors: Callable[[], str] | None = None
) -> Metafile:
    """Parse metafile `text`; `path` (where it was read from) names it in messages and
    is the folder relative paths start at and `${FILE:..}` is confined to (without it:
    "metafile", the current directory for dataset globs, and `${FILE:..}` is refused).
    Text over `limits().max_metafile_bytes` is refused as a file would be."""
    path = Path(path) if path is not None else None
    label = str(path) if path is not None else "metafile"
    limit = limits().max_metafile_bytes
    if len(text) > limit or len(text.encode("utf-8", "surrogatepass")) > limit:
        raise MetafileError(
            f"{label}: metafile text over the limit of {limit:,} bytes "
            "(SYNAPC_MAX_METAFILE_BYTES raises it)"
        )
    document = _load_yaml(substitute_env(text, label), label)
    folder = path.absolute().parent if path is not None else None
    return _Parser(label, folder, FormatSubstituter(label, folder, anchors)).metafile(
        document, path
    )


# --------------------------------------------------------------------------------------
# YAML
# --------------------------------------------------------------------------------------


class _TooDeep(Exception):
    """Raised by `_Loader` at the node nested one level too deep."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class _TooMany(Exception):
    """Raised by `_Loader` at the node one past its `max_nodes`."""


class _Loader(yaml.SafeLoader):
    """The safe loader, with the nesting of collections and the number of nodes bounded
    while they are composed (PyYAML's composer recurses once per level)."""

    def __init__(self, text: str, max_depth: int, max_nodes: int) -> None:
        super().__init__(text)
        self._depth = 0
        self._max_depth = max_depth
        self._nodes = 0
        self._max_nodes = max_nodes

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        """Compose one node, refusing more than `max_depth` nested levels and more than
        `max_nodes` nodes (PyYAML takes about 70 us and a kilobyte for each)."""
        if self._depth >= self._max_depth:
            raise _TooDeep(self.peek_event().start_mark.line + 1)
        self._nodes += 1
        if self._nodes > self._max_nodes:
            raise _TooMany
        self._depth += 1
        try:
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1


def _load_yaml(text: str, label: str) -> Any:
    """The document of `text` via the safe loader. Syntax errors, duplicate keys (which
    YAML would silently resolve to the last), nesting deeper than
    `limits().max_json_depth`, alias bombs and over-long numbers give one line with the
    line number; all of it is checked on the composed nodes, before any value is
    built. No message quotes a value of the document."""
    current = limits()
    depth = current.max_json_depth  # the canonical metafile is stored as JSON
    # Values written out: parsing takes about 70 us each, so the default of 20,000
    # bounds the time a 1 MiB metafile takes to about 1.5 s.
    values = current.max_metafile_values
    loader: _Loader | None = None
    try:
        loader = _Loader(text, depth + 1, values)  # + 1: the scalars inside
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node, label, depth)
        try:
            return loader.construct_document(node)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, OverflowError):
            raise MetafileError(_unreadable_value(node, label)) from None
    except _TooMany:
        raise MetafileError(
            f"{label}: invalid YAML: more than {values} values written out (a "
            "metafile needs far fewer; SYNAPC_MAX_METAFILE_VALUES raises it)"
        ) from None
    except _TooDeep as error:
        raise MetafileError(
            f"{label}: line {error.line}: invalid YAML: nested more than {depth} levels "
            "deep (SYNAPC_MAX_JSON_DEPTH raises it)"
        ) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = _one_line(error.problem or error.context or "syntax error")
        raise MetafileError(f"{label}: {where}invalid YAML: {problem}") from None
    except yaml.reader.ReaderError as error:
        line = text.count("\n", 0, error.position) + 1
        raise MetafileError(
            f"{label}: line {line}: invalid YAML: unacceptable character "
            f"#x{error.character:04x} (control characters are not allowed)"
            if isinstance(error.character, int)
            else f"{label}: invalid YAML: not readable as text"
        ) from None
    except yaml.YAMLError as error:
        first = str(error).splitlines()[0] if str(error) else "unreadable text"
        raise MetafileError(f"{label}: invalid YAML: {_one_line(first)}") from None
    except RecursionError:
        raise MetafileError(f"{label}: invalid YAML: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def _one_line(text: str, limit: int = 160) -> str:
    """A YAML library message as one line of at most about `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _children(node: yaml.Node) -> list[yaml.Node]:
    """The nodes directly inside `node` (keys and values of a mapping, merged mappings
    included through their `<<` value)."""
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_nodes(root: yaml.Node, label: str, max_depth: int) -> None:
    """Walk the node graph once (iteratively; aliases make it a graph) and refuse:
    a mapping that repeats a scalar key; an int or float written with more than
    `_MAX_NUMBER_CHARS` characters (Python's int() of thousands of digits is refused or
    slow); more than `_MAX_VALUES` values once aliases and merges are expanded (alias
    bombs, which `<<` merges would otherwise build as node lists before any dict);
    an alias inside itself; and more than `max_depth` levels once aliases are
    expanded."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        key = id(node)
        if leaving:
            children = _children(node)
            size = 1 + sum(sizes[id(c)] for c in children)
            depth = 1 + max((depths[id(c)] for c in children), default=0)
            if size > _MAX_VALUES:
                raise _bomb(label)
            if depth > max_depth + 1:  # + 1: scalars count as no level in JSON
                raise MetafileError(
                    f"{label}: line {node.start_mark.line + 1}: invalid YAML: nested "
                    f"more than {max_depth} levels deep once aliases are expanded "
                    "(SYNAPC_MAX_JSON_DEPTH raises it)"
                )
            sizes[key] = size
            depths[key] = depth
            active.discard(key)
            continue
        if key in sizes:
            continue
        if key in active:  # an alias inside its own anchor
            raise _bomb(label)
        active.add(key)
        _check_node(node, label)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))


def _bomb(label: str) -> MetafileError:
    return MetafileError(
        f"{label}: invalid YAML: more than {_MAX_VALUES} values once aliases are "
        "expanded (or an alias refers to itself)"
    )


def _check_node(node: yaml.Node, label: str) -> None:
    """The checks of one node: repeated keys of a mapping, over-long numbers."""
    if isinstance(node, yaml.ScalarNode):
        if node.tag in (_INT_TAG, _FLOAT_TAG) and len(node.value) > _MAX_NUMBER_CHARS:
            raise MetafileError(
                f"{label}: line {node.start_mark.line + 1}: a number written with "
                f"{len(node.value):,} characters (at most {_MAX_NUMBER_CHARS})"
            )
        return
    if not isinstance(node, yaml.MappingNode):
        return
    keys: set[tuple[str, str]] = set()
    for key, _ in node.value:
        if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
            if (key.tag, key.value) in keys:
                line = key.start_mark.line + 1
                raise MetafileError(
                    f"{label}: line {line}: duplicate key {_key_text(key.value)}"
                )
            keys.add((key.tag, key.value))


def _unreadable_value(root: yaml.Node, label: str) -> str:
    """The message for a value the safe constructor failed on (an impossible date, an
    explicit `!!int` tag on text that is no integer, ...): the first scalar that cannot
    be built on its own, by line and tag, never quoting it."""
    constructor = yaml.SafeLoader("")
    seen: set[int] = set()
    stack = [root]
    failed: yaml.Node | None = None
    while stack and failed is None:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            try:
                constructor.construct_object(node, deep=True)
            except Exception:  # the constructor's own failure, reported by position
                failed = node
        stack.extend(reversed(_children(node)))
    constructor.dispose()
    if failed is None:
        return f"{label}: invalid YAML: a value could not be read"
    tag = failed.tag.replace("tag:yaml.org,2002:", "!!")
    return (
        f"{label}: line {failed.start_mark.line + 1}, column "
        f"{failed.start_mark.column + 1}: invalid YAML: not a valid {_key_text(tag)} value"
    )


# --------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------


def _describe(value: Any) -> str:
    """A short one-line rendering of a YAML value for "got ..." in messages."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _key_text(key: Any) -> str:
    """A key, tag or name from the document quoted for a one-line message (escaped, cut
    short)."""
    return shown(key) if isinstance(key, str) else _describe(key)


def _field_key(key: Any) -> str:
    """A mapping key as part of a field path: as it is when it is a plain short word,
    else quoted (an int key as its digits)."""
    if isinstance(key, str) and key.isprintable() and 0 < len(key) <= 60:
        return key
    if isinstance(key, int) and not isinstance(key, bool):
        return _int_text(key)
    return _key_text(key)


def _int_text(value: int) -> str:
    """An integer for a message: its digits, or about how many it has when that is
    many."""
    if abs(value) < 10**30:
        return str(value)
    if value.bit_length() < 13_000:  # str() converts up to 4300 digits
        return f"a number of {len(str(abs(value)))} digits"
    return f"a number of about {int(value.bit_length() * 0.30103) + 1} digits"


def _quoted(values: tuple[str, ...] | list[str]) -> str:
    """'a', 'b' or 'c' -- the allowed values of a field, for messages."""
    quoted = [f"'{v}'" for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


class _Parser:
    """Validates one parsed YAML document; `fail` builds the one-line errors."""

    def __init__(self, label: str, folder: Path | None, substitute: FormatSubstituter):
        self.label = label
        self.folder = folder
        self.substitute = substitute

    def fail(self, field: str, problem: str) -> MetafileError:
        """The error for `field` ("inputs[0].shape"), to raise."""
        return MetafileError(f"{self.label}: {field}: {problem}")

    # -- generic checks ------------------------------------------------------------------
    def mapping(self, value: Any, field: str, keys: tuple[str, ...]) -> dict[str, Any]:
        """`value` as a mapping whose keys are all in `keys`."""
        if not isinstance(value, dict):
            raise self.fail(field, f"expected a mapping, got {_describe(value)}")
        for key in value:
            if not isinstance(key, str) or key not in keys:
                shown_key = _field_key(key)
                name = f"{field}.{shown_key}" if field else shown_key
                raise self.fail(name, _unknown_key(str(key)[:100], keys))
        return value

    def string(self, value: Any, field: str, allowed: tuple[str, ...] | None = None) -> str:
        """A YAML string (one of `allowed` when given)."""
        if not isinstance(value, str):
            expected = f"one of {_quoted(allowed)}" if allowed else "a string"
            raise self.fail(field, f"expected {expected}, got {_describe(value)}")
        if allowed is not None and value not in allowed:
            raise self.fail(
                field, f"expected one of {_quoted(allowed)}, got {_describe(value)}"
            )
        return value

    def boolean(self, value: Any, field: str) -> bool:
        """A YAML boolean (true/false), not a number or string."""
        if not isinstance(value, bool):
            raise self.fail(field, f"expected true or false, got {_describe(value)}")
        return value

    def number(self, value: Any, field: str) -> float:
        """A finite YAML number (int or float, not a boolean) that a float holds: NaN,
        infinities and integers too large for a float are refused."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(field, f"expected a number, got {_describe(value)}")
        if isinstance(value, int):
            try:
                return float(value)
            except OverflowError:
                raise self.fail(
                    field,
                    f"expected a finite number, got {_int_text(value)}, out of the range "
                    "of a float",
                ) from None
        if not math.isfinite(value):
            raise self.fail(field, f"expected a finite number, got {value!r}")
        return float(value)

    def name(self, value: Any, field: str) -> str | None:
        """A tensor name: a non-empty string (an integer, as YAML reads `name: 123`, is
        taken as its digits)."""
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not value:
            raise self.fail(field, f"expected a tensor name, got {_describe(value)}")
        limit = limits().max_name_chars
        if len(value) > limit:
            raise self.fail(
                field,
                f"a tensor name of {len(value):,} characters (at most {limit:,}; "
                "SYNAPC_MAX_NAME_CHARS raises it)",
            )
        if not value.isprintable():
            raise self.fail(
                field,
                f"expected a tensor name without control characters, got {shown(value)}",
            )
        return value

    def shape(self, value: Any, field: str) -> tuple[int, ...] | None:
        """A list of at most `limits().max_tensor_rank` positive integers whose product
        is within `limits().max_tensor_elements` (each dimension too: `field[i]` names
        one that is not)."""
        if value is None:
            return None
        if not isinstance(value, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in value
        ):
            raise self.fail(
                field, f"expected a list of positive integers, got {_describe(value)}"
            )
        rank = limits().max_tensor_rank
        if len(value) > rank:
            raise self.fail(
                field,
                f"{len(value):,} dimensions (at most {rank}; "
                "SYNAPC_MAX_TENSOR_RANK raises it)",
            )
        limit = limits().max_tensor_elements
        elements = 1
        for i, dim in enumerate(value):
            if dim > limit:
                raise self.fail(
                    f"{field}[{i}]",
                    f"{_int_text(dim)} is over the limit of {limit:,} elements of a "
                    "tensor (SYNAPC_MAX_TENSOR_ELEMENTS raises it)",
                )
            elements *= dim
            if elements > limit:
                raise self.fail(
                    field,
                    f"{len(value)} dimensions of more than {limit:,} elements, the "
                    "limit of a tensor (SYNAPC_MAX_TENSOR_ELEMENTS raises it)",
                )
        return tuple(value)

    def format(self, value: Any, field: str, default: str | None) -> str:
        """A format string after `${FILE:..}` / `${ANCHORS}` substitution; `default` (the
        already substituted input_format / output_format) when absent, else ""."""
        if value is None:
            return default if default is not None else ""
        return self.substitute(self.string(value, field), field)

    def pattern_map(
        self,
        value: dict[Any, Any],
        field: str,
        allowed: tuple[str, ...],
    ) -> tuple[tuple[str, str], ...]:
        """A per-layer map (pattern -> one of `allowed`) as ordered pairs. Keys are '*',
        'INPUTS', 'name', 'name...' or '@index'; a bare integer (`63: cpu`, which YAML reads
        as an int) is kept as its digits: an operator index in delegate maps."""
        if not value:
            raise self.fail(field, "expected a non-empty mapping of layer patterns")
        pairs: list[tuple[str, str]] = []
        for key, item in value.items():
            if isinstance(key, int) and not isinstance(key, bool):
                if abs(key) >= 10**20:
                    raise self.fail(
                        f"{field}[{_int_text(key)}]", "expected an operator index"
                    )
                key = str(key)
            entry = f"{field}[{_key_text(key)}]"
            if not isinstance(key, str) or not key:
                raise self.fail(
                    entry,
                    "expected a layer pattern ('*', 'INPUTS', 'name', "
                    "'name...' or '@index')",
                )
            if key.startswith("@") and not (key[1:].isdigit() and len(key) <= 20):
                raise self.fail(entry, "expected '@' followed by an operator index")
            if key.endswith("...") and not key[:-3]:
                raise self.fail(entry, "expected a layer name before '...'")
            pairs.append((key, self.string(item, entry, allowed)))
        return tuple(pairs)

    # -- sections ------------------------------------------------------------------------
    def metafile(self, document: Any, path: Path | None) -> Metafile:
        """The whole document."""
        if document is None:
            raise MetafileError(
                f"{self.label}: empty metafile (expected a mapping with keys such as "
                "inputs, outputs, quantization)"
            )
        if not isinstance(document, dict):
            got = "text" if isinstance(document, str) else _describe(document)
            raise MetafileError(
                f"{self.label}: expected a mapping at the top level, got {got} (is this "
                "a YAML metafile?)"
            )
        top = self.mapping(document, "", TOP_KEYS)
        delegate = self.delegate(top.get("delegate"))
        data_layout = "default"
        if top.get("data_layout") is not None:
            data_layout = self.string(top["data_layout"], "data_layout", DATA_LAYOUTS)
        input_format = output_format = None
        if top.get("input_format") is not None:
            input_format = self.format(top["input_format"], "input_format", None)
            self.input_format(input_format, "input_format")
        if top.get("output_format") is not None:
            output_format = self.format(top["output_format"], "output_format", None)
        dequantize_outputs = False
        if top.get("dequantize_outputs") is not None:
            dequantize_outputs = self.boolean(
                top["dequantize_outputs"], "dequantize_outputs"
            )
        security = None
        if top.get("security") is not None:
            if not isinstance(top["security"], dict):
                raise self.fail(
                    "security", f"expected a mapping, got {_describe(top['security'])}"
                )
            security = top["security"]
        inputs = self.inputs(top.get("inputs"), input_format)
        outputs = self.outputs(top.get("outputs"), output_format, dequantize_outputs)
        quantization = self.quantization(top.get("quantization"), len(inputs))
        return Metafile(
            path=path,
            delegate=delegate,
            data_layout=data_layout,
            input_format=input_format,
            output_format=output_format,
            dequantize_outputs=dequantize_outputs,
            security=security,
            inputs=inputs,
            outputs=outputs,
            quantization=quantization,
            custom=top.get("custom"),
        )

    def delegate(self, value: Any) -> str | tuple[tuple[str, str], ...]:
        """`delegate`: a name or a per-layer map."""
        if value is None:
            return "default"
        if isinstance(value, dict):
            return self.pattern_map(value, "delegate", _MAP_DELEGATES)
        if not isinstance(value, str):
            raise self.fail(
                "delegate",
                f"expected one of {_quoted(DELEGATES)} or a mapping of layer patterns, "
                f"got {_describe(value)}",
            )
        return self.string(value, "delegate", DELEGATES)

    def entries(self, value: Any, field: str) -> list[Any]:
        """`inputs` / `outputs`: a list (of mappings, checked per entry)."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list of mappings, got {_describe(value)}")
        return value

    def inputs(self, value: Any, default_format: str | None) -> tuple[InputSpec, ...]:
        """`inputs`: every entry, then the all-or-none naming rule."""
        specs: list[InputSpec] = []
        for i, entry in enumerate(self.entries(value, "inputs")):
            field = f"inputs[{i}]"
            m = self.mapping(entry, field, INPUT_KEYS)
            name = self.name(m.get("name"), f"{field}.name")
            # a named input without `shape` keeps the model's shape; the conversion
            # asks for it where that shape is not static
            shape = self.shape(m.get("shape"), f"{field}.shape")
            means = self.means(m.get("means"), f"{field}.means")
            scale = None
            if m.get("scale") is not None:
                scale = self.number(m["scale"], f"{field}.scale")
                if scale == 0:
                    raise self.fail(f"{field}.scale", "must not be 0")
            format_field = (
                f"{field}.format" if m.get("format") is not None else "input_format"
            )
            fmt = self.format(m.get("format"), f"{field}.format", default_format)
            format_name, attrs = self.input_format(fmt, format_field)
            security = None
            if m.get("security") is not None:
                security = self.string(m["security"], f"{field}.security")
            specs.append(
                InputSpec(
                    name=name,
                    shape=shape,
                    means=means,
                    scale=scale,
                    format=fmt,
                    format_name=format_name,
                    format_attrs=attrs,
                    security=security,
                    preprocess=self.preprocess(m.get("preprocess"), f"{field}.preprocess"),
                )
            )
        self.check_names("inputs", [s.name for s in specs])
        return tuple(specs)

    def check_names(self, field: str, names: list[str | None]) -> None:
        """Either every entry has a name or none does; names are unique."""
        named = [n is not None for n in names]
        if any(named) and not all(named):
            first = named.index(False) if named[0] else named.index(True)
            raise self.fail(
                f"{field}[{first}].name",
                f"either all {field} are named or none (they are matched by position "
                f"then); {field}[0] is {'named' if named[0] else 'not named'}",
            )
        seen: dict[str, int] = {}
        for i, name in enumerate(names):
            if name is not None and name in seen:
                raise self.fail(
                    f"{field}[{i}].name",
                    f"{shown(name)} is already used by {field}[{seen[name]}]",
                )
            if name is not None:
                seen[name] = i

    def means(self, value: Any, field: str) -> tuple[float, ...] | None:
        """`means`: a number, or a non-empty list of numbers (one per channel)."""
        if value is None:
            return None
        if isinstance(value, list):
            if not value:
                raise self.fail(field, "expected a number or a list of numbers, got []")
            return tuple(self.number(v, f"{field}[{i}]") for i, v in enumerate(value))
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(
                field, f"expected a number or a list of numbers, got {_describe(value)}"
            )
        return (self.number(value, field),)

    def input_format(self, fmt: str, field: str) -> tuple[str, dict[str, str]]:
        """Split an input format into its colour order ("rgb" when absent) and its
        `key=value` attributes, checking the known ones. A format that holds a
        `${FILE:..}` file's content is never quoted in a message: its words are named
        by position."""
        secret = field in self.substitute.file_fields

        def quote(index: int, text: str) -> str:
            if secret:
                return f"word {index + 1} (not quoted: the format holds ${{FILE:}} content)"
            return shown(text)

        name = "rgb"
        attrs: dict[str, str] = {}
        words = fmt.split()
        for index, word in enumerate(words):
            if "=" not in word:
                if index != 0:
                    raise self.fail(
                        field,
                        f"expected key=value attributes after "
                        f"{'the input format' if secret else shown(words[0])}, got "
                        f"{quote(index, word)}",
                    )
                if word not in INPUT_FORMATS:
                    raise self.fail(
                        field,
                        f"unknown input format {quote(index, word)} (expected "
                        f"{_quoted(INPUT_FORMATS)}, then key=value attributes)",
                    )
                name = word
                continue
            key, _, text = word.partition("=")
            if not key:
                raise self.fail(field, f"attribute {quote(index, word)} has no name")
            if key in attrs:
                raise self.fail(field, f"attribute {quote(index, key)} is given twice")
            if key == "keep_proportions" and text not in ("0", "1"):
                raise self.fail(
                    field, f"keep_proportions must be 0 or 1, got {quote(index, text)}"
                )
            if key == "fill_color" and not _is_int(text):
                raise self.fail(
                    field,
                    f"fill_color must be an integer of at most 32 bits, got "
                    f"{quote(index, text)}",
                )
            attrs[key] = text
        return name, attrs

    def preprocess(self, value: Any, field: str) -> PreprocessSpec | None:
        """`inputs[i].preprocess`; None when absent or of type ""/none."""
        if value is None:
            return None
        m = self.mapping(value, field, PREPROCESS_KEYS)
        if m.get("type") is None:
            raise self.fail(
                f"{field}.type",
                f"required (one of {_quoted(PREPROCESS_TYPES)}, or 'none')",
            )
        kind = self.string(m["type"], f"{field}.type", (*PREPROCESS_TYPES, *_NO_PREPROCESS))
        given = [key for key in PREPROCESS_KEYS if key != "type" and m.get(key) is not None]
        if kind in _NO_PREPROCESS:
            if given:
                raise self.fail(
                    f"{field}.{given[0]}", f"given but preprocess type is {kind!r}"
                )
            return None
        size: tuple[int, int] | None = None
        if m.get("size") is not None:
            if kind == "float32":
                raise self.fail(f"{field}.size", "type 'float32' takes no size")
            dims = self.shape(m["size"], f"{field}.size")
            if dims is None or len(dims) != 2:
                raise self.fail(
                    f"{field}.size", f"expected [height, width], got {_describe(m['size'])}"
                )
            size = (dims[0], dims[1])

        def choice(key: str, allowed: tuple[str, ...]) -> str:
            if m.get(key) is None:
                return allowed[0]  # the first allowed value is the default
            return self.string(m[key], f"{field}.{key}", allowed)

        crop = False
        if m.get("crop") is not None:
            crop = self.boolean(m["crop"], f"{field}.crop")
        return PreprocessSpec(
            type=kind,
            size=size,
            crop=crop,
            color_range=choice("color_range", COLOR_RANGES),
            color_matrix=choice("color_matrix", COLOR_MATRICES),
            resize=choice("resize", RESIZE_MODES),
        )

    def outputs(
        self, value: Any, default_format: str | None, dequantize_all: bool
    ) -> tuple[OutputSpec, ...]:
        """`outputs`: every entry, then the naming rule as for inputs."""
        specs: list[OutputSpec] = []
        for i, entry in enumerate(self.entries(value, "outputs")):
            field = f"outputs[{i}]"
            m = self.mapping(entry, field, OUTPUT_KEYS)
            dequantize = False
            if m.get("dequantize") is not None:
                dequantize = self.boolean(m["dequantize"], f"{field}.dequantize")
            security = None
            if m.get("security") is not None:
                security = self.string(m["security"], f"{field}.security")
            specs.append(
                OutputSpec(
                    name=self.name(m.get("name"), f"{field}.name"),
                    dequantize=dequantize or dequantize_all,
                    format=self.format(m.get("format"), f"{field}.format", default_format),
                    shape=self.shape(m.get("shape"), f"{field}.shape"),
                    security=security,
                )
            )
        self.check_names("outputs", [s.name for s in specs])
        return tuple(specs)

    def quantization(self, value: Any, input_count: int) -> QuantizationSpec | None:
        """`quantization`; None when absent."""
        if value is None:
            return None
        field = "quantization"
        m = self.mapping(value, field, QUANTIZATION_KEYS)
        dataset = self.dataset(m.get("dataset"), f"{field}.dataset", input_count)
        data_type: str | tuple[tuple[str, str], ...] = "uint8"
        raw_type = m.get("data_type")
        if isinstance(raw_type, dict):
            data_type = self.pattern_map(raw_type, f"{field}.data_type", DATA_TYPES)
            types = {t for _, t in data_type}
            if {"uint8", "int8"} <= types:
                raise self.fail(
                    f"{field}.data_type",
                    "'uint8' and 'int8' cannot both appear in a per-layer map",
                )
        elif raw_type is not None:
            if not isinstance(raw_type, str):
                raise self.fail(
                    f"{field}.data_type",
                    f"expected one of {_quoted(DATA_TYPES)} or a mapping of layer "
                    f"patterns, got {_describe(raw_type)}",
                )
            data_type = self.string(raw_type, f"{field}.data_type", DATA_TYPES)
        choices: dict[str, str] = {}
        for key, allowed in (
            ("scheme", SCHEMES),
            ("mode", MODES),
            ("algorithm", ALGORITHMS),
        ):
            choices[key] = allowed[0]
            if m.get(key) is not None:
                choices[key] = self.string(m[key], f"{field}.{key}", allowed)
        options: dict[str, Any] = {}
        if m.get("options") is not None:
            if not isinstance(m["options"], dict) or not all(
                isinstance(k, str) for k in m["options"]
            ):
                raise self.fail(
                    f"{field}.options",
                    f"expected a mapping of option names, got {_describe(m['options'])}",
                )
            options = dict(m["options"])
            for key in QUALITY_OPTIONS:
                if key in options:
                    options[key] = self.boolean(options[key], f"{field}.options.{key}")
        mixed = None
        if m.get("mixed_precision") is not None:
            mixed = self.mixed_precision(m["mixed_precision"], f"{field}.mixed_precision")
        return QuantizationSpec(
            dataset=dataset,
            data_type=data_type,
            options=options,
            mixed_precision=mixed,
            **choices,
        )

    def mixed_precision(self, value: Any, field: str) -> MixedPrecisionSpec:
        """`quantization.mixed_precision`: the raised type (int16 or float16), the
        target output SQNR in dB and the largest fraction of layers raised (0..1)."""
        m = self.mapping(value, field, MIXED_PRECISION_KEYS)
        spec = MixedPrecisionSpec()
        data_type = spec.data_type
        if m.get("data_type") is not None:
            data_type = self.string(
                m["data_type"], f"{field}.data_type", ("int16", "float16")
            )
        target = spec.target_sqnr_db
        if m.get("target_sqnr_db") is not None:
            target = self.number(m["target_sqnr_db"], f"{field}.target_sqnr_db")
        fraction = spec.max_fraction
        if m.get("max_fraction") is not None:
            fraction = self.number(m["max_fraction"], f"{field}.max_fraction")
            if not 0 <= fraction <= 1:
                raise self.fail(
                    f"{field}.max_fraction", f"expected a number in [0, 1], got {fraction}"
                )
        return MixedPrecisionSpec(data_type, target, fraction)

    def dataset(self, value: Any, field: str, input_count: int) -> tuple[str, ...]:
        """`quantization.dataset`: one glob per input (a string or a list), resolved
        against the metafile's folder, or "random"; () when absent."""
        if value is None:
            return ()
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not items:
            raise self.fail(
                field, f"expected a glob or a list of globs, got {_describe(value)}"
            )
        globs: list[str] = []
        for i, item in enumerate(items):
            entry = field if isinstance(value, str) else f"{field}[{i}]"
            if not isinstance(item, str) or not item:
                raise self.fail(entry, f"expected a file glob, got {_describe(item)}")
            globs.append(item if item == _RANDOM else self.resolve(item))
        if input_count and globs != [_RANDOM] and len(globs) != input_count:
            raise self.fail(
                field,
                f"{len(globs)} glob(s) for {input_count} inputs (one glob per input, in "
                "the order of inputs)",
            )
        return tuple(globs)

    def resolve(self, name: str) -> str:
        """A relative path made absolute against the metafile's folder (kept as given
        when the metafile has no path)."""
        if os.path.isabs(name) or self.folder is None:
            return name
        return os.path.normpath(os.path.join(self.folder, name))


def _is_int(text: str) -> bool:
    """Whether `text` is a decimal integer (optionally signed) of at most 32 bits."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 10:
        return False
    return -(2**31) <= int(text) < 2**32


def _unknown_key(key: str, valid: tuple[str, ...]) -> str:
    """ "unknown key; did you mean ...?" with the closest valid keys (difflib)."""
    lowered = {k.lower(): k for k in valid}
    close = difflib.get_close_matches(key.lower(), list(lowered), n=3, cutoff=0.6)
    valid_list = ", ".join(valid)
    if close:
        names = " or ".join(f"'{lowered[c]}'" for c in close)
        return f"unknown key; did you mean {names}? (valid keys: {valid_list})"
    return f"unknown key; valid keys: {valid_list}"
