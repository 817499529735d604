"""ONNX unary math and activation operators (Celu, ThresholdedRelu, Shrink, Softplus,
Softsign, Mish, Sign, Floor, Ceil, Round, the trigonometric and hyperbolic functions),
Mod, Mean and Clip with run-time or integer bounds: each compiled for GENERIC and
compared with ONNX's reference implementation on edge values, and every input synapc
cannot represent refused with one line naming the node, the operator and the input or
attribute."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import synapc
from synapc.model import Model
from synapc.weights import WeightStore

#: Edge values of the float functions: zeros of both signs, halves (Round's ties), the
#: domain limits of the inverse functions and values outside them (NaN results).
EDGES = np.array(
    [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.5, 0.99, -0.99, 1.0, -1.0, 1.2, 3.7, -3.7, 20.0],
    np.float32,
)


def _model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 22,
) -> onnx.ModelProto:
    """A graph of `nodes` whose graph inputs are typed and shaped like `inputs`, with
    output y."""
    values = [
        helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape
        )
        for name, array in inputs.items()
    ]
    inits = [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()]
    graph = helper.make_graph(
        nodes, "g", values, [helper.make_tensor_value_info("y", 0, None)], inits
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(tmp_path: Path, model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> Any:
    """`model` imported, compiled for GENERIC and run on `inputs`: its output y."""
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    exe = synapc.compile(synapc.import_model(path), "GENERIC")
    return np.asarray(exe.run(list(inputs.values()))[0])


def _expected(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """ONNX's reference implementation of `model` on `inputs`."""
    with np.errstate(all="ignore"):
        return np.asarray(ReferenceEvaluator(model).run(None, inputs)[0])


def _check(
    tmp_path: Path,
    nodes: list[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 22,
) -> np.ndarray:
    """synapc's output of the graph equals the reference: exactly for integers, within
    rtol 1e-5 for floats (NaN where the reference is NaN); returns it."""
    model = _model(nodes, inputs, initializers, opset)
    got = _run(tmp_path, model, inputs)
    want = _expected(model, inputs)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
    return got


def _refused(tmp_path: Path, model: onnx.ModelProto, *parts: str) -> None:
    """Importing and compiling `model` fails with one line holding every one of
    `parts`."""
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    with pytest.raises(synapc.SynapcError) as error:
        synapc.compile(synapc.import_model(path), "GENERIC")
    text = str(error.value)
    assert "\n" not in text and "Traceback" not in text
    for part in parts:
        assert part in text, text


# -- float functions -------------------------------------------------------------------
@pytest.mark.parametrize(
    "op_type",
    [
        "Softplus",
        "Softsign",
        "Mish",
        "Sign",
        "Floor",
        "Ceil",
        "Round",
        "Sin",
        "Cos",
        "Tan",
        "Asin",
        "Acos",
        "Atan",
        "Sinh",
        "Cosh",
        "Asinh",
        "Acosh",
        "Atanh",
    ],
)
def test_float_function_matches_the_reference(tmp_path: Path, op_type: str) -> None:
    x = EDGES.reshape(3, 5)
    _check(tmp_path, [helper.make_node(op_type, ["x"], ["y"])], {"x": x})


def test_round_takes_halves_to_even(tmp_path: Path) -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999998, 1e7 + 1], np.float32)
    got = _check(tmp_path, [helper.make_node("Round", ["x"], ["y"])], {"x": x})
    np.testing.assert_array_equal(got[:6], [0, 2, 2, -0, -2, -2])


@pytest.mark.parametrize("alpha", [1.0, 2.0, 0.3])
def test_celu(tmp_path: Path, alpha: float) -> None:
    node = helper.make_node("Celu", ["x"], ["y"], alpha=alpha)
    _check(tmp_path, [node], {"x": EDGES.reshape(1, 3, 5)}, opset=12)


@pytest.mark.parametrize("alpha", [1.0, 0.0, -0.5])
def test_thresholded_relu(tmp_path: Path, alpha: float) -> None:
    node = helper.make_node("ThresholdedRelu", ["x"], ["y"], alpha=alpha)
    _check(tmp_path, [node], {"x": EDGES})


