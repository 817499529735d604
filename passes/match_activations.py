"""`match-activations`: replace activations that frameworks export as chains of arithmetic
by the one synap op that computes them.

PyTorch, Keras and ONNX exporters often spell activations out in elementary ops; the NPU
(and every later pass) handles one activation op far better than a chain of four to
twelve elementwise ops and reductions. On float graphs the pass recognises

* hard-swish ``x * relu6(x + 3) / 6`` (``/ 6`` or ``* (1/6)``, on the product or on the
  relu6, relu6 as ``synap.clamp`` or as an add with a fused relu6) and
  ``x * hard_sigmoid(x)`` with alpha 1/6 and beta 1/2 -> ``synap.hard_swish``;
* swish / SiLU ``x * sigmoid(x)`` and ``x * sigmoid(beta * x)`` -> ``synap.swish``;
* GELU's exact form ``0.5 * x * (1 + erf(x / sqrt(2)))`` (``/ sqrt(2)`` or
  ``* (1/sqrt(2))``) -> ``synap.gelu``, and its tanh form
  ``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))``, ``x^3`` as ``pow(x, 3)``
  or ``x * x * x`` -> ``synap.gelu {approximate = true}``;
* layer normalization as the ONNX importer decomposes ``LayerNormalization`` and as
  PyTorch exports it: ``d = x - mean(x)``, ``var = mean(d * d)`` (``square``,
  ``pow(d, 2)`` or ``mul(d, d)``), ``d * rsqrt(var + eps)`` or ``d / sqrt(var + eps)``,
  then optionally ``* gamma`` and ``+ beta`` -> ``synap.layer_norm``, both means over
  the same single axis with kept dimensions, gamma and beta one value per element of
  that axis.

Products are read as a multiset of factors (``mul`` trees, division by a constant,
``square``, ``pow`` by 2 or 3), so any association and operand order of the factors
matches. Constants are matched by value within 4 ulps of their element type, and must be
a scalar or a broadcast of one value. Every intermediate value must be used by the
pattern only (x itself may have other users). Quantized chains are left alone: the fused
op would not round its intermediates as the chain does, so its integers would differ.

The fused op takes the source layer of the chain's last op; the layers of the other ops
of the chain go into its `fused_layers`, in graph order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import permutations

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from synapc.context import weights_of
from synapc.dialects.synap.activation import (
    ClampOp,
    ErfOp,
    GeluOp,
    HardSigmoidOp,
    HardSwishOp,
    RsqrtOp,
    SigmoidOp,
    SqrtOp,
    SquareOp,
    SwishOp,
    TanhOp,
)
from synapc.dialects.synap.attributes import Activation
from synapc.dialects.synap.base import element_of, is_float, shape_of
from synapc.dialects.synap.constant import ConstantOp
from synapc.dialects.synap.elementwise import AddOp, DivOp, MulOp, PowOp, SubOp
from synapc.dialects.synap.normalization import LayerNormOp
from synapc.dialects.synap.reduce import ReduceMeanOp
from synapc.passes.common import (
    FUSED_LAYERS,
    constant_array,
    in_block_order,
    layers_of,
    source_of,
)
from synapc.weights import WeightStore

_ULPS = 4
"""How many units of the constant's precision a matched constant may be off."""
_F32_RTOL = _ULPS * float(np.finfo(np.float32).eps)
"""The tolerance of float32 properties (hard_sigmoid's alpha and beta)."""


@dataclass(frozen=True)
class _Scalar:
    """A constant that holds one value (a scalar or a broadcast of it)."""

    value: float
    rtol: float


def _scalar(value: SSAValue, weights: WeightStore) -> _Scalar | None:
    """The one value of a float constant operand, or None."""
    array = constant_array(value, weights)
    if array is None or array.size == 0 or array.dtype.kind != "f":
        return None
    first = array.reshape(-1)[0]
    if not np.all(array == first):
        return None
    return _Scalar(float(first), _ULPS * float(np.finfo(array.dtype).eps))


