"""Kernels of `dialects/synap/pool.py`.

Quantized pooling follows TFLite's reference integer kernels (``reference_ops`` /
``reference_integer_ops`` ``AveragePool`` and ``MaxPool``): they work on the stored
integers as they are -- no zero point is subtracted and the output's quantization is not
used to rescale (LiteRT accepts different input and output parameters and ignores them);
only the fused activation's range is taken from the output's parameters.

`synap.lp_pool2d` is float only: the window sums of ``|x| ** p`` (float32 for narrower
floats), then their ``1 / p``-th power.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    op_check,
    real_valued,
    takes_booleans,
)
from synapc.backends.jax.ops.common import activate, any_quantized, float_only, widen
from synapc.backends.jax.ops.quantized import activation_range, per_tensor, saturate
from synapc.dialects.synap import pool
from synapc.dialects.synap.base import shape_of


def _window(p: dict) -> tuple[tuple[int, ...], tuple[int, ...], list[tuple[int, int]]]:
    kh, kw = p["kernel"]
    sh, sw = p["strides"]
    top, bottom, left, right = p["pad"]
    return (1, kh, kw, 1), (1, sh, sw, 1), [(0, 0), (top, bottom), (left, right), (0, 0)]


real_valued(pool.AvgPool2DOp, pool.LpPool2DOp)
takes_booleans(pool.MaxPool2DOp)


@op_check(pool.MaxPool2DOp, pool.AvgPool2DOp, pool.LpPool2DOp)
def _check_pool(
    op: pool.MaxPool2DOp | pool.AvgPool2DOp | pool.LpPool2DOp,
) -> list[tuple[str, tuple[int, ...]]]:
    """The padded input is an intermediate of the kernel."""
    n, h, w, c = shape_of(op.input)
    top, bottom, left, right = op.props()["pad"]
    return [("its padded input", (n, h + top + bottom, w + left + right, c))]


@kernel(pool.MaxPool2DOp)
def max_pool2d(
    op: pool.MaxPool2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Max pooling; padding never wins. Quantized: the largest stored integer of the
    window, clamped to the fused activation's range (TFLite ``MaxPool``)."""
    p = op.props()
    dims, strides, pads = _window(p)
    if any_quantized(op):
        per_tensor(op.input, "its input")
        out = per_tensor(op.output, "its result")
        x = args[0].astype(jnp.int32)
        lowest = jnp.asarray(jnp.iinfo(args[0].dtype).min, jnp.int32)
        y = lax.reduce_window(x, lowest, lax.max, dims, strides, pads)
        return [saturate(y, out, *activation_range(p["activation"], out))]
    y = lax.reduce_window(args[0], -jnp.inf, lax.max, dims, strides, pads)
    return [activate(y, p["activation"])]


def _quantized_avg_pool2d(op: pool.AvgPool2DOp, x: jax.Array, p: dict) -> jax.Array:
    """TFLite's integer ``AveragePool``: the int32 sum of the stored integers in the
    window divided by the number of in-bound cells, rounded half away from zero
    (``(sum +- count / 2) / count`` with C division), then clamped to the activation
    range."""
    if p["count_include_pad"]:
        raise UnsupportedOpError("quantized avg_pool2d with count_include_pad")
    per_tensor(op.input, "its input")
    out = per_tensor(op.output, "its result")
    dims, strides, pads = _window(p)
    zero = jnp.zeros((), jnp.int32)
    total = lax.reduce_window(x.astype(jnp.int32), zero, lax.add, dims, strides, pads)
    ones = jnp.ones((1, x.shape[1], x.shape[2], 1), jnp.int32)
    count = lax.reduce_window(ones, zero, lax.add, dims, strides, pads)
    half = count // 2
    count = jnp.broadcast_to(count, total.shape)
    half = jnp.broadcast_to(half, total.shape)
    mean = lax.div(jnp.where(total > 0, total + half, total - half), count)
    return saturate(mean, out, *activation_range(p["activation"], out))


@kernel(pool.AvgPool2DOp)
def avg_pool2d(
    op: pool.AvgPool2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Average pooling; the divisor counts padding only with count_include_pad (float
    only). Quantized: TFLite's rounded integer average of the stored integers."""
    p = op.props()
    if any_quantized(op):
        return [_quantized_avg_pool2d(op, args[0], p)]
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


def _powered(x: jax.Array, order: float) -> jax.Array:
    """``|x| ** order`` (exact for the common orders 1 and 2)."""
    if order == 1:
        return jnp.abs(x)
    if order == 2:
        return x * x
    return jnp.abs(x) ** jnp.asarray(order, x.dtype)


def _root(total: jax.Array, order: float) -> jax.Array:
    """``total ** (1 / order)`` (exact for the common orders 1 and 2)."""
    if order == 1:
        return total
    if order == 2:
        return jnp.sqrt(total)
    return total ** jnp.asarray(1 / order, total.dtype)


@kernel(pool.LpPool2DOp)
def lp_pool2d(
    op: pool.LpPool2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Lp pooling, float only: the (dilated) window sums of ``|x| ** p``, padding adding
    nothing, then their ``1 / p``-th power and the fused activation."""
    float_only(op)
    p = op.props()
    dims, strides, pads = _window(p)
    dilation = (1, *p["dilations"], 1)
    x = widen(args[0])
    total = lax.reduce_window(
        _powered(x, p["p"]),
        jnp.zeros((), x.dtype),
        lax.add,
        dims,
        strides,
        pads,
        window_dilation=dilation,
    )
    return [activate(_root(total, p["p"]), p["activation"]).astype(args[0].dtype)]
