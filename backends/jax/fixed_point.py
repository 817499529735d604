"""Bit-exact TFLite / gemmlowp fixed-point primitives for the integer kernels of the JAX
backend.

Every integer kernel of the backend must give the same integers as LiteRT's reference
kernels (``OpResolverType.BUILTIN_REF``). Those kernels are built from a small set of
fixed-point primitives (``tflite/kernels/internal/common.{h,cc}``, ``quantization_util.cc``
and gemmlowp's ``fixedpoint/fixedpoint.h``); this module reproduces each of them.

Two halves:

* **Host side** (numpy / Python, run once at compile time on constants): the float to
  fixed-point conversions TFLite does in its ``Prepare`` functions --
  :func:`quantize_multiplier` and friends, :func:`preprocess_softmax_scaling`,
  :func:`calculate_input_radius`, and the lookup-table generators :func:`lut_populate_int8`
  / :func:`lut_populate_int16`.
* **Device side** (JAX, jit-compatible, elementwise, broadcasting): the integer arithmetic
  of the kernels' inner loops. It runs with ``jax_enable_x64`` off, so there is no int64:
  every exact 32x32->64-bit product is built from 16-bit halves in uint32 arithmetic and
  64-bit intermediates are (hi, lo) uint32 pairs. Signed int32 adds, subtracts, negations
  and left shifts wrap (two's complement), which is what the C++ does in practice where it
  overflows; nothing here relies on float arithmetic.

Single vs double rounding
-------------------------
TFLite has two builds of ``MultiplyByQuantizedMultiplier`` (MBQM), chosen at compile time by
the ``TFLITE_SINGLE_ROUNDING`` macro:

* double rounding (macro unset or 0, TFLite's default; the gemmlowp / ARM NEON scheme):
  ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x * 2**left, m), right)`` -- the
  high multiply rounds ties toward +inf, then (for negative shifts) the rounding shift
  rounds again with ties away from zero.
* single rounding (``TFLITE_SINGLE_ROUNDING=1``, an opt-in build flag):
  ``(x * m + 2**(30 - shift)) >> (31 - shift)`` in int64 -- one rounding, ties toward +inf.
  It also changes the host side: QuantizeMultiplier saturates ``shift > 30`` to
  ``(2**31 - 1, 30)`` and PreprocessSoftmaxScaling caps at ``2**30 - 1``, not ``2**31 - 1``.

The macro switches every caller at once: ``MultiplyByQuantizedMultiplier`` (conv, depthwise
conv, transpose conv, mul, batch matmul, requantize, mean/sum, prelu / leaky relu / relu,
int16 softmax's exp scaling), ``...SmallerThanOneExp`` (add, sub, quantized comparisons) and
``...GreaterThanOne`` (uint8/int8 softmax and log-softmax). In the double build the three
entry points differ only in the shift range they accept; in the single build the last two
are aliases of MBQM.

The pip ``ai-edge-litert`` 2.3.0 wheel is a **double-rounding** build, so
:data:`DEFAULT_ROUNDING` is ``"double"``. Evidence (one-op models run with
``OpResolverType.BUILTIN_REF``, power-of-two scales so that exact ties occur, where double
rounding sends negative ties away from zero and single rounding toward +inf): int8
CONV_2D and DEPTHWISE_CONV_2D (per-tensor and per-channel), MUL, BATCH_MATMUL and
QUANTIZE (int8 -> int8) matched the double-rounding MBQM on every output and missed the
single-rounding one on 32-128 of them; ADD and SUB matched double rounding on all 65,536
input pairs and missed single rounding on 8,192-16,512.

Not every kernel uses MBQM. In that wheel the reference FULLY_CONNECTED (int8 per-tensor,
int8 per-channel and 16x8 with int64 bias) rescales in float64:
``int32(std::round(double(acc) * (double(s_in) * double(s_w) / double(s_out))))`` matched
every output while both MBQM builds missed 64-289; int8 LOGISTIC / TANH are float32 lookup
tables (:func:`lut_populate_int8`). The 16x8 CONV_2D with int64 bias uses the int64 MBQM
overload (:func:`multiply_by_quantized_multiplier_int64`, identical in both builds: it
rounds a 16-bit reduced multiplier once), which matched every output where the float64
formula missed 4,225.

gemmlowp FixedPoint formats
---------------------------
``FixedPoint<int32_t, N>`` ("Q N.(31-N)") is a raw int32 whose real value is
``raw / 2**(31 - N)``. Functions here take the raw integers plus the static ``integer_bits``
N and return raw integers; ``raw_bits=16`` selects ``FixedPoint<int16_t, N>`` (values held
in int32 arrays, real value ``raw / 2**(15 - N)``), used by gemmlowp-based int16 code such
as quantized LSTM cells. The reference int16 LOGISTIC and TANH kernels do *not* use gemmlowp
but a 256-entry sigmoid table with interpolation (:func:`logistic_int16`,
:func:`tanh_int16`), and int16 SOFTMAX uses two 513-entry tables
(:func:`lut_populate_int16`, :func:`lut_lookup_int16`). With ``BUILTIN_REF`` the int8/uint8
LOGISTIC and TANH kernels are 256-entry tables computed in float32 at prepare time
(:func:`lut_populate_int8`); only uint8/int8 SOFTMAX (and LOG_SOFTMAX) run the gemmlowp exp
/ reciprocal code at inference time.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
from collections.abc import Callable
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from synapc.backends.jax.lowering import UnsupportedOpError


class ParameterError(UnsupportedOpError, ValueError):
    """A kernel parameter derived from a model's quantization that TFLite's checks
    refuse: a multiplier that is not finite or out of its range, a shift beyond the raw
    type. A ValueError for callers of these helpers, and an `UnsupportedOpError`, so
    lowering refuses the layer (and constant folding leaves it alone)."""


Rounding = Literal["single", "double"]

DEFAULT_ROUNDING: Rounding = "double"
"""The MBQM build of the pip ``ai-edge-litert`` 2.3 wheel (see the module docstring)."""

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

ArrayLike = jax.Array | np.ndarray | int

# --------------------------------------------------------------------------------------
# Host side: multipliers and kernel parameters (numpy, compile time)
# --------------------------------------------------------------------------------------


def round_half_away_np(v: np.ndarray) -> np.ndarray:
    """``std::round`` (TfLiteRound) on a float array, exactly: ties go away from zero.

    ``np.round`` rounds ties to even and ``floor(v + 0.5)`` misrounds values just below
    one half, so the fraction is taken exactly (``v - trunc(v)`` never rounds)."""
    t = np.trunc(v)
    frac = v - t
    return t + np.where(np.abs(frac) >= 0.5, np.sign(v), 0).astype(v.dtype)


def _check_rounding(rounding: str) -> None:
    if rounding not in ("single", "double"):
        raise ValueError(f"rounding must be 'single' or 'double', not {rounding!r}")


def quantize_multiplier(
    real: float | np.ndarray, *, rounding: Rounding = DEFAULT_ROUNDING
) -> tuple[np.ndarray, np.ndarray]:
    """TFLite ``QuantizeMultiplier``: a real multiplier as ``(q31 multiplier, shift)``.

    ``real ~= multiplier * 2**(shift - 31)`` with ``multiplier`` in ``[2**30, 2**31)``: the
    mantissa from ``frexp`` is rounded (ties away from zero) to 31 fractional bits; a
    mantissa that rounds up to ``2**31`` becomes ``2**30`` with ``shift + 1``;
    ``shift < -31`` (real below about 2**-32) flushes to ``(0, 0)``; 0 gives ``(0, 0)``; in
    the single-rounding build ``shift > 30`` saturates to ``(2**31 - 1, 30)``. Negative
    multipliers give negative mantissas, as in TFLite. Vectorized: per-channel arrays give
    arrays of the same shape (scalars give 0-d arrays). Compute ``real`` in float64 the way
    the kernel's Prepare does (float32 scales widened to double), e.g.
    ``float(s_in) * float(s_w) / float(s_out)``.
    """
    _check_rounding(rounding)
    r = np.asarray(real, dtype=np.float64)
    if not np.all(np.isfinite(r)):
        raise ParameterError(
            "a rescale multiplier derived from the quantization scales is not finite"
        )
    q, shift = np.frexp(r)
    q_fixed = round_half_away_np(q * float(1 << 31)).astype(np.int64)
    if np.any(q_fixed > (1 << 31)):  # TFLITE_CHECK; cannot happen for finite input
        raise ParameterError("a rescale multiplier's mantissa is out of range")
    top = q_fixed == (1 << 31)
    q_fixed = np.where(top, q_fixed // 2, q_fixed)
    shift = np.where(top, shift + 1, shift).astype(np.int64)
    tiny = shift < -31
    q_fixed = np.where(tiny, 0, q_fixed)
    shift = np.where(tiny, 0, shift)
    if rounding == "single":
        big = shift > 30
        q_fixed = np.where(big, (1 << 31) - 1, q_fixed)
        shift = np.where(big, 30, shift)
    zero = r == 0.0
    q_fixed = np.where(zero, 0, q_fixed)
    shift = np.where(zero, 0, shift)
    return q_fixed.astype(np.int32), shift.astype(np.int32)


def quantize_multiplier_smaller_than_one_exp(
    real: float | np.ndarray, *, rounding: Rounding = DEFAULT_ROUNDING
) -> tuple[np.ndarray, np.ndarray]:
    """TFLite ``QuantizeMultiplierSmallerThanOneExp``: :func:`quantize_multiplier` for
    ``0 <= real < 1``, returning ``(multiplier, left_shift <= 0)``.

    Used by ADD/SUB (input and output rescaling) and quantized comparisons; raises like the
    ``TFLITE_CHECK``s when the input or the resulting shift is out of range."""
    r = np.asarray(real, dtype=np.float64)
    if np.any(r >= 1.0) or np.any(r < 0.0):
        raise ParameterError(
            f"a rescale multiplier derived from the quantization scales is "
            f"{float(np.max(r)) if np.any(r >= 1.0) else float(np.min(r)):g}; TFLite's "
            "kernel needs it in [0, 1)"
        )
    m, s = quantize_multiplier(r, rounding=rounding)
    if np.any(s > 0):
        raise ParameterError(
            "a rescale multiplier derived from the quantization scales needs a left "
            "shift, which TFLite's kernel does not allow"
        )
    return m, s


def quantize_multiplier_greater_than_one(
    real: float | np.ndarray, *, rounding: Rounding = DEFAULT_ROUNDING
) -> tuple[np.ndarray, np.ndarray]:
    """TFLite ``QuantizeMultiplierGreaterThanOne``: :func:`quantize_multiplier` for
    ``real > 1``, returning ``(multiplier, left_shift >= 0)``.

    Used through :func:`preprocess_softmax_scaling`; raises like the ``TFLITE_CHECK``s."""
    r = np.asarray(real, dtype=np.float64)
    if np.any(r <= 1.0):
        raise ParameterError(
            f"a rescale multiplier derived from the quantization scales is "
            f"{float(np.min(r)):g}; TFLite's kernel needs it above 1"
        )
    m, s = quantize_multiplier(r, rounding=rounding)
    if np.any(s < 0):
        raise ParameterError(
            "a rescale multiplier derived from the quantization scales needs a right "
            "shift, which TFLite's kernel does not allow"
        )
    return m, s


def preprocess_softmax_scaling(
    beta: float,
    input_scale: float,
    input_integer_bits: int,
    *,
    rounding: Rounding = DEFAULT_ROUNDING,
) -> tuple[int, int]:
    """TFLite ``PreprocessSoftmaxScaling``: ``(input_beta_multiplier,
    input_beta_left_shift)``.

    The uint8/int8 reference SOFTMAX rescales ``input - max`` by
    ``beta * input_scale * 2**(31 - input_integer_bits)`` (capped at ``2**31 - 1``, or
    ``2**30 - 1`` in the single-rounding build) with
    :func:`multiply_by_quantized_multiplier_greater_than_one`, giving a
    ``FixedPoint<int32, input_integer_bits>`` (5 for SOFTMAX and LOG_SOFTMAX). ``beta`` and
    ``input_scale`` are the float32 values from the model (pass them as Python floats or
    numpy float32; they are widened to double as in TFLite)."""
    _check_rounding(rounding)
    cap = float((1 << 30) - 1) if rounding == "single" else float((1 << 31) - 1)
    real = min(
        float(beta) * float(input_scale) * float(1 << (31 - input_integer_bits)), cap
    )
    m, s = quantize_multiplier_greater_than_one(real, rounding=rounding)
    return int(m), int(s)


def preprocess_log_softmax_scaling_exp(
    beta: float,
    input_scale: float,
    input_integer_bits: int,
    *,
    rounding: Rounding = DEFAULT_ROUNDING,
) -> tuple[int, int, int, int]:
    """TFLite ``PreprocessLogSoftmaxScalingExp``: softmax scaling plus its inverse.

    Returns ``(input_multiplier, input_left_shift, reverse_scaling_divisor,
    reverse_scaling_left_shift)``; the reverse multiplier is
    ``2**(31 - left_shift) / input_multiplier`` quantized with
    :func:`quantize_multiplier_smaller_than_one_exp` (LOG_SOFTMAX negates its shift)."""
    m, s = preprocess_softmax_scaling(
        beta, input_scale, input_integer_bits, rounding=rounding
    )
    if s == 0:
        # `1 << 31` overflows int in the C++; never reached for real models (shift >= 1
        # whenever the capped multiplier exceeds 1).
        raise ParameterError("left shift 0 overflows TFLite's reverse scaling")
    real_reverse = float(1 << (31 - s)) / float(m)
    rm, rs = quantize_multiplier_smaller_than_one_exp(real_reverse, rounding=rounding)
    return m, s, int(rm), int(rs)


def calculate_input_radius(
    input_integer_bits: int, input_left_shift: int, total_signed_bits: int = 31
) -> int:
    """TFLite ``CalculateInputRadius``: the largest ``|input - max|`` worth computing.

    ``floor((2**iib - 1) * 2**(total_signed_bits - iib) / 2**input_left_shift)``; SOFTMAX
    uses ``diff_min = -calculate_input_radius(5, input_left_shift)`` and skips (outputs the
    minimum for) differences below it. The double expression in TFLite is exact, so integers
    are used here."""
    value = ((1 << input_integer_bits) - 1) << (total_signed_bits - input_integer_bits)
    return value >> input_left_shift


def split_int64(x: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    """Split int64 values (e.g. int64 bias constants of 16x8 kernels) into the ``(hi int32,
    lo uint32)`` pairs that the device side uses for 64-bit integers."""
    v = np.asarray(x, dtype=np.int64)
    hi = (v >> 32).astype(np.int32)
    lo = (v & 0xFFFFFFFF).astype(np.uint32)
    return hi, lo


# --------------------------------------------------------------------------------------
# Device side: 32-bit helpers
# --------------------------------------------------------------------------------------


def _i32(x: ArrayLike) -> jax.Array:
    return jnp.asarray(x, dtype=jnp.int32)


def _to_u32(x: jax.Array) -> jax.Array:
    return lax.bitcast_convert_type(x, jnp.uint32)


def _to_i32(u: jax.Array) -> jax.Array:
    return lax.bitcast_convert_type(u, jnp.int32)


def _u32(x: ArrayLike) -> jax.Array:
    """Bits of ``x`` as uint32 (int32 inputs are reinterpreted, not converted)."""
    a = jnp.asarray(x)
    if a.dtype == jnp.uint32:
        return a
    return _to_u32(a.astype(jnp.int32))


def _uabs(x: jax.Array) -> jax.Array:
    """``|x|`` of int32 values as uint32 (``|INT32_MIN| = 2**31`` fits)."""
    u = _to_u32(x)
    return jnp.where(x < 0, jnp.uint32(0) - u, u)


def _umul_wide(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Exact 64-bit product of two uint32 arrays as a ``(hi, lo)`` uint32 pair (16-bit
    limbs)."""
    a0, a1 = a & 0xFFFF, a >> 16
    b0, b1 = b & 0xFFFF, b >> 16
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1  # each < 2**32: exact
    mid = (p00 >> 16) + (p01 & 0xFFFF) + (p10 & 0xFFFF)
    lo = (mid << 16) | (p00 & 0xFFFF)
    hi = p11 + (p01 >> 16) + (p10 >> 16) + (mid >> 16)
    return hi, lo