def _close(value: float, target: float, rtol: float) -> bool:
    """Whether `value` is `target` within `rtol` (relative)."""
    return abs(value - target) <= rtol * abs(target)


@dataclass
class _Product:
    """A value read as ``scale * prod(factors)``; `ops` are the intermediate ops read
    through, `rtol` the accumulated tolerance of the constants in `scale`."""

    factors: list[SSAValue]
    scale: float = 1.0
    rtol: float = 0.0
    ops: list[Operation] = field(default_factory=list)

    def times(self, other: _Product, power: int = 1) -> None:
        """Multiply in ``other ** power``."""
        self.factors += other.factors * power
        self.scale *= other.scale**power
        self.rtol += other.rtol * power
        self.ops += other.ops

    def is_(self, factors: list[SSAValue], scale: float) -> bool:
        """Whether this is ``scale * prod(factors)`` (factors in any order)."""
        same = sorted(map(id, self.factors)) == sorted(map(id, factors))
        return same and _close(self.scale, scale, self.rtol)


def _plain(op: Operation) -> bool:
    """Whether a binary elementwise op has no fused activation."""
    return op.props()["activation"] is Activation.NONE


def _inner(value: SSAValue, result_type: Attribute) -> bool:
    """Whether `value` may be read through: one use, of the pattern's type."""
    return value.has_one_use() and value.type == result_type


def _product(
    value: SSAValue, weights: WeightStore, result_type: Attribute, root: bool = False
) -> _Product:
    """`value` as a product of factors, reading through ``mul``, division by a constant,
    ``square`` and ``pow`` by 2 or 3 (at the root always, below it only through values
    that `_inner` accepts)."""
    op = value.owner
    if not root and not _inner(value, result_type):
        return _Product([value])
    result = _Product([], ops=[op])
    if isinstance(op, MulOp) and _plain(op):
        for operand in (op.lhs, op.rhs):
            constant = _scalar(operand, weights)
            if constant is None:
                result.times(_product(operand, weights, result_type))
            else:
                result.times(_Product([], constant.value, constant.rtol))
        return result
    if isinstance(op, DivOp) and _plain(op):
        divisor = _scalar(op.rhs, weights)
        if divisor is not None and divisor.value != 0:
            result.times(_product(op.lhs, weights, result_type))
            result.times(_Product([], 1 / divisor.value, divisor.rtol))
            return result
    if isinstance(op, SquareOp):
        result.times(_product(op.input, weights, result_type), 2)
        return result
    if isinstance(op, PowOp):
        exponent = _scalar(op.rhs, weights)
        if exponent is not None and exponent.value in (2.0, 3.0):
            result.times(_product(op.lhs, weights, result_type), int(exponent.value))
            return result
    return _Product([value])


def _split(product: _Product, scale: float) -> list[tuple[SSAValue, SSAValue]]:
    """The orderings ``(x, g)`` of a product that is ``scale * x * g`` (`scale` within
    the constants' tolerance)."""
    if len(product.factors) != 2 or not _close(product.scale, scale, product.rtol):
        return []
    return list(permutations(product.factors))


def _other(op: AddOp | MulOp | SubOp, value: SSAValue) -> SSAValue | None:
    """The operand of a binary op that is not `value` (None if neither or both are)."""
    lhs, rhs = op.lhs, op.rhs
    if lhs == value and rhs != value:
        return rhs
    if rhs == value and lhs != value:
        return lhs
    return None


def _constant_operand(
    op: AddOp | MulOp, weights: WeightStore
) -> tuple[_Scalar, SSAValue] | None:
    """``(constant, other operand)`` when one operand of `op` is a scalar constant."""
    for constant, other in ((op.rhs, op.lhs), (op.lhs, op.rhs)):
        scalar = _scalar(constant, weights)
        if scalar is not None:
            return scalar, other
    return None


@dataclass
class _Match:
    """A matched chain: its last op `root`, the op replacing it and the other ops of the
    chain (dead once `root` is replaced)."""

    root: Operation
    new_op: Operation
    ops: list[Operation]


