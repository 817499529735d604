"""`canonicalize-layout`: keep layout transposes only at the model boundary.

A graph converted from NCHW (ONNX, TorchScript) op by op wraps every layout-sensitive op
(conv, pool, ...) of its NHWC synap form in `synap.transpose` pairs, so a chain such as
``conv -> relu -> add -> conv`` becomes ``conv -> T(0,3,1,2) -> relu -> add ->
T(0,2,3,1) -> conv``. (synapc's own ONNX / TorchScript importers already track the
layout and emit few such pairs; the pass removes those that remain or that other
rewrites expose.) This pass sinks transposes towards the outputs through ops that do
not care about layout until they meet the opposite transpose and cancel:

* `act(transpose(x, p))` -> `transpose(act(x), p)` for elementwise unary ops
  (activations, math functions) and `synap.cast` / `synap.quantize` /
  `synap.dequantize`;
* binary elementwise ops (and `synap.prelu`) whose other operand is a constant (the
  constant is broadcast to full rank and transposed by the inverse permutation on the
  host into a new constant) or is transposed by the same permutation;
* `synap.concat` whose inputs are transposed by one permutation or constant (the axis is
  renumbered);
* softmax / log-softmax / L2-normalize and reductions with their axes renumbered; float
  reductions only (a quantized max / min reduction is exact and also sinks; a quantized
  sum or mean would sum in another order under the ONNX float emulation);
* transpose chains compose, pairs cancel, reshape chains merge and identities vanish
  (the patterns of `canonicalize`), and finally a transpose that only moves unit
  dimensions becomes a reshape;
* the NCHW flatten before a classifier, `fully_connected(reshape(transpose(x)), w)`, drops
  its transpose: the columns of the constant weights are permuted on the host instead.

Source layers: a sunk transpose keeps its own layer (the op it passed keeps its); when
transposes of several operands sink as one, the first names it and the others go into
its `fused_layers`. A transpose that disappears (cancelled by its inverse, merged into
another, sunk as the identity, folded into fully-connected weights) goes into the
`fused_layers` of the op that now does its work, or for a cancelled one, of the op that
produces the value passed on (see `passes/common.py`).

Every rewrite only moves data, so integer outputs stay identical. A transpose is sunk
only when the op being rewritten is its only user (otherwise the transpose stays for the
other users and the work would be duplicated). Ops with per-axis quantized types are
left alone: after sinking, the transpose would move the quantized dimension, so its
input and output types would differ, which the backends (like TFLite) do not support for
ops that only move stored integers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.dead_code_elimination import region_dce

from synapc.context import weights_of
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import activation, elementwise, reduce
from synapc.dialects.synap.base import i64_array, is_float, shape_of
from synapc.dialects.synap.constant import ConstantOp
from synapc.dialects.synap.conv import FullyConnectedOp
from synapc.dialects.synap.conversion import CastOp, DequantizeOp, QuantizeOp
from synapc.dialects.synap.data_movement import ConcatOp, ReshapeOp, TransposeOp
from synapc.passes.canonicalize import ComposeReshapes, ComposeTransposes, RemoveIdentity
from synapc.passes.common import attributes_of, constant_array, new_constant, source_of

Perm = tuple[int, ...]

#: Unary ops that act on each element alone (no axis), so any layout gives equal results.
ELEMENTWISE_UNARY: tuple[type[Operation], ...] = (
    *(
        cls
        for cls in activation.OPS
        if issubclass(cls, activation._Unary) and not issubclass(cls, activation._AlongAxis)
    ),
    CastOp,
    QuantizeOp,
    DequantizeOp,
)

#: Unary ops normalizing along their `axis` property.
ALONG_AXIS: tuple[type[Operation], ...] = tuple(
    cls for cls in activation.OPS if issubclass(cls, activation._AlongAxis)
)

#: Binary elementwise ops with NumPy broadcasting (PReLU broadcasts its slope).
BINARY: tuple[type[Operation], ...] = tuple(elementwise.OPS)

#: Reductions over `axes`, and those that are exact (no summation) for any element type.
REDUCTIONS: tuple[type[Operation], ...] = (
    reduce.ReduceMeanOp,
    reduce.ReduceSumOp,
    reduce.ReduceMaxOp,
    reduce.ReduceMinOp,
)
ORDER_FREE_REDUCTIONS: tuple[type[Operation], ...] = (
    reduce.ReduceMaxOp,
    reduce.ReduceMinOp,
)


# -- permutation and type helpers --------------------------------------------------------
def inverse(perm: Perm) -> Perm:
    """The permutation undoing `perm`."""
    return tuple(int(i) for i in np.argsort(perm))


def _is_per_axis(t: Attribute) -> bool:
    element = t.element_type if isinstance(t, TensorType) else t
    return isinstance(element, UniformQuantizedType) and element.is_per_axis


def permuted_type(t: TensorType[Attribute], perm: Perm) -> TensorType[Attribute]:
    """The type of ``transpose(value of type t, perm)`` (dimension i is dimension
    ``perm[i]`` of `t`; for element types other than per-axis quantized ones)."""
    shape = t.get_shape()
    return TensorType(t.element_type, [shape[p] for p in perm])


def _transposed_operand(value: SSAValue, user: Operation) -> TransposeOp | None:
    """The transpose producing `value` if `user` is its only user (sinking it then moves
    the transpose instead of copying it)."""
    owner = value.owner
    if not isinstance(owner, TransposeOp):
        return None
    if any(use.operation is not user for use in owner.output.uses):
        return None
    return owner


def _perm(op: TransposeOp) -> Perm:
    return tuple(op.props()["perm"])


def _i64(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def _movable_constant(value: SSAValue, rank: int, ctx: Context) -> np.ndarray | None:
    """The values of `value` if it is a constant that can be transposed on the host to
    broadcast against a rank-`rank` tensor (rank at most `rank`, not per-axis)."""
    t = value.type
    assert isinstance(t, TensorType)
    if len(t.get_shape()) > rank or _is_per_axis(t):
        return None
    return constant_array(value, weights_of(ctx))


def _untransposed_constant(
    value: SSAValue, array: np.ndarray, perm: Perm, rank: int, ctx: Context, *, trim: bool
) -> tuple[SSAValue, list[Operation]]:
    """A value `c2` with ``transpose(broadcast(c2), perm) == broadcast(value)`` for the
    constant `value` (values `array`) broadcasting against a rank-`rank` tensor: `value`
    itself when it only has unit dimensions, else a new constant (returned with it) of the
    values broadcast to rank `rank` and transposed by `perm`'s inverse, its leading unit
    dimensions dropped when `trim`."""
    t = value.type
    assert isinstance(t, TensorType)
    shape = t.get_shape()
    if all(d == 1 for d in shape) and (trim or len(shape) == rank):
        return value, []  # broadcasts the same way whatever the layout
    full = array.reshape((1,) * (rank - len(shape)) + tuple(shape))
    moved = np.transpose(full, inverse(perm))
    if trim:
        leading = 0
        while leading < moved.ndim - 1 and moved.shape[leading] == 1:
            leading += 1
        moved = moved.reshape(moved.shape[leading:])
    owner = value.owner
    hint = owner.handle if isinstance(owner, ConstantOp) else "w"
    constant = new_constant(
        weights_of(ctx), moved, TensorType(t.element_type, moved.shape), hint=hint
    )
    return constant.result, [constant]


def _untransposed_operands(
    values: Sequence[SSAValue],
    transposes: Sequence[TransposeOp | None],
    perm: Perm,
    ctx: Context,
    *,
    trim: bool,
) -> tuple[list[SSAValue], list[Operation]] | None:
    """The operands of an op rebuilt below a transpose by `perm`: each transposed value's
    input, each constant moved by `_untransposed_constant` (the new constants are
    returned too); None when a value is neither transposed by `perm` nor constant."""
    rank = len(perm)
    arrays = [
        None if t is not None else _movable_constant(v, rank, ctx)
        for v, t in zip(values, transposes, strict=True)
    ]
    if any(t is None and a is None for t, a in zip(transposes, arrays, strict=True)):
        return None  # checked before any new constant goes into the WeightStore
    operands: list[SSAValue] = []
    prelude: list[Operation] = []
    for value, transpose, array in zip(values, transposes, arrays, strict=True):
        if transpose is not None:
            operands.append(transpose.input)
            continue
        assert array is not None
        moved, ops = _untransposed_constant(value, array, perm, rank, ctx, trim=trim)
        operands.append(moved)
        prelude += ops
    return operands, prelude


def _rebuild(
    op: Operation,
    operands: Sequence[SSAValue],
    result_type: TensorType[Attribute],
    transposes: Sequence[TransposeOp | None],
    rewriter: PatternRewriter,
    prelude: Sequence[Operation] = (),
    **changed_props: Attribute,
) -> None:
    """Replace `op` by ``transpose(op'(operands), perm)``, op' being `op` with new
    operands, the untransposed result type and some properties changed; `prelude` (new
    constants) goes first. `transposes` are those sunk (all by `perm`); the new
    transpose carries their source layers."""
    sunk = [t for t in transposes if t is not None]
    perm = _perm(sunk[0])
    properties = dict(op.properties)
    properties.update(changed_props)
    inner = type(op).create(
        operands=list(operands),
        result_types=[permuted_type(result_type, inverse(perm))],
        properties=properties,
        attributes=dict(op.attributes),
    )
    outer = TransposeOp.make(
        inner.results[0], perm=perm, result_types=[result_type], **source_of(*sunk)
    )
    rewriter.replace(op, [*prelude, inner, outer])


def _common_perm(transposes: Sequence[TransposeOp | None]) -> Perm | None:
    """The permutation of all given transposes if there is at least one and they agree."""
    perms = {_perm(t) for t in transposes if t is not None}
    return perms.pop() if len(perms) == 1 else None


# -- patterns ----------------------------------------------------------------------------
class SinkThroughUnary(RewritePattern):
    """act(transpose(x, p)) -> transpose(act(x), p) for elementwise unary ops and
    element type conversions."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ELEMENTWISE_UNARY):
            return
        if any(_is_per_axis(v.type) for v in (*op.operands, *op.results)):
            return
        transpose = _transposed_operand(op.operands[0], op)
        if transpose is None:
            return
        result_type = op.results[0].type
        assert isinstance(result_type, TensorType)
        _rebuild(op, [transpose.input], result_type, [transpose], rewriter)


class SinkThroughAlongAxis(RewritePattern):
    """softmax(transpose(x, p), axis a) -> transpose(softmax(x, axis p[a]), p) (float
    only: the sum runs along another memory axis, exact up to float reassociation)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ALONG_AXIS):
            return
        result_type = op.results[0].type
        assert isinstance(result_type, TensorType)
        if not is_float(result_type.element_type):
            return
        transpose = _transposed_operand(op.operands[0], op)
        if transpose is None:
            return
        perm = _perm(transpose)
        axis = op.props()["axis"] % len(perm)
        _rebuild(
            op, [transpose.input], result_type, [transpose], rewriter, axis=_i64(perm[axis])
        )


class SinkThroughBinary(RewritePattern):
    """op(transpose(x, p), c) -> transpose(op(x, c'), p) with `c` a constant (c' is c
    broadcast to full rank and transposed by p's inverse on the host), and
    op(transpose(x, p), transpose(y, p)) -> transpose(op(x, y), p)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, BINARY):
            return
        if any(_is_per_axis(v.type) for v in (*op.operands, *op.results)):
            return
        transposes = [_transposed_operand(v, op) for v in op.operands]
        perm = _common_perm(transposes)
        if perm is None:
            return
        untransposed = _untransposed_operands(
            op.operands, transposes, perm, self.ctx, trim=True
        )
        if untransposed is None:
            return
        operands, prelude = untransposed
        result_type = op.results[0].type
        assert isinstance(result_type, TensorType)
        _rebuild(op, operands, result_type, transposes, rewriter, prelude)


class SinkThroughConcat(RewritePattern):
    """concat(transpose(x_i, p), ..., axis a) -> transpose(concat(x_i, ..., axis p[a]),
    p); constant inputs are transposed on the host by p's inverse."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> None:
        if any(_is_per_axis(v.type) for v in (*op.inputs, op.output)):
            return
        transposes = [_transposed_operand(v, op) for v in op.inputs]
        perm = _common_perm(transposes)
        if perm is None:
            return
        untransposed = _untransposed_operands(
            op.inputs, transposes, perm, self.ctx, trim=False
        )
        if untransposed is None:
            return
        inputs, prelude = untransposed
        axis = op.props()["axis"] % len(perm)
        _rebuild(
            op, inputs, op.output.type, transposes, rewriter, prelude, axis=_i64(perm[axis])
        )


class SinkThroughReduction(RewritePattern):
    """reduce(transpose(x, p), axes) -> transpose(reduce(x, p[axes]), q), q being what
    is left of p over the kept dimensions (no transpose when q is the identity). Float
    reductions, and max / min of any type (a quantized sum or mean would add in another
    order under the ONNX float emulation)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, REDUCTIONS):
            return
        result_type = op.results[0].type
        assert isinstance(result_type, TensorType)
        element = result_type.element_type
        if not (is_float(element) or isinstance(op, ORDER_FREE_REDUCTIONS)):
            return
        if _is_per_axis(op.operands[0].type) or _is_per_axis(result_type):
            return
        transpose = _transposed_operand(op.operands[0], op)
        if transpose is None:
            return
        perm = _perm(transpose)
        rank = len(perm)
        props = op.props()
        axes = {a % rank for a in props["axes"]}
        new_axes = sorted(perm[a] for a in axes)
        inner_shape = list(shape_of(transpose.input))
        if props["keep_dims"]:
            outer: Perm = perm
            for a in new_axes:
                inner_shape[a] = 1
        else:
            kept = [perm[i] for i in range(rank) if i not in axes]
            order = sorted(kept)
            outer = tuple(order.index(d) for d in kept)
            inner_shape = [inner_shape[d] for d in order]
        properties = dict(op.properties)
        properties["axes"] = i64_array(new_axes)
        identity = outer == tuple(range(len(outer)))
        inner = type(op).create(
            operands=[transpose.input],
            result_types=[TensorType(element, inner_shape)],
            properties=properties,
            attributes=attributes_of(op, transpose) if identity else dict(op.attributes),
        )
        new_ops: list[Operation] = [inner]
        if not identity:
            new_ops.append(
                TransposeOp.make(
                    inner.results[0],
                    perm=outer,
                    result_types=[result_type],
                    **source_of(transpose),
                )
            )
        rewriter.replace(op, new_ops)


class UnitTransposeToReshape(RewritePattern):
    """A transpose that keeps the order of the non-unit dimensions is a reshape."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        if _is_per_axis(op.input.type):
            return
        shape = shape_of(op.input)
        moved = [p for p in _perm(op) if shape[p] != 1]
        if moved != sorted(moved):
            return
        rewriter.replace(
            op, ReshapeOp.make(op.input, result_types=[op.output.type], **source_of(op))
        )


class FoldFlattenTransposeIntoWeights(RewritePattern):
    """``fully_connected(reshape(transpose(x, p)), w)`` with the reshape flattening all
    but the batch axis -> ``fully_connected(reshape(x), w')``, ``w'`` the weights with
    their input columns permuted so that column j reads what flattened `x` holds at j."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FullyConnectedOp, rewriter: PatternRewriter) -> None:
        flatten = op.input.owner
        if not isinstance(flatten, ReshapeOp) or not flatten.output.has_one_use():
            return
        transpose = flatten.input.owner
        if not isinstance(transpose, TransposeOp) or not transpose.output.has_one_use():
            return
        perm, shape = _perm(transpose), shape_of(transpose.input)
        out_shape = shape_of(flatten.output)
        if perm[0] != 0 or len(out_shape) != 2 or out_shape[0] != shape[0]:
            return
        if _is_per_axis(transpose.input.type):
            return
        weights = constant_array(op.filter, weights_of(self.ctx))
        if weights is None or not op.filter.has_one_use():
            return
        transposed_shape = tuple(shape[p] for p in perm)[1:]
        columns = np.arange(out_shape[1]).reshape(transposed_shape)
        order = np.transpose(columns, [p - 1 for p in inverse(perm)[1:]]).reshape(-1)
        constant = new_constant(
            weights_of(self.ctx), weights[:, order], op.filter.type, hint="w"
        )
        reshape = ReshapeOp.make(
            transpose.input, result_types=[flatten.output.type], **source_of(flatten)
        )
        rewriter.insert_op([constant, reshape], InsertPoint.before(op))
        rewriter.replace_op(
            op,
            type(op).create(
                operands=[reshape.output, constant.result, *op.operands[2:]],
                result_types=[op.output.type],
                properties=dict(op.properties),
                attributes=attributes_of(op, transpose),
            ),
        )


@dataclass(frozen=True)
class CanonicalizeLayoutPass(ModulePass):
    """Sink transposes through layout-agnostic ops until they cancel, then turn the
    remaining unit-moving transposes into reshapes."""

    name = "canonicalize-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sink = GreedyRewritePatternApplier(
            [
                RemoveIdentity(),
                ComposeTransposes(),
                ComposeReshapes(),
                SinkThroughUnary(),
                SinkThroughAlongAxis(),
                SinkThroughBinary(ctx),
                SinkThroughConcat(ctx),
                SinkThroughReduction(),
                FoldFlattenTransposeIntoWeights(ctx),
            ]
        )
        PatternRewriteWalker(sink, post_walk_func=region_dce).rewrite_module(op)
        # Only once nothing sinks any more: a reshape would stop a transpose on its way.
        tidy = GreedyRewritePatternApplier(
            [UnitTransposeToReshape(), RemoveIdentity(), ComposeReshapes()]
        )
        PatternRewriteWalker(tidy, post_walk_func=region_dce).rewrite_module(op)
