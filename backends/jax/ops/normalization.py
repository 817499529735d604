"""Kernels of the normalizing ops of `dialects/synap/activation.py`: softmax,
log-softmax and L2 normalization (they reduce along an axis), and of `synap.layer_norm`
(`dialects/synap/normalization.py`, float only).

Float types compute the textbook formulas. Quantized types follow TFLite's reference
kernels (``OpResolverType.BUILTIN_REF`` of ai-edge-litert 2.3, matched bit for bit),
whose outputs have a fixed encoding: the integers do not depend on the output's scale and
zero point. Where TFLite's Prepare checks that encoding, other parameters are refused
here too (UnsupportedOpError); where it does not, the integers are computed all the same.

* SOFTMAX, int8/uint8 input (``reference_ops::Softmax<In, Out>``): gemmlowp fixed point.
  ``x - max(x)`` is scaled by ``beta * s_in`` into Q5.26
  (:func:`~synapc.backends.jax.fixed_point.preprocess_softmax_scaling`; LiteRT aborts
  when ``beta * s_in * 2**26 <= 1``, refused here), differences below ``diff_min`` are
  skipped, the exps are summed in Q12.19 and the output is ``exp * (1 / sum)`` in units
  of ``2**-bits`` plus the output type's minimum. Outputs: int8 (scale 1/256 and zero
  point -128, checked), uint8 (not checked; encodes 1/256 and 0), int16 from int8 or
  uint8 input (not checked; encodes 1/65536 and -32768). uint8 -> int8, int8 -> uint8 and
  int16 -> int8 are refused by TFLite.
* SOFTMAX, int16 (``reference_ops::SoftmaxInt16``): ``x - max`` scaled so that
  ``[-10, 0]`` spans the int16 range (MBQM of ``f32(s_in * beta) / (10 / 65535)``: the
  product is rounded to float32 first), an interpolated exp table, the sum's reciprocal
  from a ``1 / (1 + x)`` table; zero points 0 and output scale 1/32768 (checked).
* LOG_SOFTMAX, int8/uint8 (``reference_integer_ops::LogSoftmax`` and
  ``reference_ops::LogSoftmax``, the same arithmetic): the softmax's sum of exps, its log
  in Q5.26 (``log_x_for_x_greater_than_or_equal_to_1``), output ``x - max - log(sum)`` in
  units of 1/16 plus 127 / 255 (the checked zero points; scale 16/256, checked). TFLite
  has no int16 LOG_SOFTMAX.
* L2_NORMALIZATION, int8/uint8: ``x - zp`` times ``1 / sqrt(sum((x - zp)^2))`` from
  ``GetInvSqrtQuantizedMultiplierExp`` (a Newton iteration in Q3.28), in units of 1/128;
  int8 rescales ``x`` with ``MultiplyByQuantizedMultiplier(shift + 7)``, uint8 rescales
  ``128 * x`` with ``...SmallerThanOneExp`` and adds 128. Output scale 1/128 and zero
  point 0 / 128 (checked); TFLite has no int16 L2_NORMALIZATION and refuses fused
  activations (even for float).

TFLite normalizes along the last axis; the kernels here take any `axis`.
"""

from __future__ import annotations

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
from synapc.backends.jax.ops.common import any_quantized, float_only, widen
from synapc.backends.jax.ops.quantized import qtype, scale_f64, stored
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import activation as act
from synapc.dialects.synap import normalization as norm


def _float_diff_from_max(x: jax.Array, axis: int) -> jax.Array:
    """``x - max(x)`` along `axis`, clamped to <= 0: XLA may recompute a fused producer
    of `x` in another summation order for the max than for `x`, and one ulp of a large
    logit must not turn into ``exp(+big) = inf`` (and NaN after the division)."""
    return jnp.minimum(x - jnp.max(x, axis=axis, keepdims=True), 0)


def _float_softmax(x: jax.Array, p: dict[str, Any]) -> jax.Array:
    exps = jnp.exp(_float_diff_from_max(x * jnp.asarray(p["beta"], x.dtype), p["axis"]))
    return exps / jnp.sum(exps, axis=p["axis"], keepdims=True)