def _replace(rewriter: PatternRewriter, match: _Match) -> None:
    """Replace the match's root by its new op and erase the matched ops (and their
    constants) that no longer have users; the new op also names the source layers of
    the erased ops (`fused_layers`)."""
    constants = [
        operand.owner
        for o in (match.root, *match.ops)
        for operand in o.operands
        if isinstance(operand.owner, ConstantOp)
    ]
    ordered = in_block_order([match.root, *match.ops])  # while all are in the block
    rewriter.replace(match.root, match.new_op)
    pending = [o for o in match.ops if o is not match.root] + constants
    erased: set[int] = set()
    progress = True
    while progress:
        progress = False
        for op in pending:
            if id(op) not in erased and all(not r.uses for r in op.results):
                erased.add(id(op))
                rewriter.erase(op)
                progress = True
    absorbed = [o for o in ordered if id(o) in erased or o is match.root]
    names = [n for o in absorbed for n in layers_of(o)]
    own = match.new_op.attributes.get("layer_name")
    fused = [n for n in dict.fromkeys(names) if own is None or n != own.data]
    if fused:
        match.new_op.attributes[FUSED_LAYERS] = ArrayAttr([StringAttr(n) for n in fused])


# --------------------------------------------------------------------------------------
# The activations
# --------------------------------------------------------------------------------------


def _relu6_of_x_plus_3(
    g: SSAValue, x: SSAValue, weights: WeightStore, result_type: Attribute
) -> list[Operation] | None:
    """The ops of ``relu6(x + 3)`` producing `g` (clamp of an add, or an add with a
    fused relu6), or None."""
    if not _inner(g, result_type):
        return None
    op = g.owner
    ops: list[Operation] = [op]
    if isinstance(op, ClampOp):
        props = op.props()
        if props.get("min") != 0.0 or props.get("max") != 6.0:
            return None
        if not _inner(op.input, result_type):
            return None
        op = op.input.owner
        ops.append(op)
        if not (isinstance(op, AddOp) and _plain(op)):
            return None
    elif not (isinstance(op, AddOp) and op.props()["activation"] is Activation.RELU6):
        return None
    found = _constant_operand(op, weights)
    if found is None or found[1] != x or not _close(found[0].value, 3.0, found[0].rtol):
        return None
    return ops


def _hard_swish(op: Operation, weights: WeightStore) -> _Match | None:
    """``x * relu6(x + 3) / 6`` or ``x * hard_sigmoid(x)`` (alpha 1/6, beta 1/2)."""
    t = op.results[0].type
    product = _product(op.results[0], weights, t, root=True)
    for x, g in _split(product, 1 / 6):
        ops = _relu6_of_x_plus_3(g, x, weights, t)
        if ops is not None:
            new_op = HardSwishOp.make(x, result_types=[t], **source_of(op))
            return _Match(op, new_op, [*product.ops, *ops])
    for x, g in _split(product, 1.0):
        sigmoid = g.owner
        if not (_inner(g, t) and isinstance(sigmoid, HardSigmoidOp)):
            continue
        props = sigmoid.props()
        if (
            sigmoid.input == x
            and _close(props["alpha"], 1 / 6, _F32_RTOL)
            and _close(props["beta"], 0.5, _F32_RTOL)
        ):
            new_op = HardSwishOp.make(x, result_types=[t], **source_of(op))
            return _Match(op, new_op, [*product.ops, sigmoid])
    return None


def _swish(op: Operation, weights: WeightStore) -> _Match | None:
    """``x * sigmoid(beta * x)`` (beta 1 when the sigmoid reads x itself)."""
    t = op.results[0].type
    product = _product(op.results[0], weights, t, root=True)
    for x, s in _split(product, 1.0):
        sigmoid = s.owner
        if not (_inner(s, t) and isinstance(sigmoid, SigmoidOp)):
            continue
        scaled = _product(sigmoid.input, weights, t)
        if len(scaled.factors) == 1 and scaled.factors[0] == x and scaled.scale != 0:
            beta = scaled.scale
            new_op = SwishOp.make(x, result_types=[t], beta=beta, **source_of(op))
            return _Match(op, new_op, [*product.ops, sigmoid, *scaled.ops])
    return None


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_SQRT1_2 = math.sqrt(0.5)
_GELU_CUBIC = 0.044715


