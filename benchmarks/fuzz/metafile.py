"""Fuzzer of the conversion metafile: realistic metafiles (examples/tiny_classifier.yaml
and the shapes METAFILE.md describes) mutated through their YAML structure, their
substitutions and their bytes, run through what `synapc convert` does with a metafile up
to binding it to examples/tiny_classifier.onnx.

Structure: keys dropped, duplicated and renamed; values of the wrong type; huge, negative,
non-finite and over-long numbers (`1.0e+400`, `.nan`, 5,000-digit integers); very long
strings; deep nesting; anchors and aliases (alias bombs, `<<` merge bombs, an alias
inside itself). Substitutions: `${FILE:..}` with relative, absolute and `..` paths, paths
through symbolic links out of the folder, to a FIFO, a directory, a non-UTF-8 or NUL
file and a file over the limit; `${ENV:..}` set, unset, malformed and inside comments;
`${ANCHORS}` and unknown tokens, some repeated thousands of times. A few cases replace the
metafile itself by a device, a FIFO or a symbolic link, and some are byte-level flips of
a serialized metafile.

Symbolic links and FIFOs cannot travel as a case's extra files (bytes), so a case lists
them in the extra file `fuzz-setup.json` and `check` creates them in the case folder
before it reads the metafile.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from benchmarks.fuzz.harness import Case
from benchmarks.fuzz.mutate import INTERESTING_INTS, mutate_bytes
from synapc.convert import signature
from synapc.convert.pipeline import (
    metafile_errors,
    pipeline_steps,
    placement_steps,
    run_pipeline,
)
from synapc.metafile import load_metafile, model_anchors
from synapc.passes.assign_delegates import record_delegate_map

TARGET = "metafile"

_REPO = Path(__file__).resolve().parents[2]
MODEL = _REPO / "examples" / "tiny_classifier.onnx"
SETUP = "fuzz-setup.json"
# importlib: `synapc.convert.convert` is also the name of the function the package exports
_convert = importlib.import_module("synapc.convert.convert")

#: Environment variables `check` sets in its (forked) process, for `${ENV:..}` cases.
ENVIRONMENT = {
    "SYNAPC_FUZZ_LAYOUT": "nhwc",
    "SYNAPC_FUZZ_NAME": "image",
    "SYNAPC_FUZZ_FORMAT": "bgr keep_proportions=1",
    "SYNAPC_FUZZ_ENTRY": "  - name: image\n    shape: [1, 3, 64, 64]",
    "SYNAPC_FUZZ_BIG": "x" * 100_000,
    "SYNAPC_FUZZ_YAML": "{a: [1, 2], b: *nothing}",
}
_ENV_NAMES = (
    *ENVIRONMENT,
    "SYNAPC_FUZZ_UNSET",
    "1X",
    "",
    "A B",
    "X" * 300,
    "HOME",
    "PATH",
)

#: Files beside every case, by relative name.
_SMALL_FILES = {
    "fmt.txt": b"bgr keep_proportions=0\n",
    "sub/fmt.txt": b"rgb fill_color=7\n",
    "sub/deeper/box.txt": b"y_scale=10 x_scale=10 h_scale=5 w_scale=5\n",
    "labels.txt": b"cat\ndog\n# not a comment: {a, b} [c]\n",
    "bin.txt": b"\xff\xfe\x00\x01rgb",
    "nul.txt": b"rgb\x00bgr",
    "empty.txt": b"",
    "secret.txt": b"root:x:0:0:SECRET-LINE-MUST-NOT-LEAK\n",
}
_BIG_FILE = "big.txt"
_BIG_BYTES = 70_000  # over the default max_substituted_file_bytes (64 KiB)
#: The longest list the "many-items" mutation makes.
MANY_ITEMS = 300
#: About the most characters the items it adds may take.
MANY_CHARS = 100_000

#: Symbolic links and FIFOs `check` creates beside every case.
_LINKS = {
    "link_out": "/etc/passwd",
    "link_dir_out": "/etc",
    "link_up": "..",
    "link_in": "fmt.txt",
    "link_sub": "sub",
    "link_loop": "link_loop",
    "link_dangling": "gone.txt",
    "link_zero": "/dev/zero",
}
_FIFOS = ("fifo", "sub/fifo")
_FILE_PATHS = (
    "fmt.txt",
    "sub/fmt.txt",
    "./sub/../fmt.txt",
    "sub/deeper/box.txt",
    "labels.txt",
    "bin.txt",
    "nul.txt",
    "empty.txt",
    "secret.txt",
    _BIG_FILE,
    "sub",
    ".",
    "gone.txt",
    "/etc/passwd",
    "/proc/self/environ",
    "/dev/zero",
    "/dev/urandom",
    "../x",
    "../../../../etc/passwd",
    "sub/../../x",
    "~/x",
    "fifo",
    "sub/fifo",
    *_LINKS,
    "link_sub/fmt.txt",
    "link_dir_out/passwd",
    "link_up/x",
    "a/" * 2000 + "b",
    "x" * 5000,
    "fmt.txt\x00",
    "sp ace.txt",
    "\u00e9t\u00e9.txt",
)
#: Replacements of the metafile itself (as `--meta` could name them).
_META_REPLACEMENTS = ("/dev/zero", "/dev/null", "fifo", "sub", "gone.yaml", "/etc/passwd")

_TINY = (_REPO / "examples" / "tiny_classifier.yaml").read_text(encoding="utf-8")

#: Realistic metafiles to start from (METAFILE.md's keys, the example's model).
SEEDS: tuple[Any, ...] = (
    yaml.safe_load(_TINY),
    {
        "data_layout": "nhwc",
        "inputs": [
            {
                "shape": [1, 3, 64, 64],
                "means": 128,
                "scale": 1,
                "format": "bgr keep_proportions=1 fill_color=0",
            }
        ],
        "outputs": [{"dequantize": True, "format": "confidence_array class_index_base=-1"}],
    },
    {
        "delegate": {"*": "npu", "conv1": "cpu", "pw3...": "gpu", "@3": "cpu", "5": "npu"},
        "inputs": [{"shape": [1, 3, 64, 64]}],
    },
    {
        "delegate": "npu",
        "data_layout": "nchw",
        "input_format": "bgr",
        "output_format": "confidence_array",
        "dequantize_outputs": False,
        "security": {"secure": True},
        "inputs": [
            {
                "name": "image",
                "shape": [1, 3, 64, 64],
                "means": [123.675, 116.28, 103.53],
                "scale": 58.4,
                "format": "rgb keep_proportions=1 fill_color=0",
                "security": "any",
                "preprocess": {
                    "type": "nv12",
                    "size": [1080, 1920],
                    "crop": True,
                    "color_range": "full",
                    "color_matrix": "bt709",
                    "resize": "nearest",
                },
            }
        ],
        "outputs": [
            {
                "name": "probabilities",
                "dequantize": True,
                "format": "confidence_array class_index_base=-1",
                "shape": [1, 10],
                "security": "secure",
            }
        ],
        "quantization": {
            "dataset": ["images/*.jpg"],
            "data_type": {
                "*": "int8",
                "INPUTS": "int16",
                "conv1...": "float16",
                "@12": "int16",
            },
            "scheme": "perchannel_symmetric_affine",
            "mode": "full",
            "algorithm": "percentile",
            "options": {"percentile": 99.9, "bins": 2048},
        },
        "custom": {"anything": [1, 2, {"x": "y"}]},
    },
    {
        "input_format": "${FILE:fmt.txt}",
        "inputs": [{"name": "image", "shape": [1, 3, 64, 64], "means": 0, "scale": 255}],
        "outputs": [
            {
                "name": "probabilities",
                "format": "tflite_detection_boxes ${FILE:sub/deeper/box.txt} "
                "anchors=${ANCHORS}",
            }
        ],
    },
    {
        "data_layout": "${ENV:SYNAPC_FUZZ_LAYOUT}",
        "inputs": [
            {
                "name": "${ENV:SYNAPC_FUZZ_NAME}",
                "shape": [1, 3, 64, 64],
                "format": "${ENV:SYNAPC_FUZZ_FORMAT}",
            }
        ],
        "outputs": [{"format": "labels ${FILE:labels.txt}"}],
    },
)

#: Raw YAML written in place of a placeholder value (what a dump cannot produce).
_RAW_VALUES = (
    "1.0e+400",
    "-1.0e+400",
    "1e400",
    ".nan",
    ".inf",
    "-.inf",
    "9" * 5000,
    "-" + "9" * 400,
    "9" * 40,
    "0x" + "f" * 200,
    "0b" + "1" * 900,
    ":".join(["59"] * 400),
    "1.5e-400",
    "!!int abc",
    "!!float abc",
    "!!bool maybe",
    "!!timestamp 2001-02-30",
    "2001-02-30",
    "2001-12-14t21:59:43.10-05:00",
    "!!binary 'not base64!'",
    "!!set {a, b}",
    "!!omap [a: 1, b: 2]",
    "!!python/object:os.system x",
    "!!python/name:os.system",
    "*undefined_alias",
    "!custom 3",
    "'${ENV:SYNAPC_FUZZ_UNSET}'",
    "${ENV:SYNAPC_FUZZ_YAML}",
    "~",
    "<<",
    "= 3",
)

_KEYS = (
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
    "name",
    "shape",
    "means",
    "scale",
    "format",
    "preprocess",
    "dequantize",
    "dataset",
    "data_type",
    "type",
    "size",
    "crop",
)


def _values(rng: np.random.Generator) -> Any:
    """A value of a random type, often a hostile one."""
    kind = int(rng.integers(0, 22))
    if kind == 0:
        return None
    if kind == 1:
        return bool(rng.integers(0, 2))
    if kind == 2:
        return int(rng.choice(INTERESTING_INTS))
    if kind == 3:
        return [10**400, 10**40, -(10**40), 2**64, -1, 0][int(rng.integers(0, 6))]
    if kind == 4:
        return [float("nan"), float("inf"), -float("inf"), 1e308, -1e-308, 0.0][
            int(rng.integers(0, 6))
        ]
    if kind == 5:
        return "x" * int(rng.choice([0, 1, 61, 5000, 200_000]))
    if kind == 6:
        return "".join(chr(int(c)) for c in rng.integers(1, 0x3000, 20))
    if kind == 7:
        return "line1\nline2\ttab\r\x1b[31m"
    if kind == 8:
        return []
    if kind == 9:
        return {}
    if kind == 10:
        return [int(d) for d in rng.integers(-3, 100, int(rng.integers(1, 8)))]
    if kind == 11:
        return list(range(int(rng.choice([100, 5000]))))
    if kind == 12:
        return _nested(int(rng.integers(5, 80)), bool(rng.integers(0, 2)))
    if kind == 13:
        return {"name": "image", "shape": [1, 3, 64, 64]}
    if kind in (14, 15, 16):
        return _substitution(rng)
    if kind == 17:
        return ["a", 1, None, {"b": [2.5]}]
    if kind in (18, 19):
        return "ZZRAW" + str(int(rng.integers(0, len(_RAW_VALUES)))) + "ZZ"
    if kind == 20:
        return "rgb " + " ".join(
            str(rng.choice(["a=1", "keep_proportions=2", "fill_color=1e400", "=x", "bgr"]))
            for _ in range(int(rng.integers(1, 4)))
        )
    return str(rng.choice(["npu", "cpu", "nhwc", "uint8", "nv12", "random", "image"]))


def _nested(depth: int, as_list: bool) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if as_list else {"k": value}
    return value


def _substitution(rng: np.random.Generator) -> str:
    """A string holding `${FILE:..}`, `${ENV:..}`, `${ANCHORS}` or an unknown token."""
    kind = int(rng.integers(0, 7))
    if kind <= 2:
        path = str(rng.choice(_FILE_PATHS))
        prefix = str(rng.choice(["", "rgb ", "tflite_detection_boxes ", "bgr a=1 "]))
        return f"{prefix}${{FILE:{path}}}"
    if kind == 3:
        return f"${{ENV:{rng.choice(_ENV_NAMES)}}}"
    if kind == 4:
        return "anchors=${ANCHORS}" * int(rng.choice([1, 2, 10_000]))
    if kind == 5:
        return "${FILE:fmt.txt} " * int(rng.choice([2, 100, 20_000]))
    return str(
        rng.choice(["${FOO}", "${}", "${FILE}", "${ANCHORS", "$${ANCHORS}}", "${ENV}"])
    )


# --------------------------------------------------------------------------------------
# Structure-aware mutations of the parsed document
# --------------------------------------------------------------------------------------


def _containers(value: Any, out: list[Any]) -> list[Any]:
    """Every dict and list in `value` (depth first), to pick one to mutate."""
    if isinstance(value, dict):
        out.append(value)
        for item in value.values():
            _containers(item, out)
    elif isinstance(value, list):
        out.append(value)
        for item in value:
            _containers(item, out)
    return out


def _typo(key: str, rng: np.random.Generator) -> Any:
    kind = int(rng.integers(0, 7))
    if kind == 0 and len(key) > 1:
        i = int(rng.integers(0, len(key) - 1))
        return key[:i] + key[i + 1] + key[i] + key[i + 2 :]
    if kind == 1:
        return key[:-1]
    if kind == 2:
        return key.upper()
    if kind == 3:
        return str(rng.choice(_KEYS))
    if kind == 4:
        return int(rng.integers(-5, 100))
    if kind == 5:
        return "k" * int(rng.choice([100, 100_000]))
    return key + str(rng.choice(["\n", " ", "\x7f", "s", "_"]))


def _mutate_tree(doc: Any, rng: np.random.Generator) -> tuple[Any, str]:
    """One mutation of the document through its structure; its short name."""
    holders = _containers(doc, [])
    if not holders:
        return _values(rng), "replace-document"
    holder = holders[int(rng.integers(0, len(holders)))]
    kind = int(rng.integers(0, 8))
    if isinstance(holder, dict):
        keys = list(holder)
        if not keys or kind == 0:
            holder[str(rng.choice(_KEYS))] = _values(rng)
            return doc, "add-key"
        key = keys[int(rng.integers(0, len(keys)))]
        if kind == 1:
            del holder[key]
            return doc, "drop-key"
        if kind == 2:
            new = _typo(str(key), rng)
            holder[new] = holder.pop(key)
            return doc, "rename-key"
        if kind == 3 and isinstance(holder[key], list | dict):
            holder[key] = copy.deepcopy(holder[key]) if rng.integers(0, 2) else _values(rng)
            return doc, "retype"
        if kind == 4 and key in ("shape", "size"):
            dims = list(holder[key]) if isinstance(holder[key], list) else [1]
            dims[int(rng.integers(0, len(dims)))] = (
                _values(rng)
                if rng.integers(0, 3) == 0
                else int(rng.choice([*INTERESTING_INTS, 10**40, 64, 3]))
            )
            holder[key] = dims + ([1] * int(rng.choice([0, 0, 1, 100])))
            return doc, "shape"
        if kind == 5 and key in ("format", "input_format", "output_format", "name"):
            holder[key] = _substitution(rng)
            return doc, "substitute"
        holder[key] = _values(rng)
        return doc, "value"
    if not holder or kind == 0:
        holder.append(_values(rng))
        return doc, "append"
    index = int(rng.integers(0, len(holder)))
    if kind == 1:
        del holder[index]
        return doc, "drop-item"
    if kind == 2:
        holder.insert(index, copy.deepcopy(holder[index]))
        return doc, "duplicate-item"
    if kind == 3:  # at most MANY_ITEMS in all, of MANY_CHARS: a longer dump takes seconds
        size = len(json.dumps(holder[index], default=str)) + 2
        room = min(MANY_ITEMS - len(holder), MANY_CHARS // size)
        count = min(int(rng.integers(1, MANY_ITEMS)), max(room, 1))
        holder.extend(copy.deepcopy(holder[index]) for _ in range(count))
        return doc, "many-items"
    holder[index] = _values(rng)
    return doc, "item"


# --------------------------------------------------------------------------------------
# Text-level mutations (what a dump cannot produce)
# --------------------------------------------------------------------------------------


def _bomb(rng: np.random.Generator) -> str:
    kind = int(rng.integers(0, 4))
    if kind == 0:  # billion laughs
        text = "  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in "bcdefghi":
            previous = chr(ord(level) - 1)
            text += f"  {level}: &{level} [" + ", ".join([f"*{previous}"] * 9) + "]\n"
        return "custom:\n" + text
    if kind == 1:  # merge keys copying node lists
        text = "  m0: &m0 {k0: 1, k1: 2}\n"
        for i in range(1, 40):
            text += f"  m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * 4) + "]}\n"
        return "custom:\n" + text
    if kind == 2:  # an alias inside itself
        return "custom: &self [1, *self]\n"
    depth = int(rng.choice([40, 200, 5000]))
    return "custom: " + "[" * depth + "]" * depth + "\n"


def _mutate_text(text: str, rng: np.random.Generator) -> tuple[str, str]:
    """One mutation of the serialized metafile's text; its short name."""
    lines = text.splitlines(keepends=True) or ["\n"]
    kind = int(rng.integers(0, 7))
    at = int(rng.integers(0, len(lines)))
    if kind == 0:  # a duplicated line: duplicate keys, usually
        lines.insert(at, lines[at])
        return "".join(lines), "duplicate-line"
    if kind == 1:
        name = rng.choice(_ENV_NAMES)
        lines.insert(at, f"# comment with ${{ENV:{name}}}\n")
        return "".join(lines), "env-in-comment"
    if kind == 2:
        name = rng.choice(_ENV_NAMES)
        line = lines[at].rstrip("\n")
        lines[at] = f"{line}  # ${{ENV:{name}}}\n"
        return "".join(lines), "env-after-value"
    if kind == 3:
        return text + "\n" + _bomb(rng), "alias-bomb"
    if kind == 4:
        return text.replace("image", "&x image", 1).replace(
            "probabilities", "*x", 1
        ), "alias"
    if kind == 5:
        return "${ENV:SYNAPC_FUZZ_ENTRY}\n" + text, "env-document"
    return lines[at] * int(rng.choice([2, 1000])) + text, "repeat-line"


