"""Kernels of `dialects/synap/elementwise.py` (broadcasting binary ops, prelu).

Float operands use jax.numpy directly. Quantized operands follow LiteRT's reference
integer kernels (``OpResolverType.BUILTIN_REF`` of ai-edge-litert 2.3), with parameters
computed the way each kernel's Prepare computes them:

* ADD / SUB (int8, uint8, int16): both inputs are shifted left by 20 (8-bit) or 15
  (int16), rescaled by ``scale_i / (2 * max(scale_1, scale_2))`` and the sum by
  ``2 * max / (2**left_shift * scale_out)``, each with
  MultiplyByQuantizedMultiplierSmallerThanOneExp. int16 with power-of-two scales (and the
  ``pot_scale_int16`` option, true by default) takes the LSTM path instead: the input with
  the smaller scale is rounding-shifted right and the two are added with int16
  saturation.
* MUL: ``MBQM((a - za) * (b - zb), s_a * s_b / s_out)``, the multiplier computed in
  float32. int16 x int16 -> int8/uint8 is gemmlowp's Q0.15 product shifted right by 8 (the
  scales are not used).
* DIV: gemmlowp reciprocal of the divisor, a headroom-normalised product and a final
  MultiplyByQuantizedMultiplierSmallerThanOneExp (multiplier ``s_a / (s_b * s_out)`` in
  float32), for int8, uint8 and int16 alike (ai-edge-litert 2.3 has no float path for
  int16 DIV).
* MAXIMUM / MINIMUM compare the stored integers (LiteRT ignores the quantization
  parameters, so different input/output parameters give LiteRT's result, not a
  requantized one).
* SQUARED_DIFFERENCE (int8): like SUB with a left shift of 7, then the square rescaled by
  ``(2 * max)**2 / (2**14 * scale_out)``.
* PRELU: ``MBQM(x, s_x / s_out)`` for ``x >= 0`` and ``MBQM(x * alpha, s_x * s_alpha /
  s_out)`` otherwise, both multipliers in float32.

Integer POW is exact repeated squaring (:func:`integer_power`). POW and MOD (ONNX's
remainder, `synap.mod`) have no quantized kernel in LiteRT;
quantized, they raise UnsupportedOpError.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from synapc.backends.jax import fixed_point as fp
from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    takes_booleans,
)
from synapc.backends.jax.ops.common import activate, any_quantized
from synapc.backends.jax.ops.quantized import (
    activation_range,
    per_tensor,
    qtype,
    saturate,
    stored,
)
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap.attributes import Activation


def _materialized_divisor(a: jax.Array, b: jax.Array) -> jax.Array:
    """A broadcast float divisor materialized behind an optimization barrier: XLA
    rewrites ``a / broadcast(b)`` as ``a * broadcast(1 / b)``, which is not IEEE
    division (ONNX QuantizeLinear's ``x / scale`` lands on the wrong side of a tie)."""
    shape = jnp.broadcast_shapes(a.shape, b.shape)
    if not jnp.issubdtype(b.dtype, jnp.floating) or b.shape == shape:
        return b
    return lax.optimization_barrier(jnp.broadcast_to(b, shape))


_FLOAT: dict[type, Callable[[jax.Array, jax.Array], jax.Array]] = {
    ew.AddOp: jnp.add,
    ew.SubOp: jnp.subtract,
    ew.MulOp: jnp.multiply,
    ew.DivOp: lambda a, b: jnp.divide(a, _materialized_divisor(a, b)),
    ew.MaximumOp: jnp.maximum,
    ew.MinimumOp: jnp.minimum,
    ew.PowOp: jnp.power,
    ew.SquaredDifferenceOp: lambda a, b: jnp.square(a - b),
}


takes_booleans(ew.MaximumOp, ew.MinimumOp)  # logical or / and


@kernel(*_FLOAT)
def binary(op: ew._Binary, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Binary op with NumPy broadcasting and an optional fused activation; quantized
    operands run the matching LiteRT reference integer kernel."""
    if any_quantized(op):
        if type(op) not in _QUANTIZED:
            raise UnsupportedOpError(f"quantized {op.name} has no integer kernel in TFLite")
        return [_QUANTIZED[type(op)](op, args[0], args[1])]
    if isinstance(op, ew.PowOp) and jnp.issubdtype(args[0].dtype, jnp.integer):
        return [integer_power(args[0], args[1])]
    y = _FLOAT[type(op)](args[0], args[1])
    activation = op.props().get("activation")
    return [y if activation is None else activate(y, activation)]


def integer_power(base: jax.Array, exponent: jax.Array) -> jax.Array:
    """``base ** exponent`` of integers, exactly (see `synap.pow`): repeated squaring in
    the base's integer type (wrapping), one step per bit of the exponent's own integer
    type (never narrowed to the base's: int8 ``2 ** 256`` is 0, not ``2 ** 0``), and for
    a negative exponent C's truncated ``1 / base ** -exponent``: 1 for a base of 1, +-1
    for -1 by the exponent's parity, else 0. The result has the base's type."""
    base, exponent = jnp.broadcast_arrays(base, exponent)
    magnitude = jnp.maximum(exponent, jnp.zeros_like(exponent))

    def step(_: int, carry: tuple[jax.Array, ...]) -> tuple[jax.Array, ...]:
        result, square, bits = carry
        result = jnp.where((bits & 1) == 1, result * square, result)
        return result, square * square, bits >> 1

    width = jnp.iinfo(exponent.dtype).bits
    start = (jnp.ones_like(base), base, magnitude)
    positive = lax.fori_loop(0, width, step, start)[0]
    one = jnp.ones_like(base)
    odd = (exponent & 1) == 1
    reciprocal = jnp.where(
        base == one, one, jnp.where(base == -one, jnp.where(odd, -one, one), 0 * one)
    )
    return jnp.where(exponent < 0, reciprocal, positive)


@kernel(ew.ModOp)
def mod(op: ew.ModOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Remainder with a floored (`fmod` false) or truncated (`fmod` true) quotient, as
    ONNX Mod; float or integer operands (quantized ones have no integer kernel)."""
    if any_quantized(op):
        raise UnsupportedOpError(f"quantized {op.name} has no integer kernel in TFLite")
    a, b = jnp.broadcast_arrays(*args)
    if jnp.issubdtype(a.dtype, jnp.integer):
        return [integer_mod(a, b, op.props()["fmod"])]
    return [float_mod(a, b, op.props()["fmod"])]


def integer_mod(a: jax.Array, b: jax.Array, fmod: bool) -> jax.Array:
    """ONNX Mod of integers: the truncated remainder (sign of `a`) with `fmod`, else the
    floored one (sign of `b`); a divisor of 0 gives 0 (as numpy, ONNX's reference)."""
    zero = b == 0
    divisor = jnp.where(zero, jnp.ones_like(b), b)
    remainder = lax.rem(a, divisor)
    if not fmod:
        opposite = (remainder != 0) & ((remainder < 0) != (divisor < 0))
        remainder = jnp.where(opposite, remainder + divisor, remainder)
    return jnp.where(zero, jnp.zeros_like(remainder), remainder)


def float_mod(a: jax.Array, b: jax.Array, fmod: bool) -> jax.Array:
    """ONNX Mod of floats: C's ``fmod`` with `fmod`; else the floored remainder, with
    ONNX's special cases (a zero result takes the sign of `b`; a finite `a` and an
    infinite `b` of the other sign give `b`; infinite `a` or zero `b` give NaN)."""
    remainder = lax.rem(a, b)
    if fmod:
        return remainder
    opposite = (remainder != 0) & ((remainder < 0) != (b < 0))
    remainder = jnp.where(opposite, remainder + b, remainder)
    return jnp.where(remainder == 0, jnp.copysign(jnp.zeros_like(b), b), remainder)


@kernel(ew.PReluOp)
def prelu(op: ew.PReluOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """``x if x >= 0 else slope * x``; quantized as LiteRT's reference PRELU."""
    x, slope = args
    if any_quantized(op):
        return [_prelu_quantized(op, x, slope)]
    return [jnp.where(x >= 0, x, slope * x)]


# --------------------------------------------------------------------------------------
# Host-side parameters
# --------------------------------------------------------------------------------------


def _scale(q: UniformQuantizedType) -> np.float32:
    """The per-tensor scale as the float32 TFLite reads from the model."""
    if q.is_per_axis:
        raise UnsupportedOpError("per-axis quantization is not supported by this kernel")
    return np.float32(q.scale)


def _types(op: ew._Binary) -> tuple[UniformQuantizedType, ...]:
    """The quantized types of (lhs, rhs, output)."""
    return (
        per_tensor(op.lhs, "its lhs"),
        per_tensor(op.rhs, "its rhs"),
        per_tensor(op.output, "its result"),
    )


def _activation(op: ew._Binary) -> Activation | None:
    """The fused activation (None for ops without one)."""
    return op.props().get("activation")


def count_leading_sign_bits(x: jax.Array) -> jax.Array:
    """TFLite ``CountLeadingSignBits`` of int32 values (31 for 0 and -1)."""
    x = x.astype(jnp.int32)
    return lax.clz(x ^ (x >> 31)) - 1


def mbqm_smaller_than_one_exp_any_shift(
    x: jax.Array, multiplier: int, left_shift: jax.Array | int
) -> jax.Array:
    """MultiplyByQuantizedMultiplierSmallerThanOneExp (double-rounding build) for any
    int32 `left_shift`: ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m),
    -left_shift)``.

    TFLite only asserts ``left_shift`` in [-31, 0]; DIV's run-time shift leaves that
    range for a small dividend and a large divisor, and SUB passes a positive shift when
    its output rescale exceeds one. The compiled kernels then compute what
    :func:`rounding_divide_by_pot_x86` computes, reproduced here."""
    high = fp.saturating_rounding_doubling_high_mul(x, multiplier)
    return rounding_divide_by_pot_x86(high, -jnp.asarray(left_shift, jnp.int32))


def rounding_divide_by_pot_x86(x: jax.Array, exponent: jax.Array) -> jax.Array:
    """gemmlowp ``RoundingDivideByPOT(int32 x, int exponent)`` as compiled for x86-64,
    for any int32 `exponent`.

    Equal to :func:`fp.rounding_divide_by_pot` for exponents in [0, 31]. Outside that
    range the C++ is undefined behaviour; the x86-64 build of ai-edge-litert 2.3 computes
    the mask as the low 32 bits of ``(1ll << (e & 63)) - 1`` (all ones for ``e & 63 >=
    32``) and the shift as ``x >> (e & 31)``, the hardware's shift-count masking (checked
    on DIV and SUB outputs: 0 of 65,280 differ)."""
    x, e = jnp.broadcast_arrays(x.astype(jnp.int32), jnp.asarray(exponent, jnp.int32))
    e64 = e & 63
    mask = jnp.where(e64 < 32, (jnp.int32(1) << (e64 & 31)) - 1, jnp.int32(-1))
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0).astype(jnp.int32)
    return (x >> (e & 31)) + (remainder > threshold).astype(jnp.int32)


# --------------------------------------------------------------------------------------
# ADD / SUB
# --------------------------------------------------------------------------------------


def _add_sub(op: ew._Binary, a: jax.Array, b: jax.Array, sign: int) -> jax.Array:
    """TFLite's quantized ADD (`sign` 1) or SUB (-1): the general rescaling path, or the
    int16 power-of-two path."""
    qa, qb, qo = _types(op)
    sa, sb, so = _scale(qa), _scale(qb), _scale(qo)
    lo, hi = activation_range(_activation(op), qo)
    int16 = qo.storage_dtype == np.int16
    if int16 and bool(op.props().get("pot_scale_int16", True)):
        logs = [fp.checked_log2(float(s)) for s in (sa, sb, so)]
        if all(pot for _, pot in logs):
            return _add_sub_int16_pot(a, b, sign, logs, qo, lo, hi)
    left_shift = 15 if int16 else 20
    twice_max = 2.0 * float(max(sa, sb))
    m1, s1 = fp.quantize_multiplier_smaller_than_one_exp(float(sa) / twice_max)
    m2, s2 = fp.quantize_multiplier_smaller_than_one_exp(float(sb) / twice_max)
    real_out = twice_max / (float(1 << left_shift) * float(so))
    if real_out > 1.0 and sign < 0:  # SUB only; a positive shift, see the helper
        mo, so_shift = fp.quantize_multiplier_greater_than_one(real_out)
    elif real_out >= 1.0:
        raise UnsupportedOpError(
            f"quantized ADD with output scale {so} below 2 * max(input scales) / 2**"
            f"{left_shift}: TFLite refuses it"
        )
    else:
        mo, so_shift = fp.quantize_multiplier_smaller_than_one_exp(real_out)
    x1 = stored(a, qa) << left_shift
    x2 = stored(b, qb) << left_shift
    y1 = fp.multiply_by_quantized_multiplier_smaller_than_one_exp(x1, int(m1), int(s1))
    y2 = fp.multiply_by_quantized_multiplier_smaller_than_one_exp(x2, int(m2), int(s2))
    raw = y1 + y2 if sign > 0 else y1 - y2
    out = mbqm_smaller_than_one_exp_any_shift(raw, int(mo), int(so_shift)) + qo.zero_point
    return saturate(out, qo, lo, hi)


def _add_sub_int16_pot(
    a: jax.Array,
    b: jax.Array,
    sign: int,
    logs: list[tuple[int, bool]],
    qo: UniformQuantizedType,
    lo: int,
    hi: int,
) -> jax.Array:
    """int16 ADD/SUB with power-of-two scales and zero points 0 (TFLite's LSTM path):
    each input is rounding-shifted right by ``log2(scale_out / scale_in)`` (TFLite
    requires this to be >= 0 for both and 0 for one of them), then added or subtracted
    with int16 saturation and clamped to the activation range."""
    shifts = [logs[2][0] - log for log, _ in logs[:2]]
    if min(shifts) != 0:
        raise UnsupportedOpError(
            "int16 ADD/SUB with power-of-two scales needs input scales at most the output "
            "scale, one of them equal to it"
        )
    x1 = fp.rounding_divide_by_pot(a.astype(jnp.int32), shifts[0])
    x2 = fp.rounding_divide_by_pot(b.astype(jnp.int32), shifts[1])
    raw = jnp.clip(x1 + x2 if sign > 0 else x1 - x2, -32768, 32767)
    return saturate(raw, qo, lo, hi)


def _add(op: ew.AddOp, a: jax.Array, b: jax.Array) -> jax.Array:
    """Quantized ADD."""
    return _add_sub(op, a, b, 1)


def _sub(op: ew.SubOp, a: jax.Array, b: jax.Array) -> jax.Array:
    """Quantized SUB."""
    return _add_sub(op, a, b, -1)


# --------------------------------------------------------------------------------------
# MUL / DIV
# --------------------------------------------------------------------------------------


def _mul(op: ew.MulOp, a: jax.Array, b: jax.Array) -> jax.Array:
    """Quantized MUL (reference_integer_ops::MulElementwise, or the int16 -> 8-bit LSTM
    kernel)."""
    qa, qb, qo = _types(op)
    lo, hi = activation_range(_activation(op), qo)
    if qa.storage_dtype == np.int16 and qo.storage_dtype != np.int16:
        # int16 x int16 -> 8 bit: Q0.15 product, rounding shift by 8, offset.
        product = fp.saturating_rounding_doubling_high_mul(a, b, raw_bits=16)
        rescaled = fp.rounding_divide_by_pot(product, 8)
        zo = qo.zero_point
        return (jnp.clip(rescaled, lo - zo, hi - zo) + zo).astype(qo.storage_dtype)
    real = float(_scale(qa) * _scale(qb) / _scale(qo))  # float32, as in Prepare
    m, s = fp.quantize_multiplier(real)
    acc = stored(a, qa) * stored(b, qb)
    out = fp.multiply_by_quantized_multiplier(acc, m, s) + qo.zero_point
    return saturate(out, qo, lo, hi)


def _div(op: ew.DivOp, a: jax.Array, b: jax.Array) -> jax.Array:
    """Quantized DIV (reference_ops::DivElementwise). A divisor equal to its zero point,
    which LiteRT refuses at run time, gives an unspecified value."""
    qa, qb, qo = _types(op)
    sa, sb, so = _scale(qa), _scale(qb), _scale(qo)
    lo, hi = activation_range(_activation(op), qo)
    real = float(sa / (sb * so))  # float32, as in Prepare
    m, s = fp.quantize_multiplier(real)
    v1, v2 = jnp.broadcast_arrays(stored(a, qa), stored(b, qb))
    negative = v2 < 0
    v1 = jnp.where(negative, -v1, v1)
    v2 = jnp.where(negative, -v2, v2)
    inverse, recip_shift = fp.get_reciprocal(v2, 31)
    headroom = count_leading_sign_bits(v1)
    quotient = fp.multiply_by_quantized_multiplier_greater_than_one(v1, inverse, headroom)
    total_shift = int(s) - recip_shift - headroom
    out = mbqm_smaller_than_one_exp_any_shift(quotient, int(m), total_shift) + qo.zero_point
    return saturate(out, qo, lo, hi)


# --------------------------------------------------------------------------------------
# MAXIMUM / MINIMUM / SQUARED_DIFFERENCE / PRELU
# --------------------------------------------------------------------------------------


def _max_min(function: Callable[[jax.Array, jax.Array], jax.Array]) -> Callable:
    """Quantized MAXIMUM / MINIMUM: `function` of the stored integers."""

    def quantized(op: ew._Binary, a: jax.Array, b: jax.Array) -> jax.Array:
        qo = qtype(op.output)
        return function(a, b).astype(qo.storage_dtype)

    return quantized


def _squared_difference(
    op: ew.SquaredDifferenceOp, a: jax.Array, b: jax.Array
) -> jax.Array:
    """Quantized SQUARED_DIFFERENCE (int8 only in TFLite)."""
    qa, qb, qo = _types(op)
    if qo.storage_dtype != np.int8:
        raise UnsupportedOpError("quantized SQUARED_DIFFERENCE needs int8 (as in TFLite)")
    sa, sb, so = _scale(qa), _scale(qb), _scale(qo)
    left_shift = 7
    twice_max = 2.0 * float(max(sa, sb))
    m1, s1 = fp.quantize_multiplier_smaller_than_one_exp(float(sa) / twice_max)
    m2, s2 = fp.quantize_multiplier_smaller_than_one_exp(float(sb) / twice_max)
    real_out = twice_max * twice_max / float(np.float32(1 << (2 * left_shift)) * so)
    if real_out >= 1.0:
        raise UnsupportedOpError(
            f"quantized SQUARED_DIFFERENCE with output scale {so} below "
            "(2 * max(input scales))**2 / 2**14: TFLite refuses it"
        )
    mo, so_shift = fp.quantize_multiplier_smaller_than_one_exp(real_out)
    x1 = stored(a, qa) << left_shift
    x2 = stored(b, qb) << left_shift
    y1 = fp.multiply_by_quantized_multiplier_smaller_than_one_exp(x1, int(m1), int(s1))
    y2 = fp.multiply_by_quantized_multiplier_smaller_than_one_exp(x2, int(m2), int(s2))
    diff = y1 - y2
    out = fp.multiply_by_quantized_multiplier_smaller_than_one_exp(
        diff * diff, int(mo), int(so_shift)
    )
    return saturate(out + qo.zero_point, qo, qo.storage_min, qo.storage_max)


def _prelu_quantized(op: ew.PReluOp, x: jax.Array, slope: jax.Array) -> jax.Array:
    """Quantized PRELU (reference_ops::BroadcastPrelu4DSlow): int8, uint8 and int16 input
    with int8 alpha. (LiteRT 2.3 reads an int16 alpha's buffer as int8; here an int16
    alpha is used as the values it holds.)"""
    qx, qa = per_tensor(op.input, "its input"), per_tensor(op.slope, "its slope")
    qo = per_tensor(op.output, "its result")
    sx, sa, so = _scale(qx), _scale(qa), _scale(qo)
    m1, s1 = fp.quantize_multiplier(float(sx / so))  # float32, as in Prepare
    m2, s2 = fp.quantize_multiplier(float(sx * sa / so))
    v, alpha = jnp.broadcast_arrays(stored(x, qx), stored(slope, qa))
    positive = fp.multiply_by_quantized_multiplier(v, m1, s1)
    negative = fp.multiply_by_quantized_multiplier(v * alpha, m2, s2)
    out = jnp.where(v >= 0, positive, negative) + qo.zero_point
    return saturate(out, qo, qo.storage_min, qo.storage_max)


_QUANTIZED: dict[type, Callable[[ew._Binary, jax.Array, jax.Array], jax.Array]] = {
    ew.AddOp: _add,
    ew.SubOp: _sub,
    ew.MulOp: _mul,
    ew.DivOp: _div,
    ew.MaximumOp: _max_min(jnp.maximum),
    ew.MinimumOp: _max_min(jnp.minimum),
    ew.SquaredDifferenceOp: _squared_difference,
}
