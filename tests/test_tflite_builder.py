"""`synapc.testing.tflite_builder` writes `.tflite` files that LiteRT loads and runs.

Each model is run with LiteRT's reference kernels (`OpResolverType.BUILTIN_REF`) and
compared with numpy where the result is easy to compute; the remaining tests read the
flatbuffer back with the `tflite` bindings or check the builder's own errors.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tflite
from numpy.lib.stride_tricks import sliding_window_view

from synapc.testing.tflite_builder import (
    ModelBuilder,
    Quant,
    builtin_code,
    flexbuffer_options,
    options_table,
    tensor_type,
)

litert = pytest.importorskip("ai_edge_litert.interpreter")

RNG = np.random.default_rng(1234)


def _interpreter(model: ModelBuilder | bytes) -> litert.Interpreter:
    """A LiteRT interpreter on the reference kernels, tensors allocated."""
    data = model.build() if isinstance(model, ModelBuilder) else model
    interpreter = litert.Interpreter(
        model_content=data,
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
    )
    interpreter.allocate_tensors()
    return interpreter


def _run(model: ModelBuilder | bytes, *inputs: np.ndarray) -> list[np.ndarray]:
    """Run `model` on `inputs` (in model-input order) and return all outputs."""
    interpreter = _interpreter(model)
    for detail, value in zip(interpreter.get_input_details(), inputs, strict=True):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


def _conv2d_same(x: np.ndarray, w: np.ndarray, bias: np.ndarray, stride: int) -> np.ndarray:
    """NHWC x OHWI convolution with TFLite's SAME padding (extra pad at the end)."""
    _, height, width, _ = x.shape
    _, kh, kw, _ = w.shape
    oh, ow = -(-height // stride), -(-width // stride)
    ph = max((oh - 1) * stride + kh - height, 0)
    pw = max((ow - 1) * stride + kw - width, 0)
    padded = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    windows = sliding_window_view(padded, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]
    return np.einsum("nhwcij,oijc->nhwo", windows[:, :oh, :ow], w) + bias


def _max_pool_valid(x: np.ndarray, size: int) -> np.ndarray:
    """NHWC max pooling, VALID padding, stride equal to the window."""
    windows = sliding_window_view(x, (size, size), axis=(1, 2))[:, ::size, ::size]
    return windows.max(axis=(-2, -1))


def _requantize(real: np.ndarray, scale: float, zero_point: int, dtype: type) -> np.ndarray:
    """Quantize `real` with round-to-nearest and saturation."""
    info = np.iinfo(dtype)
    return np.clip(np.round(real / scale) + zero_point, info.min, info.max).astype(dtype)


# --------------------------------------------------------------------------------------
# Single operators, float
# --------------------------------------------------------------------------------------


def test_float_add_relu_broadcast() -> None:
    xv = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    cv = RNG.standard_normal((3, 1)).astype(np.float32)
    b = ModelBuilder()
    x = b.input("x", xv.shape, np.float32)
    y = b.tensor("y", [2, 3, 4], np.float32)
    b.op("ADD", [x, b.constant("c", cv)], [y], fused_activation_function="RELU")
    b.output(y)
    (out,) = _run(b, xv)
    np.testing.assert_allclose(out, np.maximum(xv + cv, 0.0), rtol=1e-6)
    assert (out == 0).any()
    assert (out > 0).any()


def test_float_conv2d_same_stride2() -> None:
    xv = RNG.standard_normal((1, 9, 7, 3)).astype(np.float32)
    wv = RNG.standard_normal((5, 3, 3, 3)).astype(np.float32)
    bv = RNG.standard_normal(5).astype(np.float32)
    b = ModelBuilder()
    x = b.input("x", xv.shape, np.float32)
    y = b.tensor("y", [1, 5, 4, 5], np.float32)
    b.op(
        "CONV_2D",
        [x, b.constant("w", wv), b.constant("b", bv)],
        [y],
        padding="SAME",
        stride_w=2,
        stride_h=2,
        dilation_w_factor=1,
        dilation_h_factor=1,
        fused_activation_function="NONE",
    )
    b.output(y)
    (out,) = _run(b, xv)
    np.testing.assert_allclose(out, _conv2d_same(xv, wv, bv, 2), rtol=1e-4, atol=1e-5)


def test_reshape_new_shape_option_with_and_without_shape_tensor() -> None:
    xv = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    for with_tensor in (True, False):
        b = ModelBuilder()
        x = b.input("x", xv.shape, np.float32)
        z = b.tensor("z", [1, 24], np.float32)
        inputs = (
            [x, b.constant("shape", np.array([1, -1], np.int32))] if with_tensor else [x]
        )
        b.op("RESHAPE", inputs, [z], new_shape=[1, -1])
        b.output(z)
        (out,) = _run(b, xv)
        np.testing.assert_array_equal(out, xv.reshape(1, 24))


def test_mean_keep_dims() -> None:
    xv = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = ModelBuilder()
    x = b.input("x", xv.shape, np.float32)
    y = b.tensor("y", [2, 1, 1, 5], np.float32)
    b.op("MEAN", [x, b.constant("axes", np.array([1, 2], np.int32))], [y], keep_dims=True)
    b.output(y)
    (out,) = _run(b, xv)
    assert out.shape == (2, 1, 1, 5)
    np.testing.assert_allclose(out, xv.mean(axis=(1, 2), keepdims=True), rtol=1e-5)


def test_strided_slice_masks() -> None:
    xv = np.arange(4 * 6 * 5, dtype=np.float32).reshape(4, 6, 5)
    b = ModelBuilder()
    x = b.input("x", xv.shape, np.float32)
    y = b.tensor("y", [2, 3, 5], np.float32)
    begin = b.constant("begin", np.array([1, 1, 3], np.int32))
    end = b.constant("end", np.array([3, 6, 4], np.int32))
    strides = b.constant("strides", np.array([1, 2, 1], np.int32))
    # Mask bit i makes axis i ignore begin[i] / end[i]: axes 1 and 2 start at 0 and axis
    # 2 runs to the end, so only begin[0], end[0:2] and the strides matter.
    b.op("STRIDED_SLICE", [x, begin, end, strides], [y], begin_mask=0b110, end_mask=0b100)
    b.output(y)
    (out,) = _run(b, xv)
    np.testing.assert_array_equal(out, xv[1:3, 0:6:2, :])


_PADS = np.array([[0, 0], [1, 1], [2, 0]], np.int32)


@pytest.mark.parametrize(
    ("op", "options", "second", "reference"),
    [
        ("LEAKY_RELU", {"alpha": 0.25}, None, lambda a, _: np.where(a > 0, a, 0.25 * a)),
        ("SQUARED_DIFFERENCE", {}, "c", lambda a, c: (a - c) ** 2),
        ("MAXIMUM", {}, "c", lambda a, c: np.maximum(a, c)),
        ("BATCH_MATMUL", {"adj_y": True}, "c", lambda a, c: a @ c.swapaxes(-1, -2)),
        (
            "MIRROR_PAD",
            {"mode": "SYMMETRIC"},
            "pads",
            lambda a, _: np.pad(a, _PADS, mode="symmetric"),
        ),
    ],
)
def test_more_float_ops(
    op: str, options: dict, second: str | None, reference: Callable
) -> None:
    """More operators, for float, bool and enum options and for an options table without
    fields (SquaredDifferenceOptions); `second` names the constant second input."""
    av = RNG.standard_normal((1, 3, 4)).astype(np.float32)
    cv = RNG.standard_normal((1, 3, 4)).astype(np.float32)
    expected = reference(av, cv)
    b = ModelBuilder()
    a = b.input("a", av.shape, np.float32)
    inputs = [a]
    if second is not None:
        inputs.append(b.constant(second, _PADS if second == "pads" else cv))
    y = b.tensor("y", expected.shape, np.float32)
    b.op(op, inputs, [y], **options)
    b.output(y)
    (out,) = _run(b, av)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------------------
# Quantized operators
# --------------------------------------------------------------------------------------


def test_int8_per_channel_conv2d() -> None:
    w_scales = np.linspace(0.01, 0.02, 8)
    b = ModelBuilder()
    x = b.input("x", [1, 8, 8, 3], np.int8, quant=Quant(scale=0.02, zero_point=-3))
    w = b.constant(
        "w",
        RNG.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8),
        quant=Quant(scale=w_scales, zero_point=np.zeros(8, np.int64), axis=0),
    )
    bias = b.constant(
        "bias",
        RNG.integers(-500, 500, 8).astype(np.int32),
        quant=Quant(w_scales * 0.02, 0, axis=0),
    )
    y = b.tensor("y", [1, 8, 8, 8], np.int8, quant=Quant(0.05, 1))
    b.op(
        "CONV_2D",
        [x, w, bias],
        [y],
        padding="SAME",
        stride_w=1,
        stride_h=1,
        dilation_w_factor=1,
        dilation_h_factor=1,
        fused_activation_function="RELU6",
    )
    b.output(y)
    interpreter = _interpreter(b)
    interpreter.set_tensor(
        interpreter.get_input_details()[0]["index"],
        RNG.integers(-128, 128, (1, 8, 8, 3)).astype(np.int8),
    )
    interpreter.invoke()
    (detail,) = interpreter.get_output_details()
    out = interpreter.get_tensor(detail["index"])
    assert out.dtype == np.int8
    assert out.shape == (1, 8, 8, 8)
    assert detail["quantization"] == (pytest.approx(0.05), 1)
    params = detail["quantization_parameters"]
    np.testing.assert_allclose(params["scales"], [0.05])
    np.testing.assert_array_equal(params["zero_points"], [1])
    # RELU6 clamps to [q(0), q(6)] = [1, 121].
    assert out.min() >= 1
    assert out.max() <= 121
    weights = next(d for d in interpreter.get_tensor_details() if d["name"] == "w")
    np.testing.assert_allclose(weights["quantization_parameters"]["scales"], w_scales)
    assert weights["quantization_parameters"]["quantized_dimension"] == 0


