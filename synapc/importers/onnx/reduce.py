"""ONNX reductions, arg-reductions, Hardmax and CumSum; axes move with the input's layout.

ReduceMean, ReduceSum, ReduceMax, ReduceMin and ReduceProd are one synap reduction each.
The other reductions compose what ONNX defines from ops an NPU runs as layers:
ReduceL1 is ``reduce_sum(abs(x))``, ReduceSumSquare ``reduce_sum(square(x))``, ReduceL2
the ``sqrt`` of that (through float32 for integers, truncated back as ONNX's cast does),
ReduceLogSum ``log(reduce_sum(x))`` and ReduceLogSumExp ``m + log(reduce_sum(exp(x -
m)))``, with ``m`` the maximum over the axes clamped to the finite range: stable for
large inputs, and an infinite maximum does not turn into NaN. With `noop_with_empty_axes`
and no axes, only the steps around the reduction run (ReduceLogSum is ``log(x)``,
ReduceSumSquare ``x * x``). Hardmax is the one-hot of ArgMax, built with integer
arithmetic; CumSum is `synap.cumsum`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import SSAValue

from synapc.dialects.synap import activation as act
from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap import reduce
from synapc.dialects.synap.base import SynapOp, element_of, is_float, shape_of
from synapc.dialects.synap.conversion import CastOp
from synapc.dtypes import element_type_for, numpy_dtype
from synapc.importers.onnx import layout
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.helpers import broadcast_operands
from synapc.importers.onnx.reader import Importer, Node, converts

#: Reductions that are one synap op.
_SINGLE = {
    "ReduceMean": reduce.ReduceMeanOp,
    "ReduceSum": reduce.ReduceSumOp,
    "ReduceMax": reduce.ReduceMaxOp,
    "ReduceMin": reduce.ReduceMinOp,
    "ReduceProd": reduce.ReduceProdOp,
}
#: The opset from which each reduction takes its axes as an input, not an attribute.
_AXES_INPUT_FROM = {"ReduceSum": 13}
#: Each reduction's value over an empty set (ReduceMax / ReduceMin: the type's extremes).
_EMPTY = {
    "ReduceSum": 0.0,
    "ReduceL1": 0.0,
    "ReduceL2": 0.0,
    "ReduceSumSquare": 0.0,
    "ReduceProd": 1.0,
    "ReduceLogSum": -math.inf,
    "ReduceLogSumExp": -math.inf,
}
#: Reductions defined for booleans (opset 20 added them to ReduceMax and ReduceMin).
_BOOLEAN = {"ReduceMax", "ReduceMin"}
#: Reductions defined for floats only (ONNX computes a logarithm).
_FLOAT_ONLY = {"ReduceLogSum", "ReduceLogSumExp"}


def _mean_inputs(node: Node) -> list[str | None] | None:
    return (
        node.inputs[:1]
        if node.op_type in ("ReduceMean", "ReduceMax", "ReduceMin")
        else None
    )


# -- building blocks ---------------------------------------------------------------------
def apply(imp: Importer, node: Node, op_class: type[SynapOp], value: SSAValue) -> SSAValue:
    """The elementwise op `op_class` of `value`, attributed to `node`."""
    return imp.append(op_class.make(value, **node.source))


def combine(
    imp: Importer, node: Node, op_class: type[SynapOp], lhs: SSAValue, rhs: SSAValue
) -> SSAValue:
    """The broadcasting binary op `op_class` of `lhs` and `rhs`, attributed to `node`."""
    return imp.append(op_class.make(lhs, rhs, **node.source))


def reduced(
    imp: Importer,
    node: Node,
    op_class: type[reduce._Reduce],
    value: SSAValue,
    axes: list[int],
    keep: bool,
) -> SSAValue:
    """`value` reduced by `op_class` over the IR axes `axes` (itself when there are
    none: ONNX's reduction over an empty set of axes)."""
    if not axes:
        return value
    return imp.append(op_class.make(value, axes=axes, keep_dims=keep, **node.source))


def scalar(
    imp: Importer, node: Node, like: SSAValue, number: float, label: str
) -> SSAValue:
    """A constant `number` of `like`'s element type that broadcasts against it (`label`
    names it, unique within the node)."""
    name = f"{node.outputs[0]}#{label}"
    dtype = numpy_dtype(element_of(like))
    imp.bind_const(name, np.full((1,) * len(shape_of(like)), number, dtype))
    return imp.get(name)


def real_function(
    imp: Importer, node: Node, op_class: type[SynapOp], value: SSAValue
) -> SSAValue:
    """The real-valued elementwise function `op_class` of `value`; integers go through
    float32 and back, truncated toward zero as ONNX casts."""
    element = element_of(value)
    if is_float(element):
        return apply(imp, node, op_class, value)
    shape = shape_of(value)
    as_float = imp.append(
        CastOp.make(
            value,
            result_types=[TensorType(element_type_for(np.float32), shape)],
            **node.source,
        )
    )
    computed = apply(imp, node, op_class, as_float)
    return imp.append(
        CastOp.make(computed, result_types=[TensorType(element, shape)], **node.source)
    )


def float_limits(element: object) -> ml_dtypes.finfo:
    """The float limits of an IR float type, at most float32's (the backend computes
    wider floats in float32)."""
    dtype = numpy_dtype(element)  # type: ignore[arg-type]
    return ml_dtypes.finfo(dtype if dtype.itemsize <= 4 else np.float32)


def require_float(imp: Importer, node: Node, name: str) -> None:
    """Refuse input `name` of `node` unless it holds floats (real-valued operators)."""
    element = imp.element_type(name)
    if not is_float(element):
        raise node.fail(f"input '{shown(name)}' is {element}; the operator takes floats")


# -- composite reductions over IR axes ---------------------------------------------------
Composite = Callable[[Importer, Node, SSAValue, list[int], bool], SSAValue]


def _l1(
    imp: Importer, node: Node, value: SSAValue, axes: list[int], keep: bool
) -> SSAValue:
    """ReduceL1: ``sum(|x|)``."""
    magnitude = apply(imp, node, act.AbsOp, value)
    return reduced(imp, node, reduce.ReduceSumOp, magnitude, axes, keep)


def _sum_square(
    imp: Importer, node: Node, value: SSAValue, axes: list[int], keep: bool
) -> SSAValue:
    """ReduceSumSquare: ``sum(x * x)``."""
    squared = apply(imp, node, act.SquareOp, value)
    return reduced(imp, node, reduce.ReduceSumOp, squared, axes, keep)


def _l2(
    imp: Importer, node: Node, value: SSAValue, axes: list[int], keep: bool
) -> SSAValue:
    """ReduceL2: ``sqrt(sum(x * x))``; over no axes ``|x|``, which cannot overflow."""
    if not axes:
        return apply(imp, node, act.AbsOp, value)
    total = _sum_square(imp, node, value, axes, keep)
    return real_function(imp, node, act.SqrtOp, total)


def _log_sum(
    imp: Importer, node: Node, value: SSAValue, axes: list[int], keep: bool
) -> SSAValue:
    """ReduceLogSum: ``log(sum(x))``."""
    total = reduced(imp, node, reduce.ReduceSumOp, value, axes, keep)
    return apply(imp, node, act.LogOp, total)


def _log_sum_exp(
    imp: Importer, node: Node, value: SSAValue, axes: list[int], keep: bool
) -> SSAValue:
    """ReduceLogSumExp: ``m + log(sum(exp(x - m)))`` with ``m`` the maximum, clamped to
    the finite floats (an infinite ``m`` would give ``inf - inf``); over no axes ``x``."""
    if not axes:
        return value
    top = reduced(imp, node, reduce.ReduceMaxOp, value, axes, True)
    bound = float(float_limits(element_of(value)).max)
    finite = imp.append(act.ClampOp.make(top, min=-bound, max=bound, **node.source))
    exps = apply(imp, node, act.ExpOp, combine(imp, node, ew.SubOp, value, finite))
    total = reduced(imp, node, reduce.ReduceSumOp, exps, axes, True)
    result = combine(imp, node, ew.AddOp, apply(imp, node, act.LogOp, total), finite)
    if keep:
        return result
    kept = [d for i, d in enumerate(shape_of(result)) if i not in axes]
    return imp.reshape(result, kept, **node.source)


_COMPOSITE: dict[str, Composite] = {
    "ReduceL1": _l1,
    "ReduceL2": _l2,
    "ReduceSumSquare": _sum_square,
    "ReduceLogSum": _log_sum,
    "ReduceLogSumExp": _log_sum_exp,
}


def lp_norm(
    imp: Importer, node: Node, value: SSAValue, axes: list[int], keep: bool, p: float
) -> SSAValue:
    """``(sum |x| ** p) ** (1 / p)`` over the IR axes `axes`: ReduceL1 for p = 1,
    ReduceL2 for p = 2, powers otherwise."""
    if p == 1:
        return _l1(imp, node, value, axes, keep)
    if p == 2:
        return _l2(imp, node, value, axes, keep)
    magnitude = apply(imp, node, act.AbsOp, value)
    powered = combine(imp, node, ew.PowOp, magnitude, scalar(imp, node, value, p, "p"))
    total = reduced(imp, node, reduce.ReduceSumOp, powered, axes, keep)
    root = scalar(imp, node, total, 1 / p, "inverse_p")
    return combine(imp, node, ew.PowOp, total, root)


# -- the converters ----------------------------------------------------------------------
def _axes(imp: Importer, node: Node, rank: int) -> list[int]:
    """The logical axes `node` reduces, sorted and distinct: the `axes` input (which must
    be a constant) from opset 18 (13 for ReduceSum), the attribute before. None given
    means every axis, or none at all with `noop_with_empty_axes`."""
    if node.opset >= _AXES_INPUT_FROM.get(node.op_type, 18):
        given = [] if node.input(1) is None else imp.const_ints(node, 1, "axes")
    else:
        given = node.ints_attr("axes", [])
    if not given:
        return [] if node.int_attr("noop_with_empty_axes", 0) else list(range(rank))
    return sorted({node.axis(a, rank, "reduction axis") for a in given})


def _check_element(imp: Importer, node: Node, name: str) -> None:
    """Refuse an input type the reduction is not defined for."""
    if node.op_type in _FLOAT_ONLY:
        require_float(imp, node, name)
    element = imp.element_type(name)
    boolean = isinstance(element, IntegerType) and element.width.data == 1
    if boolean and node.op_type not in _BOOLEAN:
        raise node.fail(f"input '{shown(name)}' is boolean; the operator takes numbers")


@converts(*_SINGLE, *_COMPOSITE, quantized=_mean_inputs)
def reduction(imp: Importer, node: Node) -> None:
    """Every ONNX Reduce* operator (see the module docstring)."""
    x = node.inputs[0]
    rank = imp.rank(x)
    _check_element(imp, node, x)
    axes = _axes(imp, node, rank)
    keep = bool(node.int_attr("keepdims", 1))
    shape = imp.shape(x)
    if any(shape[a] == 0 for a in axes):
        _empty_reduction(imp, node, shape, axes, keep)
        return
    perm = imp.perm(x)
    value = imp.get(x, "any", quantized=node.quantized)
    physical = sorted(layout.physical_axis(perm, a, rank) for a in axes)
    out_perm = perm if keep else layout.without_axes(perm, axes)
    op_class = _SINGLE.get(node.op_type)
    if op_class is None:
        result = _COMPOSITE[node.op_type](imp, node, value, physical, keep)
        imp.bind_output(node, result, out_perm)
    elif axes:
        imp.emit(node, op_class, value, perm=out_perm, axes=physical, keep_dims=keep)
    else:
        imp.bind_output(node, value, perm)


def _empty_reduction(
    imp: Importer, node: Node, shape: tuple[int, ...], axes: list[int], keep: bool
) -> None:
    """A reduction over an empty axis: ONNX gives the reduction's identity (0 for a sum,
    -inf / the type's minimum for a max, ...), which does not depend on the input."""
    element = imp.element_type(node.inputs[0])
    dtype = numpy_dtype(element)
    if node.op_type == "ReduceMean":
        raise node.fail("the mean over an empty axis is undefined")
    if node.op_type in _EMPTY:
        fill: object = _EMPTY[node.op_type]
    elif dtype == np.bool_:
        fill = node.op_type == "ReduceMin"
    elif is_float(element):
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


def _one_hot_of_max(imp: Importer, node: Node, value: SSAValue, axis: int) -> SSAValue:
    """1 where `value` has its first maximum along IR axis `axis`, 0 elsewhere, in its
    element type: ``1 - min(|i - argmax|, 1)`` in int32 at each position ``i``."""
    shape = shape_of(value)
    index = imp.append(
        reduce.ArgMaxOp.make(
            value,
            axis=axis,
            keep_dims=True,
            element_type=element_type_for(np.int32),
            **node.source,
        )
    )
    positions = f"{node.outputs[0]}#positions"
    along = [-1 if k == axis else 1 for k in range(len(shape))]
    imp.bind_const(positions, np.arange(shape[axis], dtype=np.int32).reshape(along))
    distance = combine(imp, node, ew.SubOp, imp.get(positions), index)
    one = scalar(imp, node, distance, 1, "one")
    capped = combine(imp, node, ew.MinimumOp, apply(imp, node, act.AbsOp, distance), one)
    hot = combine(imp, node, ew.SubOp, one, capped)
    return imp.append(
        CastOp.make(hot, result_types=[TensorType(element_of(value), shape)], **node.source)
    )


@converts("Hardmax")
def hardmax(imp: Importer, node: Node) -> None:
    """1 at the first maximum along the axis, 0 elsewhere. From opset 13 along `axis`
    (default -1), in whatever layout the input has; before, the input is flattened to
    2-D at `axis` (default 1) and each row gets its one-hot."""
    x = node.inputs[0]
    require_float(imp, node, x)
    shape = imp.shape(x)
    rank = len(shape)
    coerced = node.opset < 13
    axis = node.axis(node.int_attr("axis", 1 if coerced else -1), rank)
    if 0 in shape:
        dtype = numpy_dtype(imp.element_type(x))
        imp.bind_const(imp.out_name(node), np.zeros(shape, dtype))
        return
    if not coerced:
        perm = imp.perm(x)
        value = imp.get(x, "any")
        hot = _one_hot_of_max(imp, node, value, layout.physical_axis(perm, axis, rank))
        imp.bind_output(node, hot, perm)
        return
    rows, columns = math.prod(shape[:axis]), math.prod(shape[axis:])
    flat = imp.reshape(imp.get(x), (rows, columns), **node.source)
    hot = _one_hot_of_max(imp, node, flat, 1)
    imp.bind_output(node, imp.reshape(hot, shape, **node.source))


@converts("CumSum", "CumProd")
def cumulative(imp: Importer, node: Node) -> None:
    """Running sum or product along the axis given by input 1, which must be a constant
    (it decides the computation, like an attribute); `exclusive` and `reverse` as ONNX."""
    x = node.inputs[0]
    rank = imp.rank(x)
    element = imp.element_type(x)
    if isinstance(element, IntegerType) and element.width.data == 1:
        what = "sums" if node.op_type == "CumSum" else "multiplies"
        raise node.fail(f"input '{shown(x)}' is boolean; the operator {what} numbers")
    given = imp.const_ints(node, 1, "axis")
    if len(given) != 1:
        raise node.fail(f"axis (input 1) must hold one value, got {len(given)}")
    axis = node.axis(given[0], rank)
    perm = imp.perm(x)
    imp.emit(
        node,
        reduce.CumSumOp if node.op_type == "CumSum" else reduce.CumProdOp,
        imp.get(x, "any"),
        perm=perm,
        axis=layout.physical_axis(perm, axis, rank),
        exclusive=bool(node.int_attr("exclusive", 0)),
        reverse=bool(node.int_attr("reverse", 0)),
    )
