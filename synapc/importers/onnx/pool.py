"""ONNX pooling as synap NHWC pools (1-D pools with a unit height) and global pools as
reductions over the spatial axes (GlobalLpPool the Lp norm over them, as ReduceL1 /
ReduceL2 compute it for p = 1 / 2)."""

from __future__ import annotations

import math
from typing import Any

from synapc.dialects.synap import pool, reduce
from synapc.importers.onnx import layout
from synapc.importers.onnx.checks import brief
from synapc.importers.onnx.helpers import (
    bind_channels_last,
    channels_last_2d,
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
    if len(node.outputs) > 1 and node.outputs[1]:
        raise node.fail("the Indices output is not supported")
    _pool(imp, node, pool.MaxPool2DOp, {})


@converts("AveragePool", quantized=_avg_quantized)
def average_pool(imp: Importer, node: Node) -> None:
    _pool(
        imp,
        node,
        pool.AvgPool2DOp,
        {"count_include_pad": bool(node.attr("count_include_pad", 0))},
    )


@converts("LpPool")
def lp_pool(imp: Importer, node: Node) -> None:
    """``(sum |x| ** p) ** (1 / p)`` over each (dilated) window: `synap.lp_pool2d`."""
    require_float(imp, node, node.inputs[0])
    _pool(imp, node, pool.LpPool2DOp, {"p": _order(node)}, dilated=True)


def _order(node: Node) -> float:
    """Attribute `p` of an Lp pool (an integer, a float before opset 2), checked to be a
    positive number."""
    p = node.attr("p", 2)
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 < p < math.inf:
        raise node.fail(f"attribute 'p' {brief(p)} must be a positive number")
    return float(p)


def _pool(
    imp: Importer,
    node: Node,
    op_class: type,
    props: dict[str, Any],
    dilated: bool = False,
) -> None:
    """A 1-D or 2-D pool as `op_class` on NHWC values; `dilated` ops take the
    `dilations` attribute (the others refuse dilations other than 1)."""
    x = node.inputs[0]
    rank = imp.rank(x)
    if rank not in (3, 4):
        raise node.fail(f"only 1-D and 2-D pooling is supported, input rank {rank}")
    spatial = list(imp.shape(x)[2:])
    kernel = node.ints_attr("kernel_shape")
    if kernel is None:
        raise node.fail("attribute 'kernel_shape' is missing")
    strides, dilations, pads = window_attrs(node, spatial, kernel)
    if any(d != 1 for d in dilations) and not dilated:
        raise node.fail(f"dilations {dilations} are not supported")
    n = len(spatial)
    begins, ends = pads[:n], pads[n:]
    if node.attr("ceil_mode", 0):
        extra = []
        spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilations, strict=True)]
        for size, k, s, b, e in zip(spatial, spans, strides, begins, ends, strict=True):
            span = size + b + e - k
            out = -(-span // s) + 1
            if (out - 1) * s >= size + b:  # the last window must start inside
                out -= 1
            extra.append(max((out - 1) * s + k - (size + b + e), 0))
        if any(extra) and props.get("count_include_pad"):
            raise node.fail("ceil_mode with count_include_pad is not supported")
        ends = [e + x for e, x in zip(ends, extra, strict=True)]
    if n == 1:
        kernel, strides, dilations = [1, *kernel], [1, *strides], [1, *dilations]
        begins, ends = [0, *begins], [0, *ends]
    if dilated:
        props = {**props, "dilations": dilations}
    value = channels_last_2d(imp, node, x, quantized=node.quantized)
    op = imp.emit(
        node,
        op_class,
        value,
        output=None,
        kernel=kernel,
        strides=strides,
        pad=to_2d([*begins, *ends]),
        **props,
    )
    bind_channels_last(imp, node, op, rank)


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
