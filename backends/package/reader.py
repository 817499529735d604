"""`read_package`: open a `model.synap` in memory and check it before anything uses it.

The whole file is read once; members are never extracted to disk. Checks, each a
one-line `PackageError` naming the file (and the member): a zip at all; safe, unique
member names; `bundle.json` present, JSON, of this format and version; every other member
listed in it with the right size and SHA-256, and nothing unlisted; the subgraph models
well formed, their references pointing at earlier subgraphs / layers, their weights
inside their weights files.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from synapc.backends.package.spec import (
    DATA_TYPES,
    DELEGATES,
    PackageError,
    ProfiledLayer,
    TensorSpec,
    ref_pair,
)
from synapc.backends.package.writer import BUNDLE, FORMAT, VERSION

#: What zipfile raises on a damaged archive (a flipped byte can land in any field).
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    struct.error,
    EOFError,
    ValueError,
    OverflowError,
    NotImplementedError,
    RuntimeError,
    UnicodeDecodeError,
    KeyError,
)
_DRIVE = re.compile(r"^[A-Za-z]:")


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
    ):
        self.path = path
        self.bundle = bundle
        self.subgraphs = subgraphs
        self.inputs = inputs
        self.outputs = outputs
        self.output_refs = output_refs
        self.size = size

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
    try:
        data = path.read_bytes()
    except OSError as error:
        raise PackageError(f"{path}: cannot read: {error.strerror or error}") from None
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise PackageError(f"{path}: not a synapc package: not a zip file")
    try:
        members = _read_members(path, data)
    except PackageError:
        raise
    except _ZIP_ERRORS as error:
        raise PackageError(
            f"{path}: corrupt package (the file is damaged): {error}"
        ) from None
    return _parse(path, members, len(data))


def _read_members(path: Path, data: bytes) -> dict[str, bytes]:
    """Every member's bytes, after the name, listing and checksum checks."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        seen: set[str] = set()
        for info in infos:
            name = info.filename
            if _unsafe(name) or name in seen:
                raise PackageError(f"{path}: unsafe member name '{name}'")
            seen.add(name)
        if BUNDLE not in seen:
            raise PackageError(f"{path}: not a synapc package: no {BUNDLE}")
        contents = {info.filename: archive.read(info) for info in infos}
    try:
        bundle = json.loads(contents[BUNDLE])
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PackageError(f"{path}: {BUNDLE} is not valid JSON: {error}") from None
    if not isinstance(bundle, dict) or bundle.get("format") != FORMAT:
        raise PackageError(
            f"{path}: not a synapc package: {BUNDLE} has no format '{FORMAT}'"
        )
    if bundle.get("version") != VERSION:
        raise PackageError(
            f"{path}: package version {bundle.get('version')!r} is not "
            f"supported (this synapc reads version {VERSION})"
        )
    listed = bundle.get("members")
    if not isinstance(listed, dict):
        raise PackageError(f"{path}: {BUNDLE}: field 'members' is missing")
    for name, entry in sorted(listed.items()):
        if name not in contents or name == BUNDLE:
            raise PackageError(f"{path}: member '{name}' is listed but absent")
        content = contents[name]
        if (
            not isinstance(entry, dict)
            or entry.get("size") != len(content)
            or entry.get("sha256") != hashlib.sha256(content).hexdigest()
        ):
            raise PackageError(
                f"{path}: member '{name}': checksum mismatch (the file is corrupt)"
            )
    for name in sorted(contents):
        if name != BUNDLE and name not in listed:
            raise PackageError(f"{path}: member '{name}' is present but not listed")
    contents[BUNDLE] = bundle  # type: ignore[assignment]
    return contents


def _unsafe(name: str) -> bool:
    """Absolute, parent-relative, backslash or drive-letter member names."""
    return (
        not name
        or name.startswith("/")
        or "\\" in name
        or bool(_DRIVE.match(name))
        or ".." in name.split("/")
        or "\0" in name
    )


def _parse(path: Path, members: dict[str, Any], size: int) -> Package:
    bundle: dict[str, Any] = members[BUNDLE]
    where = f"{path}: {BUNDLE}"
    try:
        inputs = _tensors(bundle, "inputs")
        outputs = _tensors(bundle, "outputs")
        graph = bundle.get("graph")
        if not isinstance(graph, list):
            raise ValueError("field 'graph' must be a list")
        counts = [len(inputs)]
        subgraphs = []
        for index, node in enumerate(graph):
            model_name = node.get("model") if isinstance(node, dict) else None
            refs = node.get("inputs") if isinstance(node, dict) else None
            if not isinstance(model_name, str) or not isinstance(refs, list):
                raise ValueError(f"graph[{index}] needs 'model' and 'inputs'")
            input_refs = [ref_pair(r, "subgraph", f"graph[{index}]") for r in refs]
            _check_refs(input_refs, counts, f"graph[{index}]")
            where = f"{path}: {model_name}"
            subgraph = _subgraph(members, model_name, input_refs)
            if len(subgraph.inputs) != len(input_refs):
                raise ValueError("'inputs' differ in number from the graph's references")
            subgraphs.append(subgraph)
            counts.append(len(subgraph.outputs))
            where = f"{path}: {BUNDLE}"
        outputs_from = bundle.get("outputs_from")
        if not isinstance(outputs_from, list) or len(outputs_from) != len(outputs):
            raise ValueError("field 'outputs_from' must name one value per output")
        output_refs = [ref_pair(r, "subgraph", "outputs_from") for r in outputs_from]
        _check_refs(output_refs, counts, "outputs_from")
        if any(k < 0 for k, _ in output_refs):
            raise ValueError("outputs_from: an output must come from a subgraph")
    except ValueError as error:
        raise PackageError(f"{where}: {error}") from None
    return Package(path, bundle, subgraphs, inputs, outputs, output_refs, size)


