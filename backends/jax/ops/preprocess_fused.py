"""Kernel of `synap.yuv_to_rgb_resize`: the pixels `crop_resize(yuv_to_rgb(planes))`
gives, converting only the ones the resize reads.

Bilinear resizing reads, for output row i and column j, the source rows r0[i], r1[i] and
columns c0[j], c1[j] (OpenCV's taps, from `backends/jax/ops/preprocess.py`). The kernel
gathers the luma at rows (r0, r1) x columns (c0, c1) and the chroma covering those
pixels, converts that 2h x 2w grid as 4:4:4, and resizes the grid with the same weights,
pointing the taps at its rows and columns. The RGB of a pixel depends only on its own
luma sample and its chroma sample, so this is the pair's result bit for bit. Nearest
resizing gathers the one pixel per output pixel.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from synapc.backends.jax.lowering import LoweringContext, kernel, op_check
from synapc.backends.jax.ops.preprocess import (
    COLOR_BITS,
    along_axis,
    combine_rows,
    crop_rectangle,
    fixed_coefficients,
    fixed_weights,
    linear_taps,
    nearest_indices,
)
from synapc.dialects.synap.base import shape_of
from synapc.dialects.synap.preprocess import (
    ColorMatrix,
    ColorRange,
    CropResizeMode,
    YuvFormat,
)
from synapc.dialects.synap.preprocess_fused import YuvToRgbResizeOp


def _take2(plane: jax.Array, rows: jax.Array, cols: jax.Array) -> jax.Array:
    """``plane[:, rows][:, :, cols]`` for indices known to be inside the plane."""
    picked = jnp.take(plane, rows, axis=1, mode="clip")
    return jnp.take(picked, cols, axis=2, mode="clip")


def _materialized(x: jax.Array) -> jax.Array:
    """`x` itself, computed once: a reduction is not fused into its consumers, so XLA
    does not recompute `x` (e.g. float64 resize weights) for every element using it."""
    return jnp.max(jnp.stack([x, x]), axis=0)


def _gathered_rgb(
    planes: list[jax.Array],
    fmt: YuvFormat,
    rows: jax.Array,
    cols: jax.Array,
    color: tuple[ColorRange, ColorMatrix, bool],
) -> jax.Array:
    """The RGB image of the frame at ``rows`` x ``cols`` (absolute luma indices):
    N x len(rows) x len(cols) x 3, with `yuv_to_rgb`'s arithmetic (20-bit fixed point,
    rounded half up, clipped) on the gathered samples, each pixel with its own chroma.

    The three products per channel are one integer matrix product of (Y', U', V') with
    the coefficients: exact in int32 like the sums it replaces, and it makes XLA keep
    the gathered samples in memory instead of fusing the gathers into every channel's
    arithmetic (which runs several times slower on CPU)."""
    color_range, matrix, bgr = color
    sub = 2 if fmt.subsampled else 1
    luma = _take2(planes[0][..., 0], rows, cols).astype(jnp.int32)
    if color_range == ColorRange.LIMITED:
        luma = jnp.maximum(luma - 16, 0)
    if fmt.plane_count == 2:  # interleaved chroma: gathered with both channels
        chroma = _take2(planes[1], rows // sub, cols // sub).astype(jnp.int32) - 128
        first, second = chroma[..., 0], chroma[..., 1]
        u, v = (first, second) if fmt == YuvFormat.NV12 else (second, first)
    else:
        u, v = (
            _take2(p[..., 0], rows // sub, cols // sub).astype(jnp.int32) - 128
            for p in planes[1:]
        )
    cy, cvr, cug, cvg, cub = fixed_coefficients(color_range, matrix)
    coefficients = [[cy, 0, cvr], [cy, cug, cvg], [cy, cub, 0]]
    if bgr:
        coefficients.reverse()
    sums = jnp.einsum(
        "nhwk,ck->nhwc",
        jnp.stack([luma, u, v], axis=-1),
        jnp.asarray(coefficients, jnp.int32),
        preferred_element_type=jnp.int32,
    )
    rounded = (sums + (1 << (COLOR_BITS - 1))) >> COLOR_BITS
    return jnp.clip(rounded, 0, 255).astype(jnp.uint8)


def _bilinear_blocks(grid: jax.Array, fy: jax.Array, fx: jax.Array) -> jax.Array:
    """OpenCV's fixed-point INTER_LINEAR of a gathered grid whose rows are the top
    taps then the bottom taps and whose columns are the left taps then the right taps
    (so each tap is a slice), with `combine_rows` for the vertical pass."""
    out_h, out_w = grid.shape[1] // 2, grid.shape[2] // 2
    a0, a1 = (along_axis(w, 2) for w in fixed_weights(fx))
    b0, b1 = (along_axis(w, 1) for w in fixed_weights(fy))
    pixels = grid.astype(jnp.int32)

    def horizontal(row_block: jax.Array) -> jax.Array:
        return row_block[:, :, :out_w] * a0 + row_block[:, :, out_w:] * a1

    return combine_rows(
        horizontal(pixels[:, :out_h]), horizontal(pixels[:, out_h:]), b0, b1
    )


def yuv_to_rgb_resize(
    planes: list[jax.Array],
    crop: list[jax.Array],
    fmt: YuvFormat,
    color: tuple[ColorRange, ColorMatrix, bool],
    size: tuple[int, int],
    mode: CropResizeMode,
) -> jax.Array:
    """``crop_resize(yuv_to_rgb(planes, fmt, *color), crop, size, mode)``, converting
    only the pixels the resize reads (`color`: range, matrix, bgr)."""
    n, height_in, width_in, _ = planes[0].shape
    width, height, left, top = crop_rectangle((n, height_in, width_in, 3), crop)
    out_h, out_w = size
    if mode == CropResizeMode.NEAREST:
        rows = nearest_indices(height, out_h) + top
        cols = nearest_indices(width, out_w) + left
        return _gathered_rgb(planes, fmt, rows, cols, color)
    r0, r1, fy = linear_taps(height, out_h, clamp_fraction=False)
    c0, c1, fx = linear_taps(width, out_w, clamp_fraction=True)
    rows = jnp.concatenate([r0, r1]) + top
    cols = jnp.concatenate([c0, c1]) + left
    grid = _gathered_rgb(planes, fmt, rows, cols, color)
    return _bilinear_blocks(grid, _materialized(fy), _materialized(fx))


@op_check(YuvToRgbResizeOp)
def _check_yuv_to_rgb_resize(op: YuvToRgbResizeOp) -> list[tuple[str, tuple[int, ...]]]:
    """The intermediates: the gathered grid (twice the result's rows and columns for
    bilinear) and its horizontally resized int32 sums."""
    n = shape_of(op.output)[0]
    out_h, out_w = op.out_size()
    grid = (n, 2 * out_h, 2 * out_w, 3)
    return [("gathered pixels", grid), ("resized rows", (n, 2 * out_h, out_w, 3))]


@kernel(YuvToRgbResizeOp)
def yuv_to_rgb_resize_kernel(
    op: YuvToRgbResizeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """`yuv_to_rgb_resize` with the op's properties."""
    p = op.props()
    count = len(op.planes)
    color = (p["color_range"], p["color_matrix"], p["bgr"])
    return [
        yuv_to_rgb_resize(
            args[:count], args[count:], p["format"], color, op.out_size(), p["mode"]
        )
    ]
