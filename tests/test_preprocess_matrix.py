"""Issue acceptance for `insert-preprocess`, the whole matrix: every image type that
OpenCV can check (nv12, nv21, yuv420 in limited-range BT.601; rgb, bgra, gray,
rgb888p, rgb888p3), with no resize, with `size`, with `crop` and with both, into an
NHWC and an NCHW tensor. The model is the identity on a uint8 tensor, so its output is
the preprocessed image itself; the oracle is OpenCV's colour conversion of the same
random planes (`cvtColor`), the same crop rectangle and `resize` with `INTER_LINEAR`.
Every pixel must be within 1 and at least 99.9% of them exact."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from xdsl.passes import PassPipeline

import synapc
from synapc.context import make_context
from synapc.mlir_io import parse_module
from synapc.model import Model
from synapc.passes.registry import PASSES
from synapc.weights import WeightStore

TENSOR = (12, 18)  # H, W of the model's input
FRAME = (30, 44)  # H, W of an incoming frame that `size` resizes from
CROP = (23, 17, 5, 7)  # width, height, left, top, inside both frame sizes
TYPES = ("nv12", "nv21", "yuv420", "rgb", "bgra", "gray", "rgb888p", "rgb888p3")
GEOMETRIES = ("plain", "size", "crop", "size+crop")


def _identity(channels: int, layout: str) -> str:
    """The identity on a uint8 image tensor named "image" in `layout`."""
    h, w = TENSOR
    dims = f"1x{channels}x{h}x{w}" if layout == "nchw" else f"1x{h}x{w}x{channels}"
    return (
        f'func.func @main(%x: tensor<{dims}xui8> {{synap.name = "image", '
        f'synap.layout = "{layout}"}}) -> (tensor<{dims}xui8>) {{\n'
        f"  func.return %x : tensor<{dims}xui8>\n}}\n"
    )


def _preprocessed(kind: str, geometry: str, layout: str) -> synapc.Executable:
    weights = WeightStore()
    module = parse_module(_identity(1 if kind == "gray" else 3, layout), weights)
    options = [f'type="{kind}"']
    if "size" in geometry:
        options.append(f"size={FRAME[0]},{FRAME[1]}")
    if "crop" in geometry:
        options.append("crop=true")
    spec = f"insert-preprocess{{{' '.join(options)}}}"
    PassPipeline.parse_spec(PASSES, spec).apply(make_context(weights), module)
    module.verify()
    return synapc.compile(Model.from_module(module, weights))


def _opencv_rgb(kind: str, planes: list[np.ndarray]) -> np.ndarray:
    """OpenCV's RGB (gray: luma) image of one frame's planes."""
    if kind in ("nv12", "nv21"):
        y, chroma = planes
        frame = np.concatenate([y[0, :, :, 0], chroma[0].reshape(chroma.shape[1], -1)])
        code = cv2.COLOR_YUV2RGB_NV12 if kind == "nv12" else cv2.COLOR_YUV2RGB_NV21
        return cv2.cvtColor(frame, code)
    if kind == "yuv420":
        y, u, v = planes
        # I420 as OpenCV takes it: the three planes back to back, (H * 3/2) x W
        frame = np.concatenate([p.ravel() for p in (y, u, v)]).reshape(-1, y.shape[2])
        return cv2.cvtColor(frame, cv2.COLOR_YUV2RGB_I420)
    if kind == "bgra":
        return cv2.cvtColor(planes[0][0], cv2.COLOR_BGRA2RGB)
    if kind == "rgb888p":
        return np.ascontiguousarray(planes[0][0].transpose(1, 2, 0))
    if kind == "rgb888p3":
        return np.concatenate([p[0] for p in planes], axis=-1)
    return planes[0][0]  # rgb, gray


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("kind", TYPES)
def test_preprocessed_image_matches_opencv(kind: str, geometry: str, layout: str) -> None:
    exe = _preprocessed(kind, geometry, layout)
    planes_in = [i for i in exe.inputs if not i.name.startswith("image_crop_")]
    rng = np.random.default_rng(hash((kind, geometry, layout)) % 2**32)
    planes = [rng.integers(0, 256, i.shape, dtype=np.uint8) for i in planes_in]
    crop = [np.int32(v) for v in CROP] if "crop" in geometry else []
    got = np.asarray(exe.run([*planes, *crop])[0])[0]
    if layout == "nchw":
        got = got.transpose(1, 2, 0)

    want = _opencv_rgb(kind, planes)
    if crop:
        w, h, left, top = CROP
        want = want[top : top + h, left : left + w]
    if want.shape[:2] != TENSOR:
        want = cv2.resize(want, TENSOR[::-1], interpolation=cv2.INTER_LINEAR)
    want = want.reshape(got.shape)
    diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
    assert diff.max() <= 1, f"max difference {diff.max()}"
    assert np.mean(diff == 0) >= 0.999, f"{np.mean(diff == 0):.4%} exact"
