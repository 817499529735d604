"""What the integer kernels share: quantization parameters of values, fused-activation
ranges in the stored domain, output rescaling, and scoped 64-bit math.

Kernels follow TFLite's reference integer kernels (see `backends/jax/fixed_point.py` for
the bit-exact primitives and which rounding each kernel uses). Host-side parameters are
computed the way TFLite's Prepare functions compute them: float32 scales widened to
double, products and quotients in double, then `quantize_multiplier`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from xdsl.ir import SSAValue

from synapc.backends.jax import fixed_point as fp
from synapc.backends.jax.lowering import UnsupportedOpError
from synapc.dialects import quant
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.attributes import Activation
from synapc.dialects.synap.base import element_of


def qtype(value: SSAValue) -> UniformQuantizedType:
    """The quantized element type of `value` (UnsupportedOpError if it is not one)."""
    element = element_of(value)
    if not isinstance(element, UniformQuantizedType):
        raise UnsupportedOpError(f"expected a quantized value, got {element}")
    return element


def per_tensor(value: SSAValue, what: str) -> UniformQuantizedType:
    """The quantized element type of `value` (`what` in messages: "its input"), which
    the kernel needs per tensor: one scale and zero point (UnsupportedOpError for a
    per-axis type or an unquantized value)."""
    q = qtype(value)
    if q.is_per_axis:
        raise UnsupportedOpError(
            f"{what} is quantized per axis (axis {q.quantized_dimension}); this kernel "
            "needs one scale and zero point"
        )
    return q


def scales_f64(q: UniformQuantizedType) -> np.ndarray:
    """The scales as TFLite stores them (float32), widened to double as Prepare does."""
    return q.scales.astype(np.float32).astype(np.float64)


def scale_f64(q: UniformQuantizedType) -> float:
    """The per-tensor scale as TFLite stores it (float32), widened to double."""
    return float(np.float32(q.scale))


def per_axis(q: UniformQuantizedType, rank: int, values: np.ndarray) -> np.ndarray:
    """Per-channel `values` (scales, zero points, multipliers) shaped to broadcast along
    the quantized axis of a rank-`rank` tensor; a 0-d array for per-tensor types."""
    if not q.is_per_axis:
        return values.reshape(())
    shape = [1] * rank
    shape[q.quantized_dimension or 0] = -1
    return values.reshape(shape)


def stored(x: jax.Array, q: UniformQuantizedType) -> jax.Array:
    """Stored integers `x` minus the zero point, as int32 (the real value over scale)."""
    return x.astype(jnp.int32) - per_axis(q, x.ndim, q.zero_points.astype(np.int32))


def quantize_real(value: float, q: UniformQuantizedType) -> int:
    """`synapc.dialects.quant.quantize_real`, with NaN refused as the backend refuses
    what it cannot run."""
    try:
        return quant.quantize_real(value, q)
    except ValueError as error:
        raise UnsupportedOpError(str(error)) from None


def activation_range(
    activation: Activation | None, q: UniformQuantizedType
) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized for a fused `activation` (see
    `synapc.dialects.quant.activation_range`)."""
    bounds = (None, None) if activation is None else activation.bounds
    try:
        return quant.activation_range(bounds, q)
    except ValueError as error:
        raise UnsupportedOpError(str(error)) from None


def saturate(x: jax.Array, q: UniformQuantizedType, lo: int, hi: int) -> jax.Array:
    """`x` (int32) clamped to [lo, hi] and stored in `q`'s storage dtype."""
    return jnp.clip(x, lo, hi).astype(q.storage_dtype)


def requantize(
    acc: jax.Array,
    real_multiplier: float | np.ndarray,
    out: UniformQuantizedType,
    activation: Activation | None = None,
) -> jax.Array:
    """``clamp(MBQM(acc, real_multiplier) + zero_point)`` stored in `out`'s dtype.

    `real_multiplier` is a double (or per-channel doubles already shaped to broadcast
    against `acc`); it is turned into TFLite's (multiplier, shift) on the host."""
    multiplier, shift = fp.quantize_multiplier(np.asarray(real_multiplier, np.float64))
    y = fp.multiply_by_quantized_multiplier(acc, multiplier, shift) + out.zero_point
    return saturate(y, out, *activation_range(activation, out))


