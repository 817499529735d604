"""`build_package`: the bytes of a `model.synap` (layout: see the package docstring).

Everything that reaches the bytes is a function of the arguments: zip entries carry a
fixed date, permissions and creator system, members are in sorted order after
`bundle.json`, JSON has sorted keys and Python's shortest round-trip float repr.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from synapc.backends.package.description import DESCRIPTION
from synapc.backends.package.spec import (
    DATA_TYPES,
    DELEGATES,
    ProfiledLayer,
    StateSpec,
    Subgraph,
    TensorSpec,
)

FORMAT = "synapc.model"
#: Version 2 added the optional `DESCRIPTION` member (`synapc report`).
VERSION = 2
BUNDLE = "bundle.json"
#: The member holding the initial values of a streaming model's state.
STATE = "state.bin"
#: Each array in a weights file starts at a multiple of this many bytes.
ALIGNMENT = 64
_DATE = (1980, 1, 1, 0, 0, 0)
_UNIX = 3
_PERMISSIONS = 0o100644


def dumps(value: Any) -> bytes:
    """Deterministic JSON: sorted keys, no NaN, UTF-8, a final newline."""
    text = json.dumps(value, sort_keys=True, indent=1, allow_nan=False, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def _narrowest(array: np.ndarray) -> np.ndarray:
    """`array` in float16 when it is float32 holding float16 values only (bit for bit,
    signed zeros and NaN payloads included): a float16 program's weights, which its
    program takes as float32. Otherwise `array` itself."""
    if array.dtype != np.float32:
        return array
    narrow = array.astype(np.float16)
    same = np.array_equal(narrow.astype(np.float32).view(np.uint32), array.view(np.uint32))
    return narrow if same else array


def pack_weights(arrays: Sequence[np.ndarray]) -> tuple[bytes, list[dict[str, Any]]]:
    """Arrays concatenated little-endian at 64-byte aligned offsets, and their entries
    ``{"dtype", "shape", "offset", "nbytes"}``. A float32 array whose values are all
    float16 values is stored as float16, its entry saying ``"stored": "float16"``: the
    reader widens it back, bit for bit (a float16 program's weights take half the
    bytes)."""
    blob = bytearray()
    entries = []
    for array in arrays:
        array = np.asarray(array)
        if array.dtype.name not in DATA_TYPES:
            raise ValueError(f"weights of dtype {array.dtype} cannot be stored")
        blob.extend(b"\0" * (-len(blob) % ALIGNMENT))
        kept = _narrowest(array)
        data = np.ascontiguousarray(kept, dtype=kept.dtype.newbyteorder("<")).tobytes()
        entry = {
            "dtype": array.dtype.name,
            "shape": list(array.shape),
            "offset": len(blob),
            "nbytes": len(data),
        }
        if kept.dtype != array.dtype:
            entry["stored"] = kept.dtype.name
        entries.append(entry)
        blob.extend(data)
    return bytes(blob), entries


def _check_refs(refs: Sequence[tuple[int, int]], sources: Sequence[int], what: str) -> None:
    """Each ``(k, j)`` names source k (-1 for the enclosing inputs) and one of its values;
    `sources[k + 1]` is how many values source k has."""
    for k, j in refs:
        if not (-1 <= k < len(sources) - 1 and 0 <= j < sources[k + 1]):
            raise ValueError(f"{what}: reference ({k}, {j}) names no value")


def _layers(
    index: int, subgraph: Subgraph, members: dict[str, bytes]
) -> list[dict[str, Any]] | None:
    if subgraph.layers is None:
        return None
    layers: list[dict[str, Any]] = []
    results = [len(subgraph.inputs)]
    for k, layer in enumerate(subgraph.layers):
        if not isinstance(layer, ProfiledLayer):
            raise TypeError(f"subgraph {index}: layer {k} is not a ProfiledLayer")
        _check_refs(layer.operands, results, f"subgraph {index} layer '{layer.name}'")
        # a layer's result count is not known here: any j >= 0 of an earlier layer is kept
        results.append(1 << 30)
        stem = f"{index}/layers/{k}"
        blob, entries = pack_weights(layer.weights)
        members[f"{stem}.stablehlo"] = bytes(layer.executable)
        members[f"{stem}.weights.bin"] = blob
        layers.append(
            {
                "name": layer.name,
                "type": layer.type,
                "executable": f"{stem}.stablehlo",
                "weights_file": f"{stem}.weights.bin",
                "weights": entries,
                "operands": [{"layer": k, "out": j} for k, j in layer.operands],
            }
        )
    return layers


def _model_json(
    index: int, subgraph: Subgraph, members: dict[str, bytes]
) -> dict[str, Any]:
    if subgraph.delegate not in DELEGATES:
        raise ValueError(f"subgraph {index}: unknown delegate '{subgraph.delegate}'")
    blob, entries = pack_weights(subgraph.weights)
    members[f"{index}/model.stablehlo"] = bytes(subgraph.executable)
    members[f"{index}/weights.bin"] = blob
    model: dict[str, Any] = {
        "delegate": subgraph.delegate,
        "executable": f"{index}/model.stablehlo",
        "weights_file": f"{index}/weights.bin",
        "weights": entries,
        "inputs": [t.to_json() for t in subgraph.inputs],
        "outputs": [t.to_json() for t in subgraph.outputs],
    }
    layers = _layers(index, subgraph, members)
    if layers is not None:
        if subgraph.layer_outputs is None or len(subgraph.layer_outputs) != len(
            subgraph.outputs
        ):
            raise ValueError(f"subgraph {index}: layer_outputs must name every output")
        model["layers"] = layers
        model["layer_outputs"] = [{"layer": k, "out": j} for k, j in subgraph.layer_outputs]
    if subgraph.memory_plan is not None:
        model["memory_plan"] = subgraph.memory_plan.to_json()
    return model


def build_package(
    *,
    target: str,
    source: dict[str, str],
    inputs: list[TensorSpec],
    outputs: list[TensorSpec],
    output_refs: list[tuple[int, int]],
    subgraphs: list[Subgraph],
    metadata: dict[str, str] | None = None,
    state: Sequence[StateSpec] = (),
    description: dict[str, Any] | None = None,
) -> bytes:
    """The complete `model.synap` bytes; the same arguments give the same bytes.

    `source` is ``{"model": file name, "sha256": hex, "synapc": version}``;
    `output_refs[i]` is the ``(subgraph, output)`` that computes model output i;
    `state` pairs model inputs and outputs a streaming model carries between runs;
    `description` is the compiled graph described for people (the `DESCRIPTION` member,
    see `synapc.backends.package.description`).
    Inconsistent arguments (a reference to nothing) raise `ValueError`.
    """
    if len(output_refs) != len(outputs):
        raise ValueError("output_refs must name one subgraph output per model output")
    counts = [len(inputs)]
    members: dict[str, bytes] = {}
    graph = []
    for index, subgraph in enumerate(subgraphs):
        if len(subgraph.input_refs) != len(subgraph.inputs):
            raise ValueError(f"subgraph {index}: one input_ref per input needed")
        _check_refs(subgraph.input_refs, counts, f"subgraph {index}")
        members[f"{index}/model.json"] = dumps(_model_json(index, subgraph, members))
        graph.append(
            {
                "model": f"{index}/model.json",
                "inputs": [{"subgraph": k, "out": j} for k, j in subgraph.input_refs],
            }
        )
        counts.append(len(subgraph.outputs))
    _check_refs(output_refs, counts, "model outputs")
    state_json = _state_json(state, inputs, outputs, members)
    if description is not None:
        members[DESCRIPTION] = dumps(description)
    bundle = {
        "format": FORMAT,
        "version": VERSION,
        "target": target,
        "source": dict(source),
        "inputs": [t.to_json() for t in inputs],
        "outputs": [t.to_json() for t in outputs],
        "graph": graph,
        "outputs_from": [{"subgraph": k, "out": j} for k, j in output_refs],
        "metadata": dict(metadata or {}),
        "members": {
            name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            for name, data in sorted(members.items())
        },
    }
    if state_json:  # packages without state keep their bytes
        bundle["state"] = state_json
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED) as archive:
        _write(archive, BUNDLE, dumps(bundle))
        for name in sorted(members):
            _write(archive, name, members[name])
    return stream.getvalue()


def _state_json(
    state: Sequence[StateSpec],
    inputs: list[TensorSpec],
    outputs: list[TensorSpec],
    members: dict[str, bytes],
) -> list[dict[str, Any]]:
    """The bundle's `state` entries; their initial values go to the `STATE` member."""
    if not state:
        return []
    pairs = {(s.input, s.output) for s in state}
    if len({i for i, _ in pairs}) != len(state) or len({o for _, o in pairs}) != len(state):
        raise ValueError("state: each input and output may carry one state")
    for s in state:
        if not (0 <= s.input < len(inputs) and 0 <= s.output < len(outputs)):
            raise ValueError(f"state '{s.name}': input or output index out of range")
        spec = inputs[s.input]
        if s.initial.shape != spec.shape or s.initial.dtype.name != spec.data_type:
            raise ValueError(f"state '{s.name}': initial value does not fit its input")
    blob, entries = pack_weights([s.initial for s in state])
    members[STATE] = blob
    return [
        {"name": s.name, "input": s.input, "output": s.output, "initial": entry}
        for s, entry in zip(state, entries, strict=True)
    ]


def _write(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=_DATE)
    info.compress_type = zipfile.ZIP_STORED
    info.create_system = _UNIX
    info.external_attr = _PERMISSIONS << 16
    archive.writestr(info, data)
