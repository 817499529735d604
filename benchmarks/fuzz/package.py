"""Fuzzer of `model.synap` packages: real packages mutated through their structure (zip,
bundle.json, model.json, members), run through what synapc does with a package:
`synapc report`'s page (`synapc.report.report_html`: the reader, description.json and
the Graphviz layout), `synapc.Network(path)`, assign every input, `predict()` once (and
`profile()` for a profiling build, as `synapc benchmark --profiling` does).

The seeds are examples/tiny_classifier.onnx converted for VS680, once plain, once with
--profiling (per-layer programs) and once split into subgraphs by a delegate map,
converted in a subprocess (the campaign's parent process must not start JAX) and kept
for the process.

Mutations, most of them with bundle.json's checksums recomputed so that the mutated part
is what gets checked (and some without):
- JSON fields of bundle.json, every model.json and description.json: values of the
  wrong type, huge, negative and interesting integers, non-finite numbers, deep
  nesting, long strings, missing and extra keys, list items removed or duplicated,
  references to other subgraphs / layers / members, all reached through the document's
  structure;
- JSON text: byte edits, duplicate keys, NaN / Infinity, a 100,000-deep array;
- members: added (``../x``, absolute, backslash, drive letter, duplicate, unlisted,
  control characters), removed, renamed, swapped;
- zip headers: compression method, flags, sizes, CRC, name / extra lengths and local
  header offsets of one member, in the local header or the central directory or both; the
  end record's counts and offsets; a really compressed (deflate) member declaring a large
  size;
- truncation anywhere and junk appended;
- bytes of the StableHLO programs (the flatbuffer, or only the MLIR bytecode inside it)
  and of the weights, with and without fixed checksums, so that `jax.export`'s
  deserializer and MLIR's bytecode reader are fuzzed too.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.fuzz.harness import Case
from benchmarks.fuzz.mutate import INTERESTING_INTS, mutate_bytes
from synapc.errors import SynapcError
from synapc.report import report_html
from synapc.runtime import Network  # imported (not started) once, before the forks
from synapc.runtime.program_check import TIMEOUT_SECONDS

TARGET = "package"
#: Seconds a case may take before it counts as a hang: above the program checker's own
#: limit (`synapc.runtime.program_check.TIMEOUT_SECONDS`, 30 s for a small package), so a
#: program that makes the checker spin (jaxlib's StableHLO reader looping on damaged
#: bytecode, case 09228) is seen ending in synapc's clear refusal, not cut off first.
TIMEOUT = TIMEOUT_SECONDS + 15.0
#: Cases per target in tests/test_fuzz.py (most are refused before JAX runs; the rest
#: compile a small program in their child process).
TEST_CASES = 200

_REPO = Path(__file__).resolve().parents[2]
_CONVERT = """
import sys
import synapc
synapc.convert(sys.argv[1], "VS680", sys.argv[2], meta=sys.argv[3],
               profiling=sys.argv[4] == "1")
