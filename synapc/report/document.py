"""What the report page shows, gathered from a checked package: the summary, the laid
out graph (layers, model inputs and outputs, edges with their tensors, subgraph
boxes), each subgraph's memory plan, and per-layer times and SQNR. A plain JSON-able
dict, embedded in the page (`synapc.report.page`) and drawn there.
"""

from __future__ import annotations

import json
import math
from typing import Any

from synapc.backends.package import Package, PackageError, TensorSpec
from synapc.report.layout import Edge, layout


def _tensor_text(spec: TensorSpec) -> str:
    """``uint8 scale=0.0235 zero_point=128``, ``int8 per-channel axis=3``, ``float32``."""
    q = spec.quantization
    if q is None:
        return spec.data_type
    if q.axis is not None:
        return f"{spec.data_type} per-channel axis={q.axis} ({len(q.scale)} channels)"
    return f"{spec.data_type} scale={q.scale[0]:.6g} zero_point={q.zero_point[0]}"


def _port(spec: TensorSpec) -> dict[str, Any]:
    """A model input or output as the summary lists it."""
    return {
        "name": spec.name,
        "shape": list(spec.shape),
        "type": _tensor_text(spec),
        "layout": spec.layout,
        "format": spec.format,
        "means": list(spec.means) if spec.means is not None else None,
        "scale": spec.scale,
    }


def _preprocessing(metadata: dict[str, str]) -> list[dict[str, Any]]:
    """The package's preprocessing entries (metadata "preprocess", a JSON list of
    objects whose "inputs" name the new inputs); anything else in it is left out."""
    try:
        entries = json.loads(metadata.get("preprocess", "[]"))
    except (ValueError, RecursionError):
        return []
    if not isinstance(entries, list):
        return []
    return [
        entry
        for entry in entries
        if isinstance(entry, dict)
        and isinstance(entry.get("inputs", []), list)
        and all(isinstance(name, str) for name in entry.get("inputs", []))
    ]


def _shape_text(shape: list[int], kind: str) -> str:
    return f"{'x'.join(map(str, shape)) or 'scalar'} {kind}"


def report_document(package: Package) -> dict[str, Any]:
    """The report of `package` (read by `read_package`); a package without a
    description (not written by ``synapc convert``) raises `PackageError`."""
    description = package.description
    if description is None:
        raise PackageError(
            f"{package.path}: the package has no description.json: write it with "
            "'synapc convert' (packages of synapc.compile carry none)"
        )
    layers = description["layers"]
    inputs = [_port(s) for s in package.inputs]
    outputs = [_port(s) for s in package.outputs]

    def node(ref: list[int]) -> str:
        return f"i{ref[1]}" if ref[0] == -1 else f"l{ref[0]}"

    def label(ref: list[int]) -> str:
        if ref[0] == -1:
            return _shape_text(inputs[ref[1]]["shape"], inputs[ref[1]]["type"])
        out = layers[ref[0]]["outputs"][ref[1]]
        return _shape_text(out["shape"], out["type"])

    edges: list[Edge] = []
    edge_info: list[dict[str, Any]] = []
    for index, layer in enumerate(layers):
        for ref in layer["operands"]:
            edges.append(Edge(node(ref), f"l{index}"))
            edge_info.append({"from": ref, "to": index, "label": label(ref)})
    for j, ref in enumerate(description["outputs"]):
        edges.append(Edge(node(ref), f"o{j}"))
        edge_info.append({"from": ref, "to": f"o{j}", "label": label(ref)})
    ports = [(f"i{i}", True) for i in range(len(inputs))]
    ports += [(f"o{j}", True) for j in range(len(outputs))]
    clusters: dict[int, list[str]] = {}
    if len(package.subgraphs) > 1:
        for index, layer in enumerate(layers):
            clusters.setdefault(layer["subgraph"], []).append(f"l{index}")
    placed = layout([(f"l{k}", False) for k in range(len(layers))] + ports, edges, clusters)
    for k, layer in enumerate(layers):
        layer["x"], layer["y"] = placed.nodes[f"l{k}"]
    for prefix, ports_of in (("i", inputs), ("o", outputs)):
        for k, port in enumerate(ports_of):
            port["x"], port["y"] = placed.nodes[f"{prefix}{k}"]
    for info, (path, middle) in zip(edge_info, placed.paths, strict=True):
        info["path"], info["mid"] = path, middle
    first: dict[int, int] = {}  # subgraph -> its first layer's index
    for index, layer in enumerate(layers):
        first.setdefault(layer["subgraph"], index)
    plans = [
        {
            "subgraph": k,
            "delegate": s.delegate,
            "figures": s.memory_plan.figures,
            "tensors": [
                [
                    t.layer + first.get(k, 0),
                    t.out,
                    t.memory,
                    t.offset,
                    t.size,
                    t.first,
                    t.last,
                ]
                for t in s.memory_plan.tensors
            ],
        }
        for k, s in enumerate(package.subgraphs)
        if s.memory_plan is not None
    ]
    bundle = package.bundle
    return {
        "title": f"{bundle['source'].get('model', package.path.name)} on {package.target}",
        "summary": {
            "target": package.target,
            "source": dict(bundle["source"]),
            "package": str(package.path.name),
            "package_bytes": package.size,
            "inputs": inputs,
            "outputs": outputs,
            "preprocessing": _preprocessing(bundle["metadata"]),
            "subgraphs": [
                {
                    "delegate": s.delegate,
                    "layers": sum(1 for layer in layers if layer["subgraph"] == k),
                    "weight_bytes": int(sum(w.nbytes for w in s.weights)),
                }
                for k, s in enumerate(package.subgraphs)
            ],
            "quantized": description["quantized"],
        },
        "layers": layers,
        "edges": edge_info,
        "clusters": [
            {"subgraph": k, "delegate": package.subgraphs[k].delegate, "box": box}
            for k, box in placed.clusters.items()
        ],
        "size": [math.ceil(placed.width), math.ceil(placed.height)],
        "plans": plans,
    }