def _gelu_chain(
    op: Operation, weights: WeightStore
) -> tuple[SSAValue, list[Operation], Operation] | None:
    """The shared frame of both GELU forms, ``0.5 * x * (1 + f(...))``: returns x, the
    ops of the frame and the op computing ``f`` (its input is not yet checked)."""
    t = op.results[0].type
    product = _product(op.results[0], weights, t, root=True)
    for x, s in _split(product, 0.5):
        plus_one = s.owner
        if not (_inner(s, t) and isinstance(plus_one, AddOp) and _plain(plus_one)):
            continue
        found = _constant_operand(plus_one, weights)
        if found is None or not _close(found[0].value, 1.0, found[0].rtol):
            continue
        inner = found[1].owner
        if _inner(found[1], t) and isinstance(inner, TanhOp | ErfOp):
            return x, [*product.ops, plus_one], inner
    return None


def _gelu(op: Operation, weights: WeightStore) -> _Match | None:
    """``0.5 * x * (1 + erf(x / sqrt(2)))`` (exact) or
    ``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`` (approximate)."""
    chain = _gelu_chain(op, weights)
    if chain is None:
        return None
    x, ops, inner = chain
    t = op.results[0].type
    scaled = _product(inner.operands[0], weights, t)
    if len(scaled.factors) != 1:
        return None
    if isinstance(inner, ErfOp):
        if scaled.factors[0] != x or not _close(scaled.scale, _SQRT1_2, scaled.rtol):
            return None
        new_op = GeluOp.make(x, result_types=[t], approximate=False, **source_of(op))
        return _Match(op, new_op, [*ops, inner, *scaled.ops])
    if not _close(scaled.scale, _SQRT_2_OVER_PI, scaled.rtol):
        return None
    cubic_sum = scaled.factors[0]
    add = cubic_sum.owner
    if not (_inner(cubic_sum, t) and isinstance(add, AddOp) and _plain(add)):
        return None
    cubic_value = _other(add, x)
    if cubic_value is None:
        return None
    cubic = _product(cubic_value, weights, t)
    if not cubic.ops or not cubic.is_([x, x, x], _GELU_CUBIC):
        return None
    new_op = GeluOp.make(x, result_types=[t], approximate=True, **source_of(op))
    return _Match(op, new_op, [*ops, inner, *scaled.ops, add, *cubic.ops])


# --------------------------------------------------------------------------------------
# Layer normalization
# --------------------------------------------------------------------------------------


def _mean_axis(op: Operation | None, rank: int) -> int | None:
    """The one axis a kept-dims ``reduce_mean`` averages over, or None."""
    if not isinstance(op, ReduceMeanOp):
        return None
    props = op.props()
    if not props["keep_dims"] or len(props["axes"]) != 1:
        return None
    return props["axes"][0] % rank


def _per_axis(value: SSAValue, result_type: Attribute, axis: int) -> bool:
    """Whether `value` is one value per element of `axis` of `result_type` (a gamma or
    beta) or one value: of the same element type, broadcasting to the result without
    widening it, and of size 1 along every other axis."""
    shape, target = shape_of(value), shape_of(result_type)
    if element_of(value) != element_of(result_type) or len(shape) > len(target):
        return False
    aligned = (1,) * (len(target) - len(shape)) + tuple(shape)
    return all(
        a in (1, d) if i == axis else a == 1
        for i, (a, d) in enumerate(zip(aligned, target, strict=True))
    )


