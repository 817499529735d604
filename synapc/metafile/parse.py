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

from synapc.metafile.model import (
    ALGORITHMS,
    COLOR_MATRICES,
    COLOR_RANGES,
    DATA_LAYOUTS,
    DATA_TYPES,
    DELEGATES,
    INPUT_FORMATS,
    MODES,
    PREPROCESS_TYPES,
    RESIZE_MODES,
    SCHEMES,
    InputSpec,
    Metafile,
    MetafileError,
    OutputSpec,
    PreprocessSpec,
    QuantizationSpec,
)
from synapc.metafile.substitute import FormatSubstituter, substitute_env

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
QUANTIZATION_KEYS = ("dataset", "data_type", "scheme", "mode", "algorithm", "options")
PREPROCESS_KEYS = ("type", "size", "crop", "color_range", "color_matrix", "resize")

#: Delegates a per-layer delegate map may assign.
_MAP_DELEGATES = ("default", "npu", "gpu", "cpu")
#: `preprocess.type` values meaning "no preprocessing".
_NO_PREPROCESS = ("", "none")
#: Values a metafile may hold with its aliases expanded.
_MAX_VALUES = 100_000
#: The random dataset keyword of `quantization.dataset`.
_RANDOM = "random"


def load_metafile(
    path: str | os.PathLike[str], anchors: Callable[[], str] | None = None
) -> Metafile:
    """Read, substitute and validate the metafile at `path`; `anchors` supplies the text
    of `${ANCHORS}` (see `model_anchors`). Any problem raises `MetafileError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MetafileError(f"{path}: no such metafile") from None
    except IsADirectoryError:
        raise MetafileError(f"{path}: is a directory, not a metafile") from None
    except UnicodeDecodeError:
        raise MetafileError(f"{path}: not a UTF-8 text file") from None
    except OSError as error:
        raise MetafileError(f"{path}: cannot read metafile ({error.strerror})") from None
    return parse_metafile(text, path, anchors)


def parse_metafile(
    text: str, path: Path | None = None, anchors: Callable[[], str] | None = None
) -> Metafile:
    """Parse metafile `text`; `path` (where it was read from) names it in messages and
    anchors relative paths (without it: "metafile" and the current directory)."""
    path = Path(path) if path is not None else None
    label = str(path) if path is not None else "metafile"
    document = _load_yaml(substitute_env(text, label), label)
    folder = path.absolute().parent if path is not None else None
    return _Parser(label, folder, FormatSubstituter(label, folder, anchors)).metafile(
        document, path
    )


# --------------------------------------------------------------------------------------
# YAML
# --------------------------------------------------------------------------------------


def _load_yaml(text: str, label: str) -> Any:
    """The document of `text` via the safe loader; syntax errors and duplicate keys
    (which YAML would silently resolve to the last) give one line with the line number."""
    try:
        _check_duplicate_keys(yaml.compose(text, Loader=yaml.SafeLoader), label)
        document = yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = error.problem or error.context or "syntax error"
        raise MetafileError(f"{label}: {where}invalid YAML: {problem}") from None
    except yaml.YAMLError as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise MetafileError(f"{label}: invalid YAML: {first}") from None
    except RecursionError:
        raise MetafileError(f"{label}: invalid YAML: nested too deeply") from None
    _check_expanded_size(document, label)
    return document


def _check_expanded_size(document: Any, label: str) -> None:
    """Refuse documents whose aliases expand to more than `_MAX_VALUES` values (alias
    bombs) or refer to themselves, before anything walks them recursively."""
    stack = [document]
    count = 0
    while stack:
        value = stack.pop()
        count += 1
        if count > _MAX_VALUES:
            raise MetafileError(
                f"{label}: invalid YAML: more than {_MAX_VALUES} values once aliases are "
                "expanded (or an alias refers to itself)"
            )
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list | tuple | set | frozenset):
            stack.extend(value)


def _check_duplicate_keys(node: yaml.Node | None, label: str) -> None:
    """Raise for the first mapping that repeats a scalar key, anywhere in the document."""
    stack = [node] if node is not None else []
    seen_nodes: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen_nodes:  # aliases may share nodes
            continue
        seen_nodes.add(id(current))
        if isinstance(current, yaml.MappingNode):
            keys: set[tuple[str, str]] = set()
            for key, value in current.value:
                if (
                    isinstance(key, yaml.ScalarNode)
                    and key.tag != "tag:yaml.org,2002:merge"
                ):
                    if (key.tag, key.value) in keys:
                        line = key.start_mark.line + 1
                        raise MetafileError(
                            f"{label}: line {line}: duplicate key '{key.value}'"
                        )
                    keys.add((key.tag, key.value))
                stack.extend((key, value))
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)


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
                name = f"{field}.{key}" if field else str(key)
                raise self.fail(name, _unknown_key(str(key), keys))
        return value

    def string(self, value: Any, field: str, allowed: tuple[str, ...] | None = None) -> str:
        """A YAML string (one of `allowed` when given)."""
        if not isinstance(value, str):
            expected = f"one of {_quoted(allowed)}" if allowed else "a string"
            raise self.fail(field, f"expected {expected}, got {_describe(value)}")
        if allowed is not None and value not in allowed:
            raise self.fail(field, f"expected one of {_quoted(allowed)}, got {value!r}")
        return value

    def boolean(self, value: Any, field: str) -> bool:
        """A YAML boolean (true/false), not a number or string."""
        if not isinstance(value, bool):
            raise self.fail(field, f"expected true or false, got {_describe(value)}")
        return value

    def number(self, value: Any, field: str) -> float:
        """A finite YAML number (int or float, not a boolean)."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(field, f"expected a number, got {_describe(value)}")
        if not math.isfinite(value):
            raise self.fail(field, f"expected a finite number, got {value!r}")
        return float(value)

    def name(self, value: Any, field: str) -> str | None:
        """A tensor name: a non-empty string (an integer, as YAML reads `name: 123`, is
        taken as its digits)."""
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str) or not value:
            raise self.fail(field, f"expected a tensor name, got {_describe(value)}")
        return value

    def shape(self, value: Any, field: str) -> tuple[int, ...] | None:
        """A list of positive integers."""
        if value is None:
            return None
        if not isinstance(value, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in value
        ):
            raise self.fail(
                field, f"expected a list of positive integers, got {_describe(value)}"
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
                key = str(key)
            entry = f"{field}[{key!r}]"
            if not isinstance(key, str) or not key:
                raise self.fail(
                    entry,
                    "expected a layer pattern ('*', 'INPUTS', 'name', "
                    "'name...' or '@index')",
                )
            if key.startswith("@") and not key[1:].isdigit():
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
            raise MetafileError(
                f"{self.label}: expected a mapping at the top level, got "
                f"{_describe(document)}"
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
                    f"'{name}' is already used by {field}[{seen[name]}]",
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
        `key=value` attributes, checking the known ones."""
        name = "rgb"
        attrs: dict[str, str] = {}
        words = fmt.split()
        for index, word in enumerate(words):
            if "=" not in word:
                if index != 0:
                    raise self.fail(
                        field,
                        f"expected key=value attributes after '{words[0]}', got {word!r}",
                    )
                if word not in INPUT_FORMATS:
                    raise self.fail(
                        field,
                        f"unknown input format '{word}' (expected "
                        f"{_quoted(INPUT_FORMATS)}, then key=value attributes)",
                    )
                name = word
                continue
            key, _, text = word.partition("=")
            if not key:
                raise self.fail(field, f"attribute {word!r} has no name")
            if key in attrs:
                raise self.fail(field, f"attribute '{key}' is given twice")
            if key == "keep_proportions" and text not in ("0", "1"):
                raise self.fail(field, f"keep_proportions must be 0 or 1, got {text!r}")
            if key == "fill_color" and not _is_int(text):
                raise self.fail(field, f"fill_color must be an integer, got {text!r}")
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
        return QuantizationSpec(
            dataset=dataset, data_type=data_type, options=options, **choices
        )

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
    """Whether `text` is a decimal integer (optionally signed)."""
    return text.lstrip("+-").isdigit() and text.count("-") + text.count("+") <= 1


def _unknown_key(key: str, valid: tuple[str, ...]) -> str:
    """ "unknown key; did you mean ...?" with the closest valid keys (difflib)."""
    lowered = {k.lower(): k for k in valid}
    close = difflib.get_close_matches(key.lower(), list(lowered), n=3, cutoff=0.6)
    valid_list = ", ".join(valid)
    if close:
        names = " or ".join(f"'{lowered[c]}'" for c in close)
        return f"unknown key; did you mean {names}? (valid keys: {valid_list})"
    return f"unknown key; valid keys: {valid_list}"