# Exact float arithmetic: XLA on CPU contracts a * b + c into one fused multiply-add and
# turns division by a broadcast scalar into multiplication by its reciprocal, either of
# which changes float32 results that TFLite's kernels compute with separate roundings.


def round_half_away(x: jax.Array) -> jax.Array:
    """TFLite's TfLiteRound / ``std::round`` on floats, exactly: halves round away from
    zero (the fraction is taken exactly, so values just below one half stay below)."""
    t = jnp.trunc(x)
    return t + jnp.where(jnp.abs(x - t) >= 0.5, jnp.sign(x), jnp.zeros_like(x))


def to_float32(x: jax.Array) -> jax.Array:
    """Float64 `x` rounded to the nearest float32 value (ties to even), still float64.

    Use inside :func:`~synapc.backends.jax.ops.quantized.x64`. Float64 has more than
    2 * 24 + 2 significand bits, so a +, -, * or / of float32 values computed in float64
    and rounded with this is IEEE float32's result (results below float32's smallest
    normal number excepted: they flush to zero)."""
    return lax.reduce_precision(x, exponent_bits=8, mantissa_bits=23)


def float32_op(op: Callable[[jax.Array, jax.Array], jax.Array]) -> Callable[..., jax.Array]:
    """`op` of two float32 values (float64 arrays holding float32 values) computed as C++
    computes it in float32: exactly, then rounded once (use inside ``x64()``)."""

    def exact(a: jax.Array, b: jax.Array | np.ndarray | float) -> jax.Array:
        return to_float32(op(a, b))

    return exact


f32_add = float32_op(jnp.add)
f32_mul = float32_op(jnp.multiply)


def c_int32(x: jax.Array) -> jax.Array:
    """``static_cast<int32_t>`` of integral float64 values as x86-64 does it: values out of
    range (and NaN) become fp.INT32_MIN. Returns int64 (inside ``x64()``)."""
    bad = ~(jnp.abs(x) < 2.0**31)
    return jnp.where(bad, fp.INT32_MIN, jnp.where(bad, 0, x).astype(jnp.int64))


@contextmanager
def x64() -> Iterator[None]:
    """64-bit integer and float math for the enclosed lines only (JAX's global x64 mode
    stays off); convert results back to 32-bit types before leaving the block."""
    with jax.enable_x64(True):
        yield


# ONNX semantics (`IntegerSemantics.ONNX`): float32 arithmetic rounded half to even, as
# ONNX defines QuantizeLinear and ONNX Runtime's kernels compute it. Products and
# quotients are formed in float64 and rounded to float32 once, which is IEEE float32's
# result and keeps XLA from contracting them into fused multiply-adds.


def dequantize_float32(x: jax.Array, q: UniformQuantizedType) -> jax.Array:
    """ONNX's DequantizeLinear: ``float32(scale * (x - zero_point))``, per tensor or per
    axis."""
    scales = per_axis(q, x.ndim, scales_f64(q))
    with x64():
        real = to_float32(stored(x, q).astype(jnp.float64) * scales)
        return real.astype(jnp.float32)


def quantize_half_even(x: jax.Array, q: UniformQuantizedType) -> jax.Array:
    """ONNX's QuantizeLinear: ``saturate(round_half_even(x / scale) + zero_point)`` with
    the quotient in float32, per tensor or per axis."""
    scales = per_axis(q, x.ndim, scales_f64(q))
    zero_points = per_axis(q, x.ndim, q.zero_points.astype(np.float64))
    with x64():
        quotient = to_float32(x.astype(jnp.float64) / scales)
        y = jnp.clip(jnp.round(quotient) + zero_points, q.storage_min, q.storage_max)
        return y.astype(jnp.int32).astype(q.storage_dtype)


def rescale_half_even(acc: jax.Array, multiplier: np.ndarray) -> jax.Array:
    """ONNX Runtime's requantization of an int32 accumulator: ``round_half_even(
    float32(acc) * multiplier)`` with `multiplier` the float32 ``s_in * s_w / s_out``
    (per channel, shaped to broadcast against `acc`); int32, not yet clamped."""
    m = np.asarray(multiplier, np.float32).astype(np.float64)
    with x64():
        y = to_float32(to_float32(acc.astype(jnp.float64)) * m)
        y = jnp.clip(jnp.round(y), fp.INT32_MIN, fp.INT32_MAX)
        return y.astype(jnp.int32)