def test_uint8_per_tensor_fully_connected() -> None:
    xq = RNG.integers(0, 256, (2, 8)).astype(np.uint8)
    wq = RNG.integers(0, 256, (4, 8)).astype(np.uint8)
    bq = RNG.integers(-1000, 1000, 4).astype(np.int32)
    sx, zx, sw, zw, sy, zy = 0.05, 128, 0.01, 120, 0.5, 128
    b = ModelBuilder()
    x = b.input("x", xq.shape, np.uint8, quant=Quant(sx, zx))
    w = b.constant("w", wq, quant=Quant(sw, zw))
    bias = b.constant("bias", bq, quant=Quant(sx * sw, 0))
    y = b.tensor("y", [2, 4], np.uint8, quant=Quant(sy, zy))
    b.op("FULLY_CONNECTED", [x, w, bias], [y], fused_activation_function="NONE")
    b.output(y)
    (out,) = _run(b, xq)
    real = ((xq.astype(np.int64) - zx) * sx) @ ((wq.astype(np.int64) - zw) * sw).T
    real += bq * sx * sw
    expected = _requantize(real, sy, zy, np.uint8)
    assert out.dtype == np.uint8
    np.testing.assert_allclose(out.astype(int), expected.astype(int), atol=1)


def test_int16x8_fully_connected_and_add() -> None:
    """16x8: int16 activations, int8 weights, int64 bias; runs at opcode version 1 in the
    reference resolver (as does int16 ADD)."""
    xq = RNG.integers(-3000, 3000, (2, 8)).astype(np.int16)
    wq = RNG.integers(-127, 128, (4, 8)).astype(np.int8)
    bq = RNG.integers(-5000, 5000, 4).astype(np.int64)
    sx, sw, sy, sz = 0.001, 0.02, 0.004, 0.005
    b = ModelBuilder()
    x = b.input("x", xq.shape, np.int16, quant=Quant(sx, 0))
    w = b.constant("w", wq, quant=Quant(sw, 0))
    bias = b.constant("bias", bq, quant=Quant(sx * sw, 0))
    y = b.tensor("y", [2, 4], np.int16, quant=Quant(sy, 0))
    z = b.tensor("z", [2, 4], np.int16, quant=Quant(sz, 0))
    b.op("FULLY_CONNECTED", [x, w, bias], [y])
    b.op("ADD", [y, y], [z], pot_scale_int16=False)
    b.output(y, z)
    out_y, out_z = _run(b, xq)
    real = (xq * sx) @ (wq * sw).T.astype(np.float64) + bq * sx * sw
    expected_y = _requantize(real, sy, 0, np.int16)
    assert out_y.dtype == out_z.dtype == np.int16
    np.testing.assert_allclose(out_y.astype(int), expected_y.astype(int), atol=1)
    expected_z = _requantize(2 * out_y * sy, sz, 0, np.int16)
    np.testing.assert_allclose(out_z.astype(int), expected_z.astype(int), atol=1)


