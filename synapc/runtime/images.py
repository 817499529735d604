"""Images to and from the raw planes of the ten preprocessing input types.

A model converted with a metafile `preprocess` takes, in place of an image input, the
planes of its `type` (../shared/METAFILE.md, "preprocess"): this module makes those
planes from an RGB image (for `Tensor.assign` and `synapc image-to-raw`) and an RGB image
from them (`synapc image-from-raw`). It lives in the runtime because `Tensor.assign` uses
it and the runtime imports nothing but numpy, JAX, Pillow and the package format; the
command line imports it from here.

Planes are uint8 arrays without the batch axis (any leading axes are kept: a batch works
too), in the order of `ROLES`:

| type | planes (role: shape) |
| yuv444 | y: HxWx1, u: HxWx1, v: HxWx1 |
| yuv420 | y: HxWx1, u: (H/2)x(W/2)x1, v: (H/2)x(W/2)x1 (I420) |
| nv12 | y: HxWx1, uv: (H/2)x(W/2)x2 (U, V interleaved) |
| nv21 | y: HxWx1, vu: (H/2)x(W/2)x2 (V, U interleaved) |
| gray | gray: HxWx1 |
| rgb | rgb: HxWx3 |
| bgra | bgra: HxWx4 (alpha 255) |
| rgb888p | rgb: 3xHxW (planar) |
| rgb888p3 | r: HxWx1, g: HxWx1, b: HxWx1 |
| float32 | float32: HxWx3 float32, values 0..255 (3xHxW with layout "nchw") |

Colour conversion (Kr, Kb = 0.299, 0.114 for BT.601; 0.2126, 0.0722 for BT.709):
Y' = Kr R + Kg G + Kb B, Pb = (B - Y') / (2 (1 - Kb)), Pr = (R - Y') / (2 (1 - Kr)); full
range stores Y = Y', U = 128 + Pb, V = 128 + Pr; limited range Y = 16 + 219/255 Y',
U = 128 + 224/255 Pb, V = 128 + 224/255 Pr. The 4:2:0 types average the (unrounded)
chroma of each 2x2 block of pixels. Every stored value is rounded half up
(``floor(x + 0.5)``) and clipped to [0, 255]. Back to RGB is the exact inverse matrix, with
the luma of limited range clamped at 16 first as OpenCV does (METAFILE.md), chroma
repeated over its 2x2 block (as OpenCV's NV12 / I420 conversions), rounded half up and
clipped; it agrees with the METAFILE formulas (three-digit coefficients) within 1. `gray`
is OpenCV's ``COLOR_RGB2GRAY`` (BT.601 weights in 15-bit fixed point; equal on all 2^24
colours), back to RGB by repeating it. A round trip RGB -> planes -> RGB of an image whose
colour is constant over 2x2 blocks (any image for yuv444) is within 2 of the original for
limited range and within 1 for full range (the 8-bit rounding of Y, U and V), exact for
rgb, bgra, rgb888p, rgb888p3 and float32, and exact for gray images (R = G = B) with `gray`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from synapc.errors import SynapcError
from synapc.preprocess_types import COLOR_MATRICES, COLOR_RANGES, ROLES, SUBSAMPLED, TYPES

#: (Kr, Kb) of each colour matrix.
_KR_KB = {"bt601": (0.299, 0.114), "bt709": (0.2126, 0.0722)}
#: Channels of each plane role laid out as HxWxC (rgb888p's is 3xHxW; float32 is RGB).
_CHANNELS = {"y": 1, "u": 1, "v": 1, "uv": 2, "vu": 2, "gray": 1, "rgb": 3, "bgra": 4}
_CHANNELS.update({"r": 1, "g": 1, "b": 1, "float32": 3})


def _choice(value: str, choices: tuple[str, ...], what: str) -> str:
    if value not in choices:
        raise SynapcError(
            f"{what} {value!r}: unknown {what.replace('_', ' ')}; expected one "
            f"of {', '.join(choices)}"
        )
    return value


def check_type(type_: str) -> str:
    """`type_` if it is a preprocessing type, else a `SynapcError` listing them."""
    return _choice(type_, TYPES, "type")


def check_color(color_range: str, color_matrix: str) -> None:
    """Refuse an unknown colour range or matrix (`SynapcError` naming it)."""
    _choice(color_range, COLOR_RANGES, "color_range")
    _choice(color_matrix, COLOR_MATRICES, "color_matrix")


def plane_names(input_name: str, type_: str) -> list[str]:
    """The model inputs that replace `input_name` for `type_` (contract18): the input's
    own name for one-plane types, ``name_<role>`` for the others."""
    roles = ROLES[check_type(type_)]
    return [input_name] if len(roles) == 1 else [f"{input_name}_{r}" for r in roles]


def plane_dtype(type_: str) -> np.dtype:
    """The element type of the planes: float32 for `float32`, uint8 otherwise."""
    return np.dtype(np.float32 if check_type(type_) == "float32" else np.uint8)


def plane_shapes(
    type_: str, height: int, width: int, layout: str = "nhwc"
) -> dict[str, tuple[int, ...]]:
    """The shape of each plane (without batch) of an image of `height` x `width`;
    odd sizes for a 4:2:0 type are a `SynapcError` saying so."""
    check_type(type_)
    if height < 1 or width < 1:
        raise SynapcError(f"type {type_}: size {height}x{width} is empty")
    if type_ in SUBSAMPLED and (height % 2 or width % 2):
        raise SynapcError(
            f"type {type_} (4:2:0) needs an even height and width, got height {height}, "
            f"width {width}"
        )
    shapes = {}
    for role in ROLES[type_]:
        sub = 2 if type_ in SUBSAMPLED and role != "y" else 1
        shape = (height // sub, width // sub, _CHANNELS[role])
        planar = type_ == "rgb888p" or (type_ == "float32" and layout == "nchw")
        shapes[role] = (shape[2], shape[0], shape[1]) if planar else shape
    return shapes


def image_size(
    type_: str, role: str, shape: tuple[int, ...], layout: str = "nhwc"
) -> tuple[int, int]:
    """The image height and width that a plane of `shape` (with or without leading
    batch axes) of `type_` belongs to."""
    planar = type_ == "rgb888p" or (type_ == "float32" and layout == "nchw")
    height, width = shape[-2:] if planar else shape[-3:-1]
    sub = 2 if type_ in SUBSAMPLED and role != "y" else 1
    return height * sub, width * sub


def _round_u8(x: np.ndarray) -> np.ndarray:
    return np.clip(np.floor(x + 0.5), 0, 255).astype(np.uint8)


def rgb_to_yuv(
    rgb: np.ndarray, color_range: str = "limited", color_matrix: str = "bt601"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unrounded Y, U, V (float64, shape (..., H, W)) of an (..., H, W, 3) RGB image."""
    check_color(color_range, color_matrix)
    kr, kb = _KR_KB[color_matrix]
    x = rgb.astype(np.float64)
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    luma = kr * r + (1.0 - kr - kb) * g + kb * b
    pb = (b - luma) / (2.0 * (1.0 - kb))
    pr = (r - luma) / (2.0 * (1.0 - kr))
    if color_range == "limited":
        return (
            16.0 + luma * (219.0 / 255.0),
            128.0 + pb * (224.0 / 255.0),
            (128.0 + pr * (224.0 / 255.0)),
        )
    return luma, 128.0 + pb, 128.0 + pr


