"""Kernels of `dialects/synap/preprocess.py`: colour conversion and crop + resize, with
OpenCV's arithmetic so results are bit-exact with `cv2.cvtColor` and `cv2.resize`.

Colour conversion is integer arithmetic on 20-bit fixed-point coefficients, rounded half
up by adding 2**19 before the shift, as OpenCV's YUV420 converters compute it.

Resizing follows OpenCV's INTER_LINEAR for uint8: the source coordinate of each output
pixel is computed in double and rounded to float, its fraction becomes two 11-bit weights
(rounded half to even), a horizontal pass sums the two taps in int32 (a value times
2048), and the vertical pass combines two rows as OpenCV's SIMD kernel does: each row
shifted right by 4, multiplied by its weight keeping the high 16 bits, the two summed,
then rounded by 2 bits. Rows are gathered first, so only the rows that are read go
through the horizontal pass. The crop rectangle is a run-time value: coordinates are
computed from it inside the program (in float64, under `x64`), so one compiled model
serves every rectangle.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from xdsl.dialects.builtin import f32

from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    op_check,
)
from synapc.backends.jax.ops.quantized import x64
from synapc.dialects.synap.base import element_of, shape_of
from synapc.dialects.synap.preprocess import (
    UI8,
    ColorMatrix,
    ColorRange,
    CropResizeMode,
    CropResizeOp,
    YuvFormat,
    YuvToRgbOp,
)

#: Fractional bits of the colour coefficients (OpenCV's ITUR_BT_601_SHIFT).
COLOR_BITS = 20
#: ITU-R BT.709-6's luma weights of red and blue (green: 1 - Kr - Kb).
_KR, _KB = 0.2126, 0.0722
_KG = 1 - _KR - _KB
#: BT.709's full-range chroma coefficients (cvr, cug, cvg, cub).
_BT709 = (
    2 * (1 - _KR),
    -2 * _KB * (1 - _KB) / _KG,
    -2 * _KR * (1 - _KR) / _KG,
    2 * (1 - _KB),
)
#: Per (range, matrix): the coefficients (cy, cvr, cug, cvg, cub); see YuvToRgbOp.
#: BT.601's are METAFILE.md's (limited range: OpenCV's); limited-range BT.709 scales Y by
#: 255/219 and chroma by 255/224.
COLOR_COEFFICIENTS: dict[tuple[ColorRange, ColorMatrix], tuple[float, ...]] = {
    (ColorRange.LIMITED, ColorMatrix.BT601): (1.164, 1.596, -0.391, -0.813, 2.018),
    (ColorRange.FULL, ColorMatrix.BT601): (1.0, 1.402, -0.344, -0.714, 1.772),
    (ColorRange.LIMITED, ColorMatrix.BT709): (255 / 219, *(c * 255 / 224 for c in _BT709)),
    (ColorRange.FULL, ColorMatrix.BT709): (1.0, *_BT709),
}
#: Fractional bits of OpenCV's uint8 resize weights (INTER_RESIZE_COEF_BITS).
_WEIGHT_BITS = 11


def fixed_point(coefficient: float) -> int:
    """A colour coefficient in 20-bit fixed point."""
    return round(coefficient * (1 << COLOR_BITS))


def fixed_coefficients(
    color_range: ColorRange, matrix: ColorMatrix
) -> tuple[int, int, int, int, int]:
    """(cy, cvr, cug, cvg, cub) of a range and matrix in 20-bit fixed point: the
    integers both the colour converter and the fused converter-resizer multiply by."""
    cy, cvr, cug, cvg, cub = (
        fixed_point(c) for c in COLOR_COEFFICIENTS[(color_range, matrix)]
    )
    return cy, cvr, cug, cvg, cub


def _chroma(planes: list[jax.Array], fmt: YuvFormat) -> tuple[jax.Array, jax.Array]:
    """The U and V planes (N x h x w, chroma resolution) of a frame's planes."""
    if fmt == YuvFormat.NV12:
        return planes[1][..., 0], planes[1][..., 1]
    if fmt == YuvFormat.NV21:
        return planes[1][..., 1], planes[1][..., 0]
    return planes[1][..., 0], planes[2][..., 0]


