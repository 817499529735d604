"""synapc.runtime.images and `synapc image-to-raw` / `image-from-raw`: round trips of
every type within the documented error, OpenCV's RGB2YUV_I420 / YUV2RGB_NV12 / NV21 /
I420 / RGB2GRAY as oracles where they apply, BT.709 and full range against the
formulas, and one-line CLI errors."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from synapc.cli import main
from synapc.errors import SynapcError
from synapc.runtime import images

H, W = 16, 24


def blocky(seed: int, height: int = H, width: int = W) -> np.ndarray:
    """A random RGB image whose colour is constant over 2x2 blocks (so that 4:2:0
    loses nothing), with the extremes 0 and 255 in it."""
    small = np.random.default_rng(seed).integers(0, 256, (height // 2, width // 2, 3))
    small[0, 0], small[0, 1] = 0, 255
    return np.repeat(np.repeat(small.astype(np.uint8), 2, 0), 2, 1)


def i420(rgb_height: int, planes: dict[str, np.ndarray]) -> np.ndarray:
    """The planes of yuv420 as OpenCV's single (3H/2) x W I420 buffer."""
    flat = [planes[r].reshape(-1) for r in ("y", "u", "v")]
    return np.concatenate(flat).reshape(rgb_height * 3 // 2, -1)


@pytest.mark.parametrize("color_range", images.COLOR_RANGES)
@pytest.mark.parametrize("color_matrix", images.COLOR_MATRICES)
@pytest.mark.parametrize("type_", images.TYPES)
def test_round_trip(type_: str, color_range: str, color_matrix: str) -> None:
    """RGB -> planes -> RGB: within 2 (limited) / 1 (full) for YUV, exact otherwise;
    the planes have the documented shapes and a leading batch axis is kept."""
    rgb = np.stack([blocky(1), blocky(2)])
    if type_ == "gray":
        rgb = np.repeat(rgb[..., :1], 3, axis=-1)
    planes = images.rgb_to_planes(rgb, type_, color_range, color_matrix)
    shapes = images.plane_shapes(type_, H, W)
    assert list(planes) == list(images.ROLES[type_])
    assert {r: p.shape for r, p in planes.items()} == {
        r: (2, *s) for r, s in shapes.items()
    }
    back = images.planes_to_rgb(planes, type_, color_range, color_matrix)
    error = np.abs(back.astype(int) - rgb).max()
    if type_ in ("yuv444", "yuv420", "nv12", "nv21"):
        assert error <= (2 if color_range == "limited" else 1)
    else:
        assert error == 0


def test_yuv444_round_trip_any_image() -> None:
    rgb = np.random.default_rng(3).integers(0, 256, (H, W, 3)).astype(np.uint8)
    back = images.planes_to_rgb(images.rgb_to_planes(rgb, "yuv444"), "yuv444")
    assert np.abs(back.astype(int) - rgb).max() <= 2


def test_rgb_to_i420_matches_opencv() -> None:
    """On images constant over 2x2 blocks (OpenCV takes chroma from one pixel of each
    block, we average the four) every sample within 1, nearly all exact."""
    rgb = blocky(4, 64, 96)
    mine = i420(64, images.rgb_to_planes(rgb, "yuv420"))
    diff = np.abs(mine.astype(int) - cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420))
    assert diff.max() <= 1 and (diff == 0).mean() >= 0.9


@pytest.mark.parametrize(
    ("type_", "code"),
    [
        ("nv12", cv2.COLOR_YUV2RGB_NV12),
        ("nv21", cv2.COLOR_YUV2RGB_NV21),
        ("yuv420", cv2.COLOR_YUV2RGB_I420),
    ],
)
def test_planes_to_rgb_matches_opencv(type_: str, code: int) -> None:
    """Random planes (any values, Y below 16 included): within 1 of cvtColor."""
    rng = np.random.default_rng(5)
    shapes = images.plane_shapes(type_, 64, 96)
    planes = {r: rng.integers(0, 256, s).astype(np.uint8) for r, s in shapes.items()}
    mine = images.planes_to_rgb(planes, type_)
    buffer = np.concatenate([p.reshape(-1) for p in planes.values()]).reshape(96, 96)
    diff = np.abs(mine.astype(int) - cv2.cvtColor(buffer, code))
    assert diff.max() <= 1 and (diff == 0).mean() >= 0.95