def yuv_to_rgb(
    y: np.ndarray,
    u: np.ndarray,
    v: np.ndarray,
    color_range: str = "limited",
    color_matrix: str = "bt601",
) -> np.ndarray:
    """The uint8 (..., H, W, 3) RGB of Y, U, V planes of equal shape (..., H, W)."""
    check_color(color_range, color_matrix)
    kr, kb = _KR_KB[color_matrix]
    y, u, v = (p.astype(np.float64) for p in (y, u, v))
    if color_range == "limited":
        luma = np.maximum(y - 16.0, 0.0) * (255.0 / 219.0)
        pb, pr = (u - 128.0) * (255.0 / 224.0), (v - 128.0) * (255.0 / 224.0)
    else:
        luma, pb, pr = y, u - 128.0, v - 128.0
    r = luma + 2.0 * (1.0 - kr) * pr
    b = luma + 2.0 * (1.0 - kb) * pb
    g = (luma - kr * r - kb * b) / (1.0 - kr - kb)
    return _round_u8(np.stack([r, g, b], axis=-1))


def rgb_to_gray(rgb: np.ndarray) -> np.ndarray:
    """(..., H, W, 1) uint8 luma of an RGB image, exactly OpenCV's COLOR_RGB2GRAY."""
    x = rgb.astype(np.int32)
    gray = (x[..., 0] * 9798 + x[..., 1] * 19235 + x[..., 2] * 3735 + (1 << 14)) >> 15
    return gray.astype(np.uint8)[..., np.newaxis]


