"""Kernel of `dialects/synap/resize.py`. Source indices and weights depend only on static
shapes, so they are computed once on the host the way TFLite's reference kernels compute
them, and the kernel is a gather plus a weighted sum.

Quantized resizing works on stored integers with the input's parameters (the result must
be quantized alike). Nearest neighbour gathers them. Bilinear follows TFLite's reference
kernels: int8 and int16 use ResizeBilinearInteger (10-bit fixed-point coordinates and
weights, a 20-bit product rounded half away from zero); uint8 uses the float kernel,
float32 terms summed left to right, plus 0.5, truncated (emulated exactly, see
`ops/conversion.py`).

ONNX's further parameters (cubic interpolation, antialiasing, a given scale that does not
give a whole output size, half_pixel_symmetric and tf_crop_and_resize coordinates,
`exclude_outside` in nearest mode) take the tap path: `ops/resize_taps.py` computes the
taps and weights of each axis on the host as ONNX defines them, and the kernel gathers
and sums them along H, then W. Nearest neighbour on that path still copies whole pixels
(any element type); interpolation there takes float tensors only.
"""

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
from synapc.backends.jax.ops.common import widen
from synapc.backends.jax.ops.quantized import f32_add, f32_mul, x64
from synapc.backends.jax.ops.resize_taps import (
    AxisResize,
    Taps,
    resize_taps,
    tap_count,
)
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import resize
from synapc.dialects.synap.attributes import CoordinateMode, NearestRounding, ResizeMode
from synapc.dialects.synap.base import element_of, is_float, shape_of


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


_TFLITE_PATH_COORDINATES = (*_TFLITE_COORDINATES, CoordinateMode.PYTORCH_HALF_PIXEL)


def takes_taps(op: resize.ResizeOp) -> bool:
    """Whether the op needs the tap path: an ONNX parameter the TFLite-exact nearest and
    bilinear kernels do not have is in play."""
    p = op.props()
    return (
        p["mode"] == ResizeMode.CUBIC
        or p["coordinate_mode"] not in _TFLITE_PATH_COORDINATES
        or op.scales is not None
        or p["antialias"]
        or (p["exclude_outside"] and p["mode"] == ResizeMode.NEAREST)
    )


def axis_resizes(op: resize.ResizeOp) -> tuple[AxisResize, AxisResize]:
    """The resize of H and of W the op's shapes and parameters describe."""
    p = op.props()
    scales, roi = op.scale_values(), op.roi_values()
    if roi is None and p["coordinate_mode"] == CoordinateMode.TF_CROP_AND_RESIZE:
        roi = (0.0, 0.0, 1.0, 1.0)  # the whole input
    (_, h_in, w_in, _), (_, h_out, w_out, _) = shape_of(op.input), shape_of(op.output)

    def axis(i: int, size_in: int, size_out: int) -> AxisResize:
        return AxisResize(
            size_in=size_in,
            size_out=size_out,
            scale=None if scales is None else scales[i],
            roi=None if roi is None else (roi[i], roi[i + 2]),
            mode=p["mode"],
            coordinate_mode=p["coordinate_mode"],
            nearest_rounding=p["nearest_rounding"],
            cubic_coeff_a=p["cubic_coeff_a"],
            exclude_outside=p["exclude_outside"],
            antialias=p["antialias"],
        )

    return axis(0, h_in, h_out), axis(1, w_in, w_out)


def _is_gather(taps: Taps) -> bool:
    """Whether every output index copies one input index (nearest neighbour taps with
    no row emptied by `exclude_outside`)."""
    return bool(np.all(taps.weights.max(axis=1) == 1))


def _tap_features(op: resize.ResizeOp) -> str:
    """The tap-path parameters of the op in words, for refusals."""
    p = op.props()
    features = ["cubic interpolation"] if p["mode"] == ResizeMode.CUBIC else []
    if p["coordinate_mode"] not in _TFLITE_PATH_COORDINATES:
        features.append(f"{p['coordinate_mode']} coordinates")
    if op.scales is not None:
        features.append("a given scale that does not give a whole output size")
    if p["antialias"]:
        features.append("antialias")
    if p["exclude_outside"] and p["mode"] == ResizeMode.NEAREST:
        features.append("exclude_outside")
    return ", ".join(features)


