"""Kernels of `dialects/synap/pool.py`.

Quantized pooling follows TFLite's reference integer kernels (``reference_ops`` /
``reference_integer_ops`` ``AveragePool`` and ``MaxPool``): they work on the stored
integers as they are -- no zero point is subtracted and the output's quantization is not
used to rescale (LiteRT accepts different input and output parameters and ignores them);
only the fused activation's range is taken from the output's parameters.

Under ONNX semantics (`IntegerSemantics.ONNX`) a quantized average pool is its QDQ
definition, ``quantize(AveragePool(dequantize(x)))``, computed exactly rather than in
float32 (whose rounding of the window sum decides values on a rounding tie): the int32
window sum of ``x - zp_in`` times ``s_in / (s_out * count)``, rounded half to even.

`synap.lp_pool2d` is float only: the window sums of ``|x| ** p`` (float32 for narrower
floats), then their ``1 / p``-th power.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from synapc.backends.jax.float_emulation import run_in_float
from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    op_check,
    real_valued,
    takes_booleans,
)
from synapc.backends.jax.ops.common import activate, any_quantized, float_only, widen
from synapc.backends.jax.ops.quantized import (
    activation_range,
    per_tensor,
    qtype,
    saturate,
    stored,
    x64,
)
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import pool
from synapc.dialects.synap.attributes import Activation, IntegerSemantics
from synapc.dialects.synap.base import element_of, is_quantized, shape_of


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


def _window_counts(shape: tuple[int, ...], p: dict, dtype: jnp.dtype) -> jax.Array:
    """The divisor of each window, shaped ``[1, OH, OW, 1]``: the full window with
    count_include_pad, else the number of its cells inside the input (fewer at borders)."""
    dims, strides, pads = _window(p)
    if p["count_include_pad"]:
        return jnp.asarray(dims[1] * dims[2], dtype)
    ones = jnp.ones((1, shape[1], shape[2], 1), dtype)
    return lax.reduce_window(ones, jnp.zeros((), dtype), lax.add, dims, strides, pads)


def _per_tensor_quantized(op: pool.AvgPool2DOp) -> bool:
    """Whether the input and the result are both quantized with one scale and zero
    point each."""
    values = (op.input, op.output)
    return all(is_quantized(element_of(v)) and not qtype(v).is_per_axis for v in values)


def _onnx_activation_range(
    activation: Activation | None, q: UniformQuantizedType
) -> tuple[float, float]:
    """The fused activation's bounds quantized as ONNX's QuantizeLinear quantizes them
    (float32 quotient, rounded half to even), within the storage range; minus the zero
    point, i.e. in steps of the output scale."""
    bounds = (None, None) if activation is None else activation.bounds
    lo, hi = q.storage_min - q.zero_point, q.storage_max - q.zero_point
    with np.errstate(over="ignore"):
        low, high = (
            None if b is None else float(np.round(np.float32(b) / np.float32(q.scale)))
            for b in bounds
        )
    return (
        float(lo if low is None else max(lo, low)),
        float(hi if high is None else min(hi, high)),
    )


def _onnx_quantized_avg_pool2d(op: pool.AvgPool2DOp, x: jax.Array, p: dict) -> jax.Array:
    """ONNX's QDQ average pool, exactly: ``round_half_even(sum * s_in / (s_out * count)) +
    zp_out``, saturated, with ``sum`` the int32 window sum of ``x - zp_in`` (padding adds
    zero) and ``count`` each window's divisor.

    A float64 quotient gives the integer part ``f``; the rounding is then decided by an
    exact comparison of ``2 * sum * s_in`` with ``(2 f + 1) * count * s_out`` (integers
    below 2**29 times float32 scales: exact in float64), so an exact tie (e.g. ``s_in ==
    s_out`` and a sum that is an odd multiple of ``count / 2``) rounds to even, as exact
    arithmetic does, whatever the order or rounding of the float operations."""
    qi, qo = qtype(op.input), qtype(op.output)
    dims, strides, pads = _window(p)
    zero = jnp.zeros((), jnp.int32)
    total = lax.reduce_window(stored(x, qi), zero, lax.add, dims, strides, pads)
    lo, hi = _onnx_activation_range(p["activation"], qo)
    s_in, s_out = float(np.float32(qi.scale)), float(np.float32(qo.scale))
    with x64():
        count = jnp.maximum(_window_counts(x.shape, p, jnp.float64), 1.0)
        twice = (2.0 * total.astype(jnp.float64)) * s_in
        below = jnp.clip(jnp.floor(twice / (2.0 * count * s_out)), lo - 1.0, hi)
        midpoint = ((2.0 * below + 1.0) * count) * s_out
        odd = jnp.fmod(below, 2.0) != 0.0
        up = (twice > midpoint) | ((twice == midpoint) & odd)
        y = jnp.clip(below + up.astype(jnp.float64), lo, hi).astype(jnp.int32)
    return (y + qo.zero_point).astype(qo.storage_dtype)


@kernel(pool.AvgPool2DOp, onnx_integer=True)
def avg_pool2d(
    op: pool.AvgPool2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Average pooling; the divisor counts padding only with count_include_pad. Quantized:
    TFLite's rounded integer average of the stored integers (count_include_pad refused);
    under ONNX semantics the exact QDQ average when input and result are quantized per
    tensor, else the QDQ definition evaluated in float32."""
    p = op.props()
    if any_quantized(op) and ctx.semantics is IntegerSemantics.ONNX:
        if _per_tensor_quantized(op):
            return [_onnx_quantized_avg_pool2d(op, args[0], p)]
        return list(run_in_float(avg_pool2d, op, args, ctx))
    if any_quantized(op):
        return [_quantized_avg_pool2d(op, args[0], p)]
    dims, strides, pads = _window(p)
    x = widen(args[0])
    total = lax.reduce_window(x, jnp.zeros((), x.dtype), lax.add, dims, strides, pads)
    count = _window_counts(x.shape, p, x.dtype)
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
