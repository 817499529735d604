"""`synap.yuv_to_rgb` and `synap.crop_resize` (dialects/synap/preprocess.py) run by the
JAX backend against their oracle, OpenCV: `cv2.cvtColor` for limited-range BT.601 4:2:0
frames, `cv2.resize` (INTER_LINEAR, INTER_NEAREST) for resizing, with and without a
run-time crop rectangle; 4:4:4 against the 4:2:0 path, full range and BT.709 against
their formulas. Acceptance: every pixel within +-1 of the oracle and at least 99.9%
exact (the kernels are in fact bit-exact with OpenCV 5.0 on these inputs)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import cv2
import numpy as np
import pytest
from xdsl.dialects.builtin import FunctionType, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue

from synapc.backends.jax.lowering import lower
from synapc.backends.targets import get_target
from synapc.dialects.synap.preprocess import I32, UI8, CropResizeOp, YuvToRgbOp
from synapc.weights import WeightStore

Runner = Callable[..., list[np.ndarray]]


def compiled(
    arg_types: Sequence[Attribute], build: Callable[[list[SSAValue]], list[Operation]]
) -> Runner:
    """The JAX program of a one-function module whose body `build(args)` makes; the
    last op's result is the output."""
    func = FuncOp("main", (list(arg_types), []))
    ops = build(list(func.body.block.args))
    func.body.block.add_ops(ops)
    result = ops[-1].results[0]
    func.body.block.add_op(ReturnOp(result))
    func.function_type = FunctionType.from_lists(list(arg_types), [result.type])
    func.verify()
    program, params = lower(func, WeightStore(), get_target("GENERIC"))
    return lambda *inputs: [np.asarray(x) for x in program(params, *inputs)]


def assert_close_to(got: np.ndarray, want: np.ndarray) -> None:
    """Every value within +-1 and at least 99.9% exact."""
    assert got.shape == want.shape and got.dtype == want.dtype
    diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
    assert diff.max() <= 1, f"max difference {diff.max()}"
    assert (diff == 0).mean() >= 0.999, f"only {(diff == 0).mean():.5f} exact"