def test_gray_is_opencv_exactly() -> None:
    rgb = np.random.default_rng(6).integers(0, 256, (H, W, 3)).astype(np.uint8)
    gray = images.rgb_to_planes(rgb, "gray")["gray"][..., 0]
    assert np.array_equal(gray, cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))


@pytest.mark.parametrize("color_matrix", images.COLOR_MATRICES)
@pytest.mark.parametrize("color_range", images.COLOR_RANGES)
def test_yuv_to_rgb_formulas(color_range: str, color_matrix: str) -> None:
    """Back to RGB against the textbook inverse (Y clamped at 16 in limited range)."""
    rng = np.random.default_rng(7)
    y, u, v = (rng.integers(0, 256, (H, W)).astype(np.float64) for _ in range(3))
    kr, kb = {"bt601": (0.299, 0.114), "bt709": (0.2126, 0.0722)}[color_matrix]
    if color_range == "limited":
        luma, pb, pr = (
            np.maximum(y - 16, 0) * 255 / 219,
            (u - 128) * 255 / 224,
            (v - 128) * 255 / 224,
        )
    else:
        luma, pb, pr = y, u - 128, v - 128
    r = luma + (2 - 2 * kr) * pr
    b = luma + (2 - 2 * kb) * pb
    g = luma - (2 * kb * (1 - kb) * pb + 2 * kr * (1 - kr) * pr) / (1 - kr - kb)
    expected = np.clip(np.round(np.stack([r, g, b], -1)), 0, 255)
    mine = images.yuv_to_rgb(y, u, v, color_range, color_matrix)
    assert np.abs(mine.astype(int) - expected).max() <= 1


def test_full_range_bt601_metafile_coefficients() -> None:
    """METAFILE.md's full-range formulas: R = Y + 1.402(V-128), G = Y - 0.344(U-128)
    - 0.714(V-128), B = Y + 1.772(U-128)."""
    rng = np.random.default_rng(8)
    y, u, v = (rng.integers(0, 256, (H, W)).astype(np.float64) for _ in range(3))
    r, g, b = (
        y + 1.402 * (v - 128),
        y - 0.344 * (u - 128) - 0.714 * (v - 128),
        y + 1.772 * (u - 128),
    )
    expected = np.clip(np.round(np.stack([r, g, b], -1)), 0, 255)
    assert np.abs(images.yuv_to_rgb(y, u, v, "full") - expected).max() <= 1


def test_layouts_and_channel_orders() -> None:
    rgb = blocky(9)
    assert images.rgb_to_planes(rgb, "rgb888p")["rgb"].shape == (3, H, W)
    assert np.array_equal(images.rgb_to_planes(rgb, "rgb888p")["rgb"][2], rgb[..., 2])
    bgra = images.rgb_to_planes(rgb, "bgra")["bgra"]
    assert np.array_equal(bgra, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGRA))
    nchw = images.rgb_to_planes(rgb, "float32", layout="nchw")["float32"]
    assert nchw.dtype == np.float32 and nchw.shape == (3, H, W)
    nv12, nv21 = images.rgb_to_planes(rgb, "nv12"), images.rgb_to_planes(rgb, "nv21")
    assert np.array_equal(nv12["uv"], nv21["vu"][..., ::-1])
    assert images.plane_names("cam", "nv21") == ["cam_y", "cam_vu"]
    assert images.plane_names("cam", "rgb888p") == ["cam"]


def test_helper_errors() -> None:
    with pytest.raises(SynapcError, match="type 'nv13': unknown type; expected one of"):
        images.check_type("nv13")
    with pytest.raises(SynapcError, match=r"nv12 \(4:2:0\) needs an even height"):
        images.rgb_to_planes(np.zeros((5, 8, 3), np.uint8), "nv12")
    with pytest.raises(SynapcError, match="expected an H x W x 3 uint8 RGB array"):
        images.rgb_to_planes(np.zeros((4, 4, 3), np.float32), "rgb")
    planes = images.rgb_to_planes(blocky(1), "nv12")
    planes["uv"] = planes["uv"][:, :-1]
    with pytest.raises(SynapcError, match=r"plane uv: uint8 \[8, 11, 2\], expected"):
        images.planes_to_rgb(planes, "nv12")
    with pytest.raises(SynapcError, match="plane v is missing"):
        images.planes_to_rgb({"y": planes["y"], "u": planes["y"]}, "yuv444")