def _normalized(
    op: Operation, weights: WeightStore
) -> tuple[SSAValue, int, float, list[Operation]] | None:
    """``(x, axis, epsilon, ops)`` when `op` computes ``(x - mean) / sqrt(var + eps)``
    (as a multiply by rsqrt or a division by sqrt)."""
    if isinstance(op, MulOp) and _plain(op):
        candidates = [(op.lhs, op.rhs), (op.rhs, op.lhs)]
        root_class: type = RsqrtOp
    elif isinstance(op, DivOp) and _plain(op):
        candidates = [(op.lhs, op.rhs)]
        root_class = SqrtOp
    else:
        return None
    for d, r in candidates:
        inv = r.owner
        if not (isinstance(inv, root_class) and r.has_one_use()):
            continue
        ops: list[Operation] = [op, inv]
        variance, epsilon = inv.input, 0.0
        shifted = variance.owner
        if isinstance(shifted, AddOp) and _plain(shifted) and variance.has_one_use():
            found = _constant_operand(shifted, weights)
            if found is None or not found[0].value >= 0:
                continue
            variance, epsilon = found[1], found[0].value
            ops.append(shifted)
        centered = d.owner
        if not (isinstance(centered, SubOp) and _plain(centered)):
            continue
        x, mean = centered.lhs, centered.rhs
        t, rank = d.type, len(shape_of(d))
        axis = _mean_axis(mean.owner, rank)
        if (
            axis is None
            or mean.owner.input != x
            or not mean.has_one_use()
            or x.type != t
            or op.results[0].type != t
            or not variance.has_one_use()
            or _mean_axis(variance.owner, rank) != axis
        ):
            continue
        squared = _product(variance.owner.input, weights, t)
        if len(squared.ops) != 1 or not squared.is_([d, d], 1.0):
            continue
        square_op = squared.ops[0]
        if any(
            use.operation is not op and use.operation is not square_op for use in d.uses
        ):
            continue
        ops += [variance.owner, square_op, centered, mean.owner]
        return x, axis, epsilon, ops
    return None


def _layer_norm(op: Operation, weights: WeightStore) -> _Match | None:
    """The normalization core at `op`, extended by a following ``* gamma`` and
    ``+ beta``; the match replaces the last of them."""
    found = _normalized(op, weights)
    if found is None:
        return None
    x, axis, epsilon, ops = found
    if not is_float(element_of(x)):
        return None
    t = x.type
    value, gamma, beta, root = op.results[0], None, None, op
    for role in (MulOp, AddOp):
        if not value.has_one_use():
            break
        user = next(iter(value.uses)).operation
        other = _other(user, value) if isinstance(user, role) and _plain(user) else None
        if other is None or user.results[0].type != t or not _per_axis(other, t, axis):
            if role is MulOp:
                continue
            break
        if role is MulOp:
            gamma = other
        else:
            beta = other
        ops.append(user)
        value, root = user.results[0], user
    rank = len(shape_of(t))
    new_op = LayerNormOp.make(
        x,
        gamma,
        beta,
        result_types=[t],
        axis=-1 if axis == rank - 1 else axis,
        epsilon=epsilon,
        **source_of(root),
    )
    return _Match(root, new_op, ops)


# --------------------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------------------

_MATCHERS: list[Callable[[Operation, WeightStore], _Match | None]] = [
    _layer_norm,
    _hard_swish,
    _swish,
    _gelu,
]


@dataclass
class MatchDecomposedActivation(RewritePattern):
    """Replace a float ``mul`` / ``div`` that ends a decomposed activation or layer
    normalization by the fused op."""

    weights: WeightStore

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, MulOp | DivOp) or not is_float(element_of(op.output)):
            return
        for matcher in _MATCHERS:
            match = matcher(op, self.weights)
            if match is not None:
                _replace(rewriter, match)
                return


@dataclass(frozen=True)
class MatchActivationsPass(ModulePass):
    """Fuse decomposed hard-swish, swish, GELU and layer normalization chains of
    float graphs into `synap.hard_swish`, `synap.swish`, `synap.gelu` and
    `synap.layer_norm`."""

    name = "match-activations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier(
            [MatchDecomposedActivation(weights_of(ctx))], ctx=ctx, dce_enabled=False
        )
        PatternRewriteWalker(patterns).rewrite_module(op)