@pytest.mark.parametrize("lambd, bias", [(0.5, 0.0), (1.5, 1.5), (-1.0, 0.25), (0.0, 2.0)])
def test_shrink_of_floats(tmp_path: Path, lambd: float, bias: float) -> None:
    node = helper.make_node("Shrink", ["x"], ["y"], lambd=lambd, bias=bias)
    _check(tmp_path, [node], {"x": EDGES}, opset=9)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8])
@pytest.mark.parametrize(
    "lambd, bias", [(0.5, 0.0), (1.5, 1.5), (2.0, -0.75), (-1.0, 0.25), (3.0, 2.0)]
)
def test_shrink_of_integers_is_exact(
    tmp_path: Path, dtype: type, lambd: float, bias: float
) -> None:
    """The thresholds and the bias are real numbers; the shifted value is truncated
    toward zero, as ONNX's reference casts it back (computed in integers: int32 values
    beyond float32's exact range stay exact)."""
    info = np.iinfo(dtype)
    values = [-4, -3, -2, -1, 0, 1, 2, 3, 4, int(info.max) - 1, int(info.min) + 3]
    if dtype is np.int32:
        values += [16777217, -16777219]
    x = np.array([v for v in values if info.min <= v <= info.max], dtype)
    node = helper.make_node("Shrink", ["x"], ["y"], lambd=lambd, bias=bias)
    _check(tmp_path, [node], {"x": x}, opset=9)


def test_sign_of_integers(tmp_path: Path) -> None:
    for dtype in (np.int8, np.int32, np.uint8, np.int64):
        info = np.iinfo(dtype)
        low = max(int(info.min), -(2**31))
        values = [low, -5, 0, 7, min(int(info.max), 2**31 - 1)]
        x = np.array([v for v in values if v >= info.min], dtype)
        _check(tmp_path, [helper.make_node("Sign", ["x"], ["y"])], {"x": x}, opset=13)


# -- Mod -------------------------------------------------------------------------------
@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize(
    "dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32]
)
def test_mod_of_integers(tmp_path: Path, dtype: type, fmod: int) -> None:
    """fmod 0 takes the sign of the divisor, fmod 1 the sign of the dividend; extreme
    values and a zero divisor (0, as numpy) included."""
    info = np.iinfo(dtype)
    low, high = max(int(info.min), -(2**31)), min(int(info.max), 2**31 - 1)
    values = sorted(
        v for v in {low, low + 1, -7, -3, -1, 0, 1, 3, 7, high} if low <= v <= high
    )
    a, b = np.meshgrid(np.array(values, dtype), np.array(values, dtype))
    node = helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)
    _check(tmp_path, [node], {"a": a, "b": b}, opset=13)


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_of_floats(tmp_path: Path, fmod: int) -> None:
    """Floored and truncated float remainders with ONNX's special cases (infinities,
    zero divisors, NaN), zeros taking the sign ONNX gives them."""
    special = np.array(
        [0.0, -0.0, 1.5, -1.5, 7.25, -7.25, np.inf, -np.inf, np.nan], np.float32
    )
    a, b = np.meshgrid(special, special)
    node = helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)
    got = _check(tmp_path, [node], {"a": a, "b": b}, opset=13)
    model = _model([node], {"a": a, "b": b}, opset=13)
    want = _expected(model, {"a": a, "b": b})
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


def test_mod_broadcasts(tmp_path: Path) -> None:
    a = np.arange(-12, 12, dtype=np.int32).reshape(2, 3, 4)
    b = np.array([5, -3, 2, -7], np.int32)
    node = helper.make_node("Mod", ["a", "b"], ["y"])
    _check(tmp_path, [node], {"a": a, "b": b}, opset=13)