"""
_seeds: list[bytes] = []
#: How often each seed (plain, profiling, split) starts a case.
SEED_WEIGHTS = (0.55, 0.25, 0.2)
#: The delegate map of the split seed: three subgraphs, the middle one on the CPU.
_SPLIT = "delegate:\n  '*': npu\n  gap: cpu\n  'flatten...': gpu\n"

#: Member names that must never be accepted (and some that are merely unknown).
_NAMES = (
    "../x",
    "0/../../x",
    "/etc/passwd",
    "a\\b",
    "C:x",
    "",
    "0/extra.bin",
    "bundle.json",
    "0/model.json",
    "0/weights.bin",
    "1/model.json",
    "a\nb",
    "\u00e9/model.json",
    "0/layers/0.stablehlo",
    "x" * 300,
)


def seeds() -> list[bytes]:
    """The valid packages the cases start from: plain and --profiling conversions of
    examples/tiny_classifier.onnx, and one split into NPU, CPU and GPU subgraphs by a
    delegate map (converted once per process, in a subprocess)."""
    if not _seeds:
        with tempfile.TemporaryDirectory(prefix="synapc-fuzz-seed-") as folder:
            meta = _REPO / "examples" / "tiny_classifier.yaml"
            split = Path(folder) / "split.yaml"
            split.write_text(meta.read_text() + _SPLIT)
            for name, profiling, metafile in (
                ("plain", "0", meta),
                ("profiling", "1", meta),
                ("split", "0", split),
            ):
                out = Path(folder) / name
                subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        _CONVERT,
                        str(_REPO / "examples" / "tiny_classifier.onnx"),
                        str(out),
                        str(metafile),
                        profiling,
                    ],
                    check=True,
                    capture_output=True,
                )
                _seeds.append((out / "model.synap").read_bytes())
    return _seeds


# -- the package as members -------------------------------------------------------------


def _members(data: bytes) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def _fix_checksums(members: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """bundle.json's `members` recomputed for the members it lists (when bundle.json is
    still JSON with such a field)."""
    names = [n for n, _ in members]
    if "bundle.json" not in names:
        return members
    try:
        bundle = json.loads(dict(members)["bundle.json"])
        listed = bundle["members"]
        contents = dict(members)
        for name in list(listed):
            if name in contents and isinstance(listed[name], dict):
                data = contents[name]
                listed[name] = {
                    "size": len(data),
                    "sha256": hashlib.sha256(data).hexdigest(),
                }
        text = json.dumps(bundle, indent=1, sort_keys=True).encode()
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return members
    return [(n, text if n == "bundle.json" else d) for n, d in members]


def _zip(members: list[tuple[str, bytes]], deflate: str | None = None) -> bytes:
    """The members as a zip (stored; `deflate` names a member compressed instead)."""
    stream = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(stream, "w") as archive:
        warnings.simplefilter("ignore")  # duplicate names are what some cases are for
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = (
                zipfile.ZIP_DEFLATED if name == deflate else zipfile.ZIP_STORED
            )
            with contextlib.suppress(ValueError, UnicodeEncodeError):
                archive.writestr(info, data)
    return stream.getvalue()


# -- JSON mutations ---------------------------------------------------------------------


def _paths(document: Any) -> list[tuple[Any, ...]]:
    """Every path (keys and indices) into a JSON document, without recursion."""
    paths: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), document)]
    while stack:
        path, value = stack.pop()
        paths.append(path)
        if isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in enumerate(value))
    return paths


def _deep(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _new_value(rng: np.random.Generator, old: Any) -> Any:
    choices: list[Callable[[], Any]] = [
        lambda: int(rng.choice(INTERESTING_INTS)),
        lambda: -abs(old) - 1 if isinstance(old, int) and not isinstance(old, bool) else -1,
        lambda: 10 ** int(rng.integers(10, 400)),
        lambda: -(10 ** int(rng.integers(10, 60))),
        lambda: float(rng.choice([0.0, -0.0, 1e-320, 1e308, -1e308, 0.5, -3.25])),
        lambda: None,
        lambda: bool(rng.integers(0, 2)),
        lambda: "",
        lambda: "x" * int(rng.integers(1, 100_000)),
        lambda: str(rng.choice(["float32", "object", "uint8", "int64", "nchw", "npu",
                                "0/model.json", "0/weights.bin", "../x", "\ud800"])),
        lambda: [],
        lambda: {},
        lambda: [old, old],
        lambda: {"a": old},
        lambda: _deep(int(rng.integers(20, 900))),
        lambda: [1] * int(rng.integers(1, 50)),
        lambda: [2**31] * 4,
        lambda: old + 1 if isinstance(old, int) and not isinstance(old, bool) else 1,
        lambda: old - 1 if isinstance(old, int) and not isinstance(old, bool) else 0,
        lambda: (old * 2 if isinstance(old, int) and not isinstance(old, bool) else 2),
    ]  # fmt: skip
    return choices[int(rng.integers(0, len(choices)))]()


def _mutate_document(document: Any, rng: np.random.Generator) -> Any:
    """`document` (freshly parsed, changed in place) with one structural change
    somewhere inside."""
    paths = _paths(document)
    path = paths[int(rng.integers(0, len(paths)))]
    if not path:
        return _new_value(rng, document) if rng.random() < 0.3 else document
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    key = path[-1]
    kind = int(rng.integers(0, 10))
    if kind < 5:
        parent[key] = _new_value(rng, parent[key])
    elif kind == 5:  # remove the field / item
        del parent[key]
    elif kind == 6:  # an extra key, or a duplicated item
        if isinstance(parent, dict):
            parent[str(rng.choice(["extra", "layers", "layer_outputs", "axis", "x"]))] = 1
        else:
            parent.insert(key, copy.deepcopy(parent[key]))
    elif kind == 7 and isinstance(parent[key], list) and parent[key]:
        parent[key] = parent[key][::-1]  # reorder (references, weights, shapes)
    elif kind == 8 and isinstance(parent[key], int) and not isinstance(parent[key], bool):
        parent[key] = int(rng.integers(-2, 12))  # a small, plausible wrong reference
    else:  # a value moved from elsewhere in the document
        other = paths[int(rng.integers(0, len(paths)))]
        value = document
        for step in other:
            value = value[step]
        parent[key] = copy.deepcopy(value)
    return document


def _json_members(members: list[tuple[str, bytes]]) -> list[int]:
    return [i for i, (n, _) in enumerate(members) if n.endswith(".json")]


def _json_field(
    members: list[tuple[str, bytes]], rng: np.random.Generator
) -> list[tuple[str, bytes]]:
    index = int(rng.choice(_json_members(members)))
    name, data = members[index]
    try:
        document = _mutate_document(json.loads(data), rng)
        text = json.dumps(document, indent=1).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):  # an earlier mutation left no JSON to walk
        return members
    out = list(members)
    out[index] = (name, text)
    return out


def _json_text(
    members: list[tuple[str, bytes]], rng: np.random.Generator
) -> list[tuple[str, bytes]]:
    index = int(rng.choice(_json_members(members)))
    name, data = members[index]
    kind = int(rng.integers(0, 6))
    if kind == 0:
        data = mutate_bytes(data, rng, int(rng.integers(1, 4)))
    elif kind == 1:
        data = data.replace(b'"', b'"dup": 1, "', 1).replace(b"{", b'{"dup": 2, ', 1)
    elif kind == 2:
        number = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"1" * 5000])
        data = data.replace(b"0", bytes(number), 1)
    elif kind == 3:
        depth = int(rng.choice([33, 1000, 100_000]))
        data = data.replace(b"[", b"[" * depth, 1).replace(b"]", b"]" * depth, 1)
    elif kind == 4:
        data = data.decode().encode(
            str(rng.choice(["utf-16", "utf-32", "latin-1"])), "replace"
        )
    else:
        data = (
            b'{"a": "' + b"\\ud800" * 10 + b'"}'
            if rng.random() < 0.5
            else b"\xef\xbb\xbf" + data
        )
    out = list(members)
    out[index] = (name, data)
    return out


# -- member, zip and byte mutations -------------------------------------------------------


def _members_op(
    members: list[tuple[str, bytes]], rng: np.random.Generator
) -> list[tuple[str, bytes]]:
    out = list(members)
    kind = int(rng.integers(0, 4))
    if kind == 0:
        name = str(rng.choice(_NAMES))
        out.insert(
            int(rng.integers(0, len(out) + 1)), (name, b"x" * int(rng.integers(0, 100)))
        )
    elif kind == 1:
        del out[int(rng.integers(0, len(out)))]
    elif kind == 2:
        i = int(rng.integers(0, len(out)))
        out[i] = (str(rng.choice(_NAMES)), out[i][1])
    else:
        i, j = (int(x) for x in rng.integers(0, len(out), 2))
        out[i], out[j] = (out[i][0], out[j][1]), (out[j][0], out[i][1])
    return out


def _program_bytes(
    members: list[tuple[str, bytes]], rng: np.random.Generator, weights: bool
) -> list[tuple[str, bytes]]:
    suffix = ".bin" if weights else ".stablehlo"
    candidates = [i for i, (n, _) in enumerate(members) if n.endswith(suffix)]
    if not candidates:
        return members
    index = int(rng.choice(candidates))
    name, data = members[index]
    magic = data.find(b"ML\xefR")
    if not weights and magic >= 0 and rng.random() < 0.6:  # only the MLIR bytecode
        data = data[:magic] + mutate_bytes(data[magic:], rng, int(rng.integers(1, 4)))
    elif weights and rng.random() < 0.5:  # values only: the package stays valid
        values = bytearray(data)
        for _ in range(int(rng.integers(1, 20))):
            if values:
                values[int(rng.integers(0, len(values)))] = int(rng.integers(0, 256))
        data = bytes(values)
    else:
        data = mutate_bytes(data, rng, int(rng.integers(1, 5)))
    out = list(members)
    out[index] = (name, data)
    return out


def _entries(data: bytes, signature: bytes) -> list[int]:
    found, at = [], data.find(signature)
    while at >= 0:
        found.append(at)
        at = data.find(signature, at + 1)
    return found


def _zip_headers(data: bytes, rng: np.random.Generator) -> bytes:
    """One header field of the zip changed: a member's method, flags, CRC, sizes, name /
    extra lengths, or offset (local header, central directory or both), or the end
    record's counts and offsets."""
    out = bytearray(data)
    value = int(rng.choice(INTERESTING_INTS))
    kind = int(rng.integers(0, 4))
    if kind == 3:
        ends = _entries(data, b"PK\x05\x06")
        if ends:
            at = ends[-1] + int(rng.choice([8, 10, 12, 16, 20]))
            width = 2 if at - ends[-1] in (8, 10, 20) else 4
            out[at : at + width] = (value & (1 << 8 * width) - 1).to_bytes(width, "little")
        return bytes(out)
    locals_, centrals = _entries(data, b"PK\x03\x04"), _entries(data, b"PK\x01\x02")
    which = int(rng.integers(0, max(1, min(len(locals_), len(centrals)))))
    field = str(
        rng.choice(["method", "flags", "crc", "csize", "usize", "nlen", "elen", "offset"])
    )
    if field == "method":
        value = int(rng.choice([1, 8, 9, 12, 14, 93, 99, 0xFFFF]))
    elif field == "flags":
        value = int(rng.choice([1, 8, 9, 0x40, 0x800, 0x2000, 0xFFFF]))
    local = {
        "flags": 6,
        "method": 8,
        "crc": 14,
        "csize": 18,
        "usize": 22,
        "nlen": 26,
        "elen": 28,
    }
    central = {**{k: v + 2 for k, v in local.items()}, "offset": 42}
    widths = {"flags": 2, "method": 2, "nlen": 2, "elen": 2}
    width = widths.get(field, 4)
    packed = (value & (1 << 8 * width) - 1).to_bytes(width, "little")
    if kind in (0, 2) and field in local and which < len(locals_):
        at = locals_[which] + local[field]
        out[at : at + width] = packed
    if kind in (1, 2) and which < len(centrals):
        at = centrals[which] + central[field]
        out[at : at + width] = packed
    return bytes(out)