# --------------------------------------------------------------------------------------
# Networks, I/O, other dtypes
# --------------------------------------------------------------------------------------


def test_conv_then_max_pool_two_outputs() -> None:
    xv = RNG.standard_normal((1, 8, 8, 2)).astype(np.float32)
    wv = RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)
    bv = np.zeros(4, np.float32)
    b = ModelBuilder()
    x = b.input("x", xv.shape, np.float32)
    c = b.tensor("conv", [1, 8, 8, 4], np.float32)
    p = b.tensor("pool", [1, 4, 4, 4], np.float32)
    b.op(
        "CONV_2D",
        [x, b.constant("w", wv), b.constant("b", bv)],
        [c],
        padding="SAME",
        stride_w=1,
        stride_h=1,
    )
    b.op(
        "MAX_POOL_2D",
        [c],
        [p],
        padding="VALID",
        stride_w=2,
        stride_h=2,
        filter_width=2,
        filter_height=2,
    )
    b.output(c, p)
    interpreter = _interpreter(b)
    assert [d["name"] for d in interpreter.get_output_details()] == ["conv", "pool"]
    out_c, out_p = _run(b, xv)
    conv = _conv2d_same(xv, wv, bv, 1)
    np.testing.assert_allclose(out_c, conv, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out_p, _max_pool_valid(conv, 2), rtol=1e-4, atol=1e-5)


