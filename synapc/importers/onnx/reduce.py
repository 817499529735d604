"""ONNX reductions and arg-reductions; axes move with the input's layout."""

from __future__ import annotations

import numpy as np

from synapc.dialects.synap import reduce
from synapc.dtypes import element_type_for
from synapc.importers.onnx import layout
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
        axes = list(node.attr("axes", []))
    keep = bool(node.attr("keepdims", 1))
    if not axes:
        if node.attr("noop_with_empty_axes", 0):
            imp.tensors[imp.out_name(node)] = imp.tensor(x)
            return
        axes = list(range(rank))
    axes = sorted({a + rank if a < 0 else a for a in axes})
    perm = imp.perm(x)
    value = imp.get(x, "any", quantized=node.quantized)
    physical = sorted(layout.physical_axis(perm, a, rank) for a in axes)
    out_perm = perm if keep else layout.without_axes(perm, axes)
    imp.emit(
        node, _REDUCE[node.op_type], value, perm=out_perm, axes=physical, keep_dims=keep
    )


@converts("ArgMax", "ArgMin")
def arg_reduce(imp: Importer, node: Node) -> None:
    if node.attr("select_last_index", 0):
        raise node.fail("select_last_index=1 is not supported")
    x = node.inputs[0]
    rank = imp.rank(x)
    axis = int(node.attr("axis", 0))
    axis = axis + rank if axis < 0 else axis
    keep = bool(node.attr("keepdims", 1))
    perm = imp.perm(x)
    op_class = reduce.ArgMaxOp if node.op_type == "ArgMax" else reduce.ArgMinOp
    imp.emit(
        node,
        op_class,
        imp.get(x, "any"),
        perm=perm if keep else layout.without_axes(perm, [axis]),
        element_type=element_type_for(np.int64),
        axis=layout.physical_axis(perm, axis, rank),
        keep_dims=keep,
    )
