"""Kernel of `dialects/synap/resize.py`. Source indices and weights depend only on static
shapes, so they are computed once on the host the way TFLite's reference kernels compute
them, and the kernel is a gather plus a weighted sum.

Quantized resizing works on stored integers with the input's parameters (the result must
be quantized alike). Nearest neighbour gathers them. Bilinear follows TFLite's reference
kernels: int8 and int16 use ResizeBilinearInteger (10-bit fixed-point coordinates and
weights, a 20-bit product rounded half away from zero); uint8 uses the float kernel,
float32 terms summed left to right, plus 0.5, truncated (emulated exactly, see
`ops/conversion.py`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects.builtin import IntegerType

from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    op_check,
    takes_booleans,
)
from synapc.backends.jax.ops.quantized import f32_add, f32_mul, x64
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import resize
from synapc.dialects.synap.attributes import CoordinateMode, NearestRounding, ResizeMode
from synapc.dialects.synap.base import element_of, shape_of


def _scale(size_in: int, size_out: int, mode: CoordinateMode) -> np.float32:
    if mode == CoordinateMode.ALIGN_CORNERS and size_out > 1:
        return np.float32(size_in - 1) / np.float32(size_out - 1)
    return np.float32(size_in) / np.float32(size_out)


def source_coordinates(size_in: int, size_out: int, mode: CoordinateMode) -> np.ndarray:
    """Input coordinate (float32) of each output index along one axis."""
    out = np.arange(size_out, dtype=np.float32)
    scale = _scale(size_in, size_out, mode)
    if mode in (CoordinateMode.HALF_PIXEL, CoordinateMode.PYTORCH_HALF_PIXEL):
        coords = (out + np.float32(0.5)) * scale - np.float32(0.5)
        if mode == CoordinateMode.PYTORCH_HALF_PIXEL and size_out == 1:
            coords[:] = 0
        return coords
    return out * scale


def nearest_indices(
    size_in: int, size_out: int, mode: CoordinateMode, rounding: NearestRounding
) -> np.ndarray:
    """Source index of each output index along one axis, clamped into the input."""
    out = np.arange(size_out, dtype=np.float32)
    scale = _scale(size_in, size_out, mode)
    if mode == CoordinateMode.HALF_PIXEL and rounding == NearestRounding.ROUND_PREFER_CEIL:
        index = np.floor((out + np.float32(0.5)) * scale)  # TFLite's exact expression
    else:
        coords = source_coordinates(size_in, size_out, mode)
        index = {
            NearestRounding.FLOOR: np.floor(coords),
            NearestRounding.CEIL: np.ceil(coords),
            NearestRounding.ROUND_PREFER_CEIL: np.floor(coords + np.float32(0.5)),
            NearestRounding.ROUND_PREFER_FLOOR: np.ceil(coords - np.float32(0.5)),
        }[rounding]
    return np.clip(index, 0, size_in - 1).astype(np.int32)


def bilinear_taps(
    size_in: int, size_out: int, mode: CoordinateMode
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low index, high index, weight of the high tap) per output index along one axis."""
    coords = source_coordinates(size_in, size_out, mode)
    low = np.maximum(np.floor(coords), 0)
    high = np.minimum(np.ceil(coords), size_in - 1)
    weight = (coords - low).astype(np.float32)
    return low.astype(np.int32), high.astype(np.int32), weight


_TFLITE_COORDINATES = (
    CoordinateMode.ASYMMETRIC,
    CoordinateMode.ALIGN_CORNERS,
    CoordinateMode.HALF_PIXEL,
)