def test_two_inputs() -> None:
    av = RNG.standard_normal((2, 3)).astype(np.float32)
    cv = RNG.standard_normal((2, 3)).astype(np.float32)
    b = ModelBuilder()
    a = b.input("a", av.shape, np.float32)
    c = b.input("c", cv.shape, np.float32)
    y = b.tensor("y", [2, 6], np.float32)
    b.op("CONCATENATION", [a, c], [y], axis=-1)
    b.output(y)
    interpreter = _interpreter(b)
    assert [d["name"] for d in interpreter.get_input_details()] == ["a", "c"]
    (out,) = _run(b, av, cv)
    np.testing.assert_array_equal(out, np.concatenate([av, cv], axis=-1))


def test_float16_int64_bool_int32_tensors() -> None:
    """Inputs and constants of the non-float32, non-quantized types."""
    b = ModelBuilder()
    h = b.input("h", [4], np.float16)
    i = b.input("i", [4], np.int64)
    f = b.tensor("f", [4], np.float32)
    f_const = b.tensor("f_const", [4], np.float32)
    less = b.tensor("less", [4], np.bool_)
    both = b.tensor("both", [4], np.bool_)
    as_int = b.tensor("as_int", [4], np.int32)
    b.op("DEQUANTIZE", [h], [f])
    b.op(
        "DEQUANTIZE", [b.constant("half", np.array([0.5, -1, 2, 3], np.float16))], [f_const]
    )
    b.op("LESS", [i, b.constant("limit", np.array([1, 5, 2, 9], np.int64))], [less])
    b.op(
        "LOGICAL_AND", [less, b.constant("mask", np.array([1, 1, 0, 1], np.bool_))], [both]
    )
    b.op("CAST", [both], [as_int])
    b.output(f, f_const, both, as_int)
    hv = np.array([1.0, 2.5, -3.0, 65504.0], np.float16)
    out_f, out_const, out_b, out_i = _run(b, hv, np.array([3, 3, 3, 3], np.int64))
    np.testing.assert_array_equal(out_f, hv.astype(np.float32))
    np.testing.assert_array_equal(out_const, [0.5, -1, 2, 3])
    np.testing.assert_array_equal(out_b, [False, True, False, True])
    assert out_i.dtype == np.int32
    np.testing.assert_array_equal(out_i, [0, 1, 0, 1])