# -- Mean ------------------------------------------------------------------------------
def test_mean_of_three_broadcast_inputs(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    inputs = {
        "a": rng.standard_normal((2, 3, 4), np.float32),
        "b": rng.standard_normal((4,), np.float32),
        "c": rng.standard_normal((3, 1), np.float32),
    }
    _check(tmp_path, [helper.make_node("Mean", ["a", "b", "c"], ["y"])], inputs, opset=13)


def test_mean_of_one_input_is_the_input(tmp_path: Path) -> None:
    x = EDGES.reshape(3, 5)
    got = _check(tmp_path, [helper.make_node("Mean", ["x"], ["y"])], {"x": x}, opset=13)
    np.testing.assert_array_equal(got, x)


# -- Clip ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int32, np.uint8])
@pytest.mark.parametrize("low, high", [(1, 5), (7, 2)])  # min above max: max everywhere
def test_clip_with_run_time_bounds(
    tmp_path: Path, dtype: type, low: int, high: int
) -> None:
    x = np.array([[0, 1, 3, 6, 9, 100]], dtype)
    inputs = {"x": x, "lo": np.array(low, dtype), "hi": np.array(high, dtype)}
    _check(tmp_path, [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], inputs, opset=13)


def test_clip_with_one_run_time_bound(tmp_path: Path) -> None:
    x = EDGES.reshape(3, 5)
    node = helper.make_node("Clip", ["x", "", "hi"], ["y"])
    _check(tmp_path, [node], {"x": x, "hi": np.array(0.7, np.float32)}, opset=13)


def test_clip_of_int32_by_bounds_beyond_float32_is_exact(tmp_path: Path) -> None:
    """A constant int32 bound that float32 cannot hold (a clamp property is float32)
    becomes an exact integer maximum / minimum."""
    x = np.array([16777215, 16777216, 16777217, 16777218, -16777219, 0], np.int32)
    bounds = {"lo": np.array(-16777217, np.int32), "hi": np.array(16777217, np.int32)}
    node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
    got = _check(tmp_path, [node], {"x": x}, initializers=bounds, opset=13)
    assert got[3] == 16777217 and got[4] == -16777217


def test_clip_of_int8_by_constant_bounds(tmp_path: Path) -> None:
    x = np.array([-128, -5, 0, 5, 127], np.int8)
    bounds = {"lo": np.array(-4, np.int8), "hi": np.array(6, np.int8)}
    node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
    _check(tmp_path, [node], {"x": x}, initializers=bounds, opset=13)


def test_quantized_clip_with_a_run_time_bound_computes_in_float(tmp_path: Path) -> None:
    """A QDQ Clip whose bound is computed is not folded into one quantized op: it clips
    the dequantized values, then quantizes."""
    nodes = [
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
        helper.make_node("Clip", ["xf", "lo", "hi"], ["yf"]),
        helper.make_node("QuantizeLinear", ["yf", "s", "z"], ["y"]),
    ]
    inputs = {
        "xq": np.arange(0, 256, 17, dtype=np.uint8).reshape(1, 16),
        "lo": np.array(-1.0, np.float32),
        "hi": np.array(2.5, np.float32),
    }
    consts = {"s": np.array(0.05, np.float32), "z": np.array(128, np.uint8)}
    _check(tmp_path, nodes, inputs, initializers=consts, opset=19)


# -- refusals --------------------------------------------------------------------------
@pytest.mark.parametrize("op_type", ["Sin", "Floor", "Softplus", "ThresholdedRelu", "Celu"])
def test_float_only_operator_refuses_integers(tmp_path: Path, op_type: str) -> None:
    x = np.zeros((2, 3), np.int32)
    model = _model([helper.make_node(op_type, ["x"], ["y"], name="n")], {"x": x})
    _refused(tmp_path, model, f"node 'n' ({op_type}", "input 0 ('x') is i32")


def test_mod_refuses_a_bad_fmod_and_mixed_types(tmp_path: Path) -> None:
    a, b = np.zeros(3, np.int32), np.ones(3, np.int32)
    node = helper.make_node("Mod", ["a", "b"], ["y"], name="m", fmod=2)
    model = _model([node], {"a": a, "b": b}, opset=13)
    _refused(tmp_path, model, "node 'm' (Mod", "attribute 'fmod' 2 must be 0 or 1")
    node = helper.make_node("Mod", ["a", "b"], ["y"], name="m")
    model = _model([node], {"a": a, "b": b.astype(np.int16)}, opset=13)
    _refused(tmp_path, model, "node 'm' (Mod", "input 1 is i16, input 0 i32")


def test_mean_refuses_integers(tmp_path: Path) -> None:
    a = np.zeros(3, np.int32)
    model = _model(
        [helper.make_node("Mean", ["a", "a"], ["y"], name="m")], {"a": a}, opset=13
    )
    _refused(tmp_path, model, "node 'm' (Mean", "input 0 ('a') is i32")


def test_clip_refuses_a_bound_that_is_not_a_scalar(tmp_path: Path) -> None:
    inputs = {"x": np.zeros((2, 3), np.float32), "lo": np.zeros(3, np.float32)}
    model = _model(
        [helper.make_node("Clip", ["x", "lo"], ["y"], name="c")], inputs, opset=13
    )
    _refused(tmp_path, model, "node 'c' (Clip", "the bound (input 1) must be a scalar")
    inputs = {"x": np.zeros((2, 3), np.float32), "lo": np.zeros((), np.int32)}
    model = _model(
        [helper.make_node("Clip", ["x", "lo"], ["y"], name="c")], inputs, opset=13
    )
    _refused(tmp_path, model, "node 'c' (Clip", "the bound (input 1) is i32")


def test_shrink_of_integers_refuses_an_infinite_threshold(tmp_path: Path) -> None:
    x = np.zeros(4, np.int32)
    node = helper.make_node("Shrink", ["x"], ["y"], name="s", lambd=float("inf"))
    model = _model([node], {"x": x}, opset=9)
    _refused(tmp_path, model, "node 's' (Shrink", "'lambd' inf", "must be finite")


def test_celu_refuses_alpha_zero(tmp_path: Path) -> None:
    node = helper.make_node("Celu", ["x"], ["y"], name="c", alpha=0.0)
    model = _model([node], {"x": EDGES}, opset=12)
    _refused(tmp_path, model, "node 'c' (Celu", "attribute 'alpha' must not be 0")


_QUANTIZED = "!quant.uniform<i8:f32, 0.1>"


@pytest.mark.parametrize(
    "op",
    ["sin", "softplus", "mish", "floor", "round", "sign", "shrink", "thresholded_relu"],
)
def test_quantized_math_is_refused_at_compile_time(op: str) -> None:
    """The new ops have no TFLite integer kernel: a quantized one is refused by
    `synapc.compile`, naming the layer, never at run time."""
    text = (
        f"func.func @main(%x: tensor<4x{_QUANTIZED}>) -> tensor<4x{_QUANTIZED}> {{\n"
        f'  %0 = synap.{op} %x {{layer_name = "q"}} : (tensor<4x{_QUANTIZED}>) -> '
        f"tensor<4x{_QUANTIZED}>\n"
        f"  func.return %0 : tensor<4x{_QUANTIZED}>\n}}\n"
    )
    weights = WeightStore()
    model = Model.from_module(synapc.parse_module(text, weights), weights)
    with pytest.raises(synapc.SynapcError) as error:
        synapc.compile(model, "GENERIC")
    assert 'layer "q"' in str(error.value) and f"quantized synap.{op}" in str(error.value)


def test_quantized_mod_is_refused_at_compile_time() -> None:
    text = (
        f"func.func @main(%x: tensor<4x{_QUANTIZED}>) -> tensor<4x{_QUANTIZED}> {{\n"
        f'  %0 = synap.mod %x, %x {{layer_name = "q"}} : (tensor<4x{_QUANTIZED}>, '
        f"tensor<4x{_QUANTIZED}>) -> tensor<4x{_QUANTIZED}>\n"
        f"  func.return %0 : tensor<4x{_QUANTIZED}>\n}}\n"
    )
    weights = WeightStore()
    model = Model.from_module(synapc.parse_module(text, weights), weights)
    with pytest.raises(synapc.SynapcError, match=r"quantized synap\.mod"):
        synapc.compile(model, "GENERIC")


@pytest.mark.parametrize("op", ["floor", "sin", "softsign"])
def test_integer_operands_of_real_functions_are_refused(op: str) -> None:
    """Float-only functions are `real_valued`: an integer tensor is refused at compile
    time (the importer refuses it earlier, naming the ONNX node)."""
    text = (
        "func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {\n"
        f"  %0 = synap.{op} %x : (tensor<4xi32>) -> tensor<4xi32>\n"
        "  func.return %0 : tensor<4xi32>\n}\n"
    )
    weights = WeightStore()
    model = Model.from_module(synapc.parse_module(text, weights), weights)
    with pytest.raises(synapc.SynapcError, match="real-valued function"):
        synapc.compile(model, "GENERIC")