def yuv_to_rgb(
    planes: list[jax.Array],
    fmt: YuvFormat,
    color_range: ColorRange,
    matrix: ColorMatrix,
    bgr: bool,
) -> jax.Array:
    """The N x H x W x 3 uint8 RGB (or BGR) image of a frame's uint8 planes.

    The chroma terms are computed at chroma resolution; for 4:2:0 the luma is viewed
    as N x H/2 x 2 x W/2 x 2 blocks so each chroma term broadcasts over its 2 x 2 block
    without being repeated in memory."""
    cy, cvr, cug, cvg, cub = fixed_coefficients(color_range, matrix)
    u, v = (p.astype(jnp.int32) - 128 for p in _chroma(planes, fmt))
    terms = [cvr * v, cug * u + cvg * v, cub * u]
    y = planes[0][..., 0].astype(jnp.int32)
    n, h, w = y.shape
    if fmt.subsampled:
        y = y.reshape(n, h // 2, 2, w // 2, 2)
        terms = [t[:, :, None, :, None] for t in terms]
    if color_range == ColorRange.LIMITED:
        y = jnp.maximum(y - 16, 0)
    base = y * cy + (1 << (COLOR_BITS - 1))
    channels = [jnp.clip((base + t) >> COLOR_BITS, 0, 255).astype(jnp.uint8) for t in terms]
    if bgr:
        channels.reverse()
    return jnp.stack(channels, axis=-1).reshape(n, h, w, 3)


@kernel(YuvToRgbOp)
def yuv_to_rgb_kernel(
    op: YuvToRgbOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """`yuv_to_rgb` with the op's properties."""
    p = op.props()
    return [yuv_to_rgb(args, p["format"], p["color_range"], p["color_matrix"], p["bgr"])]


# -- crop and resize -------------------------------------------------------------------
def _opencv_scale(size_in: jax.Array, size_out: int) -> jax.Array:
    """OpenCV's source pixels per output pixel, ``1. / ((double)out / in)``, rounded
    twice as OpenCV rounds it (an optimization barrier keeps XLA from simplifying the
    two divisions into one multiplication, which rounds differently). Call under
    `x64`."""
    inverse = jnp.float64(size_out) / size_in.astype(jnp.float64)
    return lax.optimization_barrier(1.0 / lax.optimization_barrier(inverse))


def _source_positions(size_in: jax.Array, size_out: int) -> jax.Array:
    """OpenCV's float source coordinate of each output index along one axis:
    ``(float)((d + 0.5) * scale - 0.5)`` in double (the product kept apart from the
    subtraction, so no fused multiply-add rounds it once)."""
    with x64():
        d = jnp.arange(size_out, dtype=jnp.float64)
        product = lax.optimization_barrier((d + 0.5) * _opencv_scale(size_in, size_out))
        return (product - 0.5).astype(jnp.float32)


def linear_taps(
    size_in: jax.Array, size_out: int, clamp_fraction: bool
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The two source indices (within [0, size_in)) and the float32 fraction (weight
    of the second) of each output index. OpenCV's horizontal pass zeroes the fraction
    where the left tap falls outside the image or on its last pixel (`clamp_fraction`);
    its vertical pass keeps the fraction and repeats the border row."""
    position = _source_positions(size_in, size_out)
    floor = jnp.floor(position)
    fraction = position - floor
    start = floor.astype(jnp.int32)
    if clamp_fraction:
        outside = (start < 0) | (start >= size_in - 1)
        fraction = jnp.where(outside, jnp.float32(0), fraction)
    first = jnp.clip(start, 0, size_in - 1)
    second = jnp.clip(start + 1, 0, size_in - 1)
    return first, second, fraction


def nearest_indices(size_in: jax.Array, size_out: int) -> jax.Array:
    """OpenCV's INTER_NEAREST source index: ``min(floor(d * (1 / (out / in))), in - 1)``
    in double."""
    with x64():
        d = jnp.arange(size_out, dtype=jnp.float64)
        index = jnp.floor(d * _opencv_scale(size_in, size_out)).astype(jnp.int32)
    return jnp.minimum(index, size_in - 1)


def fixed_weights(fraction: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The 11-bit weights of the two taps, each rounded half to even as OpenCV's
    saturate_cast<short> rounds."""
    one = jnp.float32(1 << _WEIGHT_BITS)
    first = jnp.round((jnp.float32(1) - fraction) * one).astype(jnp.int32)
    return first, jnp.round(fraction * one).astype(jnp.int32)


def along_axis(weights: jax.Array, axis: int) -> jax.Array:
    """Per-index weights shaped to broadcast along `axis` of an NHWC tensor."""
    shape = [1, 1, 1, 1]
    shape[axis] = weights.shape[0]
    return weights.reshape(shape)


def _bilinear_uint8(
    image: jax.Array,
    rows: tuple[jax.Array, jax.Array, jax.Array],
    cols: tuple[jax.Array, jax.Array, jax.Array],
) -> jax.Array:
    """OpenCV's fixed-point INTER_LINEAR for uint8, given the taps of both axes
    (absolute indices into `image`)."""
    a0, a1 = (along_axis(w, 2) for w in fixed_weights(cols[2]))
    b0, b1 = (along_axis(w, 1) for w in fixed_weights(rows[2]))

    def horizontal(row_index: jax.Array) -> jax.Array:
        picked = jnp.take(image, row_index, axis=1, mode="clip").astype(jnp.int32)
        left = jnp.take(picked, cols[0], axis=2, mode="clip")
        right = jnp.take(picked, cols[1], axis=2, mode="clip")
        return left * a0 + right * a1

    return combine_rows(horizontal(rows[0]), horizontal(rows[1]), b0, b1)


def combine_rows(
    top: jax.Array, bottom: jax.Array, b0: jax.Array, b1: jax.Array
) -> jax.Array:
    """OpenCV's vertical uint8 INTER_LINEAR pass over two horizontally resized rows
    (int32, each a value times 2048) with their 11-bit weights `b0`, `b1`: each row
    shifted right by 4, multiplied by its weight keeping the high 16 bits, the two
    summed, rounded by 2 bits and clipped to uint8 (OpenCV's SIMD kernel)."""
    total = ((top >> 4) * b0 >> 16) + ((bottom >> 4) * b1 >> 16)
    return jnp.clip((total + 2) >> 2, 0, 255).astype(jnp.uint8)


def _bilinear_float(
    image: jax.Array,
    rows: tuple[jax.Array, jax.Array, jax.Array],
    cols: tuple[jax.Array, jax.Array, jax.Array],
) -> jax.Array:
    """OpenCV's INTER_LINEAR for float images: float weights, horizontal then vertical."""
    a1, b1 = along_axis(cols[2], 2), along_axis(rows[2], 1)
    a0, b0 = 1 - a1, 1 - b1

    def horizontal(row_index: jax.Array) -> jax.Array:
        picked = jnp.take(image, row_index, axis=1, mode="clip")
        left = jnp.take(picked, cols[0], axis=2, mode="clip")
        right = jnp.take(picked, cols[1], axis=2, mode="clip")
        return left * a0 + right * a1

    return horizontal(rows[0]) * b0 + horizontal(rows[1]) * b1


def crop_rectangle(
    image_shape: tuple[int, ...], crop: list[jax.Array]
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """(width, height, left, top) of the rectangle to resize, clamped into the image
    (the whole image without crop operands)."""
    _, height, width, _ = image_shape
    if not crop:
        zero = jnp.int32(0)
        return jnp.int32(width), jnp.int32(height), zero, zero
    w, h, left, top = (jnp.asarray(v, jnp.int32).reshape(()) for v in crop)
    left = jnp.clip(left, 0, width - 1)
    top = jnp.clip(top, 0, height - 1)
    return jnp.clip(w, 1, width - left), jnp.clip(h, 1, height - top), left, top


def crop_resize(
    image: jax.Array, crop: list[jax.Array], size: tuple[int, int], mode: CropResizeMode
) -> jax.Array:
    """`image` (N x H x W x C, uint8 or float32), or its crop rectangle (width,
    height, left, top scalars), resized to `size` as OpenCV's `cv2.resize` does."""
    width, height, left, top = crop_rectangle(image.shape, crop)
    out_h, out_w = size
    if mode == CropResizeMode.NEAREST:
        rows = nearest_indices(height, out_h) + top
        cols = nearest_indices(width, out_w) + left
        picked = jnp.take(image, rows, axis=1, mode="clip")
        return jnp.take(picked, cols, axis=2, mode="clip")
    r0, r1, fy = linear_taps(height, out_h, clamp_fraction=False)
    c0, c1, fx = linear_taps(width, out_w, clamp_fraction=True)
    rows, cols = (r0 + top, r1 + top, fy), (c0 + left, c1 + left, fx)
    if image.dtype == jnp.uint8:
        return _bilinear_uint8(image, rows, cols)
    return _bilinear_float(image, rows, cols).astype(image.dtype)


@op_check(CropResizeOp)
def _check_crop_resize(op: CropResizeOp) -> list[tuple[str, tuple[int, ...]]]:
    """The kernel takes ui8 (fixed point) and f32 images; its intermediates are the
    gathered rows and their horizontally resized int32 / float sums."""
    element = element_of(op.image)
    if element not in (UI8, f32):
        raise UnsupportedOpError(f"{op.name} takes ui8 or f32 images, not {element}")
    n, _, w, c = shape_of(op.image)
    out_h, out_w = op.out_size()
    return [("gathered rows", (n, out_h, w, c)), ("resized rows", (n, out_h, out_w, c))]


@kernel(CropResizeOp)
def crop_resize_kernel(
    op: CropResizeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """`crop_resize` with the op's properties and crop operands."""
    return [crop_resize(args[0], list(args[1:]), op.out_size(), op.props()["mode"])]
