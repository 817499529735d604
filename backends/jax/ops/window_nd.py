"""Kernels of `dialects/synap/window_nd.py`: pooling and convolution over 1 to 3 spatial
axes of channels-last tensors, with dilations.

Pools are `lax.reduce_window` over ``(1, K..., 1)`` windows; MaxPool's indices reduce
``(value, position)`` pairs, the larger value winning and the earlier row-major position
breaking ties, as ONNX's reference scans its windows. Quantized pools run as their QDQ
definition in float32 (`run_in_float`), exact for max pooling. Convolutions are
`lax.conv_general_dilated` (transposed ones: a stride-1 convolution of the zero-dilated
input with the spatially flipped filter), through `conv._layer` for quantized operands.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from synapc.backends.jax.float_emulation import run_in_float
from synapc.backends.jax.lowering import (
    LoweringContext,
    kernel,
    op_check,
    operand_layout,
    real_valued,
    takes_booleans,
)
from synapc.backends.jax.ops.common import any_quantized, float_only, widen
from synapc.backends.jax.ops.conv import Reduction, _k_split, _layer
from synapc.dialects.synap import window_nd
from synapc.dialects.synap.base import shape_of

Window = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], list[tuple[int, int]]]


def _window(p: dict) -> Window:
    """Window dimensions, strides, dilations and padding over all axes of a pool."""
    pairs = _pad_pairs(p["pad"])
    return (
        (1, *p["kernel"], 1),
        (1, *p["strides"], 1),
        (1, *p["dilations"], 1),
        [(0, 0), *pairs, (0, 0)],
    )


def _reduce(
    x: jax.Array, init: jax.Array, computation: Callable[..., jax.Array], p: dict
) -> jax.Array:
    """`computation` (from `init`) over each window of the pool with properties `p`."""
    dims, strides, dilations, pads = _window(p)
    return lax.reduce_window(
        x, init, computation, dims, strides, pads, window_dilation=dilations
    )


def _lowest(dtype: jnp.dtype) -> jax.Array:
    """The value no cell loses to: -inf, the smallest integer, or False."""
    if jnp.issubdtype(dtype, jnp.floating):
        return jnp.asarray(-jnp.inf, dtype)
    if dtype == jnp.bool_:
        return jnp.asarray(False)
    return jnp.asarray(jnp.iinfo(dtype).min, dtype)


real_valued(window_nd.AvgPoolNDOp, window_nd.LpPoolNDOp)
takes_booleans(window_nd.MaxPoolNDOp)


@op_check(
    window_nd.MaxPoolNDOp,
    window_nd.AvgPoolNDOp,
    window_nd.LpPoolNDOp,
    window_nd.MaxPoolIndicesNDOp,
)
def _check_pool(op: window_nd._PoolND) -> list[tuple[str, tuple[int, ...]]]:
    """The padded input is an intermediate of the kernel."""
    x = shape_of(op.input)
    pairs = _pad_pairs(op.props()["pad"])
    spatial = [size + lo + hi for size, (lo, hi) in zip(x[1:-1], pairs, strict=True)]
    return [("its padded input", (x[0], *spatial, x[-1]))]


@kernel(window_nd.MaxPoolNDOp)
def max_pool_nd(
    op: window_nd.MaxPoolNDOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Max pooling; padding never wins."""
    if any_quantized(op):
        return list(run_in_float(max_pool_nd, op, args, ctx))
    x = args[0]
    return [_reduce(x, _lowest(x.dtype), lax.max, op.props())]