def _float_log_softmax(x: jax.Array, p: dict[str, Any]) -> jax.Array:
    diff = _float_diff_from_max(x, p["axis"])
    return diff - jnp.log(jnp.sum(jnp.exp(diff), axis=p["axis"], keepdims=True))


_FLOAT: dict[type, Callable[[jax.Array, dict[str, Any]], jax.Array]] = {
    act.SoftmaxOp: _float_softmax,
    act.LogSoftmaxOp: _float_log_softmax,
    act.L2NormalizeOp: lambda x, p: (
        x
        * lax.rsqrt(
            jnp.maximum(
                jnp.sum(x * x, axis=p["axis"], keepdims=True),
                jnp.asarray(p["epsilon"], x.dtype),
            )
        )
    ),
}

_SCALED_DIFF_INTEGER_BITS = 5
"""Integer bits of the scaled ``x - max`` fed to the exp (Q5.26)."""
_ACCUMULATION_INTEGER_BITS = 12
"""Integer bits of the sum of exps (Q12.19)."""


# --------------------------------------------------------------------------------------
# Small gemmlowp helpers not in fixed_point.py
# --------------------------------------------------------------------------------------


def _clz(x: jax.Array) -> jax.Array:
    """``CountLeadingZeros(uint32(x))`` as int32."""
    return lax.clz(lax.bitcast_convert_type(x.astype(jnp.int32), jnp.uint32)).astype(
        jnp.int32
    )


def _saturating_add(a: jax.Array, b: jax.Array | int) -> jax.Array:
    """TFLite ``SaturatingAddNonGemmlowp`` (int32): the exact sum clamped to int32."""
    a, b = jnp.broadcast_arrays(jnp.asarray(a, jnp.int32), jnp.asarray(b, jnp.int32))
    total = a + b  # wraps; overflow iff the operands agree in sign and the sum does not
    overflow = ((a >= 0) == (b >= 0)) & ((total >= 0) != (a >= 0))
    return jnp.where(overflow, jnp.where(a >= 0, fp.INT32_MAX, fp.INT32_MIN), total)


def _saturating_sub(a: jax.Array, b: jax.Array | int) -> jax.Array:
    """TFLite ``SaturatingSub`` (int32): the exact difference clamped to int32."""
    a, b = jnp.broadcast_arrays(jnp.asarray(a, jnp.int32), jnp.asarray(b, jnp.int32))
    diff = a - b  # wraps; overflow iff the operands differ in sign and the result flips
    overflow = ((a >= 0) != (b >= 0)) & ((diff >= 0) != (a >= 0))
    return jnp.where(overflow, jnp.where(a >= 0, fp.INT32_MAX, fp.INT32_MIN), diff)


_LOG_2 = 1488522236
_SQRT_SQRT_HALF = 1805811301
_SQRT_HALF = 1518500250
_ONE_QUARTER = 536870912
_ALPHA_N = 117049297
_ALPHA_D = 127690142
_ALPHA_I = 1057819769
_ALPHA_F = 638450708