def _dump(doc: Any, rng: np.random.Generator) -> str:
    flow = [False, True, None][int(rng.integers(0, 3))]
    text = yaml.safe_dump(
        doc,
        default_flow_style=flow,
        sort_keys=False,
        allow_unicode=bool(rng.integers(0, 2)),
        width=int(rng.choice([80, 10**6])),
    )
    for k, raw in enumerate(_RAW_VALUES):
        text = text.replace(f"ZZRAW{k}ZZ", raw)
    return text


def cases(seed: int, count: int) -> Iterator[Case]:
    """`count` mutated metafiles, the same for the same `seed`."""
    for i in range(count):
        rng = np.random.default_rng([seed, i])
        doc = copy.deepcopy(SEEDS[int(rng.integers(0, len(SEEDS)))])
        names: list[str] = []
        for _ in range(int(rng.integers(1, 4))):
            doc, name = _mutate_tree(doc, rng)
            names.append(name)
        text = _dump(doc, rng)
        if rng.random() < 0.35:
            text, name = _mutate_text(text, rng)
            names.append(name)
        data = text.encode("utf-8", "surrogatepass")
        if rng.random() < 0.15:
            data = mutate_bytes(data, rng, int(rng.integers(1, 5)))
            names.append("bytes")
        setup: dict[str, Any] = {"links": _LINKS, "fifos": list(_FIFOS)}
        if rng.random() < 0.02:
            setup["meta"] = str(rng.choice(_META_REPLACEMENTS))
            names.append("meta-" + Path(setup["meta"]).name)
        extra = dict(_SMALL_FILES)
        if _BIG_FILE.encode() in data:
            extra[_BIG_FILE] = b"a" * _BIG_BYTES
        extra[SETUP] = json.dumps(setup).encode()
        yield Case(f"{seed}-{i}-{'+'.join(names)}", data, ".yaml", extra)


