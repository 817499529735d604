"""Kernels of `dialects/synap/conversion.py`: cast, quantize, requantize, dequantize,
bit-exact with LiteRT's reference kernels.

Float arithmetic that must match TFLite's float32 or double arithmetic bit for bit cannot
be written as plain float32 JAX code: XLA's CPU backend fuses a multiply feeding an add
into one FMA (one rounding where C++ rounds twice) and divides by a broadcast scalar by
multiplying with its reciprocal. :func:`float32_op` computes one float32 operation exactly
(in float64, rounded back with ``lax.reduce_precision``, which XLA lowers to integer bit
operations that LLVM cannot fuse or narrow).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from synapc.backends.jax import fixed_point as fp
from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    takes_booleans,
)
from synapc.backends.jax.ops.low_precision import cast_to_low_precision, widened
from synapc.backends.jax.ops.quantized import (
    c_int32,
    dequantize_float32,
    per_axis,
    qtype,
    quantize_half_even,
    round_half_away,
    scales_f64,
    stored,
    to_float32,
    x64,
)
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import conversion
from synapc.dialects.synap.attributes import IntegerSemantics
from synapc.dialects.synap.base import element_of, is_float
from synapc.dtypes import is_low_precision


def _wrap_int32(x: jax.Array) -> jax.Array:
    """int64 `x` wrapped to int32 (two's complement), as int64."""
    return ((x + 2**31) & (2**32 - 1)) - 2**31


def affine_quantize(x: jax.Array, q: UniformQuantizedType) -> jax.Array:
    """TFLite's reference AffineQuantize (per-tensor):
    ``clamp(int32(std::round(double(x) / double(scale))) + zero_point)``.

    XLA divides by a broadcast scalar through its reciprocal: that quotient is within
    2**-51 (relative) of the true one, and a quotient below 2**20 that is not a tie is at
    least 2**-45 away from one, so only exact ties (``2 |x| == (2n + 1) scale``, checked
    exactly) need fixing. Quotients of 2**20 or more saturate anyway, except that those
    out of int32 (and NaN) become INT32_MIN as the C++ cast does on x86-64, and adding a
    negative zero point to that wraps around."""
    scale = float(np.float32(q.scale))
    with x64():
        v = x.astype(jnp.float64)
        quotient = v / scale
        rounded = round_half_away(quotient)
        floor = jnp.floor(jnp.abs(quotient))
        tie = (2.0 * jnp.abs(v) == (2.0 * floor + 1.0) * scale) & (floor < 2.0**20)
        rounded = jnp.where(tie, jnp.sign(v) * (floor + 1.0), rounded)
        y = _wrap_int32(c_int32(rounded) + q.zero_point)
        y = jnp.clip(y, q.storage_min, q.storage_max).astype(jnp.int32)
    return y.astype(q.storage_dtype)


def per_channel_quantize(x: jax.Array, q: UniformQuantizedType) -> jax.Array:
    """TFLite's reference PerChannelQuantize:
    ``clamp(int32(std::round(x / scale[c])) + zero_point[c])`` with a float32 quotient.

    The float64 quotient (through the reciprocal, see :func:`affine_quantize`) rounds to
    the exact float32 quotient: a float32 rounding midpoint is never an exact quotient of
    two float32 values and non-midpoints are further from one than the float64 error."""
    scales = per_axis(q, x.ndim, scales_f64(q))
    zero_points = per_axis(q, x.ndim, q.zero_points.astype(np.int64))
    with x64():
        quotient = to_float32(x.astype(jnp.float64) / scales)
        y = _wrap_int32(c_int32(round_half_away(quotient)) + zero_points)
        y = jnp.clip(y, q.storage_min, q.storage_max).astype(jnp.int32)
    return y.astype(q.storage_dtype)


def requantize(
    x: jax.Array, source: UniformQuantizedType, q: UniformQuantizedType
) -> jax.Array:
    """TFLite's reference Requantize: ``clamp(MBQM(x - z_in, M) + z_out)`` with ``M`` the
    double ``s_in / s_out`` quantized once at prepare time."""
    if source.is_per_axis or q.is_per_axis:
        raise UnsupportedOpError("TFLite does not requantize per-axis quantized values")
    real = float(np.float32(source.scale)) / float(np.float32(q.scale))
    multiplier, shift = fp.quantize_multiplier(real)
    y = fp.multiply_by_quantized_multiplier(stored(x, source), multiplier, shift)
    y = y + q.zero_point
    return jnp.clip(y, q.storage_min, q.storage_max).astype(q.storage_dtype)


takes_booleans(conversion.CastOp)


@kernel(conversion.CastOp, onnx_integer=True)
def cast(
    op: conversion.CastOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """TFLite's CAST: float to integer truncates toward zero and saturates to the
    target's range (NaN becomes its maximum); integers wrap to narrower types; anything
    to bool is ``!= 0``. The storage-only types follow ONNX (see `low_precision`)."""
    x = widened(args[0])
    dtype = np.dtype(ctx.dtype_of(op.output))
    if is_low_precision(dtype):
        props = op.props()
        return [
            cast_to_low_precision(x, dtype, props["saturate"], props["exponent_rounding"])
        ]
    if dtype == np.bool_:
        return [x != 0]
    if jnp.issubdtype(x.dtype, jnp.floating) and jnp.issubdtype(dtype, jnp.integer):
        info = np.iinfo(dtype)
        t = jnp.trunc(x.astype(jnp.float32))  # float16 cannot hold the uint32 bounds
        high = ~(t < float(info.max))  # also NaN
        low = t < float(info.min)
        inside = jnp.where(high | low, jnp.zeros_like(t), t).astype(dtype)
        # the bounds as arrays of `dtype`: a Python int beyond int32 (uint32's maximum)
        # cannot enter the program as a weakly typed scalar
        top, bottom = jnp.asarray(info.max, dtype), jnp.asarray(info.min, dtype)
        return [jnp.where(high, top, jnp.where(low, bottom, inside))]
    return [x.astype(dtype)]


@kernel(conversion.DequantizeOp, onnx_integer=True)
def dequantize(
    op: conversion.DequantizeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """``float(scale * (q - zero_point))``: TFLite computes it in double (per-tensor) or
    float32 (per-channel); the product of a float32 scale and a 17-bit integer is exact in
    double, so both are float32's correctly rounded product."""
    real = dequantize_float32(args[0], qtype(op.input))
    return [real.astype(ctx.dtype_of(op.output))]


@kernel(conversion.QuantizeOp, onnx_integer=True)
def quantize(
    op: conversion.QuantizeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Quantize floats (TFLite's AffineQuantize / PerChannelQuantize) or requantize
    integers (TFLite's Requantize)."""
    q = qtype(op.output)
    source = element_of(op.input)
    if ctx.semantics is IntegerSemantics.ONNX:
        x = args[0]
        if isinstance(source, UniformQuantizedType):
            x = dequantize_float32(x, source)
        return [quantize_half_even(x, q)]
    if isinstance(source, UniformQuantizedType):
        return [requantize(args[0], source, q)]
    if not is_float(source):
        raise UnsupportedOpError(f"cannot quantize {source}")
    if q.is_per_axis:
        return [per_channel_quantize(args[0], q)]
    return [affine_quantize(args[0], q)]
