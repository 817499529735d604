"""`synapc benchmark --num_threads N` and `--input [NAME=]FILE` (synapc/tools/benchmark.py)
on packages converted from examples/tiny_classifier.onnx: the thread count XLA's CPU
client really gets, input values from .npy / raw / .png / .bmp files assigned like
`Tensor.assign`, the report lines and one clear error per bad value."""

from __future__ import annotations

import argparse
import io
import os
import re
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import jax
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import synapc

# `synapc.convert` (the function) first: importing the synapc.convert package before it
# resolves would leave the attribute bound to the package module for every later test
from synapc import convert
from synapc.errors import SynapcError
from synapc.tools import benchmark, input_files

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "tiny_classifier.onnx"
EXAMPLE_META = REPO / "examples" / "tiny_classifier.yaml"
MEANS = np.array([123.675, 116.28, 103.53])
SCALE = 58.4


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The example classifier as converted by examples/tiny_classifier.yaml (float32
    NCHW input, rgb), converted for BGR NHWC, and a two-input model (a + b)."""
    root = tmp_path_factory.mktemp("packages")
    convert(EXAMPLE, "VS680", root / "rgb", EXAMPLE_META)
    meta = root / "bgr.yaml"
    meta.write_text(
        "data_layout: nhwc\ninputs:\n  - name: image\n    shape: [1, 3, 64, 64]\n"
        "    means: [1, 2, 3]\n"
        "    scale: 2\n    format: bgr\n"
    )
    convert(EXAMPLE, "VS680", root / "bgr", meta)
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])],
        "add",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
        root / "add.onnx",
    )
    convert(root / "add.onnx", "VS680", root / "add")
    return {name: root / name / "model.synap" for name in ("rgb", "bgr", "add")}


def _run(*argv: str) -> str:
    parser = argparse.ArgumentParser()
    benchmark.add_arguments(parser)
    out = io.StringIO()
    assert benchmark.run(parser.parse_args(list(argv)), out) == 0
    return out.getvalue()


def _png(path: Path, pixels: np.ndarray, color: int, depth: int = 8) -> Path:
    """Write `pixels` (H x W x C, or palette indices / gray levels for `depth` < 8) as a
    PNG whose rows cycle through the five row filters."""
    height, width, channels = pixels.shape
    if depth < 8:
        bits = np.unpackbits(pixels.astype(np.uint8)[:, :, :1], axis=2)[:, :, 8 - depth :]
        rows = np.packbits(bits.reshape(height, -1), axis=1)
    else:
        rows = pixels.reshape(height, width * channels)
    rows = rows.astype(np.int32)
    bpp = max(1, channels * depth // 8)
    raw = bytearray()
    for y in range(height):
        kind = y % 5
        x = rows[y]
        up = rows[y - 1] if y else np.zeros_like(x)
        left = np.concatenate([np.zeros(bpp, np.int32), x[:-bpp]])
        corner = np.concatenate([np.zeros(bpp, np.int32), up[:-bpp]])
        p = left + up - corner
        pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
        paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, corner))
        predictor = [0, left, up, (left + up) // 2, paeth][kind]
        raw.append(kind)
        raw += ((x - predictor) % 256).astype(np.uint8).tobytes()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    if color == 3:
        palette = np.arange(256 * 3).reshape(256, 3) * np.array([1, 7, 13]) % 256
        data += chunk(b"PLTE", palette.astype(np.uint8).tobytes())
    data += chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b"")
    path.write_bytes(data)
    return path


def _pixels(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, shape).astype(np.uint8)


# -- --num_threads ---------------------------------------------------------------------

_THREADS_SCRIPT = textwrap.dedent(
    """
    import collections, os, sys
    from synapc.cli import main

    code = main(sys.argv[1:])
    names = collections.Counter(
        open(f"/proc/self/task/{t}/comm").read().strip()
        for t in os.listdir("/proc/self/task")
    )
    print("THREADS", sum(names.values()), names.get("tf_XLAEigen", 0))
    sys.exit(code)
    """
)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_num_threads_sizes_xla_thread_pool(packages: dict[str, Path]) -> None:
    """A fresh process: XLA's intra-op pool has exactly N threads (N above the number of
    cores too, so this is the flag and not the machine)."""
    totals = {}
    model = str(packages["rgb"])
    for flag, count in (("--num_threads", 1), ("--num-threads", 3)):
        env = {k: v for k, v in os.environ.items() if k not in ("PJRT_NPROC", "NPROC")}
        argv = ["benchmark", "--model", model, flag, str(count), "--num-runs", "2"]
        result = subprocess.run(
            [sys.executable, "-c", _THREADS_SCRIPT, *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert re.search(rf"^Num threads: \[{count}\]$", result.stdout, re.M)
        total, eigen = map(int, result.stdout.split("THREADS")[1].split())
        assert eigen == count
        totals[count] = total
    # the pool (and XLA's dispatch pool beside it) grows with N, nothing else changes
    assert totals[3] - totals[1] >= 2


def test_num_threads_refused_once_jax_runs(
    packages: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    jax.devices()  # the backend exists: XLA's thread pool is fixed
    monkeypatch.setattr(benchmark, "_requested_threads", None)
    before = os.environ.get("PJRT_NPROC")
    with pytest.raises(
        SynapcError,
        match=r"^--num_threads 1: JAX's CPU backend is already initialized in this "
        r"process .*PJRT_NPROC=1",
    ):
        _run("--model", str(packages["rgb"]), "--num_threads", "1")
    assert os.environ.get("PJRT_NPROC") == before
    with pytest.raises(SynapcError, match=r"^--num_threads 0: need at least one thread$"):
        _run("--model", str(packages["rgb"]), "--num-threads", "0")


def test_report_names_the_default_thread_count(packages: dict[str, Path]) -> None:
    text = _run("--model", str(packages["rgb"]), "--num-runs", "2")
    assert f"\nNum threads: [{benchmark.default_num_threads()}]\n" in text
    assert (
        f"\nInput 'image' float32 [1, 3, 64, 64]: random (seed {input_files.SEED})\n"
        in (text)
    )


# -- --input ---------------------------------------------------------------------------


def test_npy_raw_and_named_inputs(packages: dict[str, Path], tmp_path: Path) -> None:
    a = np.arange(4, dtype=np.float32).reshape(1, 4)
    np.save(tmp_path / "a.npy", a)
    b = np.full((1, 4), 0.5, np.float32)
    (tmp_path / "b.bin").write_bytes(b.tobytes())
    model = str(packages["add"])
    text = _run(
        "--model",
        model,
        "--input",
        str(tmp_path / "a.npy"),
        "--input",
        str(tmp_path / "b.bin"),
    )
    assert f"\nInput 'a' float32 [1, 4]: file {tmp_path / 'a.npy'}\n" in text
    assert f"\nInput 'b' float32 [1, 4]: file {tmp_path / 'b.bin'}\n" in text
    text = _run("--model", model, "--input", f"b={tmp_path / 'b.bin'}")
    assert "\nInput 'a' float32 [1, 4]: random (seed 0)\n" in text
    assert f"\nInput 'b' float32 [1, 4]: file {tmp_path / 'b.bin'}\n" in text
    network = synapc.Network(packages["add"])
    sources = input_files.assign_inputs(
        network.inputs, [f"b={tmp_path / 'b.bin'}", f"a={tmp_path / 'a.npy'}"], None
    )
    assert [(s.name, s.path) for s in sources] == [
        ("a", tmp_path / "a.npy"),
        ("b", tmp_path / "b.bin"),
    ]
    np.testing.assert_array_equal(network.inputs[0].to_numpy(), a)
    np.testing.assert_array_equal(network.inputs[1].to_numpy(), b)
    (y,) = network.predict()
    np.testing.assert_array_equal(y.to_numpy(), a + b)


def test_png_input_is_normalized_like_assign(
    packages: dict[str, Path], tmp_path: Path
) -> None:
    pixels = _pixels((64, 64, 3))
    path = _png(tmp_path / "cat.png", pixels, color=2)
    network = synapc.Network(packages["rgb"])
    (source,) = input_files.assign_inputs(network.inputs, [str(path)], None)
    assert source.path == path
    chw = pixels.transpose(2, 0, 1)[np.newaxis].astype(np.float64)
    want = ((chw - MEANS.reshape(1, 3, 1, 1)) / SCALE).astype(np.float32)
    np.testing.assert_allclose(network.inputs[0].to_numpy(), want, rtol=1e-6)
    text = _run(
        "--model", str(packages["rgb"]), "--input", f"image={path}", "--num-runs", "2"
    )
    assert f"\nInput 'image' float32 [1, 3, 64, 64]: file {path}\n" in text


def test_image_channels_follow_format_and_layout(
    packages: dict[str, Path], tmp_path: Path
) -> None:
    """bgr + nhwc package: the RGB file's channels are swapped and stay last; a gray
    image fills all three channels; alpha is dropped."""
    network = synapc.Network(packages["bgr"])
    (image,) = network.inputs
    assert (image.shape, image.layout, image.format) == ((1, 64, 64, 3), "nhwc", "bgr")
    rgba = _pixels((64, 64, 4), seed=1)
    input_files.assign_inputs(
        network.inputs, [str(_png(tmp_path / "rgba.png", rgba, color=6))], None
    )
    want = (rgba[np.newaxis, :, :, 2::-1] - np.array([1.0, 2.0, 3.0])) / 2.0
    np.testing.assert_allclose(image.to_numpy(), want.astype(np.float32))
    gray = _pixels((64, 64, 1), seed=2)
    input_files.assign_inputs(
        network.inputs, [str(_png(tmp_path / "gray.png", gray, color=0))], None
    )
    want = (np.repeat(gray, 3, axis=2)[np.newaxis] - np.array([1.0, 2.0, 3.0])) / 2.0
    np.testing.assert_allclose(image.to_numpy(), want.astype(np.float32))


@pytest.mark.parametrize(
    ("channels", "color", "depth"),
    [(1, 0, 8), (2, 4, 8), (3, 2, 8), (4, 6, 8), (1, 3, 8), (1, 0, 1), (1, 3, 4)],
)
def test_png_decoder(tmp_path: Path, channels: int, color: int, depth: int) -> None:
    """Every row filter, colour type, palettes and sub-byte gray / palette depths."""
    pixels = _pixels((13, 11, channels), seed=color) >> (8 - depth)
    decoded = input_files.read_image(_png(tmp_path / "x.png", pixels, color, depth))
    if color == 3:
        palette = np.arange(256 * 3).reshape(256, 3) * np.array([1, 7, 13]) % 256
        want = palette[pixels[:, :, 0]].astype(np.uint8)
    elif depth < 8:
        want = (pixels.astype(np.int32) * 255 // ((1 << depth) - 1)).astype(np.uint8)
    else:
        want = pixels
    np.testing.assert_array_equal(decoded, want)


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_bmp_decoder_matches_opencv(tmp_path: Path, channels: int) -> None:
    import cv2

    pixels = _pixels((13, 11, channels), seed=channels)
    path = tmp_path / "x.bmp"
    assert cv2.imwrite(str(path), pixels[:, :, 0] if channels == 1 else pixels)
    want = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    want = (
        want[:, :, np.newaxis]
        if want.ndim == 2
        else want[:, :, [2, 1, 0, 3][: want.shape[2]]]
    )
    np.testing.assert_array_equal(input_files.read_image(path), want)


def test_jpeg_decodes_as_opencv_does(tmp_path: Path) -> None:
    """JPEG is read (benchmark_model's users hand it photos): the same pixels as OpenCV's
    decoder give, within the rounding of two IDCT implementations."""
    import cv2

    pixels = cv2.GaussianBlur(_pixels((32, 48, 3), seed=5), (7, 7), 0)
    path = tmp_path / "photo.jpg"
    assert cv2.imwrite(str(path), pixels, [cv2.IMWRITE_JPEG_QUALITY, 95])
    want = cv2.imread(str(path), cv2.IMREAD_COLOR)[:, :, ::-1]
    got = input_files.read_image(path)
    assert got.shape == (32, 48, 3)
    assert np.abs(got.astype(int) - want).max() <= 2


def test_bad_input_values(packages: dict[str, Path], tmp_path: Path) -> None:
    """One clear error per bad value, naming the file and the input."""
    rgb = str(packages["rgb"])
    npy = tmp_path / "x.npy"
    np.save(npy, np.zeros((1, 3, 64, 64), np.float32))
    (tmp_path / "short.bin").write_bytes(b"\0" * 100)
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 5)
    (tmp_path / "text.bmp").write_text("hello")
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0")
    _png(tmp_path / "small.png", _pixels((32, 48, 3)), color=2)
    np.save(tmp_path / "flat.npy", np.zeros((3, 64, 64), np.float32))
    cases = [
        (["missing.npy"], "--input {t}/missing.npy for input 'image': no such file"),
        (
            ["x.npy", "x.npy"],
            "--input: 2 files ({t}/x.npy, {t}/x.npy) for a model with 1 input ('image'); "
            "give one per input in input order, or NAME=FILE",
        ),
        (
            ["short.bin"],
            "--input {t}/short.bin for input 'image': 100 bytes, the input (float32 "
            "[1, 3, 64, 64]) takes 49152 bytes of raw values",
        ),
        (
            ["broken.png"],
            "--input {t}/broken.png for input 'image': not a readable image (unknown or "
            "corrupt format)",
        ),
        (
            ["text.bmp"],
            "--input {t}/text.bmp for input 'image': not a readable image (unknown or "
            "corrupt format)",
        ),
        (
            ["photo.jpg"],
            "--input {t}/photo.jpg for input 'image': not a readable image (unknown or "
            "corrupt format)",
        ),
        (
            ["small.png"],
            "--input {t}/small.png for input 'image': the image is 48x32 (width x "
            "height), the input (float32 [1, 3, 64, 64], nchw) takes 64x64; resize it",
        ),
        (
            ["flat.npy"],
            "--input {t}/flat.npy for input 'image': holds an array of shape [3, 64, 64], "
            "the input takes [1, 3, 64, 64]",
        ),
        (
            ["imgae=x.npy"],
            "--input imgae={t}/x.npy: 'imgae' is not an input of the model (inputs: "
            "'image'), and no file has that name",
        ),
        (
            ["image=x.npy", "image=x.npy"],
            "--input image={t}/x.npy: input 'image' already has a file ({t}/x.npy)",
        ),
        (
            ["image=x.npy", "x.npy"],
            "--input {t}/x.npy: give either one FILE per input in input order or "
            "NAME=FILE for each, not both",
        ),
    ]
    for files, message in cases:
        argv = ["--model", rgb]
        for f in files:
            name, eq, rest = f.rpartition("=")
            argv += ["--input", f"{name}{eq}{tmp_path / rest}"]
        with pytest.raises(SynapcError) as info:
            _run(*argv)
        assert str(info.value).startswith(message.format(t=tmp_path)), files