def _c_div(a: np.ndarray, b: int) -> np.ndarray:
    """C integer division (truncates toward zero) by a positive `b`."""
    return np.sign(a) * (np.abs(a) // b)


def integer_bilinear_taps(
    size_in: int, size_out: int, mode: CoordinateMode
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """TFLite's ComputeInterpolationValuesInteger along one axis: (low index, high index,
    weight of the low tap, weight of the high tap), weights in units of 2**-10."""
    if mode not in _TFLITE_COORDINATES:
        raise UnsupportedOpError(f"quantized bilinear resize with {mode} coordinates")
    if mode == CoordinateMode.ALIGN_CORNERS and size_out > 1:
        scale_10 = ((1 << 10) * (size_in - 1) + (size_out - 1) // 2) // (size_out - 1)
    else:
        scale_10 = ((1 << 10) * size_in + size_out // 2) // size_out
    scaled = np.arange(size_out, dtype=np.int64) * scale_10
    if mode == CoordinateMode.HALF_PIXEL:
        scaled = scaled + scale_10 // 2 - (1 << 9)
    low = np.maximum(_c_div(scaled, 1 << 10), 0)
    high = np.minimum(_c_div(scaled + (1 << 10) - 1, 1 << 10), size_in - 1)
    weight_high = scaled - (1 << 10) * low
    return low, high, (1 << 10) - weight_high, weight_high


def _bilinear_integer(
    x: jax.Array, h_out: int, w_out: int, mode: CoordinateMode
) -> jax.Array:
    """TFLite's ResizeBilinearInteger (int8, int16) in its double-rounding build."""
    _, h_in, w_in, _ = x.shape
    y0, y1, wy0, wy1 = integer_bilinear_taps(h_in, h_out, mode)
    x0, x1, wx0, wx1 = integer_bilinear_taps(w_in, w_out, mode)
    wy0, wy1 = (w[None, :, None, None] for w in (wy0, wy1))
    wx0, wx1 = (w[None, None, :, None] for w in (wx0, wx1))
    with x64():
        v = x.astype(jnp.int64)
        top, bottom = v[:, y0], v[:, y1]
        acc = (
            top[:, :, x0] * (wy0 * wx0)
            + bottom[:, :, x0] * (wy1 * wx0)
            + top[:, :, x1] * (wy0 * wx1)
            + bottom[:, :, x1] * (wy1 * wx1)
        )
        acc = acc + jnp.where(acc > 0, 1 << 19, -(1 << 19))
        y = (jnp.sign(acc) * (jnp.abs(acc) >> 20)).astype(jnp.int32)
    return y.astype(x.dtype)


def _bilinear_uint8(
    x: jax.Array, h_out: int, w_out: int, mode: CoordinateMode
) -> jax.Array:
    """TFLite's float ResizeBilinear on uint8: ``T(v00 * (1 - dy) * (1 - dx) +
    v10 * dy * (1 - dx) + v01 * (1 - dy) * dx + v11 * dy * dx + 0.5f)`` in float32."""
    _, h_in, w_in, _ = x.shape
    y0, y1, dy = bilinear_taps(h_in, h_out, mode)
    x0, x1, dx = bilinear_taps(w_in, w_out, mode)
    one = np.float32(1)
    ay, ax = (one - dy)[None, :, None, None], (one - dx)[None, None, :, None]
    dy, dx = dy[None, :, None, None], dx[None, None, :, None]
    with x64():
        v = x.astype(jnp.float64)
        top, bottom = v[:, y0], v[:, y1]
        total = f32_mul(f32_mul(top[:, :, x0], ay), ax)
        total = f32_add(total, f32_mul(f32_mul(bottom[:, :, x0], dy), ax))
        total = f32_add(total, f32_mul(f32_mul(top[:, :, x1], ay), dx))
        total = f32_add(total, f32_mul(f32_mul(bottom[:, :, x1], dy), dx))
        total = f32_add(total, 0.5)
        y = jnp.clip(jnp.trunc(total), 0, 255).astype(jnp.int32)
    return y.astype(jnp.uint8)


takes_booleans(resize.ResizeOp)  # nearest neighbour moves values (bilinear is checked)


@op_check(resize.ResizeOp)
def _check_resize(op: resize.ResizeOp) -> list[tuple[str, tuple[int, ...]]]:
    """Resizing maps every output pixel to input pixels: neither the input's nor the
    result's height and width may be 0."""
    before, after = shape_of(op.input), shape_of(op.output)
    if min(before[1], before[2], after[1], after[2]) < 1:
        raise UnsupportedOpError(
            f"cannot resize {list(before)} to {list(after)}: heights and widths must be "
            "at least 1"
        )
    if op.props()["mode"] != ResizeMode.NEAREST and isinstance(
        element_of(op.input), IntegerType
    ):
        raise UnsupportedOpError(
            f"bilinear resizing interpolates: its input must be float or quantized, "
            f"not {element_of(op.input)}"
        )
    return []


@kernel(resize.ResizeOp)
def resize_kernel(
    op: resize.ResizeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Nearest or bilinear resize of H and W."""
    p = op.props()
    x = args[0]
    (_, h_in, w_in, _), (_, h_out, w_out, _) = x.shape, shape_of(op.output)
    quantized = isinstance(element_of(op.output), UniformQuantizedType)
    if quantized and element_of(op.input) != element_of(op.output):
        raise UnsupportedOpError(
            "quantized resize works on stored integers: its input and result must be "
            "quantized alike"
        )
    if p["mode"] == ResizeMode.NEAREST:
        rows = nearest_indices(h_in, h_out, p["coordinate_mode"], p["nearest_rounding"])
        cols = nearest_indices(w_in, w_out, p["coordinate_mode"], p["nearest_rounding"])
        return [x[:, rows][:, :, cols]]
    if quantized:
        bilinear = _bilinear_uint8 if x.dtype == jnp.uint8 else _bilinear_integer
        return [bilinear(x, h_out, w_out, p["coordinate_mode"])]
    y0, y1, wy = bilinear_taps(h_in, h_out, p["coordinate_mode"])
    x0, x1, wx = bilinear_taps(w_in, w_out, p["coordinate_mode"])
    wy = jnp.asarray(wy, x.dtype)[None, :, None, None]
    wx = jnp.asarray(wx, x.dtype)[None, None, :, None]
    top = x[:, y0]
    bottom = x[:, y1]
    one = jnp.ones((), x.dtype)
    return [
        top[:, :, x0] * (one - wy) * (one - wx)
        + bottom[:, :, x0] * wy * (one - wx)
        + top[:, :, x1] * (one - wy) * wx
        + bottom[:, :, x1] * wy * wx
    ]
