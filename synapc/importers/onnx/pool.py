"""ONNX pooling as synap NHWC pools (1-D pools with a unit height; 3-D, dilated max /
average pools and MaxPool's Indices as the channels-last N-D pools) and global pools as
reductions over the spatial axes (GlobalLpPool the Lp norm over them, as ReduceL1 /
ReduceL2 compute it for p = 1 / 2)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import i64

from synapc.dialects.synap import pool, reduce, window_nd
from synapc.dialects.synap.data_movement import PadOp
from synapc.importers.onnx import layout
from synapc.importers.onnx.checks import brief
from synapc.importers.onnx.helpers import (
    bind_channels_last,
    channels_last_2d,
    interleave_pads,
    to_2d,
    window_attrs,
)
from synapc.importers.onnx.reader import Importer, Node, converts
from synapc.importers.onnx.reduce import lp_norm, require_float


def _input(node: Node) -> list[str | None]:
    return node.inputs[:1]


def _avg_quantized(node: Node) -> list[str | None] | None:
    return _input(node) if not node.attr("count_include_pad", 0) else None


@converts("MaxPool", quantized=_input)
def max_pool(imp: Importer, node: Node) -> None:
    """MaxPool: `synap.max_pool2d` (1-D with a unit height) where it expresses the
    window, else the channels-last N-D max pool; the Indices output (flat NCHW
    positions, `storage_order` 0 row-major or 1 column-major) by the N-D indices op."""
    indices = len(node.outputs) > 1 and bool(node.outputs[1])
    if indices and node.int_attr("storage_order", 0) not in (0, 1):
        raise node.fail(
            f"attribute 'storage_order' {node.attr('storage_order')} must be 0 or 1"
        )
    _pool(imp, node, pool.MaxPool2DOp, window_nd.MaxPoolNDOp, {}, indices=indices)


@converts("AveragePool", quantized=_avg_quantized)
def average_pool(imp: Importer, node: Node) -> None:
    """AveragePool: `synap.avg_pool2d` (1-D with a unit height) where it expresses the
    window, else the channels-last N-D average pool; `count_include_pad` counts the
    explicit padding but never the ceil-mode overhang."""
    _pool(
        imp,
        node,
        pool.AvgPool2DOp,
        window_nd.AvgPoolNDOp,
        {"count_include_pad": bool(node.attr("count_include_pad", 0))},
    )


@converts("LpPool")
def lp_pool(imp: Importer, node: Node) -> None:
    """``(sum |x| ** p) ** (1 / p)`` over each (dilated) window: `synap.lp_pool2d`, or
    `synap.lp_pool_nd` for 3-D windows."""
    require_float(imp, node, node.inputs[0])
    _pool(
        imp, node, pool.LpPool2DOp, window_nd.LpPoolNDOp, {"p": _order(node)}, dilated=True
    )


def _order(node: Node) -> float:
    """Attribute `p` of an Lp pool (an integer, a float before opset 2), checked to be a
    positive number."""
    p = node.attr("p", 2)
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 < p < math.inf:
        raise node.fail(f"attribute 'p' {brief(p)} must be a positive number")
    return float(p)


@dataclass
class _Window:
    """A pool's window geometry per spatial axis; `ends` include the ceil-mode overhang
    (`overhang`), cells beyond the input that no window average counts."""

    kernel: list[int]
    strides: list[int]
    dilations: list[int]
    begins: list[int]
    ends: list[int]
    overhang: list[int]


def _geometry(imp: Importer, node: Node, x: str) -> _Window:
    """The window of pool `node` over input `x` (rank 3 to 5), ceil_mode resolved into
    extra end padding."""
    rank = imp.rank(x)
    if rank not in (3, 4, 5):
        raise node.fail(f"only 1-D, 2-D and 3-D pooling is supported, input rank {rank}")
    spatial = list(imp.shape(x)[2:])
    kernel = node.ints_attr("kernel_shape")
    if kernel is None:
        raise node.fail("attribute 'kernel_shape' is missing")
    strides, dilations, pads = window_attrs(node, spatial, kernel)
    n = len(spatial)
    begins, ends = list(pads[:n]), list(pads[n:])
    extra = [0] * n
    if node.attr("ceil_mode", 0):
        spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilations, strict=True)]
        for i, (size, k, s, b, e) in enumerate(
            zip(spatial, spans, strides, begins, ends, strict=True)
        ):
            out = -(-(size + b + e - k) // s) + 1
            if (out - 1) * s >= size + b:  # the last window must start inside
                out -= 1
            extra[i] = max((out - 1) * s + k - (size + b + e), 0)
    ends = [e + x for e, x in zip(ends, extra, strict=True)]
    return _Window(list(kernel), strides, dilations, begins, ends, extra)


def _pool(
    imp: Importer,
    node: Node,
    op_2d: type,
    op_nd: type,
    props: dict[str, Any],
    dilated: bool = False,
    indices: bool = False,
) -> None:
    """A pool as `op_2d` (1-D pools with a unit height) where it can express the window,
    else as the N-D `op_nd`; `dilated` 2-D ops take the `dilations` attribute."""
    x = node.inputs[0]
    rank = imp.rank(x)
    w = _geometry(imp, node, x)
    ceil_counts_pad = any(w.overhang) and props.get("count_include_pad")
    undilated = all(d == 1 for d in w.dilations)
    if rank == 5 or indices or ceil_counts_pad or not (undilated or dilated):
        _pool_nd(imp, node, op_nd, props, w, indices)
        return
    kernel, strides, dilations = w.kernel, w.strides, w.dilations
    begins, ends = w.begins, w.ends
    if rank == 3:
        kernel, strides, dilations = [1, *kernel], [1, *strides], [1, *dilations]
        begins, ends = [0, *begins], [0, *ends]
    if dilated:
        props = {**props, "dilations": dilations}
    value = channels_last_2d(imp, node, x, quantized=node.quantized)
    op = imp.emit(
        node,
        op_2d,
        value,
        output=None,
        kernel=kernel,
        strides=strides,
        pad=to_2d([*begins, *ends]),
        **props,
    )
    bind_channels_last(imp, node, op, rank)


def _pool_nd(
    imp: Importer,
    node: Node,
    op_class: type,
    props: dict[str, Any],
    w: _Window,
    indices: bool,
) -> None:
    """A pool as the channels-last N-D `op_class`, with MaxPool's Indices when asked.

    An average pool that counts padding but not the ceil-mode overhang (ONNX) pads the
    input with zeros first, then counts the cells inside the padded input."""
    x = node.inputs[0]
    rank = imp.rank(x)
    perm = layout.channels_last(rank)
    value = imp.get(x, perm, quantized=node.quantized)
    pairs = interleave_pads(w.begins, w.ends)
    if any(w.overhang) and props.get("count_include_pad"):
        explicit = [e - o for e, o in zip(w.ends, w.overhang, strict=True)]
        widths = interleave_pads(w.begins, explicit)
        value = imp.append(PadOp.make(value, pads=[0, 0, *widths, 0, 0], **node.source))
        pairs = interleave_pads([0] * len(w.overhang), w.overhang)
        props = {**props, "count_include_pad": False}
    window = {
        "kernel": w.kernel,
        "strides": w.strides,
        "dilations": w.dilations,
        "pad": pairs,
    }
    imp.emit(node, op_class, value, perm=perm, **window, **props)
    if indices:
        op = window_nd.MaxPoolIndicesNDOp.make(
            value,
            element_type=i64,
            storage_order=node.int_attr("storage_order", 0),
            **window,
            **node.source,
        )
        imp.bind(imp.out_name(node, 1), imp.append(op), perm)


@converts("GlobalAveragePool", "GlobalMaxPool", quantized=_input)
def global_pool(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    rank = imp.rank(x)
    op_class = (
        reduce.ReduceMeanOp if node.op_type == "GlobalAveragePool" else reduce.ReduceMaxOp
    )
    perm = imp.perm(x) or (layout.channels_last(rank) if rank > 2 else None)
    value = imp.get(x, perm, quantized=node.quantized)
    axes = [layout.physical_axis(perm, a, rank) for a in range(2, rank)]
    imp.emit(node, op_class, value, perm=perm, axes=axes, keep_dims=True)


@converts("GlobalLpPool")
def global_lp_pool(imp: Importer, node: Node) -> None:
    """``(sum |x| ** p) ** (1 / p)`` over all spatial axes, keeping them as unit axes."""
    require_float(imp, node, node.inputs[0])
    p = _order(node)
    x = node.inputs[0]
    rank = imp.rank(x)
    if rank < 2:
        raise node.fail(f"the input must have a channel axis, got rank {rank}")
    perm = imp.perm(x) or (layout.channels_last(rank) if rank > 2 else None)
    value = imp.get(x, perm)
    axes = sorted(layout.physical_axis(perm, a, rank) for a in range(2, rank))
    imp.bind_output(node, lp_norm(imp, node, value, axes, True, p), perm)
