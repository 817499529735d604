"""Kernels of `dialects/synap/sampling.py`: grid sampling as gathers and weighted sums,
and deformable convolution as bilinear gathers followed by a grouped tap-channel product.

Each spatial axis is handled on its own: the grid coordinate becomes a pixel coordinate,
padding moves an out-of-range coordinate back inside (border, reflection), and the
interpolation gives per axis a few integer taps with weights. The value at a position is
the sum, over every combination of one tap per axis, of the product of the weights times
the input gathered at those taps (zero where a tap lies outside the input under zero
padding). Coordinates and sums are computed in float32; the result takes the input type.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
from jax import lax

from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    op_check,
    real_valued,
)
from synapc.dialects.synap.base import element_of, is_quantized, shape_of
from synapc.dialects.synap.sampling import (
    DeformConv2DOp,
    GridSampleOp,
    SampleMode,
    SamplePadding,
)

#: Keys' cubic convolution parameter (as PyTorch and ONNX use it).
_CUBIC_A = -0.75


def _pixel_coordinate(g: jax.Array, size: int, align_corners: bool) -> jax.Array:
    """The pixel coordinate of a normalized one along an axis of `size` pixels."""
    if align_corners:
        return (g + 1.0) / 2.0 * (size - 1)
    return ((g + 1.0) * size - 1.0) / 2.0


def _bounds(size: int, align_corners: bool) -> tuple[float, float]:
    """The coordinate range inside the input (pixel centres or outer edges)."""
    return (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)


def _reflect(x: jax.Array, low: float, high: float) -> jax.Array:
    """`x` reflected at `low` and `high` (repeatedly) until it lies between them."""
    span = high - low
    if span <= 0:
        return jnp.full_like(x, low)
    below = x < low
    distance = jnp.where(below, low - x, x - high)
    folds = jnp.trunc(distance / span)
    rest = distance - folds * span
    even = jnp.mod(folds, 2.0) == 0
    from_low, from_high = low + rest, high - rest
    reflected = jnp.where(below, jnp.where(even, from_low, from_high),
                          jnp.where(even, from_high, from_low))  # fmt: skip
    return jnp.where((x < low) | (x > high), reflected, x)


def _padded(
    x: jax.Array, size: int, padding: SamplePadding, align_corners: bool
) -> jax.Array:
    """A coordinate outside the input moved inside by border or reflection padding."""
    low, high = _bounds(size, align_corners)
    if padding == SamplePadding.BORDER:
        return jnp.where((x < low) | (x > high), jnp.clip(x, 0.0, size - 1.0), x)
    if padding == SamplePadding.REFLECTION:
        return _reflect(x, low, high)
    return x


def _cubic_weights(t: jax.Array) -> list[jax.Array]:
    """Keys' cubic weights of the taps at offsets -1, 0, 1, 2 from the floor."""
    a = _CUBIC_A

    def near(d: jax.Array) -> jax.Array:  # |d| <= 1
        return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0

    def far(d: jax.Array) -> jax.Array:  # 1 < |d| < 2
        return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a

    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def _taps(x: jax.Array, mode: SampleMode) -> list[tuple[jax.Array, jax.Array | None]]:
    """(integer tap, weight or None for 1) pairs of one axis's coordinate."""
    if mode == SampleMode.NEAREST:
        return [(jnp.trunc(x), None)]
    base = jnp.floor(x)
    t = x - base
    if mode == SampleMode.LINEAR:
        return [(base, 1.0 - t), (base + 1.0, t)]
    return [(base + (k - 1.0), w) for k, w in enumerate(_cubic_weights(t))]


def _tap_index(
    tap: jax.Array, size: int, padding: SamplePadding, align_corners: bool
) -> tuple[jax.Array, jax.Array | None]:
    """The in-range int32 index of a tap, and for zero padding whether it is inside."""
    if padding == SamplePadding.ZEROS:
        inside = (tap >= 0) & (tap <= size - 1)
        return jnp.clip(tap, 0, size - 1).astype(jnp.int32), inside
    if padding == SamplePadding.REFLECTION:
        tap = _reflect(tap, *_bounds(size, align_corners))
    return jnp.clip(jnp.trunc(tap), 0, size - 1).astype(jnp.int32), None


