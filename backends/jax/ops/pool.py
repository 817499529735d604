"""Kernels of `dialects/synap/pool.py`."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from synapc.backends.jax.lowering import LoweringContext, kernel
from synapc.backends.jax.ops.common import activate, float_only, widen
from synapc.dialects.synap import pool


def _window(p: dict) -> tuple[tuple[int, ...], tuple[int, ...], list[tuple[int, int]]]:
    kh, kw = p["kernel"]
    sh, sw = p["strides"]
    top, bottom, left, right = p["pad"]
    return (1, kh, kw, 1), (1, sh, sw, 1), [(0, 0), (top, bottom), (left, right), (0, 0)]


@kernel(pool.MaxPool2DOp)
def max_pool2d(
    op: pool.MaxPool2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Float max pooling; padding never wins."""
    float_only(op)
    p = op.props()
    dims, strides, pads = _window(p)
    y = lax.reduce_window(args[0], -jnp.inf, lax.max, dims, strides, pads)
    return [activate(y, p["activation"])]


@kernel(pool.AvgPool2DOp)
def avg_pool2d(
    op: pool.AvgPool2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Float average pooling; the divisor counts padding only with count_include_pad."""
    float_only(op)
    p = op.props()
    dims, strides, pads = _window(p)
    x = widen(args[0])
    total = lax.reduce_window(x, jnp.zeros((), x.dtype), lax.add, dims, strides, pads)
    if p["count_include_pad"]:
        count = jnp.asarray(dims[1] * dims[2], x.dtype)
    else:
        ones = jnp.ones((1, x.shape[1], x.shape[2], 1), x.dtype)
        count = lax.reduce_window(
            ones, jnp.zeros((), x.dtype), lax.add, dims, strides, pads
        )
    return [activate(total / count, p["activation"]).astype(args[0].dtype)]