def random_u8(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    """Uniform random uint8 values."""
    return rng.integers(0, 256, tuple(shape), dtype=np.uint8)


def photo_like(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A smooth colour image with texture (gradients, a disc, mild noise): the local
    structure of a photograph, where neighbouring pixels are close."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r = 255 * xx / max(w - 1, 1)
    g = 255 * yy / max(h - 1, 1)
    disc = ((yy - h / 2) ** 2 + (xx - w / 3) ** 2) < (min(h, w) / 3) ** 2
    b = np.where(disc, 200.0, 40.0) + 30 * np.sin(xx / 7) * np.cos(yy / 11)
    image = np.stack([r, g, b], -1) + rng.normal(0, 4, (h, w, 3))
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


# -- colour conversion -----------------------------------------------------------------
_CV_CODES = {
    ("nv12", False): cv2.COLOR_YUV2RGB_NV12,
    ("nv12", True): cv2.COLOR_YUV2BGR_NV12,
    ("nv21", False): cv2.COLOR_YUV2RGB_NV21,
    ("nv21", True): cv2.COLOR_YUV2BGR_NV21,
    ("yuv420", False): cv2.COLOR_YUV2RGB_I420,
    ("yuv420", True): cv2.COLOR_YUV2BGR_I420,
}


def frame_planes(
    fmt: str, y: np.ndarray, u: np.ndarray, v: np.ndarray
) -> tuple[list[np.ndarray], np.ndarray]:
    """The synap planes (NHWC) of N frames with luma `y` (N x H x W) and 4:2:0 chroma
    `u`, `v` (N x H/2 x W/2), and OpenCV's stacked layout of the same frames."""
    n, h, w = y.shape
    if fmt == "yuv420":
        planes = [y[..., None], u[..., None], v[..., None]]
        chroma = np.concatenate([u.reshape(n, h // 4, w), v.reshape(n, h // 4, w)], 1)
    else:
        pair = np.stack([u, v] if fmt == "nv12" else [v, u], -1)
        planes = [y[..., None], pair]
        chroma = pair.reshape(n, h // 2, w)
    return planes, np.concatenate([y, chroma], axis=1)


def convert(planes: list[np.ndarray], **props: object) -> np.ndarray:
    """`synap.yuv_to_rgb` of the planes with the given properties."""
    types = [TensorType(UI8, p.shape) for p in planes]
    run = compiled(types, lambda args: [YuvToRgbOp.make(args, **props)])
    return run(*planes)[0]


@pytest.mark.parametrize("fmt", ["nv12", "nv21", "yuv420"])
@pytest.mark.parametrize("bgr", [False, True])
def test_yuv420_matches_opencv(fmt: str, bgr: bool) -> None:
    rng = np.random.default_rng(18)
    n, h, w = 2, 48, 64
    y = random_u8(rng, (n, h, w))
    u, v = random_u8(rng, (n, h // 2, w // 2)), random_u8(rng, (n, h // 2, w // 2))
    planes, stacked = frame_planes(fmt, y, u, v)
    got = convert(planes, format=fmt, bgr=bgr)
    want = np.stack([cv2.cvtColor(frame, _CV_CODES[(fmt, bgr)]) for frame in stacked])
    assert_close_to(got, want)


def test_nv12_of_a_photo_like_frame_matches_opencv() -> None:
    rng = np.random.default_rng(5)
    rgb = photo_like(rng, 96, 128)
    i420 = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420)
    y = i420[:96]
    u, v = i420[96:120].reshape(48, 64), i420[120:].reshape(48, 64)
    planes, stacked = frame_planes("nv12", y[None], u[None], v[None])
    got = convert(planes, format="nv12")
    assert_close_to(got[0], cv2.cvtColor(stacked[0], cv2.COLOR_YUV2RGB_NV12))


@pytest.mark.parametrize("color_range", ["limited", "full"])
@pytest.mark.parametrize("matrix", ["bt601", "bt709"])
def test_yuv444_equals_yuv420_with_constant_chroma_blocks(
    color_range: str, matrix: str
) -> None:
    rng = np.random.default_rng(4)
    y = random_u8(rng, (1, 16, 24, 1))
    u, v = random_u8(rng, (1, 8, 12, 1)), random_u8(rng, (1, 8, 12, 1))
    props = {"color_range": color_range, "color_matrix": matrix}
    full_u, full_v = (np.repeat(np.repeat(p, 2, 1), 2, 2) for p in (u, v))
    got = convert([y, full_u, full_v], format="yuv444", **props)
    np.testing.assert_array_equal(got, convert([y, u, v], format="yuv420", **props))


#: The formulas' coefficients (cy, y offset, cvr, cug, cvg, cub): METAFILE.md for
#: BT.601; BT.709 from Kr = 0.2126, Kb = 0.0722 (ITU-R BT.709-6), limited range scaled
#: by 255/219 (Y) and 255/224 (chroma).
_KR, _KB = 0.2126, 0.0722
_KG = 1 - _KR - _KB
_BT709 = (
    2 * (1 - _KR),
    -2 * _KB * (1 - _KB) / _KG,
    -2 * _KR * (1 - _KR) / _KG,
    2 * (1 - _KB),
)
_FORMULAS = {
    ("full", "bt601"): (1.0, 0, 1.402, -0.344, -0.714, 1.772),
    ("full", "bt709"): (1.0, 0, *_BT709),
    ("limited", "bt709"): (255 / 219, 16, *(c * 255 / 224 for c in _BT709)),
}


@pytest.mark.parametrize("key", list(_FORMULAS))
def test_full_range_and_bt709_follow_their_formulas(key: tuple[str, str]) -> None:
    rng = np.random.default_rng(7)
    y = random_u8(rng, (1, 64, 64, 1))
    u, v = random_u8(rng, (1, 64, 64, 1)), random_u8(rng, (1, 64, 64, 1))
    cy, offset, cvr, cug, cvg, cub = _FORMULAS[key]
    luma = cy * np.maximum(y[..., 0].astype(np.float64) - offset, 0)
    du, dv = u[..., 0] - 128.0, v[..., 0] - 128.0
    rgb = np.stack([luma + cvr * dv, luma + cug * du + cvg * dv, luma + cub * du], -1)
    want = np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
    got = convert([y, u, v], format="yuv444", color_range=key[0], color_matrix=key[1])
    assert_close_to(got, want)


# -- crop and resize -------------------------------------------------------------------
_CV_MODES = {"bilinear": cv2.INTER_LINEAR, "nearest": cv2.INTER_NEAREST}


def resizer(
    shape: Sequence[int], size: tuple[int, int], mode: str, crop: bool, element=UI8
) -> Runner:
    """The program of one `synap.crop_resize` (with four crop scalars if `crop`)."""
    types = [TensorType(element, shape)] + ([TensorType(I32, [])] * 4 if crop else [])
    return compiled(
        types, lambda args: [CropResizeOp.make(args[0], args[1:], size=size, mode=mode)]
    )


def opencv_resize(
    image: np.ndarray, size: tuple[int, int], mode: str, rect: Sequence[int] | None = None
) -> np.ndarray:
    """cv2.resize of each image of a batch, or of its rectangle (width, height, left,
    top)."""
    if rect is not None:
        w, h, left, top = rect
        image = image[:, top : top + h, left : left + w]
    out = [cv2.resize(i, size[::-1], interpolation=_CV_MODES[mode]) for i in image]
    return np.stack(out).reshape(image.shape[0], *size, image.shape[3])


_SIZES = [
    ((37, 53), (17, 29)),  # down, odd ratios
    ((37, 53), (80, 101)),  # up
    ((40, 40), (20, 20)),  # exactly half (OpenCV's area path)
    ((24, 30), (24, 30)),  # identity
    ((30, 1), (7, 5)),  # a one-pixel-wide image
]


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize(("source", "size"), _SIZES)
def test_resize_matches_opencv(
    mode: str, source: tuple[int, int], size: tuple[int, int]
) -> None:
    rng = np.random.default_rng(11)
    image = random_u8(rng, (2, *source, 3))
    got = resizer(image.shape, size, mode, crop=False)(image)[0]
    assert_close_to(got, opencv_resize(image, size, mode))


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_run_time_crop_matches_opencv_on_the_sub_image(mode: str) -> None:
    rng = np.random.default_rng(12)
    image = np.concatenate([random_u8(rng, (1, 60, 80, 3)), photo_like(rng, 60, 80)[None]])
    run = resizer(image.shape, (32, 48), mode, crop=True)  # one program, many rectangles
    for rect in [(80, 60, 0, 0), (33, 21, 5, 9), (10, 50, 70, 10), (80, 1, 0, 59),
                 (7, 3, 40, 30), (61, 45, 19, 15)]:  # fmt: skip
        got = run(image, *(np.int32(v) for v in rect))[0]
        assert_close_to(got, opencv_resize(image, (32, 48), mode, rect))


def test_crop_outside_the_image_is_clamped() -> None:
    rng = np.random.default_rng(13)
    image = random_u8(rng, (1, 20, 30, 3))
    run = resizer(image.shape, (8, 8), "bilinear", crop=True)
    scalars = lambda rect: [np.int32(v) for v in rect]  # noqa: E731
    clamped = run(image, *scalars((5, 20, 25, 0)))[0]
    np.testing.assert_array_equal(run(image, *scalars((50, 40, 25, -3)))[0], clamped)
    corner = run(image, *scalars((1, 1, 29, 19)))[0]
    np.testing.assert_array_equal(run(image, *scalars((9, 0, 40, 99)))[0], corner)


def test_1080p_nv12_to_224_with_and_without_crop_matches_opencv() -> None:
    rng = np.random.default_rng(1080)
    rgb = photo_like(rng, 1080, 1920)
    i420 = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420)
    y, chroma = i420[:1080], i420[1080:].reshape(2, 540, 960)
    planes, stacked = frame_planes("nv12", y[None], chroma[0][None], chroma[1][None])
    types = [TensorType(UI8, p.shape) for p in planes] + [TensorType(I32, [])] * 4

    def build(args: list[SSAValue]) -> list[Operation]:
        rgb_op = YuvToRgbOp.make(args[:2], format="nv12")
        return [rgb_op, CropResizeOp.make(rgb_op, args[2:], size=(224, 224))]

    run = compiled(types, build)
    frame = cv2.cvtColor(stacked[0], cv2.COLOR_YUV2RGB_NV12)[None]
    for rect in [(1920, 1080, 0, 0), (700, 500, 611, 333)]:
        got = run(*planes, *(np.int32(v) for v in rect))[0]
        assert_close_to(got, opencv_resize(frame, (224, 224), "bilinear", rect))


def test_float_images_match_opencv() -> None:
    """Float images follow OpenCV's formula in float32; OpenCV's own float kernels sum
    in another order (a few float32 ulps apart), so this is a tolerance, not bit-exact."""
    rng = np.random.default_rng(14)
    image = rng.uniform(-2, 300, (1, 37, 53, 3)).astype(np.float32)
    for size in [(17, 29), (80, 101)]:
        for mode in ("bilinear", "nearest"):
            got = resizer(image.shape, size, mode, crop=False, element=f32)(image)[0]
            want = opencv_resize(image, size, mode)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