def _add64(
    hi: jax.Array, lo: jax.Array, bhi: jax.Array, blo: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """``(hi, lo) + (bhi, blo)`` modulo 2**64 on uint32 pairs."""
    s = lo + blo
    return hi + bhi + (s < lo).astype(jnp.uint32), s


def _sub64(
    hi: jax.Array, lo: jax.Array, bhi: jax.Array, blo: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """``(hi, lo) - (bhi, blo)`` modulo 2**64 on uint32 pairs."""
    return hi - bhi - (lo < blo).astype(jnp.uint32), lo - blo


def _pow2_64(t: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``2**t`` for int32 ``t`` in [0, 63] as a uint32 pair."""
    one = jnp.uint32(1)
    low = t < 32
    lo = jnp.where(low, one << jnp.clip(t, 0, 31).astype(jnp.uint32), jnp.uint32(0))
    hi = jnp.where(low, jnp.uint32(0), one << jnp.clip(t - 32, 0, 31).astype(jnp.uint32))
    return hi, lo


def _shr64_low32(hi: jax.Array, lo: jax.Array, t: jax.Array) -> jax.Array:
    """Low 32 bits of the logical shift ``(hi, lo) >> t`` for int32 ``t`` in [0, 63]."""
    small = t < 32
    s = jnp.clip(t, 0, 31).astype(jnp.uint32)
    carry_in = jnp.where(s == 0, jnp.uint32(0), hi << jnp.clip(32 - s, 0, 31))
    below = (lo >> s) | carry_in
    above = hi >> jnp.clip(t - 32, 0, 31).astype(jnp.uint32)
    return jnp.where(small, below, above)


def _round_shift_signed(
    neg: jax.Array, hi: jax.Array, lo: jax.Array, t: jax.Array
) -> jax.Array:
    """Low 32 bits of ``floor((s * P + 2**(t-1)) / 2**t)`` for ``P = (hi, lo)`` unsigned,
    ``s = -1`` where ``neg`` else ``+1``, ``t`` in [1, 63] (needs ``P + 2**(t-1) < 2**64``).

    This is C's ``(int64 product + round) >> total_shift`` truncated to int32. For a
    negative product ``floor((-P + h) / 2**t) == -floor((P + h - 1) / 2**t)``, so the
    magnitude is rounded with ``h - neg`` and negated; only the low word of the quotient is
    needed."""
    rhi, rlo = _pow2_64(t - 1)
    rhi, rlo = _sub64(rhi, rlo, jnp.uint32(0), neg.astype(jnp.uint32))
    shi, slo = _add64(hi, lo, rhi, rlo)
    q = _shr64_low32(shi, slo, t)
    return _to_i32(jnp.where(neg, jnp.uint32(0) - q, q))


def _wrap(x: jax.Array, raw_bits: int) -> jax.Array:
    """Two's-complement wrap of int32 values to ``raw_bits`` (16: the int16 cast)."""
    if raw_bits == 32:
        return x
    return (x << 16) >> 16


def _check_raw_bits(raw_bits: int) -> None:
    if raw_bits not in (16, 32):
        raise ValueError(f"raw_bits must be 16 or 32, not {raw_bits}")


# --------------------------------------------------------------------------------------
# Device side: gemmlowp primitives
# --------------------------------------------------------------------------------------


def saturating_rounding_doubling_high_mul(
    a: ArrayLike, b: ArrayLike, *, raw_bits: int = 32
) -> jax.Array:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` (ARM ``VQRDMULH``), int32 or int16.

    ``(a * b + 2**30) >> 31`` computed exactly (the C++'s nudge of ``1 - 2**30`` for
    negative products plus truncating division is the same as flooring with ``+2**30``: ties
    round toward +inf), except ``a == b == INT_MIN`` which saturates to ``INT_MAX``. This is
    the FixedPoint product ``a * b`` for any integer-bit formats. ``raw_bits=16`` is the
    int16 overload (``(a * b + 2**14) >> 15``, saturating ``-32768 * -32768``)."""
    _check_raw_bits(raw_bits)
    a, b = jnp.broadcast_arrays(_i32(a), _i32(b))
    if raw_bits == 16:
        ab = a * b  # |ab| <= 2**30: exact
        res = (ab + (1 << 14)) >> 15
        return jnp.where((a == b) & (a == -32768), 32767, res)
    with jax.enable_x64(True):  # native 64-bit products: 2x the 32-bit emulation
        product = a.astype(jnp.int64) * b.astype(jnp.int64)  # |a*b| <= 2**62
        res = ((product + (1 << 30)) >> 31).astype(jnp.int32)  # exact: < 2**31
    return jnp.where((a == b) & (a == INT32_MIN), jnp.int32(INT32_MAX), res)


def rounding_divide_by_pot(x: ArrayLike, exponent: ArrayLike) -> jax.Array:
    """gemmlowp ``RoundingDivideByPOT``: ``x / 2**exponent`` rounded to nearest, ties away
    from zero (a rounding arithmetic right shift).

    ``exponent`` may be an array (per-channel shifts) and must be in [0, 31] as gemmlowp
    asserts. Exact for int16 values held in int32 as well (the formula is value-based)."""
    x, e = jnp.broadcast_arrays(_i32(x), _i32(exponent))
    mask = (jnp.int32(1) << e) - 1  # e == 31: INT_MIN - 1 wraps to INT_MAX, as in C
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0).astype(jnp.int32)
    return (x >> e) + (remainder > threshold).astype(jnp.int32)


def saturating_rounding_multiply_by_pot(
    x: ArrayLike, exponent: int, *, raw_bits: int = 32
) -> jax.Array:
    """gemmlowp ``SaturatingRoundingMultiplyByPOT<exponent>``: ``x * 2**exponent`` for a
    static exponent; left shifts saturate to the raw type's range, right shifts are
    :func:`rounding_divide_by_pot` (round to nearest, ties away from zero)."""
    _check_raw_bits(raw_bits)
    x = _i32(x)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    if exponent >= raw_bits:
        raise ParameterError(f"exponent {exponent} out of range for {raw_bits}-bit values")
    threshold = (1 << (raw_bits - 1 - exponent)) - 1
    lo, hi = -(1 << (raw_bits - 1)), (1 << (raw_bits - 1)) - 1
    res = _wrap(x << exponent, raw_bits)
    res = jnp.where(x > threshold, jnp.int32(hi), res)
    return jnp.where(x < -threshold, jnp.int32(lo), res)


def saturating_rounding_multiply_by_pot_param(
    x: ArrayLike, exponent: ArrayLike
) -> jax.Array:
    """TFLite ``SaturatingRoundingMultiplyByPOTParam`` (int32): saturating
    ``x * 2**exponent`` for a run-time ``exponent`` in [0, 31] (array allowed); exponent 0
    returns ``x``."""
    x, e = jnp.broadcast_arrays(_i32(x), _i32(exponent))
    ec = jnp.clip(e, 0, 31)
    threshold = (jnp.int32(1) << (31 - ec)) - 1  # ec == 0 wraps; masked below
    res = x << ec
    res = jnp.where(x > threshold, jnp.int32(INT32_MAX), res)
    res = jnp.where(x < -threshold, jnp.int32(INT32_MIN), res)
    return jnp.where(e == 0, x, res)


def rescale(
    x: ArrayLike, src_integer_bits: int, dst_integer_bits: int, *, raw_bits: int = 32
) -> jax.Array:
    """gemmlowp ``Rescale<dst>``: change a FixedPoint's integer bits, i.e.
    ``saturating_rounding_multiply_by_pot(x, src - dst)`` on the raw value."""
    return saturating_rounding_multiply_by_pot(
        x, src_integer_bits - dst_integer_bits, raw_bits=raw_bits
    )


def rounding_half_sum(a: ArrayLike, b: ArrayLike) -> jax.Array:
    """gemmlowp ``RoundingHalfSum`` (``VRHADD``-like): ``(a + b) / 2`` with the exact sum,
    ties away from zero (C++: ``(sum + sign(sum)) / 2`` in 64-bit). Exact for int16 values
    too."""
    a, b = jnp.broadcast_arrays(_i32(a), _i32(b))
    floor_half = (a >> 1) + (b >> 1) + (a & b & 1)  # floor((a + b) / 2), no overflow
    odd = (a ^ b) & 1
    return floor_half + jnp.where(floor_half >= 0, odd, 0)


def _add_saturating_if16(a: jax.Array, b: jax.Array, raw_bits: int) -> jax.Array:
    """gemmlowp ``AddSaturatingIf16Bit``: saturating for int16, wrapping for int32."""
    if raw_bits == 16:
        return jnp.clip(a + b, -32768, 32767)
    return a + b


# --------------------------------------------------------------------------------------
# Device side: MultiplyByQuantizedMultiplier and variants
# --------------------------------------------------------------------------------------


def multiply_by_quantized_multiplier_double_rounding(
    x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike
) -> jax.Array:
    """TFLite ``MultiplyByQuantizedMultiplier(int32_t, ...)``, default (double-rounding)
    build.

    ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x * 2**left, multiplier),
    right)`` with ``left = max(shift, 0)``, ``right = max(-shift, 0)``; ``x * 2**left``
    wraps like the C++. ``shift`` in [-31, 31], arrays broadcast (per-channel). This is
    what every MBQM caller computes in builds without ``TFLITE_SINGLE_ROUNDING``, including
    the pip ``ai-edge-litert`` 2.3 wheel (the default here)."""
    x, m, s = jnp.broadcast_arrays(_i32(x), _i32(multiplier), _i32(shift))
    left = jnp.clip(s, 0, 31)
    right = jnp.clip(-s, 0, 31)
    return rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(x << left, m), right
    )


def multiply_by_quantized_multiplier_single_rounding(
    x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike
) -> jax.Array:
    """TFLite ``MultiplyByQuantizedMultiplier(int32_t, ...)``, ``TFLITE_SINGLE_ROUNDING=1``
    build (not the pip ``ai-edge-litert`` 2.3 wheel; some TFLite Micro / CMSIS builds).

    ``int32((int64(x) * multiplier + 2**(30 - shift)) >> (31 - shift))``: one rounding, ties
    toward +inf, a result outside int32 wraps like the C++ cast. ``shift`` in [-31, 30] as
    TFLite DCHECKs; arrays broadcast. Negative multipliers are computed exactly too."""
    x, m, s = jnp.broadcast_arrays(_i32(x), _i32(multiplier), _i32(shift))
    neg = (x < 0) ^ (m < 0)
    hi, lo = _umul_wide(_uabs(x), _uabs(m))
    return _round_shift_signed(neg, hi, lo, 31 - s)


def multiply_by_quantized_multiplier(
    x: ArrayLike,
    multiplier: ArrayLike,
    shift: ArrayLike,
    *,
    rounding: Rounding = DEFAULT_ROUNDING,
) -> jax.Array:
    """TFLite ``MultiplyByQuantizedMultiplier(int32_t x, int32_t m, int shift)``: ``x``
    times ``m * 2**(shift - 31)`` rounded to an int32, in the chosen build (see the module
    docstring).

    Verified against ``BUILTIN_REF`` (ai-edge-litert 2.3, double build) for int8 CONV_2D,
    DEPTHWISE_CONV_2D (per-tensor and per-channel), MUL, BATCH_MATMUL and QUANTIZE
    (requantize); in the reference sources also TRANSPOSE_CONV, MEAN/SUM, PRELU,
    LEAKY_RELU, quantized RELU/RELU6 and the exp-input scaling of int16 SOFTMAX. Not
    FULLY_CONNECTED, which rescales in float64 in that wheel (module docstring)."""
    _check_rounding(rounding)
    if rounding == "single":
        return multiply_by_quantized_multiplier_single_rounding(x, multiplier, shift)
    return multiply_by_quantized_multiplier_double_rounding(x, multiplier, shift)


def multiply_by_quantized_multiplier_smaller_than_one_exp(
    x: ArrayLike,
    multiplier: ArrayLike,
    left_shift: ArrayLike,
    *,
    rounding: Rounding = DEFAULT_ROUNDING,
) -> jax.Array:
    """TFLite ``MultiplyByQuantizedMultiplierSmallerThanOneExp`` (``left_shift <= 0``).

    Double build: ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m),
    -left_shift)``; single build: :func:`multiply_by_quantized_multiplier_single_rounding`.
    Used by the int8 / uint8 / int16 ADD and SUB kernels (both input rescales and the output
    rescale) and by quantized comparison ops."""
    _check_rounding(rounding)
    if rounding == "single":
        return multiply_by_quantized_multiplier_single_rounding(x, multiplier, left_shift)
    x, m, s = jnp.broadcast_arrays(_i32(x), _i32(multiplier), _i32(left_shift))
    return rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(x, m), jnp.clip(-s, 0, 31)
    )


def multiply_by_quantized_multiplier_greater_than_one(
    x: ArrayLike,
    multiplier: ArrayLike,
    left_shift: ArrayLike,
    *,
    rounding: Rounding = DEFAULT_ROUNDING,
) -> jax.Array:
    """TFLite ``MultiplyByQuantizedMultiplierGreaterThanOne`` (``left_shift >= 0``).

    Double build: ``SaturatingRoundingDoublingHighMul(x * 2**left_shift, m)`` (the shift
    wraps like the C++); single build:
    :func:`multiply_by_quantized_multiplier_single_rounding`. Used by the uint8/int8
    reference SOFTMAX and LOG_SOFTMAX input scaling."""
    _check_rounding(rounding)
    if rounding == "single":
        return multiply_by_quantized_multiplier_single_rounding(x, multiplier, left_shift)
    x, m, s = jnp.broadcast_arrays(_i32(x), _i32(multiplier), _i32(left_shift))
    return saturating_rounding_doubling_high_mul(x << jnp.clip(s, 0, 31), m)


def multiply_by_quantized_multiplier_int64(
    x_hi: ArrayLike, x_lo: ArrayLike, multiplier: ArrayLike, shift: ArrayLike
) -> jax.Array:
    """TFLite ``MultiplyByQuantizedMultiplier(int64_t x, int32_t m, int shift)`` (both
    builds).

    ``x`` is the int64 accumulator of a 16x8 kernel with int64 bias, given as ``x_hi``
    (int32, the upper word) and ``x_lo`` (the lower word's bits, uint32 or int32), see
    :func:`split_int64` and :func:`int64_pair_add`. The multiplier is first reduced to 16
    bits, ``rm = (m + 2**15) >> 16`` (``0x7FFF`` when ``m >= 0x7FFF0000``), then
    ``int32((x * rm + 2**(14 - shift)) >> (15 - shift))``: one rounding, ties toward +inf,
    wrapping like the C++ cast. Domain as TFLite asserts: ``|x| < 2**47``, ``m >= 0``,
    ``shift`` in [-31, 7]. The reduced multiplier makes this coarser than the int32 MBQM
    (15-bit precision). ai-edge-litert 2.3's 16x8 CONV_2D with int64 bias uses it (checked);
    its 16x8 FULLY_CONNECTED rescales in float64 instead (module docstring)."""
    hi, lo, m, s = jnp.broadcast_arrays(
        _i32(x_hi), _u32(x_lo), _i32(multiplier), _i32(shift)
    )
    rm = jnp.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    neg_x = hi < 0
    uhi = _to_u32(hi)
    nhi, nlo = _sub64(jnp.uint32(0), jnp.uint32(0), uhi, lo)
    ahi = jnp.where(neg_x, nhi, uhi)
    alo = jnp.where(neg_x, nlo, lo)
    urm = _uabs(rm)
    phi, plo = _umul_wide(alo, urm)
    phi = phi + ahi * urm
    return _round_shift_signed(neg_x ^ (rm < 0), phi, plo, 15 - s)


def int64_pair_from_int32(x: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """Sign-extend int32 values to ``(hi int32, lo uint32)`` int64 pairs."""
    x = _i32(x)
    return x >> 31, _to_u32(x)


def int64_pair_add(
    a_hi: ArrayLike, a_lo: ArrayLike, b_hi: ArrayLike, b_lo: ArrayLike
) -> tuple[jax.Array, jax.Array]:
    """Wrapping int64 addition on ``(hi int32, lo uint32)`` pairs (accumulator + bias, or
    summing int32 partial sums of a 16x8 kernel without int64)."""
    hi, lo = _add64(_u32(a_hi), _u32(a_lo), _u32(b_hi), _u32(b_lo))
    return _to_i32(hi), lo


# --------------------------------------------------------------------------------------
# Device side: gemmlowp fixed-point math (exp, 1/(1+x), logistic, tanh) and GetReciprocal
# --------------------------------------------------------------------------------------


def _const(raw32: int, raw_bits: int) -> int:
    """``GEMMLOWP_CHECKED_FIXEDPOINT_CONSTANT``'s raw value: the int32 constant, rounding-
    shifted right by 16 (ties away from zero) for int16 FixedPoints."""
    if raw_bits == 32:
        return raw32
    mag = (abs(raw32) + (1 << 15)) >> 16
    return mag if raw32 >= 0 else -mag


def _one(integer_bits: int, raw_bits: int) -> int:
    """``FixedPoint::One()``: the raw maximum for 0 integer bits, else
    ``1 << fractional_bits``."""
    if integer_bits == 0:
        return (1 << (raw_bits - 1)) - 1
    return 1 << (raw_bits - 1 - integer_bits)


def exp_on_interval_between_negative_one_quarter_and_0_excl(
    a: ArrayLike, *, raw_bits: int = 32
) -> jax.Array:
    """gemmlowp ``exp_on_interval_between_negative_one_quarter_and_0_excl``: ``exp(a)`` for
    a Q0 ``a`` in [-1/4, 0), by a 4th-order Taylor expansion around -1/8; Q0 result."""
    _check_raw_bits(raw_bits)
    a = _i32(a)
    w = raw_bits

    def mul(p: jax.Array, q: jax.Array | int) -> jax.Array:
        return saturating_rounding_doubling_high_mul(p, q, raw_bits=w)

    constant_term = _const(1895147668, w)  # exp(-1/8)
    one_third = _const(715827883, w)
    x = _wrap(a + (1 << (w - 4)), w)  # a + 1/8
    x2 = mul(x, x)
    x3 = mul(x2, x)
    x4 = mul(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    poly = rounding_divide_by_pot(
        _wrap(mul(_wrap(x4_over_4 + x3, w), one_third) + x2, w), 1
    )  # x4/24 + x3/6 + x2/2
    return _add_saturating_if16(constant_term, mul(constant_term, _wrap(x + poly, w)), w)


_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))  # fmt: skip
"""(exponent, raw Q0 exp(-2**exponent)) for gemmlowp's exp barrel shifter."""


def exp_on_negative_values(
    a: ArrayLike, integer_bits: int, *, raw_bits: int = 32
) -> jax.Array:
    """gemmlowp ``exp_on_negative_values``: ``exp(a)`` for ``a <= 0`` in
    ``FixedPoint<int32 (or int16), integer_bits>``; Q0 result (``exp(0)`` is the raw
    maximum).

    ``a`` is split into ``(a mod 1/4) - 1/4`` (handled by the Taylor step) and multiples of
    1/4 whose bits select the constant factors ``exp(-1/4) ... exp(-16)``; inputs below -32
    give 0 when ``integer_bits > 5``. SOFTMAX uses ``integer_bits=5``; logistic and tanh use
    it on their negated/doubled inputs. Positive inputs give gemmlowp's (meaningless)
    values.
    """
    _check_raw_bits(raw_bits)
    fractional_bits = raw_bits - 1 - integer_bits
    if fractional_bits < 2 or integer_bits < 0:
        raise ValueError(
            f"integer_bits {integer_bits} out of range for exp_on_negative_values"
        )
    a = _i32(a)
    one_quarter = 1 << (fractional_bits - 2)
    a_mod_quarter_minus_one_quarter = (a & (one_quarter - 1)) - one_quarter
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0, raw_bits=raw_bits),
        raw_bits=raw_bits,
    )
    remainder = _wrap(a_mod_quarter_minus_one_quarter - a, raw_bits)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = 1 << (fractional_bits + exponent)
            scaled = saturating_rounding_doubling_high_mul(
                result, _const(multiplier, raw_bits), raw_bits=raw_bits
            )
            result = jnp.where((remainder & bit) != 0, scaled, result)
    if integer_bits > 5:
        clamp = _const(-(1 << (36 - integer_bits)), raw_bits)  # -32.0
        result = jnp.where(a < clamp, 0, result)
    return jnp.where(a == 0, _one(0, raw_bits), result)


def _newton_reciprocal_f2(half_denominator: jax.Array, raw_bits: int) -> jax.Array:
    """The shared Newton-Raphson loop of gemmlowp's division helpers: ``1 /
    half_denominator`` as a Q2 value, from the 48/17 - 32/17 * d starting point and three
    iterations."""
    w = raw_bits

    def mul(p: jax.Array, q: jax.Array | int) -> jax.Array:
        return saturating_rounding_doubling_high_mul(p, q, raw_bits=w)

    one_f2 = _one(2, w)
    x = _wrap(_const(1515870810, w) + mul(half_denominator, _const(-1010580540, w)), w)
    for _ in range(3):
        one_minus_half_denominator_times_x = _wrap(one_f2 - mul(half_denominator, x), w)
        x = _wrap(
            x + rescale(mul(x, one_minus_half_denominator_times_x), 4, 2, raw_bits=w), w
        )
    return x


def one_over_one_plus_x_for_x_in_0_1(a: ArrayLike, *, raw_bits: int = 32) -> jax.Array:
    """gemmlowp ``one_over_one_plus_x_for_x_in_0_1``: ``1 / (1 + a)`` for a Q0 ``a`` in [0,
    1); Q0 result (Newton-Raphson division on ``(1 + a) / 2``). Used by logistic and by
    :func:`get_reciprocal` (softmax's 1 / sum of exps)."""
    _check_raw_bits(raw_bits)
    half_denominator = rounding_half_sum(_i32(a), _one(0, raw_bits))
    x = _newton_reciprocal_f2(half_denominator, raw_bits)
    return rescale(x, 1, 0, raw_bits=raw_bits)  # ExactMulByPot<-1> then Rescale<0>


def one_minus_x_over_one_plus_x_for_x_in_0_1(
    a: ArrayLike, *, raw_bits: int = 32
) -> jax.Array:
    """gemmlowp ``one_minus_x_over_one_plus_x_for_x_in_0_1``: ``(1 - a) / (1 + a)`` for a Q0
    ``a`` in [0, 1); Q0 result. Used by tanh."""
    _check_raw_bits(raw_bits)
    half_denominator = rounding_half_sum(_i32(a), _one(0, raw_bits))
    x = _newton_reciprocal_f2(half_denominator, raw_bits)
    return rescale(_wrap(x - _one(2, raw_bits), raw_bits), 2, 0, raw_bits=raw_bits)


def logistic(a: ArrayLike, integer_bits: int, *, raw_bits: int = 32) -> jax.Array:
    """gemmlowp ``logistic``: ``1 / (1 + exp(-a))`` for ``a`` in
    ``FixedPoint<int32 (or int16), integer_bits>``; Q0 result (0.5 is ``2**30`` /
    ``2**14``).

    Computed on ``|a|`` (``-INT_MIN`` wraps like the C++) and mirrored as ``1 - r`` for
    negative inputs."""
    _check_raw_bits(raw_bits)
    a = _i32(a)
    positive = a > 0
    abs_input = jnp.where(positive, a, _wrap(-a, raw_bits))
    result_if_positive = one_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(
            _wrap(-abs_input, raw_bits), integer_bits, raw_bits=raw_bits
        ),
        raw_bits=raw_bits,
    )
    result_if_negative = _wrap(_one(0, raw_bits) - result_if_positive, raw_bits)
    one_half = _const(1 << 30, raw_bits)
    return jnp.where(
        a == 0, one_half, jnp.where(positive, result_if_positive, result_if_negative)
    )


def tanh(a: ArrayLike, integer_bits: int, *, raw_bits: int = 32) -> jax.Array:
    """gemmlowp ``tanh``: ``(1 - exp(-2|a|)) / (1 + exp(-2|a|))`` with the sign of ``a``,
    for ``a`` in ``FixedPoint<int32 (or int16), integer_bits>``; Q0 result.

    The doubling is exact (the exp runs in ``integer_bits + 1``), so ``integer_bits`` must
    leave 2 fractional bits after that."""
    _check_raw_bits(raw_bits)
    a = _i32(a)
    negative = a < 0
    n = jnp.where(negative, a, _wrap(-a, raw_bits))
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(n, integer_bits + 1, raw_bits=raw_bits), raw_bits=raw_bits
    )
    return jnp.where(a == 0, 0, jnp.where(negative, _wrap(-t, raw_bits), t))


def get_reciprocal(x: ArrayLike, x_integer_digits: int) -> tuple[jax.Array, jax.Array]:
    """TFLite ``GetReciprocal``: ``(shifted_scale, num_bits_over_unit)`` with
    ``1 / x ~= shifted_scale / 2**31 / 2**num_bits_over_unit`` for ``x > 0`` in
    ``FixedPoint<int32, x_integer_digits>``.

    ``x`` is normalised by its leading zeros to ``1 + f`` (``f`` in Q0.31) and
    :func:`one_over_one_plus_x_for_x_in_0_1` gives ``1 / (1 + f)``. SOFTMAX calls it on the
    sum of exps (``x_integer_digits = 12``) and divides by
    ``2**(num_bits_over_unit + 31 - output_bits)``. ``x <= 0`` is outside TFLite's
    domain."""
    x = _i32(x)
    u = _to_u32(x)
    headroom_plus_one = lax.clz(u)
    num_bits_over_unit = x_integer_digits - headroom_plus_one.astype(jnp.int32)
    shifted_sum_minus_one = _to_i32((u << headroom_plus_one) - jnp.uint32(1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


# --------------------------------------------------------------------------------------
# Lookup tables: host-side generation (float emulation) and device-side lookup
# --------------------------------------------------------------------------------------


def _libm() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("m")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:  # pragma: no cover - platform without a loadable libm
        return None


_LIBM = _libm()


def libm_f32(name: str, fallback: Callable[[np.ndarray], np.ndarray]) -> Callable:
    """An elementwise float32 function calling the C library's ``<name>f`` (what TFLite's
    ``std::exp(float)`` etc. call), falling back to numpy where no libm can be loaded."""
    if _LIBM is None:  # pragma: no cover
        return lambda v: fallback(np.asarray(v, np.float32)).astype(np.float32)
    fn = getattr(_LIBM, name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return lambda v: np.array([fn(float(t)) for t in np.ravel(v)], np.float32).reshape(
        np.shape(v)
    )


expf = libm_f32("expf", np.exp)
"""float32 ``exp`` from the C library (bit-identical to TFLite's ``std::exp(float)``)."""
tanhf = libm_f32("tanhf", np.tanh)
"""float32 ``tanh`` from the C library (bit-identical to TFLite's ``std::tanh(float)``)."""


def logistic_lut_transform(v: np.ndarray) -> np.ndarray:
    """The float32 transform of TFLite's int8/uint8 LOGISTIC table:
    ``1.0f / (1.0f + std::exp(-value))``."""
    v = np.asarray(v, np.float32)
    return (np.float32(1) / (np.float32(1) + expf(-v))).astype(np.float32)


def tanh_lut_transform(v: np.ndarray) -> np.ndarray:
    """The float32 transform of TFLite's int8/uint8 TANH table: ``std::tanh(value)``."""
    return tanhf(np.asarray(v, np.float32))


def exp_lut_transform_f64(v: np.ndarray) -> np.ndarray:
    """The double transform of int16 SOFTMAX's exp table: ``std::exp(value)`` (C library
    ``exp`` through Python's ``math.exp``)."""
    return np.array([math.exp(float(t)) for t in np.ravel(v)], np.float64).reshape(
        np.shape(v)
    )


def one_over_one_plus_x_lut_transform_f64(v: np.ndarray) -> np.ndarray:
    """The double transform of int16 SOFTMAX's reciprocal table: ``1.0 / (1.0 + value)``."""
    v = np.asarray(v, np.float64)
    return 1.0 / (1.0 + v)


def lut_populate_int8(
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    transform: Callable[[np.ndarray], np.ndarray],
    *,
    signed: bool = True,
) -> np.ndarray:
    """TFLite ``LUTPopulate<int8_t / uint8_t>``: the 256-entry table of an int8/uint8
    elementwise op (reference LOGISTIC and TANH among others), in float32 as TFLite does.

    ``q -> clamp(int(round(transform(s_in * (q - zp_in)) * (1 / s_out)) + zp_out))`` with
    every operation rounded to float32 and the rounding ``std::round``. ``transform`` takes
    and returns float32 arrays and must be bit-exact to the C++ lambda (see
    :func:`logistic_lut_transform`, :func:`tanh_lut_transform`). The table is in TFLite's
    order, indexed by the value's bits as uint8 (int8 ``-1`` is entry 255); returned as
    int32 for :func:`lut_lookup_int8`."""
    lo, hi = (-128, 127) if signed else (0, 255)
    f32 = np.float32
    vals = np.arange(lo, hi + 1, dtype=np.int32)
    dequantized = f32(input_scale) * (vals - np.int32(input_zero_point)).astype(f32)
    transformed = np.asarray(transform(dequantized.astype(f32)), dtype=f32)
    inverse_scale = f32(1) / f32(output_scale)
    rescaled = round_half_away_np((transformed * inverse_scale).astype(f32)).astype(f32)
    summed = (rescaled + f32(output_zero_point)).astype(f32)
    quantized = np.clip(np.trunc(summed).astype(np.int64), lo, hi)
    table = np.empty(256, np.int32)
    table[vals & 0xFF] = quantized
    return table


def lut_populate_int16(
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    transform: Callable[[np.ndarray], np.ndarray],
    *,
    float_dtype: type[np.floating] = np.float32,
) -> np.ndarray:
    """TFLite ``LUTPopulate<int16_t>``: the 513-entry table (512 segments plus an end point)
    that :func:`lut_lookup_int16` interpolates, computed in ``float_dtype`` like the C++
    ``FloatT`` (float for most ops; double for int16 SOFTMAX's two tables).

    Each entry is the rounded sample at the segment start minus half the rounded error of
    linear interpolation at the segment midpoint, clamped to int16. ``transform`` must be
    bit-exact to the C++ lambda in that precision (e.g. :func:`exp_lut_transform_f64`)."""
    ft = np.dtype(float_dtype).type
    s_in, s_out = ft(input_scale), ft(output_scale)
    input_min = s_in * ft(-32768 - input_zero_point)
    input_max = s_in * ft(32767 - input_zero_point)
    output_min = s_out * ft(-32768 - output_zero_point)
    output_max = s_out * ft(32767 - output_zero_point)
    step = (input_max - input_min) / ft(512)
    half_step = step / ft(2)
    output_scaling_inv = ft(65536) / (output_max - output_min)

    def f(v: np.ndarray) -> np.ndarray:
        return np.asarray(transform(v.astype(ft)), dtype=ft)

    i = np.arange(512).astype(ft)
    starts = (input_min + i * step).astype(ft)
    val = f(starts)
    val_midpoint = f((starts + half_step).astype(ft))
    val_next = f((input_min + (i + ft(1)) * step).astype(ft))
    sample_val = round_half_away_np((val * output_scaling_inv).astype(ft))
    midpoint_interp_val = round_half_away_np(
        ((val_next * output_scaling_inv + sample_val) / ft(2)).astype(ft)
    )
    midpoint_val = round_half_away_np((val_midpoint * output_scaling_inv).astype(ft))
    midpoint_err = (midpoint_interp_val - midpoint_val).astype(ft)
    bias = round_half_away_np((midpoint_err / ft(2)).astype(ft))
    table = np.empty(513, np.int32)
    table[:512] = np.clip(sample_val - bias, -32768, 32767).astype(np.int32)
    last = round_half_away_np(
        (f(np.array([input_max], ft)) * output_scaling_inv).astype(ft)
    )
    table[512] = int(np.clip(last, -32768, 32767)[0])
    return table


@functools.cache
def int16_softmax_tables() -> tuple[np.ndarray, np.ndarray]:
    """int16 SOFTMAX's two 513-entry tables (computed in double, as TFLite's Prepare
    does): ``exp`` on [-10, 0] and ``1 / (1 + x)`` on [0, 1], both into [-1, 1]."""
    exp_lut = lut_populate_int16(
        10.0 / 65535,
        32767,
        2.0 / 65535,
        0,
        exp_lut_transform_f64,
        float_dtype=np.float64,
    )
    recip_lut = lut_populate_int16(
        1.0 / 65535,
        -32768,
        2.0 / 65535,
        0,
        one_over_one_plus_x_lut_transform_f64,
        float_dtype=np.float64,
    )
    return exp_lut, recip_lut


def lut_lookup_int8(value: ArrayLike, lut: ArrayLike) -> jax.Array:
    """TFLite ``LUTLookup`` for int8 / uint8: ``lut[uint8(value)]`` (no interpolation)."""
    return jnp.take(jnp.asarray(lut, jnp.int32), _i32(value) & 0xFF)


def lut_lookup_int16(value: ArrayLike, lut: ArrayLike) -> jax.Array:
    """TFLite ``LUTLookup(int16_t, const int16_t* lut)``: interpolated lookup in a 513-entry
    table. The top 9 bits pick the segment, the low 7 bits interpolate:
    ``base + (slope * (value & 0x7f) + 64) >> 7`` with the slope and the sum cast to int16
    (wrapping) as in the C++."""
    v = _i32(value)
    table = jnp.asarray(lut, jnp.int32)
    index = 256 + (v >> 7)
    offset = v & 0x7F
    base = jnp.take(table, index)
    slope = _wrap(jnp.take(table, index + 1) - base, 16)
    delta = (slope * offset + 64) >> 7
    return _wrap(base + delta, 16)


SIGMOID_TABLE_UINT16 = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
], dtype=np.int32)  # fmt: skip
"""TFLite's ``sigmoid_table_uint16``: sigmoid(i / 24) in 0.16 format, i = 0..255. Data, not
a formula: 44 entries differ from ``round(65536 * sigmoid(i / 24))``, so it is kept
verbatim."""


logf = libm_f32("logf", np.log)
"""float32 ``log`` from the C library (TFLite's ``std::log(float)``)."""


def checked_log2(x: float) -> tuple[int, bool]:
    """TFLite ``CheckedLog2``: ``(round(log2(x)), is_power_of_two)`` computed in float32 as
    TFLite does (``logf(x) * (1 / logf(2))``, a power of two when the fraction is below
    1e-3); ``x <= 0`` gives ``(0, False)``."""
    xf = np.float32(x)
    if xf <= 0:
        return 0, False
    x_log2 = np.float32(logf(xf)) * (np.float32(1) / np.float32(logf(np.float32(2))))
    rounded = round_half_away_np(np.asarray(x_log2, np.float32))
    return int(rounded), bool(np.abs(x_log2 - rounded) < np.float32(1e-3))


def int16_logistic_tanh_params(input_scale: float, *, tanh: bool) -> tuple[int, int]:
    """TFLite ``SigmoidPrepare`` / ``TanhPrepare`` for int16: ``(input_multiplier,
    input_left_shift)`` for :func:`logistic_int16` / :func:`tanh_int16`.

    A power-of-two input scale giving ``left_shift = 12 + log2(scale)`` of 0 (logistic) or 0
    or 1 (tanh) keeps multiplier 0; otherwise ``scale * 4096 * 3`` (double) is doubled while
    it is at most 32767 / 2 (and the shift at most 30) and truncated to an integer."""
    log2, pot = checked_log2(input_scale)
    left_shift = 12 + log2
    if pot and left_shift in ((0, 1) if tanh else (0,)):
        return 0, left_shift
    multiplier = float(np.float32(input_scale)) * 4096.0 * 3.0
    left_shift = 0
    while multiplier <= 32767.0 / 2.0 and left_shift <= 30:
        left_shift += 1
        multiplier *= 2.0
    if not 1.0 <= multiplier < 2.0**31:
        # the C++ would shift 3 by 31 (a zero multiplier) or cast beyond int32
        raise ParameterError(
            f"an int16 input scale of {float(np.float32(input_scale)):g} is outside the "
            f"range TFLite's int16 {'TANH' if tanh else 'LOGISTIC'} works with"
        )
    return int(multiplier), left_shift


def _int16_lut_input(
    x: jax.Array, input_multiplier: int, input_left_shift: int
) -> jax.Array:
    """The shared input rescale of the int16 LOGISTIC / TANH kernels: power-of-two scales
    come with multiplier 0 and become ``3 << left_shift``; then a rounding right shift."""
    if input_multiplier == 0:
        input_multiplier, input_left_shift = 3 << input_left_shift, 0
    rnd = (1 << (input_left_shift - 1)) if input_left_shift > 0 else 0
    return (x * input_multiplier + rnd) >> input_left_shift


def logistic_int16(x: ArrayLike, input_multiplier: int, input_left_shift: int) -> jax.Array:
    """TFLite ``reference_integer_ops::Logistic`` for int16 (the BUILTIN_REF int16
    LOGISTIC).

    The input (scaled so that 2**17 is about 10.7) indexes :data:`SIGMOID_TABLE_UINT16` by
    its top bits (``|x| >> 9``) and interpolates with the low 9 bits; saturated beyond the
    table; negative inputs mirror as ``1 - sigmoid``; output Q0.15. ``input_multiplier`` and
    ``input_left_shift`` are the Prepare-time values (multiplier 0 for power-of-two
    scales)."""
    xi = _int16_lut_input(_i32(x), input_multiplier, input_left_shift)
    abs_input = _uabs(xi)
    uh = abs_input >> 9
    table = jnp.asarray(SIGMOID_TABLE_UINT16, jnp.uint32)
    idx = jnp.minimum(uh, 254).astype(jnp.int32)
    ua = jnp.take(table, idx)
    ub = jnp.take(table, idx + 1)
    ut = abs_input & 0x1FF
    interp = (ua << 9) + ut * (ub - ua)
    result = jnp.where(uh >= 255, jnp.uint32(0x7FFF << 10), interp)
    result = jnp.where(
        xi >= 0,
        result + jnp.uint32(1 << 9),
        jnp.uint32((1 << 25) + (1 << 9) - 1) - result,
    )
    return _wrap(_to_i32(result >> 10), 16)


def tanh_int16(x: ArrayLike, input_multiplier: int, input_left_shift: int) -> jax.Array:
    """TFLite ``reference_integer_ops::Tanh`` for int16 (the BUILTIN_REF int16 TANH).

    Uses ``tanh(x) = 2 * sigmoid(2x) - 1`` on :data:`SIGMOID_TABLE_UINT16`: the rescaled
    ``|x|`` (the factor 3 of the 10.7 range is in the multiplier) indexes by its top bits
    (``>> 8``) and interpolates with the low 8 bits; output Q0.15."""
    xi = _int16_lut_input(_i32(x), input_multiplier, input_left_shift)
    abs_input = _uabs(xi)
    uh = abs_input >> 8
    table = jnp.asarray(SIGMOID_TABLE_UINT16, jnp.uint32)
    idx = jnp.minimum(uh, 254).astype(jnp.int32)
    ua = jnp.take(table, idx)
    ub = jnp.take(table, idx + 1)
    ut = abs_input & 0xFF
    interp = _to_i32((ua << 8) + ut * (ub - ua))
    result = jnp.where(uh >= 255, jnp.int32(0xFFFF << 8), interp)
    result = jnp.where(
        xi >= 0,
        result - (1 << 23) + (1 << 7),
        -result + (1 << 23) + (1 << 7) - 1,
    )
    return _wrap(result >> 8, 16)