def _check_taps(op: resize.ResizeOp) -> list[tuple[str, tuple[int, ...]]]:
    """Refuse what the tap path cannot run; the gathered taps it builds (counted
    before any is computed: an antialiased window spans 4 / scale input pixels)."""
    n, _, w_in, c = shape_of(op.input)
    axis_h, axis_w = axis_resizes(op)
    element = element_of(op.input)
    mode = op.props()["mode"]
    if not is_float(element):
        kind = "quantized" if isinstance(element, UniformQuantizedType) else str(element)
        if mode != ResizeMode.NEAREST:
            raise UnsupportedOpError(
                f"{kind} {mode} resizing with {_tap_features(op)} is not supported: it "
                "interpolates float tensors only"
            )
        taps_h, taps_w = resize_taps(axis_h), resize_taps(axis_w)  # two taps per pixel
        if not (_is_gather(taps_h) and _is_gather(taps_w)):
            raise UnsupportedOpError(
                f"{kind} nearest resizing with exclude_outside gives pixels whose only "
                "tap lies outside the input the value 0: float tensors only"
            )
        if taps_h.outside.any() or taps_w.outside.any():
            raise UnsupportedOpError(
                f"{kind} tf_crop_and_resize maps pixels outside the input (they take "
                "the extrapolation value): float tensors only"
            )
        return []
    h_out, w_out = axis_h.size_out, axis_w.size_out
    return [
        ("gathered rows", (n, h_out, tap_count(axis_h), w_in, c)),
        ("gathered columns", (n, h_out, w_out, tap_count(axis_w), c)),
    ]


def _extrapolate(y: jax.Array, taps: Taps, axis: int, extrapolation: float) -> jax.Array:
    """`y` with the pixels mapped outside the input along `axis` set to `extrapolation`."""
    if not taps.outside.any():
        return y
    shape = [1] * y.ndim
    shape[axis] = taps.outside.size
    mask = jnp.asarray(taps.outside.reshape(shape))
    return jnp.where(mask, jnp.asarray(extrapolation, y.dtype), y)


def _apply_taps(x: jax.Array, taps: Taps, axis: int, extrapolation: float) -> jax.Array:
    """Sum along `axis` of the gathered taps, weighted; outside pixels extrapolated."""
    gathered = jnp.take(x, jnp.asarray(taps.indices, jnp.int32), axis=axis)
    shape = [1] * gathered.ndim
    shape[axis], shape[axis + 1] = taps.weights.shape
    weights = jnp.asarray(taps.weights.reshape(shape), x.dtype)
    y = jnp.sum(gathered * weights, axis=axis + 1)
    return _extrapolate(y, taps, axis, extrapolation)


def _resize_by_taps(op: resize.ResizeOp, x: jax.Array) -> jax.Array:
    """Resize along H, then W, by ONNX's taps (see `ops/resize_taps.py`)."""
    axis_h, axis_w = axis_resizes(op)
    taps_h, taps_w = resize_taps(axis_h), resize_taps(axis_w)
    extrapolation = op.props()["extrapolation_value"]
    if _is_gather(taps_h) and _is_gather(taps_w):
        rows = taps_h.indices[np.arange(axis_h.size_out), taps_h.weights.argmax(axis=1)]
        cols = taps_w.indices[np.arange(axis_w.size_out), taps_w.weights.argmax(axis=1)]
        y = _extrapolate(x[:, rows], taps_h, 1, extrapolation)
        return _extrapolate(y[:, :, cols], taps_w, 2, extrapolation)
    y = _apply_taps(widen(x), taps_h, 1, extrapolation)
    return _apply_taps(y, taps_w, 2, extrapolation).astype(x.dtype)


takes_booleans(resize.ResizeOp)  # nearest neighbour moves values (interpolation is checked)


@op_check(resize.ResizeOp)
def _check_resize(op: resize.ResizeOp) -> list[tuple[str, tuple[int, ...]]]:
    """Resizing maps every output pixel to input pixels: neither the input's nor the
    result's height and width may be 0. Interpolation takes float or quantized tensors;
    the tap path's limits are `_check_taps`'."""
    before, after = shape_of(op.input), shape_of(op.output)
    if min(before[1], before[2], after[1], after[2]) < 1:
        raise UnsupportedOpError(
            f"cannot resize {list(before)} to {list(after)}: heights and widths must be "
            "at least 1"
        )
    mode = op.props()["mode"]
    if mode != ResizeMode.NEAREST and isinstance(element_of(op.input), IntegerType):
        raise UnsupportedOpError(
            f"{mode} resizing interpolates: its input must be float or quantized, "
            f"not {element_of(op.input)}"
        )
    return _check_taps(op) if takes_taps(op) else []


@kernel(resize.ResizeOp)
def resize_kernel(
    op: resize.ResizeOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Nearest or bilinear resize of H and W as TFLite computes it, or the tap path
    for ONNX's further parameters."""
    p = op.props()
    x = args[0]
    (_, h_in, w_in, _), (_, h_out, w_out, _) = x.shape, shape_of(op.output)
    quantized = isinstance(element_of(op.output), UniformQuantizedType)
    if quantized and element_of(op.input) != element_of(op.output):
        raise UnsupportedOpError(
            "quantized resize works on stored integers: its input and result must be "
            "quantized alike"
        )
    if takes_taps(op):
        return [_resize_by_taps(op, x)]
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
