"""ONNX indexing operators: GatherElements, GatherND, ScatterElements (and the older
Scatter), ScatterND, OneHot, Trilu, TopK, EyeLike, Range, Einsum, ReverseSequence,
Compress and NonZero.

Ops that index along one axis (GatherElements, ScatterElements, TopK, ReverseSequence,
Compress) run in whatever layout their input has, the axis mapped to where it is
stored; the others work on the logical layout. Constant indices are checked at import
(an index outside ``[-size, size)`` is refused, naming the node and the input) and stored
wrapped; indices computed at run time wrap once in the kernel.

Sizes must be static: OneHot's depth, Trilu's k and TopK's k must be constants, and so
must Compress's condition; Range and NonZero, whose output sizes depend on their input
values, are folded at import when those are constants and refused otherwise. EyeLike
depends only on its input's shape, so it is always a constant.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from onnx import helper
from xdsl.dialects.builtin import IntegerType, TensorType, i64

from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap import indexing as ix
from synapc.dialects.synap.base import element_of, shape_of
from synapc.dialects.synap.indexing import ScatterReduction, ScatterReductionAttr
from synapc.dialects.synap.shapes import ShapeError
from synapc.dtypes import element_type_for, numpy_dtype
from synapc.importers.onnx import layout
from synapc.importers.onnx.checks import limit_of, shown, type_name
from synapc.importers.onnx.folding import CannotFold, estimate
from synapc.importers.onnx.helpers import common_layout
from synapc.importers.onnx.reader import Importer, Node, converts


# -- helpers -----------------------------------------------------------------------------
def _rule(node: Node, rule: Callable[..., Any], *args: Any) -> Any:
    """A shape rule of `dialects.synap.indexing` on logical shapes; its complaint becomes
    the node's error."""
    try:
        return rule(*args)
    except ShapeError as error:
        raise node.fail(str(error)) from None


def _is_boolean(element: Any) -> bool:
    return isinstance(element, IntegerType) and element.width.data == 1


def _integer_input(imp: Importer, node: Node, i: int, what: str) -> None:
    """Input `i` (`what`) holds integers."""
    element = imp.element_type(node.inputs[i])
    if not isinstance(element, IntegerType) or _is_boolean(element):
        raise node.fail(
            f"{what} '{shown(node.inputs[i])}' (input {i}) must be integers, got {element}"
        )


def _no_booleans(imp: Importer, node: Node, i: int, what: str) -> None:
    """Input `i` (`what`) is not boolean (the op computes on numbers)."""
    if _is_boolean(imp.element_type(node.inputs[i])):
        raise node.fail(
            f"{what} '{shown(node.inputs[i])}' (input {i}) is boolean; {node.op_type} "
            "computes on numbers"
        )


def _indices(imp: Importer, node: Node, i: int, sizes: Sequence[int] | int) -> str:
    """Input `i`, integer indices into dimensions of `sizes` (one size, or one per
    entry of the last dimension). A constant is checked to be within ``[-size, size)``
    and replaced by its wrapped int32 values; a run-time tensor is left as it is."""
    name = node.inputs[i]
    _integer_input(imp, node, i, "indices")
    array = imp.const(name)
    if array is None:
        return name
    values = np.asarray(array).astype(np.int64)
    bound = np.broadcast_to(np.asarray(sizes, np.int64), values.shape)
    bad = (values < -bound) | (values >= bound)
    if bad.any():
        raise node.fail(
            f"indices '{shown(name)}' (input {i}) hold {int(values[bad][0])}, out of "
            f"range for a dimension of {int(bound[bad][0])}"
        )
    fixed = np.where(values < 0, values + bound, values).astype(np.int32)
    wrapped = f"{name}#{node.index}"
    imp.bind_const(wrapped, fixed)
    return wrapped


def _scalar_const(imp: Importer, node: Node, i: int, what: str, why: str) -> float | int:
    """The one value of constant input `i` (`what`); `why` says why it must be one."""
    array = imp.const(node.input(i))
    if array is None:
        raise node.fail(f"{what} (input {i}) must be a constant: {why}")
    array = np.asarray(array)
    if array.size != 1:
        raise node.fail(f"{what} (input {i}) must hold one value, got {array.size}")
    value = array.reshape(-1)[0]
    if array.dtype.kind == "f":
        if not math.isfinite(float(value)):
            raise node.fail(f"{what} (input {i}) is {float(value)}")
        return float(value)
    if array.dtype.kind not in "iu":
        raise node.fail(f"{what} (input {i}) must be a number, got {array.dtype}")
    return int(value)


