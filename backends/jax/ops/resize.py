"""Kernel of `dialects/synap/resize.py`. Source indices and weights depend only on static
shapes, so they are computed once on the host in float32, the way TFLite's reference
kernels compute them, and the kernel is a gather plus a weighted sum."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from synapc.backends.jax.lowering import LoweringContext, kernel
from synapc.backends.jax.ops.common import float_only
from synapc.dialects.synap import resize
from synapc.dialects.synap.attributes import CoordinateMode, NearestRounding, ResizeMode
from synapc.dialects.synap.base import shape_of


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


@kernel(resize.ResizeOp)
def resize_kernel(
    op: resize.ResizeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Nearest or bilinear resize of H and W."""
    float_only(op)
    p = op.props()
    x = args[0]
    (_, h_in, w_in, _), (_, h_out, w_out, _) = x.shape, shape_of(op.output)
    if p["mode"] == ResizeMode.NEAREST:
        rows = nearest_indices(h_in, h_out, p["coordinate_mode"], p["nearest_rounding"])
        cols = nearest_indices(w_in, w_out, p["coordinate_mode"], p["nearest_rounding"])
        return [x[:, rows][:, :, cols]]
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