def test_detection_postprocess_custom_op() -> None:
    """Zero box encodings decode to the anchors; three anchors score above threshold."""
    centers = np.array([[0.1, 0.1], [0.1, 0.6], [0.6, 0.1], [0.6, 0.6]], np.float32)
    anchors = np.concatenate([centers, np.full((4, 2), 0.2, np.float32)], axis=1)
    scores = np.full((1, 4, 4), 0.1, np.float32)  # [background, class 0, 1, 2]
    scores[0, 0, 2], scores[0, 1, 1], scores[0, 2, 3] = 0.9, 0.8, 0.7
    options = flexbuffer_options(
        {
            "max_detections": 3,
            "max_classes_per_detection": 1,
            "detections_per_class": 1,
            "use_regular_nms": False,
            "nms_score_threshold": 0.3,
            "nms_iou_threshold": 0.5,
            "num_classes": 3,
            "y_scale": 10.0,
            "x_scale": 10.0,
            "h_scale": 5.0,
            "w_scale": 5.0,
        }
    )
    b = ModelBuilder()
    boxes_in = b.input("box_encodings", [1, 4, 4], np.float32)
    scores_in = b.input("class_scores", [1, 4, 4], np.float32)
    outputs = [
        b.tensor("boxes", [1, 3, 4], np.float32),
        b.tensor("classes", [1, 3], np.float32),
        b.tensor("scores", [1, 3], np.float32),
        b.tensor("num_detections", [1], np.float32),
    ]
    b.custom_op(
        "TFLite_Detection_PostProcess",
        [boxes_in, scores_in, b.constant("anchors", anchors)],
        outputs,
        options=options,
    )
    b.output(*outputs)
    boxes, classes, out_scores, count = _run(b, np.zeros((1, 4, 4), np.float32), scores)
    expected = np.concatenate([centers[:3] - 0.1, centers[:3] + 0.1], axis=1)
    np.testing.assert_allclose(boxes[0], expected, atol=1e-6)
    np.testing.assert_array_equal(classes[0], [1, 0, 2])
    np.testing.assert_allclose(out_scores[0], [0.9, 0.8, 0.7], rtol=1e-6)
    np.testing.assert_array_equal(count, [3])


def test_save_writes_a_loadable_file(tmp_path: Path) -> None:
    b = ModelBuilder()
    x = b.input("x", [3], np.int32)
    y = b.tensor("y", [3], np.int32)
    b.op("NEG", [x], [y])
    b.output(y)
    path = b.save(tmp_path / "neg.tflite")
    assert path.read_bytes() == b.build()
    interpreter = litert.Interpreter(
        model_path=str(path),
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
    )
    interpreter.allocate_tensors()
    interpreter.set_tensor(
        interpreter.get_input_details()[0]["index"], np.array([1, -2, 3], np.int32)
    )
    interpreter.invoke()
    out = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    np.testing.assert_array_equal(out, [-1, 2, -3])


# --------------------------------------------------------------------------------------
# The flatbuffer itself, and the builder's checks
# --------------------------------------------------------------------------------------


def test_flatbuffer_layout_opcodes_and_quantization() -> None:
    """Buffer 0 is the empty sentinel, constants are 16-byte aligned, opcodes above 127
    keep `deprecated_builtin_code` at the placeholder, and identical opcodes are shared."""
    b = ModelBuilder()
    x = b.input("x", [2, 4], np.float32)
    g = b.tensor("g", [2, 4], np.float32)
    g2 = b.tensor("g2", [2, 4], np.float32)
    y = b.tensor("y", [2, 4], np.float32)
    w = b.constant(
        "w",
        np.arange(8, dtype=np.int8).reshape(2, 4),
        quant=Quant([0.5, 0.25], [0, 1], axis=-2),
    )
    b.op("GELU", [x], [g], approximate=True)
    b.op("GELU", [g], [g2])
    b.op("ADD", [g2, x], [y], version=2)
    b.output(y)
    data = b.build()
    assert data[4:8] == b"TFL3"
    model = tflite.Model.GetRootAs(data)
    assert model.Version() == 3
    assert model.Buffers(0).DataLength() == 0
    assert model.OperatorCodesLength() == 2
    gelu, add = model.OperatorCodes(0), model.OperatorCodes(1)
    assert (gelu.BuiltinCode(), gelu.DeprecatedBuiltinCode(), gelu.Version()) == (
        builtin_code("GELU"),
        127,
        1,
    )
    assert (add.BuiltinCode(), add.DeprecatedBuiltinCode(), add.Version()) == (0, 0, 2)
    subgraph = model.Subgraphs(0)
    first = subgraph.Operators(0)
    assert first.BuiltinOptionsType() == options_table("GELU").union_type
    w_tensor = subgraph.Tensors(w)
    assert w_tensor.Type() == tensor_type(np.int8)
    buffer = model.Buffers(w_tensor.Buffer())
    offset = buffer._tab.Vector(buffer._tab.Offset(4))
    assert offset % 16 == 0
    np.testing.assert_array_equal(buffer.DataAsNumpy().view(np.int8), np.arange(8))
    quant = w_tensor.Quantization()
    np.testing.assert_allclose(quant.ScaleAsNumpy(), [0.5, 0.25])
    np.testing.assert_array_equal(quant.ZeroPointAsNumpy(), [0, 1])
    assert quant.QuantizedDimension() == 0
    (out,) = _run(data, np.ones((2, 4), np.float32))
    assert out.shape == (2, 4)


