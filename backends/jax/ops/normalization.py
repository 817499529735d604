"""Kernels of the normalizing ops of `dialects/synap/activation.py`: softmax,
log-softmax and L2 normalization (they reduce along an axis)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from synapc.backends.jax.lowering import LoweringContext, kernel
from synapc.backends.jax.ops.common import float_only, widen
from synapc.dialects.synap import activation as act

_FLOAT: dict[type, Callable[[jax.Array, dict[str, Any]], jax.Array]] = {
    act.SoftmaxOp: lambda x, p: jax.nn.softmax(
        x * jnp.asarray(p["beta"], x.dtype), axis=p["axis"]
    ),
    act.LogSoftmaxOp: lambda x, p: jax.nn.log_softmax(x, axis=p["axis"]),
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


@kernel(*_FLOAT)
def normalize(
    op: act._AlongAxis, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Float softmax / log-softmax / L2 normalization, summed in float32 for float16."""
    float_only(op)
    return [_FLOAT[type(op)](widen(args[0]), op.props()).astype(args[0].dtype)]