# -- the command line -------------------------------------------------------------------


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`synapc argv` in this process: exit code and stderr."""
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("npy", [False, True])
@pytest.mark.parametrize("type_", ["nv12", "yuv420", "rgb888p3", "gray", "float32"])
def test_cli_round_trip(
    type_: str, npy: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rgb = blocky(10)
    if type_ == "gray":
        rgb = np.repeat(rgb[..., :1], 3, axis=-1)
    Image.fromarray(rgb).save(tmp_path / "photo.png")
    out = tmp_path / "planes"
    argv = [
        "image-to-raw",
        str(tmp_path / "photo.png"),
        "--type",
        type_,
        "--out-dir",
        str(out),
    ]
    assert run([*argv, *(["--npy"] if npy else [])], capsys) == (0, "")
    suffix = ".npy" if npy else ".raw"
    files = [out / f"{n}{suffix}" for n in images.plane_names("photo", type_)]
    expected = images.rgb_to_planes(rgb, type_)
    for path, plane in zip(files, expected.values(), strict=True):
        stored = np.load(path) if npy else np.frombuffer(path.read_bytes(), plane.dtype)
        assert np.array_equal(stored.reshape(plane.shape), plane)
        assert not npy or stored.shape == (1, *plane.shape)
    back = tmp_path / "back.png"
    argv = ["image-from-raw", "--type", type_, "--size", str(H), str(W)]
    assert run([*argv, *map(str, files), "--out", str(back)], capsys) == (0, "")
    error = np.abs(np.asarray(Image.open(back)).astype(int) - rgb).max()
    assert error <= (2 if type_ in ("nv12", "yuv420") else 0)


def test_cli_size_and_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Image.fromarray(blocky(11)).save(tmp_path / "a.png")
    argv = ["image-to-raw", str(tmp_path / "a.png"), "--type", "nv21", "--size", "8", "12"]
    argv += ["--color-range", "full", "--color-matrix", "bt709", "--name", "cam"]
    assert run([*argv, "--out-dir", str(tmp_path)], capsys) == (0, "")
    assert (tmp_path / "cam_y.raw").stat().st_size == 8 * 12
    assert (tmp_path / "cam_vu.raw").stat().st_size == 4 * 6 * 2


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each bad input: exit 1, one line naming the file or the option, no traceback."""
    Image.fromarray(np.zeros((5, 8, 3), np.uint8)).save(tmp_path / "odd.png")
    Image.fromarray(blocky(12)).save(tmp_path / "a.png")
    main(
        [
            "image-to-raw",
            str(tmp_path / "a.png"),
            "--type",
            "nv12",
            "--out-dir",
            str(tmp_path),
        ]
    )
    capsys.readouterr()
    y, uv = str(tmp_path / "a_y.raw"), str(tmp_path / "a_uv.raw")
    size = ["--size", str(H), str(W)]
    out = ["--out", str(tmp_path / "b.png")]
    cases = [
        (
            ["image-to-raw", str(tmp_path / "odd.png"), "--type", "nv12"],
            "odd.png: type nv12 (4:2:0) needs an even height and width, got height 5",
        ),
        (["image-to-raw", str(tmp_path / "a.png"), "--type", "nv13"], "--type 'nv13'"),
        (
            [
                "image-to-raw",
                str(tmp_path / "a.png"),
                "--type",
                "nv12",
                "--color-range",
                "x",
            ],
            "--color-range 'x': unknown color range",
        ),
        (
            ["image-to-raw", str(tmp_path / "none.png"), "--type", "rgb"],
            "none.png: no such",
        ),
        (
            ["image-from-raw", "--type", "nv12", *size, uv, y, *out],
            "a_uv.raw (plane y): 192 bytes",
        ),
        (["image-from-raw", "--type", "nv12", *size, y, *out], "type nv12 has 2: y, uv"),
        (
            ["image-from-raw", "--type", "nv12", "--size", "7", "8", y, uv, *out],
            "--size 7 8",
        ),
        (["image-from-raw", "--type", "bgra", *size, y, *out], "(plane bgra): 384 bytes"),
    ]
    for argv, message in cases:
        if argv[0] == "image-to-raw":
            argv = [*argv, "--out-dir", str(tmp_path / "o")]
        code, err = run(argv, capsys)
        assert code == 1, argv
        assert err.startswith("synapc: error: ") and err.count("\n") == 1, err
        assert message in err, err