def _half(x: np.ndarray) -> np.ndarray:
    """The mean of each 2x2 block of the last two axes."""
    *lead, h, w = x.shape
    return x.reshape(*lead, h // 2, 2, w // 2, 2).mean(axis=(-3, -1))


def _double(x: np.ndarray) -> np.ndarray:
    """Each element of the last two axes repeated over a 2x2 block."""
    return np.repeat(np.repeat(x, 2, axis=-2), 2, axis=-1)


def check_rgb(rgb: np.ndarray, what: str = "image") -> np.ndarray:
    """`rgb` as an array if it is a uint8 (..., H, W, 3) image, else a `SynapcError`."""
    array = np.asarray(rgb)
    if array.dtype != np.uint8 or array.ndim < 3 or array.shape[-1] != 3:
        raise SynapcError(
            f"{what}: expected an H x W x 3 uint8 RGB array, got {array.dtype} "
            f"{list(array.shape)}"
        )
    return array


def rgb_to_planes(
    rgb: np.ndarray,
    type_: str,
    color_range: str = "limited",
    color_matrix: str = "bt601",
    layout: str = "nhwc",
) -> dict[str, np.ndarray]:
    """The planes of `type_` (role -> array, in input order) of a uint8 (..., H, W, 3)
    RGB image; `layout` matters for `float32` only. Odd sizes for 4:2:0 are refused."""
    rgb = check_rgb(rgb)
    plane_shapes(type_, rgb.shape[-3], rgb.shape[-2], layout)  # checks type and size
    check_color(color_range, color_matrix)
    if type_ in ("yuv444", *SUBSAMPLED):
        y, u, v = rgb_to_yuv(rgb, color_range, color_matrix)
        if type_ in SUBSAMPLED:
            u, v = _half(u), _half(v)
        y, u, v = (_round_u8(p)[..., np.newaxis] for p in (y, u, v))
        if type_ == "nv12":
            return {"y": y, "uv": np.concatenate([u, v], axis=-1)}
        if type_ == "nv21":
            return {"y": y, "vu": np.concatenate([v, u], axis=-1)}
        return {"y": y, "u": u, "v": v}
    if type_ == "gray":
        return {"gray": rgb_to_gray(rgb)}
    if type_ == "rgb":
        return {"rgb": rgb.copy()}
    if type_ == "bgra":
        alpha = np.full((*rgb.shape[:-1], 1), 255, np.uint8)
        return {"bgra": np.concatenate([rgb[..., ::-1], alpha], axis=-1)}
    if type_ == "rgb888p":
        return {"rgb": np.ascontiguousarray(np.moveaxis(rgb, -1, -3))}
    if type_ == "rgb888p3":
        return {c: rgb[..., i : i + 1].copy() for i, c in enumerate("rgb")}
    values = rgb.astype(np.float32)
    if layout == "nchw":
        values = np.ascontiguousarray(np.moveaxis(values, -1, -3))
    return {"float32": values}


def planes_to_rgb(
    planes: Mapping[str, np.ndarray],
    type_: str,
    color_range: str = "limited",
    color_matrix: str = "bt601",
    layout: str = "nhwc",
) -> np.ndarray:
    """The uint8 (..., H, W, 3) RGB image of the planes of `type_` (role -> array, as
    `rgb_to_planes` makes them). A missing plane or one whose shape does not fit the
    first's is a `SynapcError` naming the plane."""
    roles = ROLES[check_type(type_)]
    check_color(color_range, color_matrix)
    missing = [r for r in roles if r not in planes]
    if missing:
        raise SynapcError(f"type {type_}: plane {missing[0]} is missing")
    arrays = {r: np.asarray(planes[r]) for r in roles}
    first = arrays[roles[0]]
    if first.ndim < 3:
        raise SynapcError(f"plane {roles[0]}: shape {list(first.shape)} is not an image")
    height, width = image_size(type_, roles[0], first.shape, layout)
    expected = plane_shapes(type_, height, width, layout)
    lead = first.shape[:-3]
    dtype = plane_dtype(type_)
    for role, array in arrays.items():
        if array.shape != lead + expected[role] or array.dtype != dtype:
            raise SynapcError(
                f"plane {role}: {array.dtype} {list(array.shape)}, expected {dtype} "
                f"{list(lead + expected[role])} for a {height}x{width} (height x width) "
                f"{type_} image"
            )
    if type_ in ("yuv444", *SUBSAMPLED):
        if type_ == "nv12":
            u, v = arrays["uv"][..., 0], arrays["uv"][..., 1]
        elif type_ == "nv21":
            u, v = arrays["vu"][..., 1], arrays["vu"][..., 0]
        else:
            u, v = arrays["u"][..., 0], arrays["v"][..., 0]
        if type_ in SUBSAMPLED:
            u, v = _double(u), _double(v)
        return yuv_to_rgb(arrays["y"][..., 0], u, v, color_range, color_matrix)
    if type_ == "gray":
        return np.repeat(arrays["gray"], 3, axis=-1)
    if type_ == "rgb":
        return arrays["rgb"].copy()
    if type_ == "bgra":
        return np.ascontiguousarray(arrays["bgra"][..., 2::-1])
    if type_ == "rgb888p":
        return np.ascontiguousarray(np.moveaxis(arrays["rgb"], -3, -1))
    if type_ == "rgb888p3":
        return np.concatenate([arrays[c] for c in "rgb"], axis=-1)
    values = arrays["float32"]
    if layout == "nchw":
        values = np.moveaxis(values, -3, -1)
    return _round_u8(values.astype(np.float64))


def read_image(path: str | os.PathLike[str]) -> np.ndarray:
    """Decode an image file (anything Pillow reads) into an H x W x C uint8 array (C: 1
    gray, 2 gray + alpha, 3 RGB, 4 RGBA); palettes are expanded, other modes converted
    to RGB (or to gray / RGBA where they are gray / transparent). An unreadable image is
    a `SynapcError` saying why (callers name the file)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image.load()
            if image.mode not in ("L", "LA", "RGB", "RGBA"):
                transparent = "A" in image.mode or "transparency" in image.info
                gray = image.mode in ("1", "I", "I;16", "F")
                image = image.convert("L" if gray else "RGBA" if transparent else "RGB")
            pixels = np.asarray(image, np.uint8)
    except FileNotFoundError:
        raise SynapcError("no such file") from None
    except UnidentifiedImageError:
        raise SynapcError("not a readable image (unknown or corrupt format)") from None
    except Image.DecompressionBombError as error:
        raise SynapcError(f"image too large ({error})") from None
    except (OSError, ValueError, SyntaxError) as error:
        raise SynapcError(f"corrupt or truncated image ({error})") from None
    return pixels[:, :, np.newaxis] if pixels.ndim == 2 else pixels


def read_rgb(path: str | os.PathLike[str]) -> np.ndarray:
    """Decode an image file into an H x W x 3 uint8 RGB array (`read_image`; gray
    repeated over the three channels, alpha dropped); an unreadable file is a
    `SynapcError` naming it and saying why."""
    try:
        pixels = read_image(path)
    except SynapcError as error:
        raise SynapcError(f"{path}: {error}") from None
    if pixels.shape[2] in (1, 2):
        return np.repeat(pixels[:, :, :1], 3, axis=2)
    return np.ascontiguousarray(pixels[:, :, :3])


def write_rgb(path: str | os.PathLike[str], rgb: np.ndarray) -> None:
    """Encode an H x W x 3 uint8 RGB array into an image file of the format its suffix
    names (PNG, BMP, ...); a suffix Pillow cannot write is a `SynapcError`."""
    from PIL import Image

    try:
        Image.fromarray(np.ascontiguousarray(check_rgb(rgb))).save(path)
    except (KeyError, ValueError) as error:  # unknown suffix / format
        raise SynapcError(f"{path}: cannot write an image of this type ({error})") from None