@kernel(GridSampleOp)
def grid_sample(
    op: GridSampleOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Interpolate the input at every grid position (see the module docstring)."""
    data, grid = args
    p = op.props()
    mode, padding, align = p["mode"], p["padding"], bool(p["align_corners"])
    sizes = data.shape[1:-1]
    grid = grid.astype(jnp.float32)
    axes = []  # per spatial axis: its (index, weight) taps
    for axis, size in enumerate(sizes):
        g = grid[..., len(sizes) - 1 - axis]  # the grid lists x (last axis) first
        x = _pixel_coordinate(g, size, align)
        if mode == SampleMode.NEAREST:
            x = jnp.round(x)  # ties to even, before padding (as PyTorch)
        x = _padded(x, size, padding, align)
        taps = []
        for tap, weight in _taps(x, mode):
            index, inside = _tap_index(tap, size, padding, align)
            if inside is not None:
                weight = jnp.where(inside, 1.0 if weight is None else weight, 0.0)
            taps.append((index, weight))
        axes.append(taps)
    batch = lax.broadcasted_iota(jnp.int32, grid.shape[:-1], 0)
    values = data.astype(jnp.float32)
    total = None
    for combination in itertools.product(*axes):
        picked = values[(batch, *(index for index, _ in combination))]
        for _, weight in combination:
            if weight is not None:
                picked = picked * weight[..., None]
        total = picked if total is None else total + picked
    assert total is not None
    return [total.astype(data.dtype)]


def _bilinear_gather(data: jax.Array, rows: jax.Array, cols: jax.Array) -> jax.Array:
    """`data` ``[N, H, W, G, Cg]`` read bilinearly at pixel positions `rows` / `cols`
    ``[N, ..., G, ...]`` (the batch first, the channel group at axis 3), zero outside:
    ``[*rows.shape, Cg]``."""
    height, width = data.shape[1:3]
    shape = rows.shape
    batch = lax.broadcasted_iota(jnp.int32, shape, 0)
    group = lax.broadcasted_iota(jnp.int32, shape, 3)
    top, left = jnp.floor(rows), jnp.floor(cols)
    total = None
    for dy, dx in itertools.product((0.0, 1.0), repeat=2):
        r, c = top + dy, left + dx
        weight = (1.0 - jnp.abs(rows - r)) * (1.0 - jnp.abs(cols - c))
        inside = (r >= 0) & (r <= height - 1) & (c >= 0) & (c <= width - 1)
        ri = jnp.clip(r, 0, height - 1).astype(jnp.int32)
        ci = jnp.clip(c, 0, width - 1).astype(jnp.int32)
        picked = data[batch, ri, ci, group] * jnp.where(inside, weight, 0.0)[..., None]
        total = picked if total is None else total + picked
    assert total is not None
    return total


@kernel(DeformConv2DOp)
def deform_conv2d(
    op: DeformConv2DOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Per output position and tap: the input sampled at the tap's position plus its
    offset, times the mask; then the grouped product with the filter, plus the bias."""
    data, weights, offset, mask, *bias = args
    p = op.props()
    (sh, sw), (dh, dw) = p["strides"], p["dilations"]
    top, _, left, _ = p["pad"]
    groups, offset_groups = p["groups"], p["offset_groups"]
    n = data.shape[0]
    out_c, kh, kw, _ = weights.shape
    _, oh, ow, _ = offset.shape
    taps = (n, oh, ow, offset_groups, kh, kw)
    offset = offset.astype(jnp.float32).reshape(*taps, 2)
    rows = (jnp.arange(oh) * sh - top)[:, None] + (jnp.arange(kh) * dh)[None, :]
    cols = (jnp.arange(ow) * sw - left)[:, None] + (jnp.arange(kw) * dw)[None, :]
    rows = rows[None, :, None, None, :, None] + offset[..., 0]
    cols = cols[None, None, :, None, None, :] + offset[..., 1]
    grouped = data.astype(jnp.float32).reshape(*data.shape[:3], offset_groups, -1)
    sampled = _bilinear_gather(grouped, rows, cols)  # [N, OH, OW, G, KH, KW, Cg]
    sampled = sampled * mask.astype(jnp.float32).reshape(taps)[..., None]
    columns = jnp.moveaxis(sampled, 3, 5).reshape(n, oh, ow, kh, kw, groups, -1)
    filters = weights.astype(jnp.float32).reshape(groups, out_c // groups, kh, kw, -1)
    result = jnp.einsum("nhwabgc,goabc->nhwgo", columns, filters)
    result = result.reshape(n, oh, ow, out_c)
    if bias:
        result = result + bias[0].astype(jnp.float32)
    return [result.astype(data.dtype)]


@op_check(GridSampleOp, DeformConv2DOp)
def _check_sampling(op: GridSampleOp | DeformConv2DOp) -> list[tuple[str, tuple[int, ...]]]:
    """Both kernels interpolate real values: quantized operands are refused. The
    intermediates are the float32 values gathered per tap (deformable convolution: all
    taps of every output position at once)."""
    if any(is_quantized(element_of(v)) for v in (*op.operands, *op.results)):
        raise UnsupportedOpError(f"quantized {op.name} is not supported")
    if isinstance(op, GridSampleOp):
        return [("gathered taps", shape_of(op.output))]
    n, oh, ow, _ = shape_of(op.output)
    _, kh, kw, _ = shape_of(op.filter)
    return [("sampled taps", (n, oh, ow, kh, kw, shape_of(op.input)[3]))]


real_valued(GridSampleOp, DeformConv2DOp)