def log_x_for_x_greater_than_or_equal_to_1(
    x: jax.Array, input_integer_bits: int, output_integer_bits: int
) -> jax.Array:
    """TFLite ``log_x_for_x_greater_than_or_equal_to_1<output_integer_bits>``: ``log(x)``
    for a raw ``FixedPoint<int32, input_integer_bits>`` ``x >= 1``, as a raw
    ``FixedPoint<int32, output_integer_bits>``.

    ``x = 2**z * r`` with ``r`` in ``[sqrt(1/2), sqrt(2))`` (two candidate normalisations,
    taking the smaller ``r``), ``log(x) = z * log(2) + log(r)`` with ``log(r)`` a rational
    approximation around ``sqrt(sqrt(1/2))``; accumulated with one extra integer bit."""
    mul = fp.saturating_rounding_doubling_high_mul
    accum_bits = output_integer_bits + 1
    shifted_quarter = _ONE_QUARTER >> accum_bits  # Rescale<accum_bits>: exact

    z_a = jnp.asarray(x, jnp.int32)
    z_a_headroom_plus_1 = _clz(z_a)
    r_a_tmp = fp.saturating_rounding_multiply_by_pot_param(z_a, z_a_headroom_plus_1 - 1)
    r_a_raw = fp.saturating_rounding_multiply_by_pot_param(mul(r_a_tmp, _SQRT_HALF), 1)
    z_a_pow_2_adj = _saturating_add(
        fp.saturating_rounding_multiply_by_pot_param(
            input_integer_bits - z_a_headroom_plus_1, 31 - accum_bits
        ),
        shifted_quarter,
    )

    z_b = mul(z_a, _SQRT_HALF)
    z_b_headroom = _clz(z_b) - 1
    r_b_raw = fp.saturating_rounding_multiply_by_pot_param(z_a, z_b_headroom)
    z_b_pow_2_adj = _saturating_sub(
        fp.saturating_rounding_multiply_by_pot_param(
            input_integer_bits - z_b_headroom, 31 - accum_bits
        ),
        shifted_quarter,
    )

    r = jnp.minimum(r_a_raw, r_b_raw)
    z_pow_2_adj = jnp.maximum(z_a_pow_2_adj, z_b_pow_2_adj)

    p = fp.rounding_half_sum(r, _SQRT_SQRT_HALF)
    q = r - _SQRT_SQRT_HALF
    q = q + q
    common_sq = mul(q, q)
    num = mul(q, r) + mul(mul(q, common_sq), _ALPHA_N)
    denom_minus_one_0 = mul(p, _ALPHA_I + q + mul(_ALPHA_D, common_sq)) + mul(_ALPHA_F, q)
    recip_denom = fp.one_over_one_plus_x_for_x_in_0_1(denom_minus_one_0)

    num_scaled = fp.rescale(num, 0, accum_bits)
    total = mul(z_pow_2_adj, _LOG_2) + mul(num_scaled, recip_denom)
    return fp.rescale(total, accum_bits, output_integer_bits)


def inv_sqrt_quantized_multiplier_exp(
    x: jax.Array, reverse_shift: int
) -> tuple[jax.Array, jax.Array]:
    """TFLite ``GetInvSqrtQuantizedMultiplierExp``: ``(multiplier, shift)`` with
    ``1 / sqrt(x) ~= multiplier * 2**(shift * reverse_shift - 31)`` for int32 ``x >= 0``
    (``x <= 1`` gives ``(INT32_MAX, 0)``), computed per element.

    ``x`` is brought into ``[2**27, 2**29)`` by even shifts, then five Newton-Raphson steps
    of ``y = y * (3 - x * y**2) / 2`` run in ``FixedPoint<int32, 3>`` starting at 1, the
    result is multiplied by ``sqrt(2) / 2`` and a negative shift is folded into the
    multiplier (a plain, wrapping left shift, as in the C++)."""
    mul = fp.saturating_rounding_doubling_high_mul
    x = jnp.asarray(x, jnp.int32)
    bit_length = 32 - _clz(x)
    divisions = jnp.maximum(0, (bit_length - 28) >> 1)  # while x >= 2**29: x /= 4
    value = x >> (2 * divisions)
    shift = 11 + divisions
    left_shift_bit_pairs = ((_clz(value) - 1) >> 1) - 1
    shift = shift - left_shift_bit_pairs
    value = value << (2 * left_shift_bit_pairs)

    half_input = fp.rounding_divide_by_pot(value >> 1, 1)  # F3, times 1/2
    half_three = (1 << 28) + (1 << 27)  # F3 1.5
    y = jnp.full_like(value, 1 << 28)  # F3 One
    for _ in range(5):
        y3 = fp.rescale(mul(mul(y, y), y), 9, 3)
        y = fp.rescale(mul(half_three, y) - mul(half_input, y3), 6, 3)
    y = mul(y, _SQRT_HALF)  # F3 * F0 = F3
    negative = shift < 0
    y = jnp.where(negative, y << jnp.clip(-shift, 0, 31), y)
    shift = jnp.where(negative, 0, shift)
    small = x <= 1
    return (
        jnp.where(small, fp.INT32_MAX, y),
        jnp.where(small, 0, shift * reverse_shift),
    )


# --------------------------------------------------------------------------------------
# Quantized kernels, along the last axis
# --------------------------------------------------------------------------------------


def _diff_from_max(x: jax.Array) -> jax.Array:
    """``x - max(x)`` along the last axis, in int32."""
    x = x.astype(jnp.int32)
    return x - jnp.max(x, axis=-1, keepdims=True)


