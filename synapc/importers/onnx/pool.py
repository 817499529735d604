"""ONNX pooling as synap NHWC pools (1-D pools with a unit height) and global pools as
reductions over the spatial axes."""

from __future__ import annotations

from synapc.dialects.synap import pool, reduce
from synapc.importers.onnx import layout
from synapc.importers.onnx.helpers import (
    bind_channels_last,
    channels_last_2d,
    to_2d,
    window_attrs,
)
from synapc.importers.onnx.reader import Importer, Node, converts


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


def _pool(imp: Importer, node: Node, op_class: type, props: dict) -> None:
    x = node.inputs[0]
    rank = imp.rank(x)
    if rank not in (3, 4):
        raise node.fail(f"only 1-D and 2-D pooling is supported, input rank {rank}")
    spatial = list(imp.shape(x)[2:])
    kernel = node.ints_attr("kernel_shape")
    if kernel is None:
        raise node.fail("attribute 'kernel_shape' is missing")
    strides, dilations, pads = window_attrs(node, spatial, kernel)
    if any(d != 1 for d in dilations):
        raise node.fail(f"dilations {dilations} are not supported")
    n = len(spatial)
    begins, ends = pads[:n], pads[n:]
    if node.attr("ceil_mode", 0):
        extra = []
        for size, k, s, b, e in zip(spatial, kernel, strides, begins, ends, strict=True):
            span = size + b + e - k
            out = -(-span // s) + 1
            if (out - 1) * s >= size + b:  # the last window must start inside
                out -= 1
            extra.append(max((out - 1) * s + k - (size + b + e), 0))
        if any(extra) and props.get("count_include_pad"):
            raise node.fail("ceil_mode with count_include_pad is not supported")
        ends = [e + x for e, x in zip(ends, extra, strict=True)]
    if n == 1:
        kernel, strides = [1, *kernel], [1, *strides]
        begins, ends = [0, *begins], [0, *ends]
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