def test_option_reflection() -> None:
    conv = options_table("CONV_2D")
    assert conv is not None
    assert conv.name == "Conv2DOptions"
    assert options_table("MEAN").name == "ReducerOptions"
    assert options_table("MAX_POOL_2D").name == "Pool2DOptions"
    assert options_table("BATCH_MATMUL").name == "BatchMatMulOptions"
    assert options_table("STABLEHLO_PAD").union == "BuiltinOptions2"
    assert options_table("LOGISTIC") is None
    resolved = {f.name: v for f, v in conv.resolve({"padding": "VALID", "stride_w": 2})}
    assert resolved == {"Padding": 1, "StrideW": 2}
    (shape,) = options_table("RESHAPE").resolve({"new_shape": (1, -1)})
    assert shape[1].dtype == np.int32


@pytest.mark.parametrize(
    ("op", "options", "message"),
    [
        ("CONV_2D", {"strid_w": 1}, "has no field 'strid_w'"),
        ("CONV_2D", {"padding": "SIDEWAYS"}, "no schema enum has a member"),
        ("CONV_2D", {"stride_w": 1.5}, "does not fit"),
        ("CONV_2D", {"stride_w": [1, 2]}, "takes a single value"),
        ("LOGISTIC", {"alpha": 1.0}, "has no options table"),
        ("NOT_AN_OP", {}, "is not a BuiltinOperator"),
    ],
)
def test_bad_options_are_rejected(op: str, options: dict, message: str) -> None:
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 1], np.float32)
    with pytest.raises(ValueError, match=message):
        b.op(op, [x], [x], **options)


def test_builder_checks() -> None:
    b = ModelBuilder()
    x = b.input("x", [2, 3], np.float32)
    with pytest.raises(ValueError, match="does not fit shape"):
        b.tensor("w", [2, 3], np.int8, quant=Quant([0.1, 0.2, 0.3], 0, axis=0))
    with pytest.raises(ValueError, match="zero points"):
        Quant([0.1, 0.2], [0, 0, 0]).arrays()
    with pytest.raises(IndexError):
        b.op("RELU", [x], [99])
    y = b.tensor("y", [2, 3], np.float32)
    z = b.tensor("z", [2, 3], np.float32)
    b.op("RELU", [y], [z])  # y is never written
    b.output(z)
    with pytest.raises(ValueError, match="no earlier operator writes"):
        b.build()
    assert b.build(validate=False)


def test_unregistered_opcode_version_is_refused() -> None:
    b = ModelBuilder()
    x = b.input("x", [3], np.float32)
    y = b.tensor("y", [3], np.float32)
    b.op("RELU", [x], [y], version=99)
    b.output(y)
    with pytest.raises(ValueError, match="version '99'"):
        _interpreter(b)


def test_absent_optional_input() -> None:
    """-1 marks an absent input: FULLY_CONNECTED runs without bias, while LiteRT refuses
    a -1 bias for CONV_2D (its bias is required; see the builder's module docstring)."""
    xv = RNG.standard_normal((2, 8)).astype(np.float32)
    wv = RNG.standard_normal((3, 8)).astype(np.float32)
    b = ModelBuilder()
    x = b.input("x", xv.shape, np.float32)
    y = b.tensor("y", [2, 3], np.float32)
    b.op("FULLY_CONNECTED", [x, b.constant("w", wv), -1], [y])
    b.output(y)
    data = b.build()
    inputs = tflite.Model.GetRootAs(data).Subgraphs(0).Operators(0).InputsAsNumpy()
    assert inputs[-1] == -1
    (out,) = _run(data, xv)
    np.testing.assert_allclose(out, xv @ wv.T, rtol=1e-5, atol=1e-6)

    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 2], np.float32)
    y = b.tensor("y", [1, 4, 4, 3], np.float32)
    w = b.constant("w", np.ones((3, 1, 1, 2), np.float32))
    b.op("CONV_2D", [x, w, -1], [y], padding="SAME", stride_w=1, stride_h=1)
    b.output(y)
    with pytest.raises(RuntimeError, match="optional but was expected"):
        _interpreter(b)
