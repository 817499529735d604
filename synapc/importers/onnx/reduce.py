"""ONNX reductions and arg-reductions; axes move with the input's layout."""

from __future__ import annotations

import numpy as np

from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap import reduce
from synapc.dialects.synap.base import shape_of
from synapc.dtypes import element_type_for, numpy_dtype
from synapc.importers.onnx import layout
from synapc.importers.onnx.helpers import broadcast_operands
from synapc.importers.onnx.reader import Importer, Node, converts

_REDUCE = {
    "ReduceMean": reduce.ReduceMeanOp,
    "ReduceSum": reduce.ReduceSumOp,
    "ReduceMax": reduce.ReduceMaxOp,
    "ReduceMin": reduce.ReduceMinOp,
}
#: The opset from which each reduction takes its axes as an input, not an attribute.
_AXES_INPUT_FROM = {"ReduceSum": 13}


def _mean_inputs(node: Node) -> list[str | None] | None:
    return (
        node.inputs[:1]
        if node.op_type in ("ReduceMean", "ReduceMax", "ReduceMin")
        else None
    )


@converts(*_REDUCE, quantized=_mean_inputs)
def reduction(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    rank = imp.rank(x)
    if node.opset >= _AXES_INPUT_FROM.get(node.op_type, 18):
        axes_name = node.input(1)
        axes_value = imp.const(axes_name)
        if axes_name is not None and axes_value is None:
            raise node.fail("axes (input 1) must be a constant")
        axes = (
            []
            if axes_value is None
            else [int(a) for a in np.asarray(axes_value).reshape(-1)]
        )
    else:
        axes = node.ints_attr("axes", [])
    keep = bool(node.attr("keepdims", 1))
    if not axes:
        if node.attr("noop_with_empty_axes", 0):
            imp.tensors[imp.out_name(node)] = imp.tensor(x)
            return
        axes = list(range(rank))
    axes = sorted({node.axis(a, rank, "reduction axis") for a in axes})
    shape = imp.shape(x)
    if any(shape[a] == 0 for a in axes):
        _empty_reduction(imp, node, shape, axes, keep)
        return
    perm = imp.perm(x)
    value = imp.get(x, "any", quantized=node.quantized)
    physical = sorted(layout.physical_axis(perm, a, rank) for a in axes)
    out_perm = perm if keep else layout.without_axes(perm, axes)
    imp.emit(
        node, _REDUCE[node.op_type], value, perm=out_perm, axes=physical, keep_dims=keep
    )


def _empty_reduction(
    imp: Importer, node: Node, shape: tuple[int, ...], axes: list[int], keep: bool
) -> None:
    """A reduction over an empty axis: ONNX gives the reduction's identity (0 for a sum,
    -inf / the type's minimum for a max, ...), which does not depend on the input."""
    dtype = numpy_dtype(imp.element_type(node.inputs[0]))
    if node.op_type == "ReduceMean":
        raise node.fail("the mean over an empty axis is undefined")
    if node.op_type == "ReduceSum":
        fill: object = 0
    elif dtype == np.bool_:
        fill = node.op_type == "ReduceMin"
    elif dtype.kind == "f":
        fill = -np.inf if node.op_type == "ReduceMax" else np.inf
    else:
        info = np.iinfo(dtype)
        fill = info.min if node.op_type == "ReduceMax" else info.max
    out = [1 if i in axes else d for i, d in enumerate(shape) if keep or i not in axes]
    imp.bind_const(imp.out_name(node), np.full(out, fill, dtype))


@converts("ArgMax", "ArgMin")
def arg_reduce(imp: Importer, node: Node) -> None:
    """Index of the first (or with `select_last_index`, the last) extreme value; the last
    one is the first of the input reversed along the axis, counted from the end."""
    x = node.inputs[0]
    rank = imp.rank(x)
    axis = node.axis(node.int_attr("axis", 0), rank)
    keep = bool(node.attr("keepdims", 1))
    perm = imp.perm(x)
    op_class = reduce.ArgMaxOp if node.op_type == "ArgMax" else reduce.ArgMinOp
    value = imp.get(x, "any")
    p_axis = layout.physical_axis(perm, axis, rank)
    last = bool(node.attr("select_last_index", 0))
    size = imp.shape(x)[axis]
    if last:
        physical = shape_of(value)
        begin = [0] * rank
        end = list(physical)
        strides = [1] * rank
        begin[p_axis], end[p_axis], strides[p_axis] = size - 1, -1, -1
        value = imp.append(
            dm.StridedSliceOp.make(
                value, begin=begin, end=end, strides=strides, **node.source
            )
        )
    out_perm = perm if keep else layout.without_axes(perm, [axis])
    op = imp.emit(
        node,
        op_class,
        value,
        perm=out_perm,
        element_type=element_type_for(np.int64),
        output=None if last else 0,
        axis=p_axis,
        keep_dims=keep,
    )
    if last:
        reversed_index = f"{node.outputs[0]}#reversed"
        imp.bind(reversed_index, op.results[0], out_perm)
        top = f"{node.outputs[0]}#last"
        imp.bind_const(top, np.full((1,) * imp.rank(reversed_index), size - 1, np.int64))
        values, result_perm = broadcast_operands(imp, node, [top, reversed_index])
        imp.emit(node, ew.SubOp, *values, perm=result_perm)
