"""`insert-preprocess`: a model with preprocessing on the raw planes of a frame computes
what the unmodified model computes on OpenCV's conversion of that frame (cv2.cvtColor +
cv2.resize INTER_LINEAR), and unsupported combinations are refused naming the input and
the field."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from xdsl.passes import PassPipeline

import synapc
from synapc.context import make_context
from synapc.errors import SynapcError
from synapc.mlir_io import parse_module
from synapc.model import Model
from synapc.passes.registry import PASSES
from synapc.runtime import images
from synapc.weights import WeightStore

MEANS = (123.675, 116.28, 103.53)
SCALE = 58.4
#: The quantized tensor's type: scale and zero point that cover the normalized range.
QUANT = "!quant.uniform<u8:f32, 0.0173:119>"
FRAME = (48, 64)  # H, W of the incoming frame
TENSOR = (16, 20)  # H, W of the model's input


def _model_text(layout: str, quantized: bool) -> str:
    """A tiny model: the input through one op to a float output."""
    h, w = TENSOR
    dims = f"1x3x{h}x{w}" if layout == "nchw" else f"1x{h}x{w}x3"
    element = QUANT if quantized else "f32"
    body = (
        f"%0 = synap.dequantize %x : (tensor<{dims}x{element}>) -> tensor<{dims}xf32>"
        if quantized
        else f"%0 = synap.abs %x : (tensor<{dims}xf32>) -> tensor<{dims}xf32>"
    )
    return (
        f'func.func @main(%x: tensor<{dims}x{element}> {{synap.name = "image", '
        f'synap.layout = "{layout}"}}) -> (tensor<{dims}xf32> {{synap.name = "out"}}) {{\n'
        f"  {body}\n  func.return %0 : tensor<{dims}xf32>\n}}\n"
    )


def _model(text: str, spec: str | None = None) -> Model:
    weights = WeightStore()
    module = parse_module(text, weights)
    if spec is not None:
        PassPipeline.parse_spec(PASSES, spec).apply(make_context(weights), module)
        module.verify()
    return Model.from_module(module, weights)


def _means_option() -> str:
    return "means=" + ",".join(map(str, MEANS)) + f" scale={SCALE}"


def _opencv(y: np.ndarray, uv: np.ndarray, crop: tuple[int, int, int, int] | None):
    """OpenCV's RGB of an NV12 frame, cropped (width, height, left, top) and resized."""
    frame = np.concatenate([y[0, :, :, 0], uv[0].reshape(uv.shape[1], -1)], axis=0)
    rgb = cv2.cvtColor(frame, cv2.COLOR_YUV2RGB_NV12)
    if crop is not None:
        w, h, left, top = crop
        rgb = rgb[top : top + h, left : left + w]
    size = (TENSOR[1], TENSOR[0])
    return cv2.resize(rgb, size, interpolation=cv2.INTER_LINEAR)


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
@pytest.mark.parametrize("quantized", [False, True], ids=["float", "quantized"])
@pytest.mark.parametrize("crop", [None, (41, 30, 9, 13)], ids=["whole", "crop"])
def test_nv12_matches_opencv(layout: str, quantized: bool, crop: tuple | None) -> None:
    """NV12 planes through the preprocessed model == the model on OpenCV's pixels."""
    text = _model_text(layout, quantized)
    size = f"size={FRAME[0]},{FRAME[1]}"
    flag = " crop=true" if crop else ""
    spec = f'insert-preprocess{{input="image" type="nv12" {size}{flag} {_means_option()}}}'
    pre = synapc.compile(_model(text, spec))
    names = [i.name for i in pre.inputs]
    expected_names = ["image_y", "image_uv"]
    expected_names += [
        f"image_crop_{f}" for f in ("width", "height", "left", "top")
    ] * bool(crop)
    assert names == expected_names
    rng = np.random.default_rng(7)
    y = rng.integers(0, 256, (1, *FRAME, 1), dtype=np.uint8)
    uv = rng.integers(0, 256, (1, FRAME[0] // 2, FRAME[1] // 2, 2), dtype=np.uint8)
    feed = [y, uv] + ([np.int32(v) for v in crop] if crop else [])
    got = pre.run(feed)[0]

    rgb = _opencv(y, uv, crop).astype(np.float32)
    normalized = (rgb - np.float32(MEANS)) / np.float32(SCALE)
    if layout == "nchw":
        normalized = normalized.transpose(2, 0, 1)
    normalized = normalized[np.newaxis]
    original = synapc.compile(_model(text))
    if quantized:
        q_scale, zero = 0.0173, 119
        stored = np.clip(np.round(normalized / q_scale) + zero, 0, 255).astype(np.uint8)
        want = original.run([stored])[0]
        assert np.max(np.abs(got - want)) <= q_scale * 1.001
    else:
        want = original.run([normalized])[0]
        # the target computes floats in float16: a few float16 steps apart
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=4e-3)


@pytest.mark.parametrize(
    "kind", ["rgb", "bgra", "rgb888p", "rgb888p3", "gray", "yuv444", "yuv420", "nv21"]
)
def test_other_types_match_reference(kind: str) -> None:
    """Every image type, resized, gives the pixels of OpenCV's resize of its RGB (or
    the colour conversion of the planes the runtime makes from it)."""
    h, w = TENSOR
    channels = 1 if kind == "gray" else 3
    text = (
        f'func.func @main(%x: tensor<1x{h}x{w}x{channels}xui8> {{synap.name = "image"}})'
        f" -> (tensor<1x{h}x{w}x{channels}xui8>) {{\n  func.return %x : "
        f"tensor<1x{h}x{w}x{channels}xui8>\n}}\n"
    )
    bgr = kind == "rgb888p3"  # also check the channel order of a bgr input
    spec = (
        f'insert-preprocess{{type="{kind}" size={FRAME[0]},{FRAME[1]} '
        f"bgr={'true' if bgr else 'false'}}}"
    )
    exe = synapc.compile(_model(text, spec))
    rng = np.random.default_rng(3)
    rgb = rng.integers(0, 256, (1, *FRAME, 3), dtype=np.uint8)
    # chroma constant over 2x2 blocks, so every YUV type sees the same colours
    rgb = np.repeat(np.repeat(rgb[:, ::2, ::2], 2, axis=1), 2, axis=2)
    planes = images.rgb_to_planes(rgb, kind)
    got = exe.run(list(planes.values()))[0]
    if kind == "gray":
        source = planes["gray"][0]
    elif kind in ("yuv444", "yuv420", "nv21"):
        # OpenCV's I420 conversion of the 4:2:0 planes of the same image (equal to the
        # 4:4:4 planes repeated, as the chroma is constant over 2x2 blocks)
        i420 = images.rgb_to_planes(rgb, "yuv420")
        frame = np.concatenate(
            [i420["y"][0, :, :, 0], *(i420[c][0].reshape(-1, FRAME[1]) for c in "uv")]
        )
        source = cv2.cvtColor(frame, cv2.COLOR_YUV2RGB_I420)
    else:
        source = rgb[0]
    want = cv2.resize(source, (w, h), interpolation=cv2.INTER_LINEAR)
    want = want.reshape(h, w, channels)
    if bgr:
        want = want[..., ::-1]
    diff = np.abs(got[0].astype(int) - want.astype(int))
    assert diff.max() <= 1 and np.mean(diff == 0) >= 0.999


def test_fused_chain_reads_only_needed_pixels_and_matches() -> None:
    """`optimize` fuses yuv_to_rgb + crop_resize; the fused op gives the same pixels."""
    text = _model_text("nhwc", False)
    spec = f'insert-preprocess{{input="image" type="nv12" size={FRAME[0]},{FRAME[1]}}}'
    model = _model(text, spec)
    optimized = synapc.optimize(model)
    names = [o.name for o in optimized.main.body.block.ops]
    assert "synap.yuv_to_rgb_resize" in names and "synap.yuv_to_rgb" not in names


@pytest.mark.parametrize(
    ("text_channels", "options", "field"),
    [
        (3, 'type="gray"', "type"),
        (1, 'type="nv12"', "type"),
        (3, 'type="nv12" size=47,64', "size"),
        (3, 'type="float32" size=48,64', "size"),
        (3, 'type="float32" crop=true', "crop"),
        (3, 'type="yuv422"', "type"),
        (3, 'type="nv12" resize="cubic"', "resize"),
    ],
)
def test_refusals_name_input_and_field(
    text_channels: int, options: str, field: str
) -> None:
    """Unsupported combinations: a SynapcError naming the input and the field."""
    h, w = TENSOR
    dims = f"1x{h}x{w}x{text_channels}"
    text = (
        f'func.func @main(%x: tensor<{dims}xf32> {{synap.name = "image"}}) -> '
        f"(tensor<{dims}xf32>) {{\n  func.return %x : tensor<{dims}xf32>\n}}\n"
    )
    with pytest.raises(SynapcError, match=f"input 'image': {field}:"):
        _model(text, f"insert-preprocess{{{options}}}")


@pytest.mark.parametrize("fmt", ["yuv444", "yuv420", "nv12", "nv21"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_fused_kernel_equals_the_pair(fmt: str, mode: str) -> None:
    """synap.yuv_to_rgb_resize's kernel gives the pixels of yuv_to_rgb + crop_resize,
    bit for bit, with and without crop, up and down, every colour setting."""
    import jax

    from synapc.backends.jax.ops.preprocess import crop_resize, yuv_to_rgb
    from synapc.backends.jax.ops.preprocess_fused import yuv_to_rgb_resize
    from synapc.dialects.synap.preprocess import (
        ColorMatrix,
        ColorRange,
        CropResizeMode,
        YuvFormat,
    )

    rng = np.random.default_rng(11)
    f = YuvFormat(fmt)
    h, w = 30, 44
    ch, cw = (h // 2, w // 2) if f.subsampled else (h, w)
    planes = [rng.integers(0, 256, (2, h, w, 1), dtype=np.uint8)]
    if f.plane_count == 2:
        planes.append(rng.integers(0, 256, (2, ch, cw, 2), dtype=np.uint8))
    else:
        planes += [rng.integers(0, 256, (2, ch, cw, 1), dtype=np.uint8) for _ in "uv"]
    resize = CropResizeMode(mode)
    for color in [
        (ColorRange.LIMITED, ColorMatrix.BT601, False),
        (ColorRange.FULL, ColorMatrix.BT709, True),
    ]:
        for crop in ([], [np.int32(v) for v in (23, 17, 5, 9)]):
            for size in [(8, 12), (41, 50)]:

                def pair(*args: np.ndarray, size=size, color=color) -> jax.Array:
                    n = f.plane_count
                    image = yuv_to_rgb(list(args[:n]), f, *color)
                    return crop_resize(image, list(args[n:]), size, resize)

                def fused(*args: np.ndarray, size=size, color=color) -> jax.Array:
                    n = f.plane_count
                    return yuv_to_rgb_resize(
                        list(args[:n]), list(args[n:]), f, color, size, resize
                    )

                want = np.asarray(jax.jit(pair)(*planes, *crop))
                got = np.asarray(jax.jit(fused)(*planes, *crop))
                np.testing.assert_array_equal(got, want)