def _beta_f32(op: act.SoftmaxOp) -> float:
    """The op's beta as the float32 TFLite stores."""
    return float(np.float32(op.props()["beta"]))


def _scaled_exps(
    diff: jax.Array, multiplier: int, left_shift: int, diff_min: int
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The shared front of the 8-bit softmax and log-softmax: ``(scaled, exps, sum)``.

    ``scaled`` is ``diff`` in Q5.26 (``MultiplyByQuantizedMultiplierGreaterThanOne``),
    ``exps`` its gemmlowp exp in Q0.31 and ``sum`` the Q12.19 sum of the exps of the
    differences not below ``diff_min`` (int32, wrapping like the C++)."""
    scaled = fp.multiply_by_quantized_multiplier_greater_than_one(
        diff, multiplier, left_shift
    )
    exps = fp.exp_on_negative_values(scaled, _SCALED_DIFF_INTEGER_BITS)
    accumulated = jnp.where(
        diff >= diff_min, fp.rescale(exps, 0, _ACCUMULATION_INTEGER_BITS), 0
    )
    return scaled, exps, jnp.sum(accumulated, axis=-1, keepdims=True, dtype=jnp.int32)


def _softmax_scaling(beta: float, q_in: UniformQuantizedType, name: str) -> tuple[int, int]:
    """TFLite's ``PreprocessSoftmaxScaling`` into Q5.26; LiteRT aborts (a failed
    ``TFLITE_CHECK``) when ``beta * s_in * 2**26`` is not above 1, so that is refused."""
    real = beta * scale_f64(q_in) * float(1 << (31 - _SCALED_DIFF_INTEGER_BITS))
    if real <= 1.0:
        raise UnsupportedOpError(
            f"quantized {name} with beta * input scale = {beta * scale_f64(q_in):g} "
            f"(at most 2**-{31 - _SCALED_DIFF_INTEGER_BITS}) is not supported (TFLite "
            "aborts on it)"
        )
    return fp.preprocess_softmax_scaling(beta, scale_f64(q_in), _SCALED_DIFF_INTEGER_BITS)


def _softmax_8bit(
    x: jax.Array, beta: float, q_in: UniformQuantizedType, out_dtype: np.dtype
) -> jax.Array:
    """``reference_ops::Softmax`` for int8/uint8 input and int8, uint8 or int16 output."""
    multiplier, left_shift = _softmax_scaling(beta, q_in, "softmax")
    diff_min = -fp.calculate_input_radius(_SCALED_DIFF_INTEGER_BITS, left_shift)
    info = np.iinfo(out_dtype)
    diff = _diff_from_max(x)
    _, exps, total = _scaled_exps(diff, multiplier, left_shift, diff_min)
    shifted_scale, num_bits_over_unit = fp.get_reciprocal(total, _ACCUMULATION_INTEGER_BITS)
    exponent = num_bits_over_unit + 31 - info.bits
    unsat = fp.rounding_divide_by_pot(
        fp.saturating_rounding_doubling_high_mul(shifted_scale, exps),
        jnp.minimum(exponent, 31),
    )
    # A sum of exps of 2**28 or more (512 or more inputs at the row maximum) gives 8-bit
    # outputs an exponent above gemmlowp's limit of 31, where LiteRT aborts; the exact
    # quotient, below 1/2, rounds to 0 (each probability is under 1/512).
    unsat = jnp.where(exponent > 31, 0, unsat)
    out = jnp.clip(unsat + int(info.min), int(info.min), int(info.max))
    return jnp.where(diff >= diff_min, out, int(info.min)).astype(out_dtype)


def _softmax_int16(x: jax.Array, beta: float, q_in: UniformQuantizedType) -> jax.Array:
    """``reference_ops::SoftmaxInt16``: table exp and table reciprocal, Q0.15 output."""
    exp_lut, recip_lut = fp.int16_softmax_tables()
    # float * float in the C++ (a float32 product), then divided as a double.
    real = float(np.float32(q_in.scale) * np.float32(beta)) / (10.0 / 65535.0)
    multiplier, shift = fp.quantize_multiplier(real)
    scaled = fp.multiply_by_quantized_multiplier(_diff_from_max(x), multiplier, shift)
    exps = fp.lut_lookup_int16(jnp.clip(scaled + 32767, -32768, 32767), exp_lut)
    total = jnp.sum(exps, axis=-1, keepdims=True, dtype=jnp.int32)
    headroom_plus_one = _clz(total)
    # ((int64(sum) << (headroom_plus_one - 1)) + 2**13) >> 14: below 2**32, so in uint32.
    utotal = lax.bitcast_convert_type(total, jnp.uint32)
    shifted = (
        (utotal << (headroom_plus_one - 1).astype(jnp.uint32)) + jnp.uint32(1 << 13)
    ) >> jnp.uint32(14)
    shifted_sum = shifted.astype(jnp.int32)
    sym = jnp.clip(shifted_sum - ((1 << 15) + (1 << 16)), -32768, 32767)
    reciprocal = fp.lut_lookup_int16(sym, recip_lut)
    right_shift = 31 - headroom_plus_one
    # |exp * reciprocal| < 2**30 and the rounding term is at most 2**29: exact in int32.
    result = (exps * reciprocal + (jnp.int32(1) << (right_shift - 1))) >> right_shift
    return jnp.clip(result, 0, 32767).astype(jnp.int16)


def _log_softmax_8bit(
    x: jax.Array, q_in: UniformQuantizedType, out_dtype: np.dtype
) -> jax.Array:
    """``reference_integer_ops::LogSoftmax`` (int8) / ``reference_ops::LogSoftmax``
    (uint8): ``x - max - log(sum of exps)`` in Q4 plus the type's maximum."""
    _softmax_scaling(1.0, q_in, "log-softmax")  # refuses what TFLite aborts on
    multiplier, left_shift, reverse_multiplier, reverse_left_shift = (
        fp.preprocess_log_softmax_scaling_exp(
            1.0, scale_f64(q_in), _SCALED_DIFF_INTEGER_BITS
        )
    )
    diff_min = -fp.calculate_input_radius(_SCALED_DIFF_INTEGER_BITS, left_shift)
    info = np.iinfo(out_dtype)
    output_integer_bits = 4
    diff = _diff_from_max(x)
    scaled, _, total = _scaled_exps(diff, multiplier, left_shift, diff_min)
    log_sum = log_x_for_x_greater_than_or_equal_to_1(
        total, _ACCUMULATION_INTEGER_BITS, _SCALED_DIFF_INTEGER_BITS
    )
    rescaled_diff_min = log_sum + jnp.int32(fp.INT32_MIN)
    adjusted_diff_min = jnp.maximum(
        diff_min - 1,
        fp.multiply_by_quantized_multiplier_smaller_than_one_exp(
            rescaled_diff_min, reverse_multiplier, reverse_left_shift
        ),
    )
    unsat = fp.rounding_divide_by_pot(
        scaled - log_sum, 31 - _SCALED_DIFF_INTEGER_BITS - output_integer_bits
    ) + int(info.max)
    out = jnp.clip(unsat, int(info.min), int(info.max))
    return jnp.where(diff > adjusted_diff_min, out, int(info.min)).astype(out_dtype)


