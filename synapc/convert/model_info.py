"""`model_info.txt`: what a conversion produced, for people reading it, as `synap
convert` writes one: inputs and outputs (shapes, types, quantization), subgraphs, the
layer table (which source layers each layer of the converted model computes), the
operation table and memory usage."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, StringAttr, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from synapc.backends.package import Subgraph, TensorSpec
from synapc.dialects.synap.constant import ConstantOp
from synapc.dtypes import numpy_dtype


def source_layers(op: Operation) -> list[str]:
    """The source layers an op computes: its own `layer_name` and its `fused_layers`."""
    names = []
    own = op.attributes.get("layer_name")
    if isinstance(own, StringAttr):
        names.append(own.data)
    fused = op.attributes.get("fused_layers")
    if isinstance(fused, ArrayAttr):
        names += [a.data for a in fused.data if isinstance(a, StringAttr)]
    return names


def layer_names(func: FuncOp) -> list[str]:
    """Every source layer name of a function's ops, in op order (imported models)."""
    return [n for op in func.body.block.ops for n in source_layers(op)]


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A left-aligned text table."""
    cells = [list(header)] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def _quantization(spec: TensorSpec) -> str:
    q = spec.quantization
    if q is None:
        return "-"
    if q.axis is None:
        return f"scale={q.scale[0]:.6g} zero_point={q.zero_point[0]}"
    return f"per-channel axis={q.axis} ({len(q.scale)} scales)"


def _io_rows(specs: Sequence[TensorSpec], inputs: bool) -> list[list[object]]:
    rows = []
    for i, s in enumerate(specs):
        row: list[object] = [
            i,
            s.name,
            "x".join(map(str, s.shape)),
            s.layout,
            s.data_type,
            _quantization(s),
            s.format or "-",
        ]
        if inputs:
            means = "-" if s.means is None else ",".join(f"{m:g}" for m in s.means)
            row += [means, "-" if s.scale is None else f"{s.scale:g}"]
        rows.append(row)
    return rows


def _nbytes(value: SSAValue) -> int:
    t = value.type
    if not isinstance(t, TensorType):
        return 0
    return (
        int(np.prod(t.get_shape(), dtype=np.int64)) * numpy_dtype(t.element_type).itemsize
    )


def _shape(value: SSAValue) -> str:
    t = value.type
    return "x".join(map(str, t.get_shape())) if isinstance(t, TensorType) else "?"


def _type(value: SSAValue) -> str:
    t = value.type
    return str(t.element_type) if isinstance(t, TensorType) else "?"


def activation_peak(func: FuncOp) -> tuple[int, int]:
    """(peak bytes of simultaneously live activations in op order, total bytes of all
    activations): a lower bound for the activation arena and what no reuse would take."""
    ops = list(func.body.block.ops)
    last_use: dict[SSAValue, int] = {}
    for index, op in enumerate(ops):
        for v in op.operands:
            last_use[v] = index
    live = {a: _nbytes(a) for a in func.body.block.args}
    total = sum(live.values())
    peak = total
    for index, op in enumerate(ops):
        if isinstance(op, ConstantOp | ReturnOp):
            continue
        for r in op.results:
            live[r] = _nbytes(r)
            total += live[r]
        peak = max(peak, sum(live.values()))
        for v in [v for v in live if last_use.get(v, -1) <= index]:
            del live[v]
    return peak, total


def model_info(
    *,
    title: str,
    func: FuncOp,
    source_layer_names: Sequence[str],
    inputs: Sequence[TensorSpec],
    outputs: Sequence[TensorSpec],
    subgraphs: Sequence[Subgraph],
    layers: Sequence[Operation],
) -> str:
    """The text of model_info.txt for the converted `func` and its package parts;
    `source_layer_names` are the layer names of the model as imported."""
    lines = [title, ""]
    lines += [
        "Inputs",
        *_table(
            [
                "#",
                "name",
                "shape",
                "layout",
                "type",
                "quantization",
                "format",
                "means",
                "scale",
            ],
            _io_rows(inputs, True),
        ),
        "",
    ]
    lines += [
        "Outputs",
        *_table(
            ["#", "name", "shape", "layout", "type", "quantization", "format"],
            _io_rows(outputs, False),
        ),
        "",
    ]
    sub_rows = [
        [
            i,
            s.delegate,
            len(s.inputs),
            len(s.outputs),
            len(layers),
            sum(w.nbytes for w in s.weights),
        ]
        for i, s in enumerate(subgraphs)
    ]
    lines += [
        "Subgraphs",
        *_table(["#", "delegate", "inputs", "outputs", "layers", "weight bytes"], sub_rows),
        "",
    ]

    delegate = subgraphs[0].delegate if subgraphs else "-"
    layer_rows = []
    found: set[str] = set()
    for k, op in enumerate(layers):
        names = source_layers(op)
        found.update(names)
        label = names[0] if names else "-"
        layer_rows.append(
            [
                k,
                label,
                op.name.removeprefix("synap."),
                _shape(op.results[0]) if op.results else "-",
                _type(op.results[0]) if op.results else "-",
                delegate,
                ", ".join(names) or "-",
            ]
        )
    lines += [
        f"Layers ({len(layers)} layers computing {len(source_layer_names)} source layers)",
        *_table(
            [
                "#",
                "layer",
                "type",
                "output shape",
                "output type",
                "delegate",
                "source layers",
            ],
            layer_rows,
        ),
    ]
    gone = [n for n in dict.fromkeys(source_layer_names) if n not in found]
    if gone:
        lines.append(f"source layers folded into constants or removed: {', '.join(gone)}")
    lines.append("")

    counts = Counter(op.name.removeprefix("synap.") for op in layers)
    lines += ["Operations", *_table(["operation", "count"], sorted(counts.items())), ""]

    weight_bytes = sum(w.nbytes for s in subgraphs for w in s.weights)
    peak, total = activation_peak(func)
    io_bytes = sum(
        int(np.prod(s.shape, dtype=np.int64)) * np.dtype(s.data_type).itemsize
        for s in (*inputs, *outputs)
    )
    lines += [
        "Memory usage (bytes)",
        f"weights: {weight_bytes}",
        f"activations, peak live (lower bound of the arena): {peak}",
        f"activations, all tensors without reuse: {total}",
        f"inputs and outputs: {io_bytes}",
        "",
    ]
    return "\n".join(lines)
