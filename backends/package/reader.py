"""`read_package`: read a `model.synap` in memory and check all of it before any use.

The file is read once and never extracted to disk. Every problem is a one-line
`PackageError` ``"<file>: <member>: <field path>: <problem>"`` (as much of it as is known),
found in this order, so that nothing is allocated from an unchecked size and nothing is
parsed before its checksum is known to be right:

1. the file: at most `limits().max_package_bytes`;
2. the zip structure, parsed here from its central directory (never through `zipfile`,
   which would inflate first and check later): one end record at the end of the file, a
   central directory where it says, at most `limits().max_package_members` members
   (a profiling build has two per layer), each stored (ZIP_STORED: not compressed, not
   encrypted, no data descriptor), at most `limits().max_package_member_bytes`, its
   local header agreeing with the central directory (name, flags, method, CRC, sizes),
   its data inside the file and overlapping no other member, its CRC-32 right; safe and
   unique member names;
3. `bundle.json`: at most `limits().max_json_bytes`, nested at most
   `limits().max_json_depth` deep (counted without recursion before parsing), strict JSON
   (UTF-8, no NaN, no duplicate keys), this format and version, then every field against
   the spec (types, ranges, tensor shapes within the tensor limits);
4. every other member listed in `bundle.json` with its size and SHA-256, nothing unlisted;
5. each subgraph's `i/model.json` (the same JSON checks, every field), member names as
   the layout gives them and nothing listed that no subgraph uses, references to earlier
   subgraphs / layers only, weights inside their weights files without overlapping, and
   the tensors that connect subgraphs (and the model's inputs and outputs) agreeing in
   shape and data type;
6. `description.json`, when present (`synapc.backends.package.description`): every
   field, its references, and its layers agreeing with the subgraphs and their memory
   plans.

What the reader cannot check, the exported programs themselves, `synapc.Network` checks
when it deserializes them (their signatures against model.json).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from synapc.backends.package.description import DESCRIPTION, check_description
from synapc.backends.package.spec import (
    DATA_TYPES,
    DELEGATES,
    MAX_INT,
    FieldError,
    MemoryPlan,
    PackageError,
    ProfiledLayer,
    StateSpec,
    TensorSpec,
    array,
    choice,
    describe,
    integer,
    item_path,
    key_path,
    mapping,
    obj,
    quote,
    ref_pair,
    shape_of,
    string,
)
from synapc.backends.package.writer import ALIGNMENT, BUNDLE, FORMAT, STATE, VERSION
from synapc.limits import limits

_EOCD = struct.Struct("<4s4H2IH")
_LOCATOR = struct.Struct("<4sIQI")
_EOCD64 = struct.Struct("<4sQ2H2I4Q")
_CENTRAL = struct.Struct("<4s6H3I5H2I")
_LOCAL = struct.Struct("<4s5H3I2H")
_UTF8_FLAG = 0x800
_ENCRYPTED_FLAG = 0x1
_DESCRIPTOR_FLAG = 0x8
_U16, _U32 = 0xFFFF, 0xFFFFFFFF
_DRIVE = re.compile(r"^[A-Za-z]:")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_BUNDLE_FIELDS = (
    "format",
    "version",
    "target",
    "source",
    "inputs",
    "outputs",
    "graph",
    "outputs_from",
    "metadata",
    "members",
)
_MODEL_FIELDS = ("delegate", "executable", "weights_file", "weights", "inputs", "outputs")
_LAYER_FIELDS = ("name", "type", "executable", "weights_file", "weights", "operands")


@dataclass(frozen=True)
class SubgraphModel:
    """One subgraph as read: its model.json, program bytes, weights and wiring."""

    model_json: dict[str, Any]
    delegate: str
    executable: bytes
    weights: list[np.ndarray]
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    input_refs: list[tuple[int, int]]
    layers: list[ProfiledLayer] | None
    layer_outputs: list[tuple[int, int]] | None
    memory_plan: MemoryPlan | None = None


class Package:
    """A checked `model.synap`: bundle, model inputs / outputs and subgraphs."""

    def __init__(
        self,
        path: Path,
        bundle: dict[str, Any],
        subgraphs: list[SubgraphModel],
        inputs: list[TensorSpec],
        outputs: list[TensorSpec],
        output_refs: list[tuple[int, int]],
        size: int,
        state: list[StateSpec] | None = None,
        description: dict[str, Any] | None = None,
    ):
        self.path = path
        self.bundle = bundle
        self.subgraphs = subgraphs
        self.inputs = inputs
        self.outputs = outputs
        self.output_refs = output_refs
        self.size = size
        #: the values a streaming model carries between runs (see `StateSpec`)
        self.state = state or []
        #: the compiled graph described for people (`DESCRIPTION`), None when absent
        self.description = description

    @property
    def target(self) -> str:
        """The target the package was converted for."""
        return str(self.bundle.get("target", ""))

    @property
    def has_layers(self) -> bool:
        """Whether every subgraph carries per-layer programs (a --profiling build)."""
        return bool(self.subgraphs) and all(s.layers is not None for s in self.subgraphs)

    def subgraph(self, index: int) -> tuple[dict[str, Any], bytes, list[np.ndarray]]:
        """Subgraph `index`'s model.json, serialized program and weights."""
        s = self.subgraphs[index]
        return s.model_json, s.executable, s.weights