def _l2_normalize_8bit(x: jax.Array, q_in: UniformQuantizedType) -> jax.Array:
    """``reference_integer_ops::L2Normalization`` (int8) / ``reference_ops::
    L2Normalization`` (uint8): ``(x - zp) / |x - zp|`` in units of 1/128."""
    centered = stored(x, q_in)
    squares = jnp.sum(centered * centered, axis=-1, keepdims=True, dtype=jnp.int32)
    multiplier, shift = inv_sqrt_quantized_multiplier_exp(squares, -1)
    if q_in.storage_dtype == np.int8:
        out = fp.multiply_by_quantized_multiplier(centered, multiplier, shift + 7)
        return jnp.clip(out, -128, 127).astype(jnp.int8)
    out = 128 + fp.multiply_by_quantized_multiplier_smaller_than_one_exp(
        128 * centered, multiplier, shift
    )
    return jnp.clip(out, 0, 255).astype(jnp.uint8)


def _check_encoding(
    op: act._AlongAxis,
    q: UniformQuantizedType,
    what: str,
    scale: float | None,
    zero_point: int,
    *,
    near: bool = False,
) -> None:
    """TFLite's Prepare checks of a fixed encoding: ``q`` must have ``zero_point`` and
    (unless ``scale`` is None) ``scale``, exactly or, with ``near``, within 0.1%."""
    stored_scale = np.float32(q.scale)
    off = False
    if scale is not None:
        want = np.float32(scale)
        tolerance = np.float32(0.001) * want if near else np.float32(0)
        off = bool(abs(stored_scale - want) > tolerance)
    if off or q.zero_point != zero_point:
        expected = f"zero point {zero_point}"
        if scale is not None:
            expected = f"scale {scale:g} and {expected}"
        raise UnsupportedOpError(
            f"quantized {op.name} needs its {what} quantized with {expected} (TFLite's "
            f"kernel refuses scale {float(stored_scale):g}, zero point {q.zero_point})"
        )