def _tensors(d: dict[str, Any], key: str) -> list[TensorSpec]:
    values = d.get(key)
    if not isinstance(values, list):
        raise ValueError(f"field '{key}' must be a list")
    return [TensorSpec.from_json(v) for v in values]


def _check_refs(refs: list[tuple[int, int]], counts: list[int], what: str) -> None:
    for k, j in refs:
        if not (-1 <= k < len(counts) - 1 and 0 <= j < counts[k + 1]):
            raise ValueError(f"{what}: reference ({k}, {j}) names no earlier value")


def _member(members: dict[str, Any], name: Any) -> bytes:
    if not isinstance(name, str) or name == BUNDLE or name not in members:
        raise ValueError(f"names a missing member {name!r}")
    return members[name]


def _weights(members: dict[str, Any], file_name: Any, entries: Any) -> list[np.ndarray]:
    """The arrays `entries` describe inside weights file `file_name`, checked in bounds."""
    blob = _member(members, file_name)
    if not isinstance(entries, list):
        raise ValueError("field 'weights' must be a list")
    arrays = []
    for i, entry in enumerate(entries):
        what = f"weights[{i}]"
        if not isinstance(entry, dict) or entry.get("dtype") not in DATA_TYPES:
            raise ValueError(f"{what}: missing or unknown dtype")
        dtype = np.dtype(entry["dtype"]).newbyteorder("<")
        shape, offset, nbytes = entry.get("shape"), entry.get("offset"), entry.get("nbytes")
        if (
            not isinstance(shape, list)
            or not all(isinstance(s, int) and s >= 0 for s in shape)
            or not isinstance(offset, int)
            or not isinstance(nbytes, int)
            or offset < 0
            or offset + nbytes > len(blob)
            or math.prod(shape) * dtype.itemsize != nbytes
        ):
            raise ValueError(f"{what}: shape, offset or size do not fit {file_name}")
        array = np.frombuffer(blob, dtype, count=nbytes // dtype.itemsize, offset=offset)
        arrays.append(array.reshape(shape).astype(dtype.newbyteorder("=")))
    return arrays


def _subgraph(
    members: dict[str, Any], model_name: str, input_refs: list[tuple[int, int]]
) -> SubgraphModel:
    try:
        model = json.loads(_member(members, model_name))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"not valid JSON: {error}") from None
    if not isinstance(model, dict) or model.get("delegate") not in DELEGATES:
        raise ValueError("missing or unknown 'delegate'")
    inputs = _tensors(model, "inputs")
    outputs = _tensors(model, "outputs")
    layers = None
    layer_outputs = None
    if model.get("layers") is not None:
        layers = _layers(members, model.get("layers"), len(inputs))
        raw = model.get("layer_outputs")
        if not isinstance(raw, list) or len(raw) != len(outputs):
            raise ValueError("field 'layer_outputs' must name one value per output")
        layer_outputs = [ref_pair(r, "layer", "layer_outputs") for r in raw]
        if not all(0 <= k < len(layers) and j >= 0 for k, j in layer_outputs):
            raise ValueError("layer_outputs: a reference names no layer")
    return SubgraphModel(
        model_json=model,
        delegate=model["delegate"],
        executable=_member(members, model.get("executable")),
        weights=_weights(members, model.get("weights_file"), model.get("weights")),
        inputs=inputs,
        outputs=outputs,
        input_refs=input_refs,
        layers=layers,
        layer_outputs=layer_outputs,
    )


def _layers(members: dict[str, Any], raw: Any, input_count: int) -> list[ProfiledLayer]:
    if not isinstance(raw, list):
        raise ValueError("field 'layers' must be a list")
    layers = []
    for k, layer in enumerate(raw):
        what = f"layers[{k}]"
        if not isinstance(layer, dict):
            raise ValueError(f"{what} must be an object")
        name, kind, operands = layer.get("name"), layer.get("type"), layer.get("operands")
        if not isinstance(name, str) or not isinstance(kind, str):
            raise ValueError(f"{what}: 'name' and 'type' must be strings")
        if not isinstance(operands, list):
            raise ValueError(f"{what}: field 'operands' must be a list")
        refs = [ref_pair(r, "layer", what) for r in operands]
        if not all(
            (k2 == -1 and 0 <= j < input_count) or (0 <= k2 < k and j >= 0)
            for k2, j in refs
        ):
            raise ValueError(f"{what}: an operand names no earlier value")
        layers.append(
            ProfiledLayer(
                name=name,
                type=kind,
                executable=_member(members, layer.get("executable")),
                weights=_weights(members, layer.get("weights_file"), layer.get("weights")),
                operands=refs,
            )
        )
    return layers