def _bomb(members: list[tuple[str, bytes]], rng: np.random.Generator) -> bytes:
    """A member replaced by compressed zeros, really deflated (so `zipfile` would inflate
    it), declaring up to 64 MiB."""
    index = int(rng.integers(0, len(members)))
    size = int(rng.choice([1 << 20, 16 << 20, 64 << 20]))
    out = list(members)
    out[index] = (out[index][0], bytes(size))
    return _zip(out, deflate=out[index][0])


def _one(seed: bytes, rng: np.random.Generator) -> tuple[str, bytes]:
    members = _members(seed)
    fix = rng.random() < 0.85
    kind = str(
        rng.choice(
            ["json-field", "json-text", "members", "zip-header", "bomb", "truncate",
             "program", "weights", "stacked"],
            p=[0.34, 0.1, 0.08, 0.1, 0.02, 0.06, 0.14, 0.08, 0.08],
        )
    )  # fmt: skip
    if kind == "bomb":
        return kind, _bomb(members, rng)
    if kind in ("json-field", "stacked"):
        for _ in range(1 if kind == "json-field" else int(rng.integers(2, 5))):
            members = _json_field(members, rng)
    elif kind == "json-text":
        members = _json_text(members, rng)
    elif kind == "members":
        members = _members_op(members, rng)
    elif kind in ("program", "weights"):
        members = _program_bytes(members, rng, weights=kind == "weights")
    if fix:
        members = _fix_checksums(members)
    data = _zip(members)
    if kind == "zip-header":
        data = _zip_headers(data, rng)
    elif kind == "truncate":
        cut = int(rng.integers(0, len(data)))
        data = (
            data[:cut]
            if rng.random() < 0.7
            else data + bytes(rng.integers(0, 256, cut % 64 + 1, dtype=np.uint8))
        )
    elif kind == "stacked" and rng.random() < 0.3:
        data = mutate_bytes(data, rng, 2)
    return f"{kind}{'' if fix else '-nofix'}", data


