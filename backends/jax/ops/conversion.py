"""Kernels of `dialects/synap/conversion.py`: cast, quantize, dequantize."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from synapc.backends.jax.lowering import LoweringContext, UnsupportedOpError, kernel
from synapc.backends.jax.ops.quantized import per_axis
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import conversion
from synapc.dialects.synap.base import element_of, is_float


def round_half_away(x: jax.Array) -> jax.Array:
    """TFLite's TfLiteRound / std::round: halves round away from zero."""
    return jnp.sign(x) * jnp.floor(jnp.abs(x) + 0.5)


@kernel(conversion.CastOp)
def cast(
    op: conversion.CastOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """C-style conversion (float to integer truncates toward zero)."""
    return [args[0].astype(ctx.dtype_of(op.output))]


@kernel(conversion.DequantizeOp)
def dequantize(
    op: conversion.DequantizeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """``scale * (q - zero_point)`` in float32, then the compute dtype."""
    q = element_of(op.input)
    assert isinstance(q, UniformQuantizedType)
    scale = per_axis(q, args[0].ndim, q.scales.astype(np.float32))
    zero = per_axis(q, args[0].ndim, q.zero_points.astype(np.int32))
    real = (args[0].astype(jnp.int32) - zero).astype(jnp.float32) * scale
    return [real.astype(ctx.dtype_of(op.output))]


@kernel(conversion.QuantizeOp)
def quantize(
    op: conversion.QuantizeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """TFLite's AffineQuantize: ``clamp(round(x / scale) + zero_point)`` in float32."""
    if not is_float(element_of(op.input)):
        raise UnsupportedOpError("requantization is not supported by the JAX backend yet")
    q = element_of(op.output)
    assert isinstance(q, UniformQuantizedType)
    scale = per_axis(q, args[0].ndim, q.scales.astype(np.float32))
    zero = per_axis(q, args[0].ndim, q.zero_points.astype(np.int32))
    stored = round_half_away(args[0].astype(jnp.float32) / scale).astype(jnp.int32) + zero
    stored = jnp.clip(stored, q.storage_min, q.storage_max)
    return [stored.astype(q.storage_dtype)]
