"""Kernels of `dialects/synap/logical.py`: comparisons, float tests, boolean logic,
selection, bitwise ops and shifts.

Quantized operands are handled here under both integer semantics (the kernels are
registered `onnx_integer`): a comparison compares real values, exactly on the stored
integers when both sides share one quantization, otherwise on values dequantized to
float32 as ONNX's DequantizeLinear computes them; a select copies stored integers when
its values are of the result's quantization and otherwise requantizes them (dequantize to
float32, select, quantize rounding half to even, which is ONNX's QDQ definition).

Shifts follow ONNX's BitShift: amounts below 0 or of at least the width of the type the
value is computed in give the sign fill alone (64-bit integers compute as 32-bit ones, see
`synapc.dtypes.device_dtype`).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from xdsl.ir import SSAValue

from synapc.backends.jax.lowering import LoweringContext, kernel, takes_booleans
from synapc.backends.jax.ops.quantized import dequantize_float32, quantize_half_even
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import logical as lg
from synapc.dialects.synap.base import element_of, shape_of

Binary = Callable[[jax.Array, jax.Array], jax.Array]

_COMPARISONS: dict[type, Binary] = {
    lg.EqualOp: jnp.equal,
    lg.GreaterOp: jnp.greater,
    lg.GreaterEqualOp: jnp.greater_equal,
    lg.LessOp: jnp.less,
    lg.LessEqualOp: jnp.less_equal,
}
_LOGICAL: dict[type, Binary] = {
    lg.LogicalAndOp: jnp.logical_and,
    lg.LogicalOrOp: jnp.logical_or,
    lg.LogicalXorOp: jnp.logical_xor,
}
_BITWISE: dict[type, Binary] = {
    lg.BitwiseAndOp: jnp.bitwise_and,
    lg.BitwiseOrOp: jnp.bitwise_or,
    lg.BitwiseXorOp: jnp.bitwise_xor,
}

takes_booleans(
    *_COMPARISONS, *_LOGICAL, lg.LogicalNotOp, lg.IsInfOp, lg.IsNaNOp, lg.SelectOp
)


def _quantized(value: SSAValue) -> UniformQuantizedType | None:
    """The quantized element type of `value`, None when it is not quantized."""
    element = element_of(value)
    return element if isinstance(element, UniformQuantizedType) else None


def _shares_stored_domain(values: list[SSAValue], result: SSAValue) -> bool:
    """Whether quantized `values` hold their real values in one stored domain with each
    other (and with the result's shape): equal types, and per-axis types only at the
    result's rank (so the quantized axis is the same axis of every operand)."""
    types = [_quantized(v) for v in values]
    first = types[0]
    if first is None or any(t != first for t in types):
        return False
    rank = len(shape_of(result))
    return not first.is_per_axis or all(len(shape_of(v)) == rank for v in values)


@kernel(*_COMPARISONS, onnx_integer=True)
def compare(
    op: lg._Comparison, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """A broadcasting comparison. Quantized operands compare their real values: the
    stored integers when both share one quantization, otherwise float32 dequantized
    values (ONNX's DequantizeLinear)."""
    lhs, rhs = args
    qa, qb = _quantized(op.lhs), _quantized(op.rhs)
    if (
        qa is not None
        and qb is not None
        and not _shares_stored_domain([op.lhs, op.rhs], op.output)
    ):
        lhs, rhs = dequantize_float32(lhs, qa), dequantize_float32(rhs, qb)
    return [_COMPARISONS[type(op)](lhs, rhs)]


@kernel(lg.IsInfOp)
def is_inf(op: lg.IsInfOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Which values are infinite, of the signs the op detects."""
    x = args[0]
    props = op.props()
    positive = jnp.isposinf(x) if props["detect_positive"] else jnp.zeros(x.shape, bool)
    negative = jnp.isneginf(x) if props["detect_negative"] else jnp.zeros(x.shape, bool)
    return [positive | negative]


@kernel(lg.IsNaNOp)
def is_nan(op: lg.IsNaNOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Which values are NaN."""
    return [jnp.isnan(args[0])]


@kernel(*_LOGICAL)
def logical(
    op: lg._Logical, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """A broadcasting boolean and / or / xor."""
    return [_LOGICAL[type(op)](args[0], args[1])]


@kernel(lg.LogicalNotOp)
def logical_not(
    op: lg.LogicalNotOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Boolean negation."""
    return [jnp.logical_not(args[0])]


@kernel(*_BITWISE)
def bitwise(
    op: lg._Bitwise, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """A broadcasting bitwise and / or / xor of integers."""
    return [_BITWISE[type(op)](args[0], args[1])]


@kernel(lg.BitwiseNotOp)
def bitwise_not(
    op: lg.BitwiseNotOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Bitwise complement of integers."""
    return [jnp.invert(args[0])]


@kernel(lg.ShiftLeftOp, lg.ShiftRightOp)
def shift(op: lg._Bitwise, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """ONNX's BitShift: a left shift drops the bits shifted out, a right shift is
    arithmetic for signed values; an amount below 0 or of at least the width gives the
    sign fill (-1 for a negative signed value shifted right, 0 otherwise)."""
    x, amount = jnp.broadcast_arrays(*args)
    width = jnp.iinfo(x.dtype).bits
    outside = (amount < 0) | (amount >= width)
    amount = jnp.where(outside, jnp.zeros_like(amount), amount)
    zero = jnp.zeros_like(x)
    if isinstance(op, lg.ShiftLeftOp):
        return [jnp.where(outside, zero, jnp.left_shift(x, amount))]
    fill = jnp.where(x < 0, jnp.full_like(x, -1), zero) if _is_signed(x) else zero
    return [jnp.where(outside, fill, jnp.right_shift(x, amount))]


def _is_signed(x: jax.Array) -> bool:
    """Whether `x` holds signed integers."""
    return bool(jnp.issubdtype(x.dtype, jnp.signedinteger))


@kernel(lg.SelectOp, onnx_integer=True)
def select(op: lg.SelectOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """``condition ? true_value : false_value`` with broadcasting. Quantized values are
    copied as stored integers when they are of the result's quantization, otherwise
    requantized to it (float32 dequantize, select, quantize half to even)."""
    condition, x, y = args
    values = [op.true_value, op.false_value]
    out = _quantized(op.output)
    if out is not None and not _shares_stored_domain([*values, op.output], op.output):
        qx, qy = _quantized(op.true_value), _quantized(op.false_value)
        assert qx is not None and qy is not None  # the verifier checked the kinds
        real = jnp.where(condition, dequantize_float32(x, qx), dequantize_float32(y, qy))
        return [quantize_half_even(real, out)]
    return [jnp.where(condition, x, y)]