# --------------------------------------------------------------------------------------
# What synapc convert does with a metafile, up to binding it to the model
# --------------------------------------------------------------------------------------


def _prepare(path: Path) -> None:
    """Create the symbolic links and FIFOs `fuzz-setup.json` lists beside `path`, and
    replace the metafile itself when it says so; set `ENVIRONMENT`."""
    folder = path.parent
    setup_file = folder / SETUP
    setup = json.loads(setup_file.read_text()) if setup_file.is_file() else {}
    for name, target in setup.get("links", {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, folder / name)
    for name in setup.get("fifos", []):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(folder / name)
    replacement = setup.get("meta")
    if replacement is not None:
        path.unlink()
        if replacement == "fifo":
            os.mkfifo(path)
        elif replacement == "sub":
            path.mkdir()
        elif replacement != "gone.yaml":
            os.symlink(replacement, path)
    os.environ.update(ENVIRONMENT)
    os.environ.pop("SYNAPC_FUZZ_UNSET", None)


def bind(path: Path, model: Path = MODEL, anchors: Callable[[], str] | None = None) -> None:
    """What `synapc convert --model MODEL --meta path` does before optimizing: read and
    validate the metafile, refuse unsupported fields, key the cache by its canonical
    form, import the model with its shapes, bind its inputs and outputs, run the
    conversion pipeline's signature and preprocessing passes and describe the package's
    tensors."""
    meta = load_metafile(path, anchors=anchors or (lambda: model_anchors(model)))
    meta.require_supported()
    meta.warnings()
    meta.canonical()
    where = str(meta.path)
    imported = signature.import_with_metafile(
        model, meta, where, _convert._cut(meta) or None
    )
    steps = pipeline_steps(imported, meta, where, signature.source_layout(model.name))
    # the signature and preprocessing passes: what comes before the first optimize
    before = ",".join(steps[: steps.index("optimize")])
    with metafile_errors(where):
        converted = run_pipeline(imported, before) if before else imported
    signature.input_specs(converted)
    signature.output_specs(converted)
    # the placement by delegate (after optimization in a conversion; the names a map
    # uses are the same before it)
    placement = placement_steps(meta, "VS680", where)
    if isinstance(meta.delegate, tuple):
        record_delegate_map(converted.module, meta.delegate)
    if placement:
        with metafile_errors(where):
            run_pipeline(converted, ",".join(placement))


def check(path: Path) -> None:
    """Run the metafile at `path` through `bind` against examples/tiny_classifier.onnx."""
    _prepare(path)
    bind(path)