def read_package(path: str | os.PathLike[str]) -> Package:
    """Read and verify a `model.synap`; every problem is a one-line `PackageError`."""
    path = Path(path)
    return package_from_bytes(_read_file(path), path)


def package_from_bytes(data: bytes, path: str | os.PathLike[str]) -> Package:
    """Verify the bytes `data` of a `model.synap` as `read_package` verifies a file
    (a package still in memory); `path` names it in messages."""
    path = Path(path)
    members = _zip_members(path, data)
    if BUNDLE not in members:
        raise PackageError(f"{path}: not a synapc package: no {BUNDLE}")
    bundle = _bundle(path, members)
    return _Reader(path, bundle, members).package(len(data))


def _read_file(path: Path) -> bytes:
    """The file's bytes, refused before reading when larger than the package limit."""
    limit = limits().max_package_bytes
    try:
        with open(path, "rb") as stream:
            info = os.fstat(stream.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > limit:
                raise PackageError(_too_large(path, info.st_size, limit))
            if stat.S_ISREG(info.st_mode):
                data = stream.read(info.st_size + 1)
            else:  # a device or FIFO: no size to check first, read up to the limit
                data = _read_bounded(stream, limit + 1)
    except OSError as error:
        raise PackageError(f"{path}: cannot read: {error.strerror or error}") from None
    if len(data) > limit:
        raise PackageError(_too_large(path, len(data), limit))
    return data


def _read_bounded(stream: Any, limit: int) -> bytes:
    """At most `limit` bytes of `stream`, in chunks (never a `limit`-sized buffer)."""
    chunks = []
    total = 0
    while total < limit:
        chunk = stream.read(min(1 << 20, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _too_large(path: Path, size: int, limit: int) -> str:
    return (
        f"{path}: {size:,} bytes exceed the package limit of {limit:,} "
        "(SYNAPC_MAX_PACKAGE_BYTES raises it)"
    )


# -- the zip structure ----------------------------------------------------------------


@dataclass
class _Entry:
    """A member as the central directory describes it."""

    name: str
    raw_name: bytes
    flags: int
    method: int
    crc: int
    size: int
    header: int


def _zip_members(path: Path, data: bytes) -> dict[str, memoryview]:
    """Every member's bytes (views into `data`), after the structure, size, name and
    CRC checks; nothing is inflated or copied."""
    view = memoryview(data)
    cd_offset, cd_end, count = _end_record(path, data)
    entries = _central_directory(path, data, cd_offset, cd_end, count)
    members: dict[str, memoryview] = {}
    previous_end = 0
    for entry in sorted(entries, key=lambda e: e.header):
        start = _local_header(path, data, entry, previous_end, cd_offset)
        content = view[start : start + entry.size]
        if zlib.crc32(content) != entry.crc:
            raise PackageError(
                f"{path}: {entry.name}: CRC-32 mismatch (the file is corrupt)"
            )
        members[entry.name] = content
        previous_end = start + entry.size
    return members


def _damaged(path: Path, problem: str) -> PackageError:
    return PackageError(f"{path}: corrupt package (the file is damaged): {problem}")


def _end_record(path: Path, data: bytes) -> tuple[int, int, int]:
    """The central directory's offset and end, and the member count, from the end of
    central directory record (and its zip64 form, when present)."""
    size = len(data)
    pos = data.rfind(b"PK\x05\x06", max(0, size - _EOCD.size - _U16))
    if pos < 0 or pos + _EOCD.size > size:
        raise PackageError(f"{path}: not a synapc package: not a zip file")
    _, disk, cd_disk, on_disk, count, cd_size, cd_offset, comment = _EOCD.unpack_from(
        data, pos
    )
    if pos + _EOCD.size + comment != size:
        raise _damaged(path, "the zip end record is not at the end of the file")
    cd_end = pos
    locator = pos - _LOCATOR.size
    if locator >= 0 and data[locator : locator + 4] == b"PK\x06\x07":
        _, locator_disk, record, disks = _LOCATOR.unpack_from(data, locator)
        if locator_disk != 0 or disks != 1 or record + _EOCD64.size > locator:
            raise _damaged(path, "the zip64 end record locator is invalid")
        (sig, length, _, _, disk, cd_disk, on_disk, count, cd_size, cd_offset) = (
            _EOCD64.unpack_from(data, record)
        )
        if sig != b"PK\x06\x06" or record + 12 + length != locator:
            raise _damaged(path, "the zip64 end record is invalid")
        cd_end = record
    elif _U16 in (on_disk, count) or _U32 in (cd_size, cd_offset):
        raise _damaged(path, "zip64 sizes without a zip64 end record")
    if disk != 0 or cd_disk != 0 or on_disk != count:
        raise _damaged(path, "a multi-disk zip archive")
    if cd_offset + cd_size != cd_end:
        raise _damaged(path, "the zip central directory is not where the end record says")
    limit = limits().max_package_members
    if count > limit:
        raise PackageError(
            f"{path}: {count:,} members exceed the limit of {limit:,} "
            "(SYNAPC_MAX_PACKAGE_MEMBERS raises it)"
        )
    if count * _CENTRAL.size > cd_size:
        raise _damaged(path, f"{count:,} members do not fit the central directory")
    return cd_offset, cd_end, count


def _zip64_extra(
    extra: bytes | memoryview, fields: list[int], widths: list[int]
) -> list[int]:
    """`fields` with each one at its 16- or 32-bit maximum (`widths`: 2 or 4 bytes)
    replaced by the next value of the zip64 extra field, in the order zip defines."""
    wanted = [
        i
        for i, (v, w) in enumerate(zip(fields, widths, strict=True))
        if v == (1 << 8 * w) - 1
    ]
    if not wanted:
        return fields
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack_from("<2H", extra, at)
        body = extra[at + 4 : at + 4 + length]
        if len(body) != length:
            break
        if tag == 1:
            result = list(fields)
            offset = 0
            for i in wanted:
                width = 8 if widths[i] == 4 else 4
                if offset + width > length:
                    raise ValueError("the zip64 extra field is too short")
                result[i] = int.from_bytes(body[offset : offset + width], "little")
                offset += width
            return result
        at += 4 + length
    raise ValueError("a zip64 size without its zip64 extra field")


def _central_directory(
    path: Path, data: bytes, cd_offset: int, cd_end: int, count: int
) -> list[_Entry]:
    """The members the central directory lists, each name, flag, method and size
    checked."""
    entries: list[_Entry] = []
    names: set[str] = set()
    at = cd_offset
    member_limit = limits().max_package_member_bytes
    for index in range(count):
        if at + _CENTRAL.size > cd_end:
            raise _damaged(path, "the zip central directory is truncated")
        (sig, _, _, flags, method, _, _, crc, csize, usize, nlen, elen, clen, disk, _, _,
         header) = _CENTRAL.unpack_from(data, at)  # fmt: skip
        name_end = at + _CENTRAL.size + nlen
        extra_end = name_end + elen
        if sig != b"PK\x01\x02" or extra_end + clen > cd_end:
            raise _damaged(path, f"entry {index} of the zip central directory is invalid")
        raw = data[at + _CENTRAL.size : name_end]
        try:
            name = raw.decode("utf-8" if flags & _UTF8_FLAG else "cp437")
        except UnicodeDecodeError:
            raise PackageError(f"{path}: unsafe member name {raw!r}") from None
        if _unsafe(name) or name in names:
            raise PackageError(f"{path}: unsafe member name {quote(name)}")
        names.add(name)
        where = f"{path}: {quote(name)[1:-1]}"
        try:
            usize, csize, header, disk = _zip64_extra(
                data[name_end:extra_end], [usize, csize, header, disk], [4, 4, 4, 2]
            )
        except ValueError as error:
            raise _damaged(path, f"member {quote(name)}: {error}") from None
        if flags & _ENCRYPTED_FLAG:
            raise PackageError(f"{where}: the member is encrypted")
        if method != 0:
            raise PackageError(
                f"{where}: the member is compressed (zip method {method}); a package's "
                "members are stored uncompressed"
            )
        if flags & ~_UTF8_FLAG:
            extra = " (a data descriptor)" if flags & _DESCRIPTOR_FLAG else ""
            raise PackageError(f"{where}: unsupported zip flags 0x{flags:04x}{extra}")
        if csize != usize:
            raise PackageError(
                f"{where}: stored size {csize:,} differs from its size {usize:,}"
            )
        if usize > member_limit:
            raise PackageError(
                f"{where}: {usize:,} bytes exceed the member limit of {member_limit:,} "
                "(SYNAPC_MAX_PACKAGE_MEMBER_BYTES raises it)"
            )
        if disk != 0:
            raise _damaged(path, f"member {quote(name)} is on another disk")
        entries.append(_Entry(name, bytes(raw), flags, method, crc, usize, header))
        at = extra_end + clen
    if at != cd_end:
        raise _damaged(path, "the zip central directory has bytes after its last entry")
    return entries


def _local_header(
    path: Path, data: bytes, entry: _Entry, previous_end: int, cd_offset: int
) -> int:
    """Where `entry`'s data starts, after checking that its local header agrees with
    the central directory and that the data lies inside the file, after the previous
    member and before the central directory."""
    where = f"{path}: {quote(entry.name)[1:-1]}"
    at = entry.header
    if at < previous_end or at + _LOCAL.size > cd_offset:
        raise _damaged(path, f"member {quote(entry.name)} overlaps another or lies outside")
    (sig, _, flags, method, _, _, crc, csize, usize, nlen, elen) = _LOCAL.unpack_from(
        data, at
    )
    start = at + _LOCAL.size + nlen + elen
    if sig != b"PK\x03\x04" or start > cd_offset:
        raise _damaged(path, f"member {quote(entry.name)} has no local header")
    if data[at + _LOCAL.size : at + _LOCAL.size + nlen] != entry.raw_name:
        raise PackageError(
            f"{where}: the local header names another member (the zip is inconsistent)"
        )
    try:
        usize, csize = _zip64_extra(
            data[at + _LOCAL.size + nlen : start], [usize, csize], [4, 4]
        )
    except ValueError as error:
        raise _damaged(path, f"member {quote(entry.name)}: {error}") from None
    if (flags, method, crc, csize, usize) != (
        entry.flags,
        entry.method,
        entry.crc,
        entry.size,
        entry.size,
    ):
        raise PackageError(
            f"{where}: the local header disagrees with the central directory (flags, "
            "method, CRC or size; the zip is inconsistent)"
        )
    if start + entry.size > cd_offset:
        raise _damaged(path, f"member {quote(entry.name)} extends past its end")
    return start


def _unsafe(name: str) -> bool:
    """Absolute, parent-relative, backslash, drive-letter or control-character names."""
    return (
        not name
        or name.startswith("/")
        or "\\" in name
        or bool(_DRIVE.match(name))
        or ".." in name.split("/")
        or not name.isprintable()
    )


# -- JSON -----------------------------------------------------------------------------

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN = np.zeros(256, np.int8)
_OPEN[list(b"[{")] = 1
_OPEN[list(b"]}")] = -1


class _JsonProblem(ValueError):
    """Raised by the parser's hooks: a value strict JSON for packages refuses."""


def json_depth(data: bytes) -> int:
    """How deeply arrays and objects nest in the JSON text `data`: brackets outside
    strings counted with numpy, without recursion (so a hostile document cannot make
    the check itself overflow the stack)."""
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    depth, deepest = 0, 0
    for start in range(0, len(brackets), 1 << 20):
        steps = np.cumsum(
            _OPEN[np.frombuffer(brackets[start : start + (1 << 20)], np.uint8)],
            dtype=np.int64,
        )
        deepest = max(deepest, depth + int(steps.max()))
        depth += int(steps[-1])
    return deepest


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _JsonProblem(f"duplicate key {quote(key)}")
            seen.add(key)
    return result


def _constant(name: str) -> Any:
    raise _JsonProblem(f"{name} is not a number JSON allows")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > 40:
        raise _JsonProblem("an integer of more than 40 digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _JsonProblem(f"number {text[:40]} is out of range")
    return value


def load_json(data: bytes | memoryview) -> Any:
    """Parse a package's JSON document after checking its size and nesting depth
    against the limits; strict: UTF-8, no NaN or infinity, no duplicate keys.
    `FieldError` (with an empty path) on any problem."""
    current = limits()
    if len(data) > current.max_json_bytes:
        raise FieldError(
            "",
            f"{len(data):,} bytes of JSON exceed the limit of {current.max_json_bytes:,}"
            " (SYNAPC_MAX_JSON_BYTES raises it)",
        )
    data = bytes(data)
    depth = json_depth(data)
    if depth > current.max_json_depth:
        raise FieldError(
            "",
            f"JSON nested {depth} levels deep exceeds the limit of "
            f"{current.max_json_depth} (SYNAPC_MAX_JSON_DEPTH raises it)",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FieldError("", f"not valid JSON: not UTF-8 at byte {error.start}") from None
    try:
        return json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_constant=_constant,
            parse_int=_int,
            parse_float=_float,
        )
    except json.JSONDecodeError as error:
        raise FieldError(
            "", f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    except _JsonProblem as error:
        raise FieldError("", f"not valid JSON: {error}") from None
    except (ValueError, RecursionError):
        raise FieldError("", "not valid JSON") from None


# -- bundle.json and model.json ---------------------------------------------------------


def _bundle(path: Path, members: dict[str, memoryview]) -> dict[str, Any]:
    """bundle.json parsed, of this format and version, every field checked, and the
    members it lists present with their sizes and checksums."""
    where = f"{path}: {BUNDLE}"
    try:
        bundle = load_json(members[BUNDLE])
    except FieldError as error:
        raise PackageError(f"{where}: {error}") from None
    if not isinstance(bundle, dict) or bundle.get("format") != FORMAT:
        raise PackageError(
            f"{path}: not a synapc package: {BUNDLE} has no format '{FORMAT}'"
        )
    version = bundle.get("version")
    if type(version) is not int or version != VERSION:
        raise PackageError(
            f"{path}: package version {describe(version)} is not supported (this "
            f"synapc reads version {VERSION})"
        )
    try:
        obj(bundle, "", _BUNDLE_FIELDS, ("state",))
        string(bundle["target"], "target")
        for key in ("source", "metadata"):
            for name, value in mapping(bundle[key], key).items():
                string(value, f"{key}[{quote(name)}]")
        listed = mapping(bundle["members"], "members")
        member_limit = limits().max_package_member_bytes
        for name, entry in listed.items():
            if name not in members or name == BUNDLE:
                raise PackageError(f"{path}: member {quote(name)} is listed but absent")
            at = f"members[{quote(name)}]"
            entry = obj(entry, at, ("size", "sha256"))
            integer(entry["size"], key_path(at, "size"), 0, member_limit)
            digest = string(entry["sha256"], key_path(at, "sha256"))
            if not _SHA256.fullmatch(digest):
                raise FieldError(key_path(at, "sha256"), "expected 64 lowercase hex digits")
    except FieldError as error:
        raise PackageError(f"{where}: {error}") from None
    for name, entry in sorted(listed.items()):
        content = members[name]
        if entry["size"] != len(content) or (
            entry["sha256"] != hashlib.sha256(content).hexdigest()
        ):
            raise PackageError(
                f"{path}: member {quote(name)}: checksum mismatch (the file is corrupt)"
            )
    for name in sorted(members):
        if name != BUNDLE and name not in listed:
            raise PackageError(f"{path}: member {quote(name)} is present but not listed")
    return bundle


class _Reader:
    """The checks of step 5 (see the module docstring), with the member being read
    tracked for messages."""

    def __init__(self, path: Path, bundle: dict[str, Any], members: dict[str, memoryview]):
        self.path = path
        self.bundle = bundle
        self.members = members
        self.used = {BUNDLE}
        self.constant_bytes = 0

    def package(self, size: int) -> Package:
        """The checked package (its bundle's members already checked by `_bundle`)."""
        member = BUNDLE
        try:
            inputs = self._tensors(self.bundle["inputs"], "inputs")
            outputs = self._tensors(self.bundle["outputs"], "outputs")
            graph = array(self.bundle["graph"], "graph")
            nodes = []
            for index, node in enumerate(graph):
                at = item_path("graph", index)
                node = obj(node, at, ("model", "inputs"))
                self._name(node["model"], key_path(at, "model"), f"{index}/model.json")
                at = key_path(at, "inputs")
                refs = array(node["inputs"], at)
                nodes.append(
                    [ref_pair(r, "subgraph", item_path(at, j)) for j, r in enumerate(refs)]
                )
            raw_outputs = array(self.bundle["outputs_from"], "outputs_from")
            output_refs = [
                ref_pair(r, "subgraph", item_path("outputs_from", j))
                for j, r in enumerate(raw_outputs)
            ]
            # subgraph i's inputs come from the model inputs (-1) or earlier subgraphs
            sources: list[list[TensorSpec]] = [inputs]
            subgraphs = []
            for index, refs in enumerate(nodes):
                member = BUNDLE
                at = key_path(item_path("graph", index), "inputs")
                for j, (k, out) in enumerate(refs):
                    _check_ref(item_path(at, j), k, out, sources)
                member = f"{index}/model.json"
                subgraph = self._subgraph(index, refs, sources)
                subgraphs.append(subgraph)
                sources.append(subgraph.outputs)
            member = BUNDLE
            if len(output_refs) != len(outputs):
                raise FieldError(
                    "outputs_from",
                    f"must name one value per output ({len(outputs)} outputs, "
                    f"{len(output_refs)} references)",
                )
            for j, (k, out) in enumerate(output_refs):
                at = item_path("outputs_from", j)
                if k < 0:
                    raise FieldError(at, "an output must come from a subgraph")
                _check_ref(at, k, out, sources)
                source = f"output {out} of subgraph {k}"
                _same(outputs[j], sources[k + 1][out], item_path("outputs", j), source)
            state = self._state(inputs, outputs)
            member = DESCRIPTION
            description = self._description(subgraphs, len(inputs), len(outputs))
        except FieldError as error:
            raise PackageError(f"{self.path}: {member}: {error}") from None
        unused = sorted(set(self.members) - self.used)
        if unused:
            raise PackageError(
                f"{self.path}: member {quote(unused[0])} is listed but no subgraph uses it"
            )
        return Package(
            self.path,
            self.bundle,
            subgraphs,
            inputs,
            outputs,
            output_refs,
            size,
            state,
            description,
        )

    def _description(
        self, subgraphs: list[SubgraphModel], inputs: int, outputs: int
    ) -> dict[str, Any] | None:
        """The checked `DESCRIPTION` member, None when the package has none."""
        if DESCRIPTION not in self.members:
            return None
        self.used.add(DESCRIPTION)
        plans = [
            max((t.layer for t in s.memory_plan.tensors), default=-1)
            if s.memory_plan is not None
            else -1
            for s in subgraphs
        ]
        return check_description(
            load_json(self.members[DESCRIPTION]),
            [s.delegate for s in subgraphs],
            inputs,
            outputs,
            plans,
        )

    def _state(
        self, inputs: list[TensorSpec], outputs: list[TensorSpec]
    ) -> list[StateSpec]:
        """The bundle's `state`: each entry pairs a distinct model input with a distinct
        model output of the same shape and type, its initial value (in `STATE`) fits."""
        if "state" not in self.bundle:
            return []
        entries = array(self.bundle["state"], "state")
        if STATE not in self.members:
            raise FieldError("state", f"names a missing member {quote(STATE)}")
        self.used.add(STATE)
        state: list[StateSpec] = []
        for n, raw in enumerate(entries):
            at = item_path("state", n)
            entry = obj(raw, at, ("name", "input", "output", "initial"))
            i = integer(entry["input"], key_path(at, "input"), 0, len(inputs) - 1)
            o = integer(entry["output"], key_path(at, "output"), 0, len(outputs) - 1)
            if any(s.input == i or s.output == o for s in state):
                raise FieldError(at, "its input or output carries another state")
            _same(outputs[o], inputs[i], key_path(at, "output"), f"model input {i}")
            [initial] = self._weights(STATE, [entry["initial"]], key_path(at, "initial"))
            spec = inputs[i]
            if initial.shape != spec.shape or initial.dtype.name != spec.data_type:
                raise FieldError(
                    key_path(at, "initial"),
                    f"is {initial.dtype.name}{list(initial.shape)}, but model input {i} "
                    f"is {spec.data_type}{list(spec.shape)}",
                )
            name = string(entry["name"], key_path(at, "name"))
            state.append(StateSpec(name, i, o, initial))
        return state

    def _tensors(self, value: Any, at: str) -> list[TensorSpec]:
        return [
            TensorSpec.from_json(v, item_path(at, i))
            for i, v in enumerate(array(value, at))
        ]

    def _name(self, value: Any, at: str, expected: str) -> str:
        """A member name field, which the layout fixes to `expected`."""
        name = string(value, at)
        if name != expected:
            raise FieldError(at, f"expected '{expected}', got {quote(name)}")
        if name not in self.members:
            raise FieldError(at, f"names a missing member {quote(name)}")
        self.used.add(name)
        return name

    def _subgraph(
        self, index: int, refs: list[tuple[int, int]], sources: list[list[TensorSpec]]
    ) -> SubgraphModel:
        member = f"{index}/model.json"
        model = obj(
            load_json(self.members[member]),
            "",
            _MODEL_FIELDS,
            ("layers", "layer_outputs", "memory_plan"),
        )
        delegate = choice(model["delegate"], "delegate", DELEGATES, "delegate")
        executable = self._name(
            model["executable"], "executable", f"{index}/model.stablehlo"
        )
        weights_file = self._name(
            model["weights_file"], "weights_file", f"{index}/weights.bin"
        )
        weights = self._weights(weights_file, model["weights"], "weights", count=True)
        inputs = self._tensors(model["inputs"], "inputs")
        outputs = self._tensors(model["outputs"], "outputs")
        if len(inputs) != len(refs):
            raise FieldError(
                "inputs",
                f"{len(inputs)} inputs, but the bundle's graph[{index}] connects "
                f"{len(refs)}",
            )
        for j, ((k, out), spec) in enumerate(zip(refs, inputs, strict=True)):
            source = "model input" if k == -1 else f"output of subgraph {k}"
            _same(spec, sources[k + 1][out], item_path("inputs", j), f"{source} {out}")
        layers = layer_outputs = None
        if "layers" in model or "layer_outputs" in model:
            layers, layer_outputs = self._layers(index, model, len(inputs), len(outputs))
        plan = None
        if "memory_plan" in model:
            plan = MemoryPlan.from_json(model["memory_plan"])
        return SubgraphModel(
            model_json=model,
            delegate=delegate,
            executable=bytes(self.members[executable]),
            weights=weights,
            inputs=inputs,
            outputs=outputs,
            input_refs=refs,
            layers=layers,
            layer_outputs=layer_outputs,
            memory_plan=plan,
        )

    def _layers(
        self, index: int, model: dict[str, Any], input_count: int, output_count: int
    ) -> tuple[list[ProfiledLayer], list[tuple[int, int]]]:
        for key in ("layers", "layer_outputs"):
            if key not in model:
                raise FieldError("", f"field '{key}' is missing")
        layers = []
        for k, raw in enumerate(array(model["layers"], "layers")):
            at = item_path("layers", k)
            layer = obj(raw, at, _LAYER_FIELDS)
            name = string(layer["name"], key_path(at, "name"))
            kind = string(layer["type"], key_path(at, "type"))
            stem = f"{index}/layers/{k}"
            executable = self._name(
                layer["executable"], key_path(at, "executable"), f"{stem}.stablehlo"
            )
            weights_file = self._name(
                layer["weights_file"], key_path(at, "weights_file"), f"{stem}.weights.bin"
            )
            operands = array(layer["operands"], key_path(at, "operands"))
            refs = []
            for j, r in enumerate(operands):
                ref_at = item_path(key_path(at, "operands"), j)
                k2, out = ref_pair(r, "layer", ref_at)
                if not ((k2 == -1 and out < input_count) or 0 <= k2 < k):
                    raise FieldError(
                        ref_at, f"reference ({k2}, {describe(out)}) names no earlier value"
                    )
                refs.append((k2, out))
            layers.append(
                ProfiledLayer(
                    name=name,
                    type=kind,
                    executable=bytes(self.members[executable]),
                    weights=self._weights(
                        weights_file, layer["weights"], key_path(at, "weights")
                    ),
                    operands=refs,
                )
            )
        raw_outputs = array(model["layer_outputs"], "layer_outputs")
        if len(raw_outputs) != output_count:
            raise FieldError(
                "layer_outputs",
                f"must name one value per output ({output_count} outputs, "
                f"{len(raw_outputs)} references)",
            )
        layer_outputs = []
        for j, r in enumerate(raw_outputs):
            at = item_path("layer_outputs", j)
            k, out = ref_pair(r, "layer", at)
            if not 0 <= k < len(layers):
                raise FieldError(at, f"reference ({k}, {describe(out)}) names no layer")
            layer_outputs.append((k, out))
        return layers, layer_outputs

    def _weights(
        self, file_name: str, value: Any, at: str, count: bool = False
    ) -> list[np.ndarray]:
        """The arrays the entries at `at` describe inside weights file `file_name`: each
        aligned, inside the file, after the previous one. `count` adds them to the
        package's constant bytes (per-layer copies are not counted twice)."""
        blob = self.members[file_name]
        arrays = []
        end = 0
        for i, raw in enumerate(array(value, at)):
            where = item_path(at, i)
            entry = obj(raw, where, ("dtype", "shape", "offset", "nbytes"), ("stored",))
            dtype = np.dtype(
                choice(entry["dtype"], key_path(where, "dtype"), DATA_TYPES, "dtype")
            )
            shape = shape_of(entry["shape"], key_path(where, "shape"), dtype.itemsize)
            offset = integer(entry["offset"], key_path(where, "offset"), 0, MAX_INT)
            nbytes = integer(entry["nbytes"], key_path(where, "nbytes"), 0, MAX_INT)
            kept = dtype
            if "stored" in entry:  # float32 values stored as float16 (the writer's rule)
                if dtype != np.float32:
                    raise FieldError(
                        key_path(where, "stored"), f"only float32 weights are stored "
                        f"narrower, not {dtype.name}"
                    )  # fmt: skip
                kept = np.dtype(
                    choice(entry["stored"], key_path(where, "stored"), {"float16"}, "type")
                )
            expected = math.prod(shape) * kept.itemsize
            if nbytes != expected:
                raise FieldError(
                    key_path(where, "nbytes"),
                    f"{nbytes:,} bytes, but shape {list(shape)} of {kept.name} takes "
                    f"{expected:,}",
                )
            if offset % ALIGNMENT:
                raise FieldError(
                    key_path(where, "offset"),
                    f"{offset:,} is not a multiple of {ALIGNMENT}",
                )
            if offset < end:
                raise FieldError(
                    key_path(where, "offset"), "overlaps the weights listed before it"
                )
            if offset + nbytes > len(blob):
                raise FieldError(
                    where,
                    f"bytes {offset:,} to {offset + nbytes:,} lie outside {file_name} "
                    f"({len(blob):,} bytes)",
                )
            end = offset + nbytes
            if count:
                self.constant_bytes += nbytes
                limit = limits().max_constant_bytes
                if self.constant_bytes > limit:
                    raise FieldError(
                        where,
                        f"the package's weights exceed the limit of {limit:,} bytes "
                        "(SYNAPC_MAX_CONSTANT_BYTES raises it)",
                    )
            stored = kept.newbyteorder("<")
            flat = np.frombuffer(blob, stored, count=nbytes // kept.itemsize, offset=offset)
            arrays.append(flat.reshape(shape).astype(dtype))
        return arrays


def _check_ref(at: str, k: int, out: int, sources: list[list[TensorSpec]]) -> None:
    """Reference ``(k, out)`` must name an existing value of an earlier source: model
    input `out` (k = -1) or output `out` of subgraph k (``sources[k + 1]``)."""
    if not -1 <= k < len(sources) - 1:
        raise FieldError(
            at, f"reference ({describe(k)}, {describe(out)}) names no earlier subgraph"
        )
    if out >= len(sources[k + 1]):
        what = "model inputs" if k == -1 else f"outputs of subgraph {k}"
        raise FieldError(
            at,
            f"reference ({k}, {describe(out)}) names no earlier value (there are "
            f"{len(sources[k + 1])} {what})",
        )


def _same(spec: TensorSpec, source: TensorSpec, at: str, what: str) -> None:
    """Tensors that are one value must agree in shape and data type."""
    if spec.shape != source.shape or spec.data_type != source.data_type:
        raise FieldError(
            at,
            f"{quote(spec.name)} is {spec.data_type}{list(spec.shape)}, but the "
            f"{what} it is ({quote(source.name)}) is "
            f"{source.data_type}{list(source.shape)}",
        )
