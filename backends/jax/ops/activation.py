"""Kernels of `dialects/synap/activation.py` (elementwise unary functions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from synapc.backends.jax.lowering import LoweringContext, kernel
from synapc.backends.jax.ops.common import float_only
from synapc.dialects.synap import activation as act


def _clamp(x: jax.Array, p: dict[str, Any]) -> jax.Array:
    low = p.get("min")
    high = p.get("max")
    return jnp.clip(x, low, high)


def _hard_swish(x: jax.Array, p: dict[str, Any]) -> jax.Array:
    return x * jnp.clip(x + 3, 0, 6) / 6


def _gelu(x: jax.Array, p: dict[str, Any]) -> jax.Array:
    return jax.nn.gelu(x, approximate=p["approximate"])


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
}


@kernel(*_FLOAT)
def unary(op: act._Unary, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Float unary function."""
    float_only(op)
    return [_FLOAT[type(op)](args[0], op.props()).astype(args[0].dtype)]
