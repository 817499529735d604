"""Kernels of `dialects/synap/activation.py` (elementwise unary functions).

Float values run the plain functions. Quantized values follow the integer kernels of
LiteRT 2.3's reference resolver (``OpResolverType.BUILTIN_REF``) bit for bit; which
algorithm each operator uses there (found from the kernel sources and checked against
LiteRT on every stored input value, see tests/test_tflite_quant_activation.py):

=================  =====================  ===============================================
operator           storage types          algorithm
=================  =====================  ===============================================
clamp (RELU,       int8, uint8, int16     ``MBQM(x - zp_in, s_in / s_out) + zp_out``, then
RELU6, RELU_N1_                           clamped to the bounds quantized with the output
TO_1, RELU_0_TO_1)                        parameters (``zp + roundf(bound / s_out)``)
leaky_relu         int8, uint8, int16     MBQM with ``s_in / s_out`` for ``x >= zp``, with
                                          ``s_in * alpha / s_out`` below
sigmoid, tanh      int8, uint8            256-entry float32 table
                   int16                  interpolated ``sigmoid_table_uint16``
hard_swish         int8, uint8            gemmlowp int16 fixed point (``q_hard_swish``);
                   int16 -> 8-bit         the same on an int16 input (a fused layer's)
gelu               int8, uint8            256-entry float32 table (erfc / tanh form)
                   int16                  513-entry interpolated float32 table
elu                int8                   256-entry float32 table
exp, log           int8                   256-entry float32 table
                   int16                  513-entry interpolated float32 table
sqrt               int8, int16            float32 ``sqrt`` of the dequantized input, the
                                          quotient by ``s_out`` truncated (no rounding);
                                          a table of every stored value
rsqrt              int8                   gemmlowp inverse square root (Newton-Raphson)
                   int16                  513-entry interpolated float32 table
abs                int8, int16            ``|x - zp_in|`` (MBQM when the scales differ)
neg                int8, int16            the stored integer negated (wrapping);
                                          LiteRT's NEG ignores the quantization
=================  =====================  ===============================================

Real multipliers are computed as TFLite's Prepare functions compute them: ``s_in / s_out``
and ``s_in * alpha / s_out`` are float32 expressions widened to double (a double quotient
misses up to 14 of 32,768 int16 RELU outputs), RSQRT's ``1. / (sqrtf(s_in) * s_out)`` is a
double quotient of a float32 product. Type
combinations TFLite refuses (uint8 ELU / EXP / LOG / SQRT / RSQRT / ABS / NEG, int16
HARD_SWISH and ELU, any quantized SQUARE) raise UnsupportedOpError, as do mixed float /
quantized operands and per-axis types. The ONNX math functions without a TFLite integer
kernel (thresholded_relu, shrink, softplus, softsign, mish, sign, floor, ceil, round and
the trigonometric and hyperbolic functions) compute on float values (shrink and sign on
integers too) and raise UnsupportedOpError for quantized ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from synapc.backends.jax import fixed_point as fp
from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    real_valued,
)
from synapc.backends.jax.ops.common import any_quantized
from synapc.backends.jax.ops.quantized import qtype, quantize_real
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import activation as act

F32 = np.float32


def _clamp(x: jax.Array, p: dict[str, Any]) -> jax.Array:
    low = p.get("min")
    high = p.get("max")
    return jnp.clip(x, low, high)


def _hard_swish(x: jax.Array, p: dict[str, Any]) -> jax.Array:
    return x * jnp.clip(x + 3, 0, 6) / 6


def _gelu(x: jax.Array, p: dict[str, Any]) -> jax.Array:
    return jax.nn.gelu(x, approximate=p["approximate"])


def _softplus(x: jax.Array) -> jax.Array:
    """``log(1 + exp(x))`` without overflow for large ``x``."""
    return jnp.logaddexp(x, jnp.zeros_like(x))


def _wrapped(value: int, dtype: np.dtype) -> jax.Array:
    """The integer `value` in integer `dtype`, wrapped (two's complement) as an integer
    cast wraps."""
    bits = np.dtype(dtype).itemsize * 8
    wrapped = value % (1 << bits)
    if np.issubdtype(dtype, np.signedinteger) and wrapped >= 1 << (bits - 1):
        wrapped -= 1 << bits
    return jnp.asarray(wrapped, dtype)


def _less_than(x: jax.Array, bound: int) -> jax.Array:
    """``x < bound`` for integer ``x`` and a Python integer `bound` of any size."""
    info = np.iinfo(x.dtype)
    if bound > info.max:
        return jnp.ones(x.shape, bool)
    if bound <= info.min:
        return jnp.zeros(x.shape, bool)
    return x < jnp.asarray(bound, x.dtype)


def _plus_real(x: jax.Array, real: float) -> jax.Array:
    """``trunc(x + real)`` for integer ``x`` and a finite `real`, computed in integers:
    ``x + floor(real)`` where the sum is not negative, ``x + ceil(real)`` elsewhere
    (``x + real >= 0`` exactly when ``x >= -floor(real)`` for a non-integral `real`)."""
    low = math.floor(real)
    if low == real:
        return x + _wrapped(low, x.dtype)
    at_least_zero = ~_less_than(x, -low)
    return jnp.where(
        at_least_zero, x + _wrapped(low, x.dtype), x + _wrapped(low + 1, x.dtype)
    )


def _shrink(x: jax.Array, p: dict[str, Any]) -> jax.Array:
    """ONNX Shrink. Integer inputs compare with the real thresholds and shift by the
    real bias exactly (``x < -lambd`` is ``x < ceil(-lambd)``, ``x > lambd`` is ``x >
    floor(lambd)``), the sum truncated toward zero as ONNX casts it back."""
    lambd, bias = p["lambd"], p["bias"]
    if jnp.issubdtype(x.dtype, jnp.floating):
        lam = jnp.asarray(lambd, x.dtype)
        b = jnp.asarray(bias, x.dtype)
        return jnp.where(x < -lam, x + b, jnp.where(x > lam, x - b, jnp.zeros_like(x)))
    if not (math.isfinite(lambd) and math.isfinite(bias)):
        raise UnsupportedOpError(
            f"shrink of integers needs a finite lambd and bias, got {lambd} and {bias}"
        )
    below = _less_than(x, math.ceil(-lambd))
    above = ~_less_than(x, math.floor(lambd) + 1)
    zero = jnp.zeros_like(x)
    return jnp.where(
        below, _plus_real(x, bias), jnp.where(above, _plus_real(x, -bias), zero)
    )


_FLOAT: dict[type, Callable[[jax.Array, dict[str, Any]], jax.Array]] = {
    act.ClampOp: _clamp,
    act.LeakyReluOp: lambda x, p: jnp.where(
        x >= 0, x, x * jnp.asarray(p["alpha"], x.dtype)
    ),
    act.SigmoidOp: lambda x, p: jax.nn.sigmoid(x),
    act.TanhOp: lambda x, p: jnp.tanh(x),
    act.HardSwishOp: _hard_swish,
    act.HardSigmoidOp: lambda x, p: jnp.clip(x * p["alpha"] + p["beta"], 0, 1).astype(
        x.dtype
    ),
    act.SwishOp: lambda x, p: x * jax.nn.sigmoid(x * jnp.asarray(p["beta"], x.dtype)),
    act.GeluOp: _gelu,
    act.ErfOp: lambda x, p: lax.erf(x),
    act.EluOp: lambda x, p: jnp.where(
        x > 0, x, jnp.asarray(p["alpha"], x.dtype) * jnp.expm1(x)
    ),
    act.ExpOp: lambda x, p: jnp.exp(x),
    act.LogOp: lambda x, p: jnp.log(x),
    act.SqrtOp: lambda x, p: jnp.sqrt(x),
    act.RsqrtOp: lambda x, p: lax.rsqrt(x),
    act.AbsOp: lambda x, p: jnp.abs(x),
    act.NegOp: lambda x, p: -x,
    act.SquareOp: lambda x, p: x * x,
    act.ThresholdedReluOp: lambda x, p: jnp.where(
        x > jnp.asarray(p["alpha"], x.dtype), x, jnp.zeros_like(x)
    ),
    act.ShrinkOp: _shrink,
    act.SoftplusOp: lambda x, p: _softplus(x),
    act.SoftsignOp: lambda x, p: x / (1 + jnp.abs(x)),
    act.MishOp: lambda x, p: x * jnp.tanh(_softplus(x)),
    act.SignOp: lambda x, p: jnp.sign(x),
    act.FloorOp: lambda x, p: jnp.floor(x),
    act.CeilOp: lambda x, p: jnp.ceil(x),
    act.RoundOp: lambda x, p: jnp.round(x),  # halves to even
    act.SinOp: lambda x, p: jnp.sin(x),
    act.CosOp: lambda x, p: jnp.cos(x),
    act.TanOp: lambda x, p: jnp.tan(x),
    act.AsinOp: lambda x, p: jnp.arcsin(x),
    act.AcosOp: lambda x, p: jnp.arccos(x),
    act.AtanOp: lambda x, p: jnp.arctan(x),
    act.SinhOp: lambda x, p: jnp.sinh(x),
    act.CoshOp: lambda x, p: jnp.cosh(x),
    act.AsinhOp: lambda x, p: jnp.arcsinh(x),
    act.AcoshOp: lambda x, p: jnp.arccosh(x),
    act.AtanhOp: lambda x, p: jnp.arctanh(x),
}


# --------------------------------------------------------------------------------------
# Host side: float32 transforms of the lookup tables (bit-exact to TFLite's lambdas)
# --------------------------------------------------------------------------------------


def _vectorized(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    return lambda v: np.array([fn(float(t)) for t in np.ravel(v)]).reshape(np.shape(v))


_expm1f = fp.libm_f32("expm1f", np.expm1)
_erfcf = fp.libm_f32("erfcf", _vectorized(math.erfc))

_SQRT1_2 = F32(0.70710678118654752440)
_SQRT_2_OVER_PI = F32(1.12837916709551257390 * 0.70710678118654752440)


def gelu_lut_transform(v: np.ndarray) -> np.ndarray:
    """TFLite's ``GeluTransform`` in float32: ``0.5f * x * erfc(x * -M_SQRT1_2)``."""
    v = np.asarray(v, F32)
    return (F32(0.5) * v * _erfcf((v * -_SQRT1_2).astype(F32))).astype(F32)


def gelu_approximate_lut_transform(v: np.ndarray) -> np.ndarray:
    """TFLite's ``GeluTransformApproximate`` in float32:
    ``0.5f * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715f * x * x * x)))``."""
    v = np.asarray(v, F32)
    inner = (v + F32(0.044715) * v * v * v).astype(F32)
    return F32(0.5) * v * (F32(1) + fp.tanhf((_SQRT_2_OVER_PI * inner).astype(F32)))


def swish_lut_transform(beta: float) -> Callable[[np.ndarray], np.ndarray]:
    """Swish ``x * logistic(beta * x)`` in float32 (``expf``): the function of the
    quantized SWISH table. TFLite has no SWISH kernel (its graphs hold LOGISTIC and MUL);
    the NPU runs 8-bit SWISH as one table on a tensor processor, so a quantized swish is
    one table here too, populated as TFLite populates its other 8-bit tables."""

    def transform(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, F32)
        with np.errstate(over="ignore"):
            denominator = (F32(1) + fp.expf((F32(-beta) * v).astype(F32))).astype(F32)
        return (v / denominator).astype(F32)

    return transform


def elu_lut_transform(alpha: float) -> Callable[[np.ndarray], np.ndarray]:
    """TFLite's int8 ELU transform ``x < 0 ? expm1f(x) : x`` (TFLite's ELU has alpha 1; a
    different `alpha` multiplies the negative branch in float32)."""

    def transform(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, F32)
        negative = (F32(alpha) * _expm1f(np.minimum(v, F32(0)))).astype(F32)
        return np.where(v < 0, negative, v).astype(F32)

    return transform


def _log_transform(out: UniformQuantizedType) -> Callable[[np.ndarray], np.ndarray]:
    """TFLite's LOG table transform: ``logf(x)``, and the output's lowest real value for
    ``x <= 0``."""
    output_min = F32(out.storage_min - out.zero_point) * F32(out.scale)

    def transform(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, F32)
        safe = np.where(v > 0, v, F32(1))
        return np.where(v <= 0, output_min, fp.logf(safe)).astype(F32)

    return transform


def _rsqrt_transform(out: UniformQuantizedType) -> Callable[[np.ndarray], np.ndarray]:
    """TFLite's int16 RSQRT table transform: ``1.0f / sqrtf(x)``, and ``32767 * s_out``
    for ``x <= 0``."""
    top = F32(32767) * F32(out.scale)

    def transform(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, F32)
        safe = np.where(v > 0, v, F32(1))
        return np.where(v <= 0, top, F32(1) / np.sqrt(safe)).astype(F32)

    return transform


# --------------------------------------------------------------------------------------
# Quantized kernels
# --------------------------------------------------------------------------------------


def _ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` as TFLite's Prepare computes it: a float32 quotient of
    float32 scales, widened to double."""
    return float(F32(numerator) / F32(denominator))


def _mbqm(x: jax.Array, real_multiplier: float) -> jax.Array:
    """``MultiplyByQuantizedMultiplier(x, QuantizeMultiplier(real_multiplier))``."""
    multiplier, shift = fp.quantize_multiplier(real_multiplier)
    return fp.multiply_by_quantized_multiplier(x, int(multiplier), int(shift))


def _lut(
    x: jax.Array,
    qi: UniformQuantizedType,
    qo: UniformQuantizedType,
    transform: Callable[[np.ndarray], np.ndarray],
) -> jax.Array:
    """``x`` through TFLite's lookup table of `transform`: 256 entries for 8-bit types,
    513 interpolated entries for int16."""
    if qi.bitwidth == 8:
        # LiteRT saturates results beyond int32 (infinities included) to the storage
        # range; lut_populate_int8 turns infinities into the storage minimum, so the
        # transform is bounded first (far outside the storage range: same entries).
        bound = F32(min(2.0**40 * float(F32(qo.scale)), float(np.finfo(F32).max)))

        def bounded(v: np.ndarray) -> np.ndarray:
            return np.clip(transform(v), -bound, bound).astype(F32)

        table = fp.lut_populate_int8(
            qi.scale, qi.zero_point, qo.scale, qo.zero_point, bounded, signed=qi.is_signed
        )
        return fp.lut_lookup_int8(x, table)
    table = fp.lut_populate_int16(
        qi.scale, qi.zero_point, qo.scale, qo.zero_point, transform
    )
    return fp.lut_lookup_int16(x, table)


def q_clamp(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's quantized RELU / RELU6 / RELU_N1_TO_1 / RELU_0_TO_1 (``ReluX``): the input
    rescaled to the output with MBQM, clamped to the quantized bounds."""
    y = _mbqm(x - qi.zero_point, _ratio(qi.scale, qo.scale)) + qo.zero_point
    lowest, highest = qo.storage_min, qo.storage_max
    low, high = lowest, highest
    # a bound far outside the storage range (a tiny scale) saturates: a Python int
    # beyond int32 cannot enter the program
    if p.get("min") is not None:
        low = min(max(lowest, quantize_real(p["min"], qo)), highest)
    if p.get("max") is not None:
        high = max(min(highest, quantize_real(p["max"], qo)), lowest)
    return jnp.clip(y, low, high)


def q_leaky_relu(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's ``QuantizeLeakyRelu``: MBQM by ``s_in / s_out`` where ``x >= zp_in``, by
    ``s_in * alpha / s_out`` (float32 products) elsewhere; saturated."""
    v = x - qi.zero_point
    alpha_real = float(F32(qi.scale) * F32(p["alpha"]) / F32(qo.scale))
    identity = _mbqm(v, _ratio(qi.scale, qo.scale))
    scaled = _mbqm(v, alpha_real)
    return jnp.where(v >= 0, identity, scaled) + qo.zero_point


def _int16_q015_output(qo: UniformQuantizedType, name: str) -> None:
    """The int16 LOGISTIC / TANH kernels output Q0.15: TFLite requires zero point 0 and a
    scale of 2**-15."""
    log2, pot = fp.checked_log2(qo.scale)
    if qo.zero_point != 0 or not pot or log2 != -15:
        raise UnsupportedOpError(
            f"int16 {name} needs an output scale of 2**-15 and zero point 0 (as TFLite)"
        )


def q_sigmoid(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's quantized LOGISTIC: a float32 table for 8-bit types; the interpolated
    sigmoid table for int16."""
    if qi.bitwidth == 8:
        return _lut(x, qi, qo, fp.logistic_lut_transform)
    _int16_q015_output(qo, "logistic")
    multiplier, shift = fp.int16_logistic_tanh_params(qi.scale, tanh=False)
    return fp.logistic_int16(x, multiplier, shift)


def q_tanh(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's quantized TANH: a float32 table for 8-bit types; the interpolated sigmoid
    table for int16."""
    if qi.bitwidth == 8:
        return _lut(x, qi, qo, fp.tanh_lut_transform)
    _int16_q015_output(qo, "tanh")
    multiplier, shift = fp.int16_logistic_tanh_params(qi.scale, tanh=True)
    return fp.tanh_int16(x, multiplier, shift)


def _downscale_int16_multiplier(multiplier: np.ndarray) -> np.ndarray:
    """TFLite ``DownScaleInt32ToInt16Multiplier``: Q31 multipliers rounded to Q15
    (elementwise)."""
    multiplier = np.asarray(multiplier, np.int64)
    return np.where(
        multiplier >= (1 << 31) - 1 - (1 << 15),
        (1 << 15) - 1,
        (multiplier + (1 << 15)) >> 16,
    )


def _wrap16(x: jax.Array) -> jax.Array:
    """The int16 cast of int32 values (two's-complement wrap)."""
    return (x << 16) >> 16


def _saturating_left_shift16(x: jax.Array, amount: np.ndarray) -> jax.Array:
    """TFLite ``SaturatingLeftShift(int16_t, amount)`` of int16-range `x`: ``x *
    2**amount`` saturated to int16 (the operand is pre-clamped so the int32 shift
    cannot overflow); `amount` (>= 0, broadcast against `x`) of 0 leaves `x` as it is."""
    amount = np.asarray(amount, np.int64)
    bound = ((1 << np.maximum(0, 15 - amount)) + 1).astype(np.int32)
    shifted = jnp.clip(x, -bound, bound) << amount.astype(np.int32)
    return jnp.clip(shifted, -32768, 32767)


def _rounding_divide_by_pot16(x: jax.Array, exponent: np.ndarray | int) -> jax.Array:
    """gemmlowp ``RoundingDivideByPOT<int16_t>`` for static exponents in [0, 31]
    (broadcast against `x`): as for int32, except that the mask ``(1 << exponent) - 1``
    is cast to int16, so exponents of 16 and more give -1 for negative ``x`` and 1
    otherwise (what LiteRT computes)."""
    exponent = np.asarray(exponent, np.int64)
    mask = ((1 << exponent) - 1) & 0xFFFF
    mask = np.where(mask >= 0x8000, mask - 0x10000, mask).astype(np.int32)
    threshold = (mask >> 1) + (x < 0).astype(jnp.int32)
    return (x >> exponent.astype(np.int32)) + ((x & mask) > threshold).astype(jnp.int32)


def _channel_parameters(
    x: jax.Array, *types: UniformQuantizedType
) -> Callable[[np.ndarray], np.ndarray]:
    """A function shaping per-channel host values (one per scale of the widest of
    `types`) to broadcast against `x`: along its last axis when a type is per axis
    (which must be that axis), 0-d arrays otherwise."""
    wide = [q for q in types if q.is_per_axis]
    for q in wide:
        if q.quantized_dimension != x.ndim - 1:
            raise UnsupportedOpError(
                "a per-axis activation must be quantized along the last (channel) axis"
            )

    def shaped(values: np.ndarray) -> np.ndarray:
        values = np.asarray(values)
        return values.reshape(-1) if wide else values.reshape(-1)[:1].reshape(())

    return shaped


def q_hard_swish(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's ``reference_ops::HardSwish`` for int8 / uint8: the input on a "hires" scale
    (``s_in / 128``) is multiplied in int16 fixed point by the output multiplier and by a
    "reluish" factor in [0, 1] (the input rescaled so that 3.0 is 32768, saturated,
    mapped from [-1, 1] to [0, 1]); multipliers are float32 ratios reduced to Q15.

    Per-channel input and / or output types (along the last axis: the result of a
    convolution that writes channels apart) take the same steps with each channel's
    multipliers. An int16 input (the 16-bit intermediate of a convolution fused with
    its hard_swish) is its own hires value: ``x - zero_point`` on scale ``s_in``, the
    same int16 fixed-point steps following."""
    shaped = _channel_parameters(x, qi, qo)
    channels = max(qi.scales.size, qo.scales.size)
    s_in = np.broadcast_to(qi.scales.astype(np.float32), (channels,))
    s_out = np.broadcast_to(qo.scales.astype(np.float32), (channels,))
    wide = qi.storage_dtype == np.int16
    hires_scale = s_in if wide else F32(1.0 / 128.0) * s_in
    out_m32, out_exp = fp.quantize_multiplier((hires_scale / s_out).astype(np.float64))
    out_m16 = _downscale_int16_multiplier(out_m32)
    if np.any(out_exp > 0):
        raise UnsupportedOpError(
            "quantized hard_swish needs s_in / s_out < 128 (TFLite's Prepare requires it)"
        )
    reluish_scale = F32(3.0) / F32(32768.0)
    rel_m32, rel_exp = fp.quantize_multiplier(
        (hires_scale / reluish_scale).astype(np.float64)
    )
    rel_m16 = _downscale_int16_multiplier(rel_m32)

    zero_in = np.broadcast_to(qi.zero_points, (channels,))
    centred = x - shaped(zero_in).astype(np.int32)
    hires = jnp.clip(centred, -32768, 32767) if wide else _wrap16(centred * 128)
    preshift_out = fp.saturating_rounding_doubling_high_mul(
        hires, shaped(out_m16).astype(np.int32), raw_bits=16
    )
    up = shaped(np.maximum(rel_exp, 0))
    reluish = _saturating_left_shift16(hires, np.maximum(up - 1, 0))
    reluish = fp.saturating_rounding_doubling_high_mul(
        reluish, shaped(rel_m16).astype(np.int32), raw_bits=16
    )
    reluish = jnp.where(
        up > 0,
        _saturating_left_shift16(reluish, np.minimum(up, 1)),
        _rounding_divide_by_pot16(reluish, shaped(np.maximum(-rel_exp, 0))),
    )
    reluish = (reluish + (1 << 15)) >> 1
    # gemmlowp SaturatingDoublingHighMul (int16): the product truncated toward zero;
    # reluish >= 0, so the -32768 * -32768 overflow cannot occur.
    product = lax.div(reluish * preshift_out, jnp.int32(1 << 15))
    out = _rounding_divide_by_pot16(product, shaped(-out_exp))
    zero_out = np.broadcast_to(qo.zero_points, (channels,))
    return _wrap16(out + shaped(zero_out).astype(np.int32))


def q_gelu(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's quantized GELU: a table of the float32 erfc (or, `approximate`, tanh)
    form."""
    transform = gelu_approximate_lut_transform if p["approximate"] else gelu_lut_transform
    return _lut(x, qi, qo, transform)


def q_elu(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's int8 ELU: a table of ``x < 0 ? expm1f(x) : x``."""
    return _lut(x, qi, qo, elu_lut_transform(p["alpha"]))


def q_swish(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """8-bit swish: a table of `swish_lut_transform`."""
    return _lut(x, qi, qo, swish_lut_transform(p["beta"]))


def q_exp(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's quantized EXP: a table of ``expf``."""
    return _lut(x, qi, qo, fp.expf)


def q_log(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's quantized LOG: a table of ``logf`` (the output minimum for ``x <= 0``)."""
    return _lut(x, qi, qo, _log_transform(qo))


def q_sqrt(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's ``SqrtEvalQuantized``: ``int(sqrtf(s_in * (x - zp_in)) / s_out) + zp_out``
    in float32, the quotient truncated toward zero.

    Computed on the host for every stored value and looked up: XLA turns a float division
    by a constant into a multiplication by its reciprocal, which is not the IEEE quotient
    TFLite truncates (it missed up to 21 of 32,768 int16 values). Negative inputs are an
    error in TFLite; here they give the output zero point."""
    values = np.arange(qi.storage_min, qi.storage_max + 1, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        real = F32(qi.scale) * (values - qi.zero_point).astype(F32)
        quotient = (np.sqrt(real) / F32(qo.scale)).astype(F32)
    quotient = np.clip(np.nan_to_num(quotient, nan=0.0), -(2.0**30), 2.0**30)
    table = np.clip(
        np.trunc(quotient).astype(np.int64) + qo.zero_point, qo.storage_min, qo.storage_max
    )
    return jnp.take(jnp.asarray(table.astype(np.int32)), x - qi.storage_min)


def _inv_sqrt_multiplier(value: jax.Array) -> tuple[jax.Array, jax.Array]:
    """TFLite ``GetInvSqrtQuantizedMultiplierExp(value, kReverseShift = -1)``:
    ``(multiplier, shift)`` with ``1 / sqrt(value) ~= multiplier * 2**(shift - 31)``.

    ``value`` is normalised by an even shift into [2**27, 2**29), then five Newton-Raphson
    steps ``x = 1.5 x - (value / 2) x**3`` run in gemmlowp ``FixedPoint<int32, 3>`` from
    ``x = 1``; the result is multiplied by ``sqrt(2) / 2``. Values ``<= 1`` give
    ``(INT32_MAX, 0)``."""
    v = jnp.maximum(value, 2)
    shift = jnp.full(v.shape, 11, jnp.int32)
    big = v >= (1 << 29)  # at most one division by 4 is needed for int32 values
    v = jnp.where(big, v >> 2, v)
    shift = shift + big.astype(jnp.int32)
    max_left_shift_bits = lax.clz(v) - 1
    left_shift_bit_pairs = max_left_shift_bits // 2 - 1
    shift = shift - left_shift_bit_pairs
    v = v << (2 * left_shift_bit_pairs)

    def mul(a: jax.Array, b: jax.Array | int) -> jax.Array:
        return fp.saturating_rounding_doubling_high_mul(a, b)

    half_input = fp.rounding_divide_by_pot(v >> 1, 1)  # F3
    half_three = (1 << 28) + (1 << 27)  # F3 1.5
    x = jnp.full(v.shape, 1 << 28, jnp.int32)  # F3 one
    for _ in range(5):
        x3 = fp.rescale(mul(mul(x, x), x), 9, 3)
        x = fp.rescale(mul(x, half_three) - mul(half_input, x3), 6, 3)
    x = mul(x, 1518500250)  # times F0 sqrt(2) / 2
    x = jnp.where(shift < 0, x << jnp.clip(-shift, 0, 31), x)
    shift = jnp.maximum(shift, 0)
    small = value <= 1
    return jnp.where(small, jnp.int32(fp.INT32_MAX), x), jnp.where(small, 0, -shift)


def q_rsqrt(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's quantized RSQRT. int8 (``RsqrtEvalQuantizedInt8``): the inverse square root
    of ``x - zp_in`` as a fixed-point multiplier, applied to 1 with 20 extra bits, then
    rescaled by ``1 / (sqrtf(s_in) * s_out)``; ``x == zp_in`` gives 127. int16: a table of
    ``1 / sqrtf(x)``. Inputs below the zero point are an error in TFLite."""
    if qi.bitwidth == 16:
        return _lut(x, qi, qo, _rsqrt_transform(qo))
    k_shift = 20
    value = x - qi.zero_point
    inv_multiplier, inv_shift = _inv_sqrt_multiplier(value)
    data = fp.multiply_by_quantized_multiplier(1, inv_multiplier, inv_shift + k_shift)
    real = 1.0 / float(np.sqrt(F32(qi.scale)) * F32(qo.scale))
    multiplier, shift = fp.quantize_multiplier(real)
    out = fp.multiply_by_quantized_multiplier(data, int(multiplier), int(shift) - k_shift)
    return jnp.where(value == 0, qo.storage_max, out + qo.zero_point)


def q_abs(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """TFLite's ``AbsEvalQuantized``: ``|x - zp_in|``, rescaled with MBQM by
    ``s_in / s_out`` when the scales differ, plus ``zp_out``."""
    value = jnp.abs(x - qi.zero_point)
    if F32(qi.scale) != F32(qo.scale):
        value = _mbqm(value, _ratio(qi.scale, qo.scale))
    return value + qo.zero_point


def q_neg(
    x: jax.Array, qi: UniformQuantizedType, qo: UniformQuantizedType, p: dict[str, Any]
) -> jax.Array:
    """LiteRT 2.3's NEG on int8 / int16: the stored integer negated, wrapping (``-(-128)``
    is ``-128``), whatever the quantization parameters."""
    bits = 32 - qi.bitwidth
    return (-x << bits) >> bits


_QUANTIZED: dict[type, tuple[Callable[..., jax.Array], tuple[str, ...]]] = {
    act.ClampOp: (q_clamp, ("int8", "uint8", "int16")),
    act.LeakyReluOp: (q_leaky_relu, ("int8", "uint8", "int16")),
    act.SigmoidOp: (q_sigmoid, ("int8", "uint8", "int16")),
    act.TanhOp: (q_tanh, ("int8", "uint8", "int16")),
    act.HardSwishOp: (q_hard_swish, ("int8", "uint8")),
    act.GeluOp: (q_gelu, ("int8", "uint8", "int16")),
    act.SwishOp: (q_swish, ("int8", "uint8")),
    act.EluOp: (q_elu, ("int8",)),
    act.ExpOp: (q_exp, ("int8", "int16")),
    act.LogOp: (q_log, ("int8", "int16")),
    act.SqrtOp: (q_sqrt, ("int8", "int16")),
    act.RsqrtOp: (q_rsqrt, ("int8", "int16")),
    act.AbsOp: (q_abs, ("int8", "int16")),
    act.NegOp: (q_neg, ("int8", "int16")),
}
"""Quantized kernels and the storage types TFLite implements them for (swish: the
types of the NPU's SWISH table, `swish_lut_transform`)."""

PER_CHANNEL: frozenset[type] = frozenset({act.HardSwishOp})
WIDE_INPUT: frozenset[type] = frozenset({act.HardSwishOp})
"""Quantized kernels that take an int16 input with an 8-bit output: the activation of a
layer fused with it, reading the layer's 16-bit intermediate."""
"""Quantized kernels that also take per-channel input / output types (along the last
axis), channel by channel: what a convolution's fused activation needs when the layer
writes per-channel quantized outputs."""


def _quantized(op: act._Unary, x: jax.Array) -> jax.Array:
    entry = _QUANTIZED.get(type(op))
    qi, qo = qtype(op.input), qtype(op.output)
    storage = qi.storage_dtype.name
    wide = type(op) in WIDE_INPUT and storage == "int16" and qo.bitwidth == 8
    if entry is None or (storage not in entry[1] and not wide):
        raise UnsupportedOpError(
            f"quantized {op.name} with {storage} storage is not supported "
            "(TFLite has no such integer kernel)"
        )
    if qo.storage_dtype != qi.storage_dtype and not wide:
        raise UnsupportedOpError(f"quantized {op.name} needs equal input/output storage")
    if (qi.is_per_axis or qo.is_per_axis) and type(op) not in PER_CHANNEL:
        raise UnsupportedOpError(f"quantized {op.name} needs per-tensor quantization")
    y = entry[0](x.astype(jnp.int32), qi, qo, op.props())
    return jnp.clip(y, qo.storage_min, qo.storage_max).astype(qo.storage_dtype)


# clamp, abs, neg, square, shrink and sign compute on integers too (ONNX's Relu, Abs,
# Neg, Shrink and Sign on int32)
real_valued(
    act.LeakyReluOp, act.SigmoidOp, act.TanhOp, act.HardSwishOp, act.HardSigmoidOp,
    act.SwishOp, act.GeluOp, act.ErfOp, act.EluOp, act.ExpOp, act.LogOp, act.SqrtOp,
    act.RsqrtOp, act.ThresholdedReluOp, act.SoftplusOp, act.SoftsignOp, act.MishOp,
    act.FloorOp, act.CeilOp, act.RoundOp, act.SinOp, act.CosOp, act.TanOp, act.AsinOp,
    act.AcosOp, act.AtanOp, act.SinhOp, act.CoshOp, act.AsinhOp, act.AcoshOp,
    act.AtanhOp,
)  # fmt: skip


@kernel(*_FLOAT)
def unary(op: act._Unary, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Elementwise unary function: float, or TFLite's integer kernel for quantized
    values."""
    if any_quantized(op):
        return [_quantized(op, args[0])]
    return [_FLOAT[type(op)](args[0], op.props()).astype(args[0].dtype)]