@kernel(window_nd.AvgPoolNDOp)
def avg_pool_nd(
    op: window_nd.AvgPoolNDOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Average pooling; the divisor counts padding only with count_include_pad."""
    if any_quantized(op):
        return list(run_in_float(avg_pool_nd, op, args, ctx))
    p = op.props()
    x = widen(args[0])
    zero = jnp.zeros((), x.dtype)
    total = _reduce(x, zero, lax.add, p)
    if p["count_include_pad"]:
        count = jnp.asarray(float(np.prod(p["kernel"])), x.dtype)
    else:
        count = _reduce(jnp.ones((1, *x.shape[1:-1], 1), x.dtype), zero, lax.add, p)
    return [(total / count).astype(args[0].dtype)]


@kernel(window_nd.LpPoolNDOp)
def lp_pool_nd(
    op: window_nd.LpPoolNDOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Lp pooling, float only: window sums of ``|x| ** p``, then their ``1 / p``-th
    power."""
    float_only(op)
    p = op.props()
    x = widen(args[0])
    order = p["p"]
    powered = x * x if order == 2 else jnp.abs(x) ** jnp.asarray(order, x.dtype)
    total = _reduce(powered, jnp.zeros((), x.dtype), lax.add, p)
    root = jnp.sqrt(total) if order == 2 else total ** jnp.asarray(1 / order, x.dtype)
    return [root.astype(args[0].dtype)]


def _flat_positions(spatial: tuple[int, ...], column_major: bool) -> np.ndarray:
    """Each spatial cell's index within one channel plane, row- or column-major."""
    order = "F" if column_major else "C"
    return np.arange(int(np.prod(spatial)), dtype=np.int32).reshape(spatial, order=order)


def _pick_max(
    a: tuple[jax.Array, jax.Array], b: tuple[jax.Array, jax.Array]
) -> tuple[jax.Array, jax.Array]:
    """The larger of two (value, row-major position) pairs, the earlier one on a tie."""
    take_a = (a[0] > b[0]) | ((a[0] == b[0]) & (a[1] < b[1]))
    return jnp.where(take_a, a[0], b[0]), jnp.where(take_a, a[1], b[1])


@kernel(window_nd.MaxPoolIndicesNDOp)
def max_pool_indices_nd(
    op: window_nd.MaxPoolIndicesNDOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """ONNX MaxPool's Indices: the window maximum's flat index in the channels-first
    input, found by reducing (value, row-major position) pairs and then renumbered in
    the requested storage order."""
    p = op.props()
    dims, strides, dilations, pads = _window(p)
    x = args[0]
    if any_quantized(op):  # the stored integers order as the values they represent
        x = x.astype(jnp.int32)
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.int32)
    spatial = tuple(x.shape[1:-1])
    row_major = _flat_positions(spatial, False)
    positions = jnp.broadcast_to(jnp.asarray(row_major)[None, ..., None], x.shape).astype(
        jnp.int32
    )
    sentinel = jnp.asarray(np.iinfo(np.int32).max, jnp.int32)
    _, where = lax.reduce_window(
        (x, positions),
        (_lowest(x.dtype), sentinel),
        _pick_max,
        dims,
        strides,
        pads,
        window_dilation=dilations,
    )
    if p["storage_order"]:
        renumber = jnp.asarray(_flat_positions(spatial, True).reshape(-1))
        where = renumber[where]
    n, c = x.shape[0], x.shape[-1]
    plane = int(np.prod(spatial))
    batch = jnp.arange(n, dtype=jnp.int32).reshape((n,) + (1,) * (x.ndim - 1))
    channel = jnp.arange(c, dtype=jnp.int32)
    index = (batch * c + channel) * plane + where
    return [index.astype(ctx.dtype_of(op.output))]


def _pad_pairs(pad: Sequence[int]) -> list[tuple[int, int]]:
    """The ``pad`` property ``[begin_0, end_0, begin_1, end_1, ...]`` of an N-D window
    op as (begin, end) pairs per spatial axis, as lax takes them."""
    return [(pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


def _dimension_numbers(rank: int) -> tuple[str, str, str]:
    """Channels-last input/output and ``[K..., I, O]`` filter of `rank` dimensions."""
    spatial = "DHW"[3 - (rank - 2) :]
    return f"N{spatial}C", f"{spatial}IO", f"N{spatial}C"


@operand_layout(window_nd.ConvNDOp, window_nd.TransposeConvNDOp)
def _filter_layout(op: window_nd.ConvNDOp | window_nd.TransposeConvNDOp) -> dict:
    """Filters arrive ``[K..., I, O]`` (XLA's layout, output channels last, where the
    integer kernels take per-channel zero points), constants moved once on the host."""
    rank = len(shape_of(op.filter))
    return {1: lambda w: w.transpose(*range(1, rank), 0)}


def _reduction(op: window_nd.ConvNDOp | window_nd.TransposeConvNDOp) -> Reduction:
    """How the layer sums (see `conv.Reduction`): window taps per input channel, split
    by input channels when ungrouped."""
    w = shape_of(op.filter)
    split = _k_split if op.props()["groups"] == 1 else None
    return Reduction(math.prod(w[1:-1]), w[-1], split)


@op_check(window_nd.ConvNDOp, window_nd.TransposeConvNDOp)
def _check_conv(
    op: window_nd.ConvNDOp | window_nd.TransposeConvNDOp,
) -> list[tuple[str, tuple[int, ...]]]:
    """The (dilated) padded input is an intermediate of the kernel."""
    x = shape_of(op.input)
    p = op.props()
    kernel_shape = window_nd.filter_window(op)
    spatial = []
    for i, size in enumerate(x[1:-1]):
        border = p["dilations"][i] * (kernel_shape[i] - 1)
        if isinstance(op, window_nd.TransposeConvNDOp):
            size = (size - 1) * p["strides"][i] + 1 + 2 * border
        else:
            size = size + p["pad"][2 * i] + p["pad"][2 * i + 1]
        spatial.append(size)
    return [("its padded input", (x[0], *spatial, x[-1]))]


@kernel(window_nd.ConvNDOp, onnx_integer=True)
def conv_nd(
    op: window_nd.ConvNDOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Convolution over 1 to 3 spatial axes (float or quantized)."""
    p = op.props()

    def linear(x: jax.Array, w: jax.Array, acc: jnp.dtype) -> jax.Array:
        if jnp.issubdtype(acc, jnp.integer):
            x, w = x.astype(acc), w.astype(acc)
        return lax.conv_general_dilated(
            x,
            w,
            p["strides"],
            _pad_pairs(p["pad"]),
            rhs_dilation=p["dilations"],
            dimension_numbers=_dimension_numbers(x.ndim),
            feature_group_count=p["groups"],
            preferred_element_type=acc,
        )

    return _layer(op, args, ctx, linear, _reduction(op))


@kernel(window_nd.TransposeConvNDOp, onnx_integer=True)
def transpose_conv_nd(
    op: window_nd.TransposeConvNDOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Transposed convolution over 1 to 3 spatial axes (float or quantized): a stride-1
    convolution of the zero-dilated input with the flipped filter, then the crop
    (negative crop = extension)."""
    p = op.props()
    kernel_shape = window_nd.filter_window(op)
    borders = [d * (k - 1) for d, k in zip(p["dilations"], kernel_shape, strict=True)]
    padding = [
        (border - lo, border - hi)
        for border, (lo, hi) in zip(borders, _pad_pairs(p["pad"]), strict=True)
    ]

    def linear(x: jax.Array, w: jax.Array, acc: jnp.dtype) -> jax.Array:
        if jnp.issubdtype(acc, jnp.integer):
            x, w = x.astype(acc), w.astype(acc)
        flipped = jnp.flip(w, axis=tuple(range(w.ndim - 2)))
        return lax.conv_general_dilated(
            x,
            flipped,
            (1,) * len(kernel_shape),
            padding,
            lhs_dilation=p["strides"],
            rhs_dilation=p["dilations"],
            dimension_numbers=_dimension_numbers(x.ndim),
            feature_group_count=p["groups"],
            preferred_element_type=acc,
        )

    return _layer(op, args, ctx, linear, _reduction(op))