def _reduction(node: Node) -> ScatterReductionAttr:
    """The `reduction` attribute of a scatter."""
    text = node.attr("reduction", "none")
    try:
        return ScatterReductionAttr(ScatterReduction(text))
    except ValueError:
        raise node.fail(f"attribute 'reduction' '{shown(text)}' is not supported") from None


# -- gathers and scatters ----------------------------------------------------------------
@converts("GatherElements")
def gather_elements(imp: Importer, node: Node) -> None:
    """Elements of `data` at `indices` along `axis`, in the layout data has."""
    data = node.inputs[0]
    shape = imp.shape(data)
    axis = node.axis(node.int_attr("axis", 0), max(len(shape), 1))
    _rule(node, ix.gather_elements, shape, imp.shape(node.inputs[1]), axis)
    indices = _indices(imp, node, 1, shape[axis])
    rank, perm = common_layout(imp, [data, indices])
    imp.emit(
        node,
        ix.GatherElementsOp,
        imp.get(data, perm),
        imp.get(indices, perm),
        perm=perm,
        axis=layout.physical_axis(perm, axis, rank),
    )


@converts("GatherND")
def gather_nd(imp: Importer, node: Node) -> None:
    """Slices of `data` at index tuples (logical layout)."""
    data = node.inputs[0]
    shape, index_shape = imp.shape(data), imp.shape(node.inputs[1])
    batch = node.int_attr("batch_dims", 0)
    _rule(node, ix.gather_nd, shape, index_shape, batch)
    indices = _indices(imp, node, 1, shape[batch : batch + index_shape[-1]])
    imp.emit(node, ix.GatherNDOp, imp.get(data), imp.get(indices), batch_dims=batch)


@converts("ScatterElements", "Scatter")
def scatter_elements(imp: Importer, node: Node) -> None:
    """`data` with `updates` written at `indices` along `axis`, in the layout data has
    (Scatter is the older name, without reductions)."""
    data, updates = node.inputs[0], node.inputs[2]
    shape = imp.shape(data)
    axis = node.axis(node.int_attr("axis", 0), max(len(shape), 1))
    _rule(
        node,
        ix.scatter_elements,
        shape,
        imp.shape(node.inputs[1]),
        imp.shape(updates),
        axis,
    )
    reduction = _reduction(node)
    if reduction.data != ScatterReduction.NONE:
        _no_booleans(imp, node, 0, "data")
    indices = _indices(imp, node, 1, shape[axis])
    names = [data, indices, updates]
    rank, perm = common_layout(imp, names)
    imp.emit(
        node,
        ix.ScatterElementsOp,
        *(imp.get(n, perm) for n in names),
        perm=perm,
        axis=layout.physical_axis(perm, axis, rank),
        reduction=reduction,
    )


@converts("ScatterND")
def scatter_nd(imp: Importer, node: Node) -> None:
    """`data` with slices of `updates` written at index tuples (logical layout)."""
    data, updates = node.inputs[0], node.inputs[2]
    shape, index_shape = imp.shape(data), imp.shape(node.inputs[1])
    _rule(node, ix.scatter_nd, shape, index_shape, imp.shape(updates))
    reduction = _reduction(node)
    if reduction.data != ScatterReduction.NONE:
        _no_booleans(imp, node, 0, "data")
    indices = _indices(imp, node, 1, shape[: index_shape[-1]])
    imp.emit(
        node,
        ix.ScatterNDOp,
        imp.get(data),
        imp.get(indices),
        imp.get(updates),
        reduction=reduction,
    )


