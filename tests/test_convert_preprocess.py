"""`synapc convert` with a metafile `preprocess` (issue 18), end to end through
`synapc.runtime.Network`: the converted model on an NV12 frame (assigned as an RGB image,
plus the crop integers) computes what the model converted without preprocessing
computes on OpenCV's conversion (cvtColor + crop + resize INTER_LINEAR) of that frame."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from synapc import convert
from synapc.convert.convert import conversion_pipeline
from synapc.runtime import Network, images

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "tiny_classifier.onnx"  # image: 1x3x64x64 float32
NORMALIZE = "means: [123.675, 116.28, 103.53]\n    scale: 58.4\n"
PREPROCESS = "preprocess: {type: nv12, size: [1080, 1920], crop: true}\n"
CROP = {"width": 1001, "height": 701, "left": 37, "top": 91}


def _metafile(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(f"inputs:\n  - {text}")
    return path


def test_nv12_crop_model_matches_opencv(tmp_path: Path) -> None:
    """Network on a preprocessed package == the plain model on OpenCV's pixels."""
    meta = _metafile(tmp_path, "pre.yaml", NORMALIZE + "    " + PREPROCESS)
    assert 'insert-preprocess{input=0 type="nv12" crop=true' in conversion_pipeline(
        MODEL, meta
    )
    pre = Network(convert(MODEL, "VS680", tmp_path / "pre", meta).package)
    plain_meta = _metafile(tmp_path, "plain.yaml", NORMALIZE)
    plain = Network(convert(MODEL, "VS680", tmp_path / "plain", plain_meta).package)

    names = [t.name for t in pre.inputs]
    assert names == [
        "image_y",
        "image_uv",
        *(f"image_crop_{f}" for f in ("width", "height", "left", "top")),
    ]
    assert pre.inputs[1].format == "nv12 plane=uv"
    assert pre.inputs[1].shape == (1, 540, 960, 2)
    assert pre.inputs[2].format == "crop field=width"
    (entry,) = json.loads(pre.package.bundle["metadata"]["preprocess"])
    assert entry["inputs"] == names and entry["size"] == [1080, 1920]

    rng = np.random.default_rng(5)
    # a smooth frame (a blurred random image) so that the classifier sees structure
    rgb = cv2.GaussianBlur(rng.integers(0, 256, (1080, 1920, 3), dtype=np.uint8), (9, 9), 3)
    pre.inputs[0].assign(rgb)  # the image: every plane
    for tensor, field in zip(pre.inputs[2:], CROP, strict=True):
        tensor.assign(CROP[field])
    got = pre.predict()[0].to_numpy()

    planes = images.rgb_to_planes(rgb, "nv12")
    frame = np.concatenate([planes["y"][:, :, 0], planes["uv"].reshape(540, 1920)])
    converted = cv2.cvtColor(frame, cv2.COLOR_YUV2RGB_NV12)
    w, h, left, top = CROP.values()
    resized = cv2.resize(
        converted[top : top + h, left : left + w], (64, 64), interpolation=cv2.INTER_LINEAR
    )
    plain.inputs[0].assign(resized.transpose(2, 0, 1)[np.newaxis])  # uint8: normalized
    want = plain.predict()[0].to_numpy()
    # both compute in float16 on VS680: a few float16 steps apart
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=2e-3)
    assert np.argmax(got) == np.argmax(want)


def test_preprocess_command_builds_the_conversion_model(tmp_path: Path, capsys) -> None:
    """`synapc preprocess` writes a package that is only the conversion: NV12 planes in,
    OpenCV's RGB pixels out (bit-exact here); bad options are one line, exit 1."""
    from synapc.cli import main

    argv = ["preprocess", "--type", "nv12", "--size", "96", "128", "--to", "rgb"]
    argv += ["--shape", "1", "24", "20", "3", "--out-dir", str(tmp_path)]
    assert main(argv) == 0
    network = Network(tmp_path / "model.synap")
    assert [t.name for t in network.inputs] == ["image_y", "image_uv"]
    rng = np.random.default_rng(2)
    y = rng.integers(0, 256, (1, 96, 128, 1), dtype=np.uint8)
    uv = rng.integers(0, 256, (1, 48, 64, 2), dtype=np.uint8)
    network.inputs[0].assign(y)
    network.inputs[1].assign(uv)
    got = network.predict()[0].to_numpy()
    frame = np.concatenate([y[0, :, :, 0], uv[0].reshape(48, 128)])
    rgb = cv2.cvtColor(frame, cv2.COLOR_YUV2RGB_NV12)
    want = cv2.resize(rgb, (20, 24), interpolation=cv2.INTER_LINEAR)
    np.testing.assert_array_equal(got[0], want)

    capsys.readouterr()
    bad = [*argv[:4], "95", "128", *argv[6:]]
    assert main(bad) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "input 'image': size:" in error