def cases(seed: int, count: int) -> Iterator[Case]:
    """`count` mutated packages, the same ones for the same `seed` (one in 50 is a seed
    package unchanged)."""
    packages = seeds()
    rng = np.random.default_rng(seed)
    for number in range(count):
        base = packages[int(rng.choice(len(packages), p=SEED_WEIGHTS))]
        if number % 50 == 0:
            kind, data = "original", base
        else:
            kind, data = _one(base, rng)
        yield Case(f"{number:05d}-{kind}", data, ".synap")


def check(path: Path) -> None:
    """What synapc does with a package: draw its report, load it, assign every input,
    predict once, and time the layers of a profiling build. JAX's compilation cache and
    the cache of checked programs go to folders of their own (fuzzed programs must not
    fill the user's)."""
    scratch = Path(tempfile.gettempdir())
    os.environ.setdefault("SYNAPC_JAX_CACHE_DIR", str(scratch / "synapc-fuzz-jax-cache"))
    os.environ.setdefault(
        "SYNAPC_PROGRAM_CACHE_DIR", str(scratch / "synapc-fuzz-program-cache")
    )
    with contextlib.suppress(SynapcError):  # refused by the report: the runtime may differ
        report_html(path)
    network = Network(path)
    for tensor in network.inputs:
        tensor.assign(
            np.linspace(-1.0, 1.0, int(np.prod(tensor.shape))).reshape(tensor.shape)
        )
    network.predict()
    if network.package.has_layers:
        network.profile()