# -- encodings and selections ------------------------------------------------------------
@converts("OneHot")
def one_hot(imp: Importer, node: Node) -> None:
    """``values[1]`` at each index along a new axis of constant `depth`, ``values[0]``
    elsewhere (logical layout); float depths and indices are truncated to integers."""
    indices, values = node.inputs[0], node.inputs[2]
    depth = _scalar_const(imp, node, 1, "depth", "it sets the size of the output")
    depth = int(depth)
    if depth < 1:
        raise node.fail(f"depth (input 1) {depth} must be at least 1")
    _no_booleans(imp, node, 0, "indices")
    if math.prod(imp.shape(values)) != 2:
        raise node.fail(
            f"values '{shown(values)}' (input 2) must be [off, on], got shape "
            f"{list(imp.shape(values))}"
        )
    rank = imp.rank(indices)
    axis = node.axis(node.int_attr("axis", -1), rank + 1)
    value = imp.reshape(imp.get(values), (2,))
    imp.emit(
        node,
        ix.OneHotOp,
        imp.get(indices),
        value,
        element_type=element_of(value),
        depth=depth,
        axis=axis,
    )


@converts("Trilu")
def trilu(imp: Importer, node: Node) -> None:
    """The upper or lower triangle of the last two dimensions, for a constant `k`; in
    the layout the input has when that keeps those two dimensions last."""
    x = node.inputs[0]
    shape = imp.shape(x)
    rank = len(shape)
    if rank < 2:
        raise node.fail(f"the input must have rank >= 2, got shape {list(shape)}")
    k = 0
    if node.input(1) is not None:
        k = _scalar_const(imp, node, 1, "k", "it selects the diagonal at import")
        if not isinstance(k, int):
            raise node.fail(f"k (input 1) must be an integer, got {k}")
    rows, cols = shape[-2:]
    k = max(min(k, cols), -rows)  # beyond the matrix, every k keeps all or nothing
    perm = imp.perm(x)
    if perm is not None and tuple(perm[-2:]) != (rank - 2, rank - 1):
        perm = None
    imp.emit(
        node,
        ix.TriluOp,
        imp.get(x, perm),
        perm=perm,
        k=k,
        upper=bool(node.int_attr("upper", 1)),
    )


@converts("TopK")
def top_k(imp: Importer, node: Node) -> None:
    """The k largest or smallest values along `axis` and their int64 indices, sorted
    (also for ``sorted = 0``, whose order ONNX leaves open), in the input's layout."""
    x = node.inputs[0]
    shape = imp.shape(x)
    if not shape:
        raise node.fail("the input must have rank >= 1")
    _no_booleans(imp, node, 0, "X")
    if node.opset < 10:
        if "k" not in node.attrs:
            raise node.fail("attribute 'k' is missing")
        k: float | int = node.int_attr("k", 0)
    else:
        k = _scalar_const(imp, node, 1, "K", "it sets the size of the outputs")
        if not isinstance(k, int):
            raise node.fail(f"K (input 1) must be an integer, got {k}")
    axis = node.axis(node.int_attr("axis", -1), len(shape))
    if not 0 <= k <= shape[axis]:
        raise node.fail(f"K {k} is not within the {shape[axis]} values of axis {axis}")
    perm = imp.perm(x)
    value = imp.get(x, "any")
    p_axis = layout.physical_axis(perm, axis, len(shape))
    out = list(shape_of(value))
    out[p_axis] = int(k)
    op = imp.emit(
        node,
        ix.TopKOp,
        value,
        perm=perm,
        result_types=[TensorType(element_of(value), out), TensorType(i64, out)],
        k=int(k),
        axis=p_axis,
        largest=bool(node.int_attr("largest", 1)),
    )
    if len(node.outputs) > 1 and node.outputs[1]:
        imp.bind(imp.out_name(node, 1), op.results[1], perm)


