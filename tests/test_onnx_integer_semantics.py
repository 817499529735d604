"""Quantized ONNX models compute as ONNX defines them (`IntegerSemantics.ONNX`): the
importer marks the module, and the backend rescales in float32 with ties to even, as
ONNX Runtime does, instead of TFLite's fixed-point arithmetic."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import StringAttr

import synapc
from synapc.dialects.synap.attributes import INTEGER_SEMANTICS_ATTR, IntegerSemantics
from synapc.errors import SynapcError
from synapc.testing.onnx_reference import steps_to_nearer_reference


def _save(tmp_path, nodes, inputs, outputs, initializers, name="m.onnx"):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # what ONNX Runtime 1.31 reads
    path = tmp_path / name
    onnx.save(model, str(path))
    return path


def _scalar(name: str, value, dtype) -> TensorProto:
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def _onnxruntime(path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """ONNX Runtime unfused (optimizations off): the same on every CPU."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


@pytest.fixture
def add_three(tmp_path):
    """uint8 x (scale 0.0593, zero point 107) + 3.0 (quantized as 255 * 3/255) into
    scale 6/255: the first half of a quantized hard-swish. x = 0 (the zero point, the
    commonest value) lands a hair off the tie 127.5, where TFLite's fixed-point rescaling
    and ONNX's float32 arithmetic round to different sides."""
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xf"]),
        helper.make_node("DequantizeLinear", ["c", "sc", "zc"], ["cf"]),
        helper.make_node("Add", ["xf", "cf"], ["yf"]),
        helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["y"]),
    ]
    inits = [
        _scalar("sx", 0.0592663437128067, np.float32),
        _scalar("zx", 107, np.uint8),
        _scalar("c", [255], np.uint8),
        _scalar("sc", 3.0 / 255, np.float32),
        _scalar("zc", 0, np.uint8),
        _scalar("sy", 6.0 / 255, np.float32),
        _scalar("zy", 0, np.uint8),
    ]
    return _save(
        tmp_path,
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 256])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 256])],
        inits,
    )


def test_quantized_module_is_marked_onnx(add_three) -> None:
    model = synapc.import_model(add_three)
    assert model.integer_semantics is IntegerSemantics.ONNX
    assert f'{INTEGER_SEMANTICS_ATTR} = "onnx"' in str(model)


def test_float_module_keeps_the_default(tmp_path) -> None:
    path = _save(
        tmp_path,
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [],
    )
    model = synapc.import_model(path)
    assert INTEGER_SEMANTICS_ATTR not in model.module.attributes
    assert model.integer_semantics is IntegerSemantics.TFLITE


def test_unknown_semantics_is_named(add_three) -> None:
    model = synapc.import_model(add_three)
    model.module.attributes[INTEGER_SEMANTICS_ATTR] = StringAttr("caffe")
    with pytest.raises(SynapcError, match=f"{INTEGER_SEMANTICS_ATTR}.*caffe"):
        synapc.compile(model, "VS680")


@pytest.mark.parametrize("target", ["VS680", "GENERIC"])
def test_add_matches_onnx_definition_on_every_input(add_three, target: str) -> None:
    x = np.arange(256, dtype=np.uint8).reshape(1, 256)
    expected = _onnxruntime(add_three, {"x": x})
    model = synapc.import_model(add_three)
    out = synapc.compile(model, target).run([x])[0]
    np.testing.assert_array_equal(out, expected)


def test_tflite_semantics_round_the_near_tie_otherwise(add_three) -> None:
    """The same module under TFLite semantics: the reason ONNX models need their own."""
    model = synapc.import_model(add_three)
    del model.module.attributes[INTEGER_SEMANTICS_ATTR]
    x = np.arange(256, dtype=np.uint8).reshape(1, 256)
    expected = _onnxruntime(add_three, {"x": x})
    out = synapc.compile(model, "VS680").run([x])[0]
    assert abs(int(out[0, 107]) - int(expected[0, 107])) == 1


def test_quantize_rounds_half_to_even_in_float32(tmp_path) -> None:
    """Float input quantized on VS680: in float32 (float16 would move values across
    rounding boundaries) with ties to even (0.5 -> 0, 1.5 -> 2)."""
    path = _save(
        tmp_path,
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2001])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2001])],
        [_scalar("s", 2.0 / 255, np.float32), _scalar("z", 128, np.uint8)],
    )
    x = np.linspace(-1, 1, 2001, dtype=np.float32).reshape(1, -1)
    x[0, :8] = (np.arange(8) + 0.5) * np.float32(2.0 / 255)  # exact ties
    out = synapc.compile(synapc.import_model(path), "VS680").run([x])[0]
    np.testing.assert_array_equal(out, _onnxruntime(path, {"x": x}))


def test_per_channel_qlinearconv_matches_the_exact_references(tmp_path) -> None:
    """Full-range int8 per-channel weights: ONNX Runtime's fused QLinearConv saturates on
    CPUs without AVX-512 VNNI, so the oracle is the unfused graph (float32 and float64):
    every element within one step of the nearer, 99% equal."""
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8)
    w_scale = rng.uniform(0.002, 0.02, 8).astype(np.float32)
    bias = rng.integers(-2000, 2000, 8).astype(np.int32)
    inits = [
        _scalar("xs", 0.02, np.float32),
        _scalar("xz", 120, np.uint8),
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(w_scale, "ws"),
        numpy_helper.from_array(np.zeros(8, np.int8), "wz"),
        _scalar("ys", 0.05, np.float32),
        _scalar("yz", 100, np.uint8),
        numpy_helper.from_array(bias, "b"),
    ]
    node = helper.make_node(
        "QLinearConv",
        ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
        ["y"],
        pads=[1, 1, 1, 1],
    )
    path = _save(
        tmp_path,
        [node],
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 8, 12, 12])],
        inits,
    )
    x = rng.integers(0, 256, (1, 4, 12, 12)).astype(np.uint8)
    out = synapc.compile(synapc.import_model(path), "VS680").run([x])[0]
    steps = steps_to_nearer_reference(out, path, {"x": x})
    assert steps.max() <= 1
    assert (steps == 0).mean() >= 0.99