def _quantized(op: act._AlongAxis, x: jax.Array) -> jax.Array:
    """A quantized softmax / log-softmax / L2 normalization along the last axis, on
    stored integers; the type combinations and encodings TFLite's Prepare refuses are
    unsupported."""
    q_in, q_out = qtype(op.input), qtype(op.output)
    if q_in.is_per_axis or q_out.is_per_axis:
        raise UnsupportedOpError(f"{op.name} with per-axis quantization is not supported")
    in_dtype, out_dtype = np.dtype(q_in.storage_dtype), np.dtype(q_out.storage_dtype)
    eight_bit = in_dtype in (np.dtype(np.int8), np.dtype(np.uint8))
    same_8bit = eight_bit and out_dtype == in_dtype
    signed = in_dtype == np.int8
    if isinstance(op, act.SoftmaxOp):
        if eight_bit and out_dtype in (in_dtype, np.dtype(np.int16)):
            if signed and out_dtype == np.int8:
                _check_encoding(op, q_out, "output", 1 / 256, -128, near=True)
            return _softmax_8bit(x, _beta_f32(op), q_in, out_dtype)
        if in_dtype == out_dtype == np.int16:
            _check_encoding(op, q_in, "input", None, 0)
            _check_encoding(op, q_out, "output", 1 / 32768, 0, near=True)
            return _softmax_int16(x, _beta_f32(op), q_in)
    elif isinstance(op, act.LogSoftmaxOp) and same_8bit:
        _check_encoding(op, q_out, "output", 16 / 256, 127 if signed else 255)
        return _log_softmax_8bit(x, q_in, out_dtype)
    elif isinstance(op, act.L2NormalizeOp) and same_8bit:
        _check_encoding(op, q_out, "output", 1 / 128, 0 if signed else 128)
        return _l2_normalize_8bit(x, q_in)
    raise UnsupportedOpError(
        f"quantized {op.name} from {in_dtype} to {out_dtype} is not supported by the "
        "JAX backend (nor by TFLite)"
    )


real_valued(*_FLOAT, norm.LayerNormOp)


@kernel(*_FLOAT)
def normalize(
    op: act._AlongAxis, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Softmax / log-softmax / L2 normalization: float (summed in float32 for float16) or
    quantized (TFLite's reference integer kernels, see the module docstring)."""
    x = args[0]
    if not any_quantized(op):
        return [_FLOAT[type(op)](widen(x), op.props()).astype(x.dtype)]
    axis = op.props()["axis"] % x.ndim
    y = _quantized(op, jnp.moveaxis(x, axis, -1))
    return [jnp.moveaxis(y, -1, axis)]


@kernel(norm.LayerNormOp)
def layer_norm(
    op: norm.LayerNormOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """``synap.layer_norm``, float only: ``(x - mean) * rsqrt(var + epsilon) * gamma +
    beta`` along the op's axis, with the statistics in float32 for narrower floats."""
    float_only(op)
    x, rest = args[0], iter(args[1:])
    gamma = next(rest) if op.gamma is not None else None
    beta = next(rest) if op.beta is not None else None
    props = op.props()
    axis = props["axis"] % x.ndim
    wide = widen(x)
    centered = wide - jnp.mean(wide, axis=axis, keepdims=True)
    variance = jnp.mean(centered * centered, axis=axis, keepdims=True)
    y = centered * lax.rsqrt(variance + jnp.asarray(props["epsilon"], wide.dtype))
    if gamma is not None:
        y = y * widen(gamma)
    if beta is not None:
        y = y + widen(beta)
    return [y.astype(x.dtype)]