@converts("ReverseSequence")
def reverse_sequence(imp: Importer, node: Node) -> None:
    """Each batch entry's first ``sequence_lens`` time steps reversed, in the input's
    layout; constant lengths must be within the time axis."""
    x, lengths = node.inputs[0], node.inputs[1]
    shape = imp.shape(x)
    rank = len(shape)
    batch, time = node.int_attr("batch_axis", 1), node.int_attr("time_axis", 0)
    for name, axis in (("batch_axis", batch), ("time_axis", time)):
        if axis not in (0, 1):
            raise node.fail(f"attribute '{name}' {axis} must be 0 or 1")
    _rule(node, ix.reverse_sequence, shape, imp.shape(lengths), batch, time)
    _integer_input(imp, node, 1, "sequence_lens")
    constant = imp.const(lengths)
    if constant is not None:
        bad = (constant < 0) | (constant > shape[time])
        if bad.any():
            raise node.fail(
                f"sequence_lens '{shown(lengths)}' (input 1) hold "
                f"{int(constant[bad][0])}, outside [0, {shape[time]}] (the time axis)"
            )
    perm = imp.perm(x)
    imp.emit(
        node,
        ix.ReverseSequenceOp,
        imp.get(x, "any"),
        imp.get(lengths),
        perm=perm,
        batch_axis=layout.physical_axis(perm, batch, rank),
        time_axis=layout.physical_axis(perm, time, rank),
    )


# -- constants, and ops whose output size depends on values ------------------------------
@converts("EyeLike")
def eye_like(imp: Importer, node: Node) -> None:
    """Ones on diagonal `k` of a matrix of the input's shape: a constant (only the
    input's shape matters), of type `dtype` (default: the input's)."""
    x = node.inputs[0]
    shape = imp.shape(x)
    if len(shape) != 2:
        raise node.fail(f"the input must have rank 2, got shape {list(shape)}")
    code = node.attr("dtype")
    if code is None:
        dtype = numpy_dtype(imp.element_type(x))
    else:
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(int(code)))
            element_type_for(dtype)
        except (KeyError, TypeError, ValueError):
            raise node.fail(
                f"attribute 'dtype' {type_name(int(code))} is not a supported element type"
            ) from None
    k = node.int_attr("k", 0)
    if shape[0] * shape[1] > limit_of("max_fold_elements"):
        raise node.fail(_beyond_fold_limit(shape[0] * shape[1]))
    imp.bind_const(imp.out_name(node), np.eye(shape[0], shape[1], k, dtype=dtype))


def _beyond_fold_limit(count: int) -> str:
    """Why a result of `count` values is not computed at import."""
    return (  # worded as the folder's own refusal
        f"folding it would make a tensor of {count:,} elements, more than the limit of "
        f"{limit_of('max_fold_elements'):,} (SYNAPC_MAX_FOLD_ELEMENTS raises it)"
    )


def _too_large(imp: Importer, node: Node) -> None:
    """Refuse a node with constant inputs that the folder left alone: its result is too
    large to compute at import (or its inputs do not fit the operator)."""
    refusal = imp.fold_refusals.get(id(node.proto))
    if refusal is not None:
        raise node.fail(refusal)
    arrays = [imp.const(n) if n else None for n in node.inputs]
    try:
        count, _ = estimate(node.op_type, arrays, node.attrs, node.opset)
    except CannotFold as error:
        raise node.fail(error.reason) from None
    if count <= limit_of("max_fold_elements"):  # the folder gave up for another reason
        raise node.fail("its constant inputs could not be computed at import")
    raise node.fail(_beyond_fold_limit(count))


@converts("Range")
def range_(imp: Importer, node: Node) -> None:
    """Range's length depends on its input values: constant inputs were folded at
    import; anything else is refused."""
    for i, what in enumerate(("start", "limit", "delta")):
        if imp.const(node.input(i)) is None:
            raise node.fail(
                f"{what} '{shown(node.inputs[i])}' (input {i}) must be a constant: the "
                "length of the output depends on its value"
            )
    _too_large(imp, node)


@converts("NonZero")
def nonzero(imp: Importer, node: Node) -> None:
    """NonZero's output shape depends on its input values: a constant input was folded
    at import; a run-time one is refused."""
    if imp.const(node.input(0)) is None:
        raise node.fail(
            f"X '{shown(node.inputs[0])}' (input 0) must be a constant: the shape of the "
            "output depends on its values"
        )
    _too_large(imp, node)


