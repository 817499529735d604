"""ONNX Resize beyond TFLite's kernels: cubic interpolation, antialiasing, given scales
that do not give whole output sizes, keep_aspect_ratio_policy, half_pixel_symmetric and
tf_crop_and_resize coordinates, on random tensors against ONNX's reference
implementation; nearest neighbour of integers on that path; and the refusals (a batch or
channel resize at import, interpolation of quantized tensors at compile), each one line
naming the node and the operator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import synapc
from synapc.model import Model
from synapc.testing.pass_check import model_from_text

_OPSET = 19
_RNG = np.random.default_rng(0)


def _resize_model(
    tmp_path: Path,
    shape: list[int],
    elem: int = TensorProto.FLOAT,
    roi: list[float] | None = None,
    scales: list[float] | None = None,
    sizes: list[int] | None = None,
    **attrs: Any,
) -> Path:
    """A model of one Resize node 'the_layer' of input `x` with constant roi, scales
    and sizes (the absent ones empty)."""
    consts = {
        "roi": np.asarray(roi if roi is not None else [], np.float32),
        "scales": np.asarray(scales if scales is not None else [], np.float32),
        "sizes": np.asarray(sizes if sizes is not None else [], np.int64),
    }
    inputs = ["x"] + [name if value.size else "" for name, value in consts.items()]
    while inputs[-1] == "":
        inputs.pop()
    node = helper.make_node("Resize", inputs, ["y"], name="the_layer", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", elem, shape)],
        [helper.make_tensor_value_info("y", elem, None)],
        initializer=[
            numpy_helper.from_array(value, name)
            for name, value in consts.items()
            if value.size
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


def _compare(path: Path, x: np.ndarray, exact: bool = False) -> None:
    """synapc's output of the model at `path` matches ONNX's reference."""
    model = synapc.import_model(path)
    (got,) = synapc.compile(model, "GENERIC").run([x])
    (want,) = ReferenceEvaluator(str(path)).run(None, {"x": x})
    assert got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


_CASES: dict[str, dict[str, Any]] = {
    "cubic_scales_exclude_outside": dict(
        mode="cubic", scales=[1, 1, 0.8, 1.7], cubic_coeff_a=-0.5, exclude_outside=1
    ),
    "cubic_antialias_downsample": dict(mode="cubic", antialias=1, scales=[1, 1, 0.45, 0.7]),
    "cubic_asymmetric_sizes": dict(
        mode="cubic", sizes=[2, 3, 11, 4], coordinate_transformation_mode="asymmetric"
    ),
    "cubic_pytorch_half_pixel_to_one": dict(
        mode="cubic",
        sizes=[2, 3, 1, 3],
        coordinate_transformation_mode="pytorch_half_pixel",
    ),
    "linear_antialias_sizes": dict(mode="linear", antialias=1, sizes=[2, 3, 3, 5]),
    "linear_align_corners_scales": dict(
        mode="linear",
        scales=[1, 1, 0.6, 1.3],
        coordinate_transformation_mode="align_corners",
    ),
    "linear_half_pixel_symmetric": dict(
        mode="linear",
        scales=[1, 1, 1.3, 0.55],
        coordinate_transformation_mode="half_pixel_symmetric",
    ),
    "nearest_half_pixel_symmetric_ceil": dict(
        mode="nearest",
        scales=[1, 1, 1.45, 0.6],
        coordinate_transformation_mode="half_pixel_symmetric",
        nearest_mode="ceil",
    ),
    "cubic_not_larger": dict(
        mode="cubic", sizes=[5, 9], axes=[2, 3], keep_aspect_ratio_policy="not_larger"
    ),
    "tf_crop_linear_extrapolation": dict(
        mode="linear",
        coordinate_transformation_mode="tf_crop_and_resize",
        roi=[0.6, -0.2, 1.3, 0.7],
        axes=[3, 2],
        sizes=[5, 4],
        extrapolation_value=7.5,
    ),
    "tf_crop_cubic_exclude_outside": dict(
        mode="cubic",
        coordinate_transformation_mode="tf_crop_and_resize",
        roi=[0, 0, 0.1, 0.2, 1, 1, 0.9, 1.1],
        scales=[1, 1, 1.5, 0.75],
        exclude_outside=1,
    ),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_resize_matches_the_reference(tmp_path: Path, case: str) -> None:
    x = _RNG.standard_normal((2, 3, 6, 8)).astype(np.float32)
    _compare(_resize_model(tmp_path, [2, 3, 6, 8], **_CASES[case]), x)


def test_nearest_of_integers_with_a_given_scale_is_exact(tmp_path: Path) -> None:
    """Nearest neighbour copies pixels, whatever the element type: int32 with scales
    that do not give whole sizes and half_pixel_symmetric coordinates."""
    x = _RNG.integers(-1000, 1000, (1, 2, 5, 7)).astype(np.int32)
    path = _resize_model(
        tmp_path,
        [1, 2, 5, 7],
        TensorProto.INT32,
        scales=[1, 1, 0.7, 1.6],
        coordinate_transformation_mode="half_pixel_symmetric",
    )
    _compare(path, x, exact=True)


def _refused_at_import(path: Path, *needles: str) -> None:
    with pytest.raises(synapc.SynapcError) as caught:
        synapc.import_model(path)
    message = str(caught.value)
    assert "\n" not in message and "node 'the_layer' (Resize" in message, message
    for needle in needles:
        assert needle in message, message


def test_resizing_channels_is_refused(tmp_path: Path) -> None:
    path = _resize_model(tmp_path, [1, 3, 4, 4], mode="cubic", scales=[1, 1.1, 2, 2])
    _refused_at_import(path, "only the spatial (H, W) axes", "axis 1", "scale 1.1")


def test_a_crop_of_channels_is_refused(tmp_path: Path) -> None:
    path = _resize_model(
        tmp_path,
        [1, 3, 4, 4],
        mode="linear",
        coordinate_transformation_mode="tf_crop_and_resize",
        roi=[0, 0.5, 0, 0, 1, 1, 1, 1],
        sizes=[1, 3, 3, 3],
    )
    _refused_at_import(path, "only the spatial (H, W) axes", "axis 1", "roi [0.5, 1]")


def test_antialiased_nearest_is_refused(tmp_path: Path) -> None:
    path = _resize_model(tmp_path, [1, 1, 4, 4], scales=[1, 1, 0.5, 0.5], antialias=1)
    _refused_at_import(path, "antialias applies to linear and cubic")


_Q8 = "!quant.uniform<i8:f32, 0.05:-3>"


def _quantized_resize(props: str, before: str, after: str) -> Model:
    """A model of one quantized synap.resize 'up' with properties `props`."""
    return model_from_text(
        f"builtin.module {{ func.func @main(%x: tensor<{before}x{_Q8}>) -> "
        f"(tensor<{after}x{_Q8}>) {{\n"
        f'%y = synap.resize %x {{layer_name = "up", {props}}} : '
        f"(tensor<{before}x{_Q8}>) -> tensor<{after}x{_Q8}>\n"
        f"func.return %y : tensor<{after}x{_Q8}>\n}} }}"
    )


@pytest.mark.parametrize(
    ("props", "needle"),
    [
        ("mode = #synap<resize_mode cubic>", "quantized cubic resizing"),
        (
            "mode = #synap<resize_mode bilinear>, antialias = true",
            "quantized bilinear resizing with antialias",
        ),
        (
            "coordinate_mode = #synap<coordinate_mode tf_crop_and_resize>, "
            "roi = [-0.5 : f32, 0.0 : f32, 1.0 : f32, 1.0 : f32]",
            "quantized tf_crop_and_resize maps pixels outside the input",
        ),
    ],
    ids=["cubic", "antialias", "extrapolation"],
)
def test_quantized_interpolation_is_refused_at_compile(props: str, needle: str) -> None:
    """The backend interpolates float tensors only on the tap path: synapc.compile
    refuses a quantized resize with those parameters, naming the layer."""
    model = _quantized_resize(props, "1x3x3x2", "1x6x6x2")
    with pytest.raises(synapc.SynapcError) as caught:
        synapc.compile(model, "GENERIC")
    message = str(caught.value)
    assert "\n" not in message and 'layer "up"' in message, message
    assert needle in message, message


def test_quantized_nearest_with_a_given_scale_copies_pixels(tmp_path: Path) -> None:
    """Nearest neighbour on the tap path moves stored integers as they are: the pixels
    ONNX's reference picks from the same integers."""
    model = _quantized_resize(
        "scales = [0.7 : f32, 1.6 : f32], "
        "coordinate_mode = #synap<coordinate_mode half_pixel_symmetric>",
        "1x5x5x2",
        "1x3x8x2",
    )
    x = _RNG.integers(-128, 128, (1, 5, 5, 2)).astype(np.int8)
    (y,) = synapc.compile(model, "GENERIC").run([x])
    path = _resize_model(
        tmp_path,
        [1, 2, 5, 5],
        TensorProto.INT8,
        scales=[1, 1, 0.7, 1.6],
        coordinate_transformation_mode="half_pixel_symmetric",
    )
    nchw = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    (want,) = ReferenceEvaluator(str(path)).run(None, {"x": nchw})
    np.testing.assert_array_equal(y, want.transpose(0, 2, 3, 1))