@converts("Compress")
def compress(imp: Importer, node: Node) -> None:
    """The slices along `axis` (of the flattened input without one) that a constant
    `condition` selects: a gather at the selected positions."""
    x, condition = node.inputs[0], node.inputs[1]
    mask = imp.const(condition)
    if mask is None:
        raise node.fail(
            f"condition '{shown(condition)}' (input 1) must be a constant: the shape of "
            "the output depends on it"
        )
    mask = np.asarray(mask)
    if mask.ndim != 1:
        raise node.fail(
            f"condition '{shown(condition)}' (input 1) must be 1-D, got shape "
            f"{list(mask.shape)}"
        )
    shape = imp.shape(x)
    positions = np.flatnonzero(mask)
    if node.attrs.get("axis") is None:
        size, perm, p_axis = math.prod(shape), None, 0
        value = imp.reshape(imp.get(x), (size,))
    else:
        axis = node.axis(node.int_attr("axis", 0), max(len(shape), 1))
        size, perm = shape[axis], imp.perm(x)
        p_axis = layout.physical_axis(perm, axis, len(shape))
        value = imp.get(x, "any")
    if positions.size and int(positions[-1]) >= size:
        raise node.fail(
            f"condition '{shown(condition)}' (input 1) selects position "
            f"{int(positions[-1])}, beyond the {size} slices of the input"
        )
    selected = f"{condition}#{node.index}"
    imp.bind_const(selected, positions.astype(np.int32))
    imp.emit(node, dm.GatherOp, value, imp.get(selected), perm=perm, axis=p_axis)


# -- einsum ------------------------------------------------------------------------------
def explicit_einsum(equation: str, ranks: Sequence[int]) -> str:
    """ONNX einsum `equation` for operands of `ranks` as an explicit equation of letters
    only: spaces dropped, each ellipsis replaced by unused letters (aligned to the right
    across operands, as NumPy broadcasts), an implicit output made explicit (the
    ellipsis dimensions, then the letters used once, in ASCII order). Raises
    `ValueError` with the reason for an equation it cannot read."""
    text = equation.replace(" ", "")
    if text.count("->") > 1:
        raise ValueError("it has more than one '->'")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"it has {len(terms)} operand terms for {len(ranks)} inputs")
    for term in (*terms, rhs):
        rest = term.replace("...", "", 1)
        if not all(c in string.ascii_letters for c in rest):
            raise ValueError(f"term '{term}' holds something other than letters and '...'")
    used = {c for c in text if c in string.ascii_letters}
    free = [c for c in string.ascii_letters if c not in used]
    spans = []
    for term, rank in zip(terms, ranks, strict=True):
        named = len(term.replace("...", ""))
        span = rank - named if "..." in term else 0
        if span < 0 or ("..." not in term and named != rank):
            raise ValueError(f"term '{term}' does not fit an input of rank {rank}")
        spans.append(span)
    width = max(spans, default=0)
    if width > len(free):
        raise ValueError("it leaves too few letters for its '...' dimensions")
    ellipsis = "".join(free[:width])
    expanded = [
        t.replace("...", ellipsis[width - s :]) for t, s in zip(terms, spans, strict=True)
    ]
    if not arrow:
        letters = "".join(t.replace("...", "") for t in terms)
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ellipsis + "".join(once)
    elif "..." in rhs:
        output = rhs.replace("...", ellipsis)
    elif width:
        raise ValueError("the output drops the '...' dimensions of the inputs")
    else:
        output = rhs
    return ",".join(expanded) + "->" + output


@converts("Einsum")
def einsum(imp: Importer, node: Node) -> None:
    """Einstein summation of one or two inputs (logical layout), as one `synap.einsum`
    with an explicit equation."""
    names = list(node.inputs)
    if not 1 <= len(names) <= 2 or not all(names):
        raise node.fail(
            f"has {len(names)} inputs; synapc converts Einsum of one or two inputs "
            "(split a longer product into Einsum nodes of two)"
        )
    equation = node.attr("equation")
    if not isinstance(equation, str):
        raise node.fail("attribute 'equation' is missing")
    for i in range(len(names)):
        _no_booleans(imp, node, i, "input")
    shapes = [imp.shape(n) for n in names]
    try:
        explicit = explicit_einsum(equation, [len(s) for s in shapes])
    except ValueError as error:
        raise node.fail(f"equation '{shown(equation)}': {error}") from None
    _rule(node, ix.einsum, shapes, explicit)
    imp.emit(node, ix.EinsumOp, [imp.get(n) for n in names], equation=explicit)
