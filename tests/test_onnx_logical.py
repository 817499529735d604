"""ONNX comparisons, logic, Where, IsInf / IsNaN, bitwise ops and BitShift end to end:
booleans through layouts, casts, model outputs and the package runtime; quantized
comparisons and selects; BitShift's edge cases; and refusals that name the node."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.utils.exceptions import VerifyException

import synapc
from synapc.dialects.synap import logical as lg
from synapc.dialects.synap.conversion import DequantizeOp
from synapc.mlir_io import parse_module
from synapc.testing.pass_check import model_from_text
from synapc.weights import WeightStore

SHAPE = [1, 4, 5, 5]


def _save(
    tmp_path: Path,
    nodes: list[onnx.NodeProto],
    inputs: list[tuple[str, int, list[int]]],
    outputs: list[tuple[str, int, list[int] | None]],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 19,
) -> Path:
    """A model of `nodes` saved in `tmp_path` (not checked: error tests build bad ones)."""
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


def _reference(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """ONNX's reference implementation's outputs."""
    return [np.asarray(v) for v in ReferenceEvaluator(str(path)).run(None, feeds)]


def _assert_same(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    """Same dtypes, shapes and values (exactly: the tests use exact data)."""
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape)
        np.testing.assert_array_equal(g, w)


# -- booleans through layouts, casts, outputs and the package --------------------------
def _mixed_layout_model(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """An NCHW convolution (held channels-last) compared with a rank-2 graph input and a
    boolean graph input; every boolean op, casts to and from bool, boolean outputs.
    Integer-valued data keeps every value exact in float16 (VS680)."""
    rng = np.random.default_rng(0)
    weights = rng.integers(-2, 3, (4, 3, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Greater", ["c", "y"], ["g"]),
        helper.make_node("LessOrEqual", ["y", "c"], ["le"]),
        helper.make_node("Not", ["g"], ["ng"]),
        helper.make_node("Where", ["g", "c", "zero"], ["relu"]),
        helper.make_node("Cast", ["ng"], ["ngf"], to=TensorProto.FLOAT),
        helper.make_node("Equal", ["b", "g"], ["eq"]),
        helper.make_node("Xor", ["eq", "ng"], ["xr"]),
        helper.make_node("IsNaN", ["c"], ["nan"]),
        helper.make_node("Or", ["nan", "xr"], ["ob"]),
        helper.make_node("And", ["ob", "le"], ["ab"]),
        helper.make_node("Cast", ["c"], ["cb"], to=TensorProto.BOOL),
    ]
    b, f = TensorProto.BOOL, TensorProto.FLOAT
    path = _save(
        tmp_path,
        nodes,
        [("x", f, [1, 3, 5, 5]), ("y", f, [5, 1]), ("b", b, SHAPE)],
        [("relu", f, SHAPE), ("ngf", f, SHAPE), ("ab", b, SHAPE), ("cb", b, SHAPE)],
        {"w": weights, "zero": np.zeros((1,), np.float32)},
    )
    feeds = {
        "x": rng.integers(-3, 4, (1, 3, 5, 5)).astype(np.float32),
        "y": rng.integers(-4, 4, (5, 1)).astype(np.float32) + np.float32(0.5),
        "b": rng.random(SHAPE) > 0.5,
    }
    return path, feeds


@pytest.mark.parametrize("target", ["GENERIC", "VS680"])
def test_booleans_across_layouts_match_onnx(tmp_path: Path, target: str) -> None:
    path, feeds = _mixed_layout_model(tmp_path)
    model = synapc.import_model(path)
    got = synapc.compile(model, target).run(list(feeds.values()))
    _assert_same(got, _reference(path, feeds))


def test_boolean_inputs_and_outputs_through_the_package(tmp_path: Path) -> None:
    path, feeds = _mixed_layout_model(tmp_path)
    synapc.convert(path, "VS680", tmp_path / "out")
    network = synapc.Network(tmp_path / "out" / "model.synap")
    assert [t.data_type for t in network.inputs][-1] == np.bool_
    for tensor, value in zip(network.inputs, feeds.values(), strict=True):
        tensor.assign(value)
    got = [t.to_numpy() for t in network.predict()]
    _assert_same(got, _reference(path, feeds))


# -- quantized comparisons and selects ---------------------------------------------------
def _qdq_model(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """x and y share one quantization, w has another; comparisons of each pair and
    Wheres folded into their QuantizeLinear."""
    nodes = [
        helper.make_node("QuantizeLinear", ["xf", "s1", "z1"], ["xq"]),
        helper.make_node("QuantizeLinear", ["yf", "s1", "z1"], ["yq"]),
        helper.make_node("QuantizeLinear", ["wf", "s2", "z2"], ["wq"]),
        helper.make_node("DequantizeLinear", ["xq", "s1", "z1"], ["x"]),
        helper.make_node("DequantizeLinear", ["yq", "s1", "z1"], ["y"]),
        helper.make_node("DequantizeLinear", ["wq", "s2", "z2"], ["w"]),
        helper.make_node("Greater", ["x", "y"], ["same"]),
        helper.make_node("Equal", ["x", "w"], ["other"]),
        helper.make_node("Where", ["same", "x", "w"], ["sel"]),
        helper.make_node("QuantizeLinear", ["sel", "s3", "z3"], ["selq"]),
        helper.make_node("Where", ["other", "x", "y"], ["sel2"]),
        helper.make_node("QuantizeLinear", ["sel2", "s1", "z1"], ["sel2q"]),
    ]
    f, b, u8 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.UINT8
    path = _save(
        tmp_path,
        nodes,
        [(n, f, SHAPE) for n in ("xf", "yf", "wf")],
        [
            ("same", b, SHAPE),
            ("other", b, SHAPE),
            ("selq", u8, SHAPE),
            ("sel2q", u8, SHAPE),
        ],
        {
            "s1": np.float32(0.1),
            "z1": np.uint8(128),
            "s2": np.float32(0.05),
            "z2": np.uint8(100),
            "s3": np.float32(0.07),
            "z3": np.uint8(120),
        },
    )
    rng = np.random.default_rng(1)
    x, y, w = (rng.integers(0, 256, SHAPE) for _ in range(3))
    w[0, 0] = (x[0, 0] - 128) * 2 + 100  # the same real values as x in one row
    w = np.clip(w, 0, 255)
    feeds = {
        "xf": ((x - 128) * 0.1).astype(np.float32),
        "yf": ((y - 128) * 0.1).astype(np.float32),
        "wf": ((w - 100) * 0.05).astype(np.float32),
    }
    return path, feeds


def test_quantized_comparisons_and_selects(tmp_path: Path) -> None:
    """One quantization: the stored integers compare (no dequantize); two: float32 real
    values compare. Wheres select quantized values, requantized where they differ."""
    path, feeds = _qdq_model(tmp_path)
    model = synapc.import_model(path)
    ops = {op.attributes["layer_name"].data: op for op in model.main.body.block.ops
           if "layer_name" in op.attributes}  # fmt: skip
    same, other = ops["same"], ops["other"]
    assert isinstance(same, lg.GreaterOp)
    assert not any(isinstance(v.owner, DequantizeOp) for v in same.operands)
    assert all(isinstance(v.owner, DequantizeOp) for v in other.operands)
    assert all(isinstance(ops[n], lg.SelectOp) for n in ("sel", "sel2"))
    want = _reference(path, feeds)
    assert want[1].any()  # the row of equal real values
    for target in ("GENERIC", "VS680"):
        _assert_same(synapc.compile(model, target).run(list(feeds.values())), want)


def _raw_quantized_model(tmp_path: Path, scale: float, zero_point: int) -> Path:
    """Greater and Where of two QuantizeLinear results read directly (uint8 to ONNX)."""
    f, b, u8 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.UINT8
    nodes = [
        helper.make_node("QuantizeLinear", ["xf", "s1", "z1"], ["xq"]),
        helper.make_node("QuantizeLinear", ["yf", "s2", "z2"], ["yq"]),
        helper.make_node("Greater", ["xq", "yq"], ["g"], name="greater"),
        helper.make_node("Where", ["c", "xq", "yq"], ["w"]),
    ]
    return _save(
        tmp_path,
        nodes,
        [("xf", f, [2, 6]), ("yf", f, [2, 6]), ("c", b, [2, 6])],
        [("g", b, [2, 6]), ("w", u8, [2, 6])],
        {
            "s1": np.float32(0.1),
            "z1": np.uint8(128),
            "s2": np.float32(scale),
            "z2": np.uint8(zero_point),
        },
    )


def test_quantize_linear_results_compare_as_stored_integers(tmp_path: Path) -> None:
    """ONNX compares and selects the stored integers of QuantizeLinear results: done on
    one quantization, refused naming the node for two."""
    path = _raw_quantized_model(tmp_path, 0.1, 128)
    rng = np.random.default_rng(7)
    feeds = {
        "xf": rng.normal(size=(2, 6)).astype(np.float32),
        "yf": rng.normal(size=(2, 6)).astype(np.float32),
        "c": rng.random((2, 6)) > 0.5,
    }
    got = synapc.compile(synapc.import_model(path), "VS680").run(list(feeds.values()))
    _assert_same(got, _reference(path, feeds))
    path = _raw_quantized_model(tmp_path, 0.05, 100)
    with pytest.raises(synapc.SynapcError, match=r"node 'greater' .*combine only with"):
        synapc.import_model(path)


_QUANTIZED_TEXT = """
func.func @main(%a: tensor<2x8x!quant.uniform<u8:f32, 0.1:128>>,
                %b: tensor<8x!quant.uniform<i8:f32, 0.05:-3>>,
                %c: tensor<2x1xi1>)
    -> (tensor<2x8xi1>, tensor<2x8xi1>, tensor<2x8x!quant.uniform<u8:f32, 0.07:120>>) {
  %0 = synap.less %a, %b : (tensor<2x8x!quant.uniform<u8:f32, 0.1:128>>,
      tensor<8x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<2x8xi1>
  %1 = synap.equal %a, %b : (tensor<2x8x!quant.uniform<u8:f32, 0.1:128>>,
      tensor<8x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<2x8xi1>
  %2 = synap.select %c, %a, %b : (tensor<2x1xi1>,
      tensor<2x8x!quant.uniform<u8:f32, 0.1:128>>,
      tensor<8x!quant.uniform<i8:f32, 0.05:-3>>)
      -> tensor<2x8x!quant.uniform<u8:f32, 0.07:120>>
  func.return %0, %1, %2 : tensor<2x8xi1>, tensor<2x8xi1>,
      tensor<2x8x!quant.uniform<u8:f32, 0.07:120>>
}
"""


def test_quantized_kernels_compare_real_values() -> None:
    """Without ONNX semantics too, different quantizations compare float32 real values
    and a select requantizes (round half to even) to the result's quantization."""
    model = model_from_text(_QUANTIZED_TEXT)
    a = np.random.default_rng(2).integers(0, 256, (2, 8)).astype(np.uint8)
    b = np.clip((a[0].astype(np.int64) - 128) * 2 - 3, -128, 127).astype(np.int8)
    b[::2] = np.random.default_rng(3).integers(-128, 128, 4)
    c = np.array([[True], [False]])
    real_a = (a.astype(np.float32) - 128) * np.float32(0.1)
    real_b = (b.astype(np.float32) + 3) * np.float32(0.05)
    picked = np.where(c, real_a, real_b)
    requantized = np.clip(np.round(picked / np.float32(0.07)) + 120, 0, 255)
    less, equal, select = synapc.compile(model, "GENERIC").run([a, b, c])
    np.testing.assert_array_equal(less, real_a < real_b)
    np.testing.assert_array_equal(equal, real_a == real_b)
    assert equal.any()
    np.testing.assert_array_equal(select, requantized.astype(np.uint8))


# -- BitShift, bitwise ops, IsInf --------------------------------------------------------
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32"])
def test_bitshift_edge_cases(tmp_path: Path, dtype: str, direction: str) -> None:
    """Overflowing left shifts, sign-extending right shifts, negative amounts and amounts
    of at least the width (opset 28 semantics), broadcast."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(4)
    x = rng.integers(info.min, int(info.max) + 1, (3, 6)).astype(dtype)
    low = -3 if info.min < 0 else 0
    amounts = np.array([low, 0, 1, info.bits - 1, info.bits, info.bits + 2], dtype)
    kind = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    node = helper.make_node("BitShift", ["x", "s"], ["z"], direction=direction)
    path = _save(
        tmp_path, [node], [("x", kind, [3, 6]), ("s", kind, [6])], [("z", kind, [3, 6])],
        opset=28,
    )  # fmt: skip
    feeds = {"x": x, "s": amounts}
    got = synapc.compile(synapc.import_model(path), "GENERIC").run([x, amounts])
    _assert_same(got, _reference(path, feeds))


def test_bitwise_ops_and_float_tests(tmp_path: Path) -> None:
    """BitwiseAnd / Or / Xor / Not of int16 with broadcasting; IsInf with each sign
    and IsNaN of float16."""
    i16, f16, b = TensorProto.INT16, TensorProto.FLOAT16, TensorProto.BOOL
    nodes = [
        helper.make_node("BitwiseAnd", ["i", "j"], ["and"]),
        helper.make_node("BitwiseOr", ["j", "i"], ["or"]),
        helper.make_node("BitwiseXor", ["i", "j"], ["xor"]),
        helper.make_node("BitwiseNot", ["i"], ["not"]),
        helper.make_node("IsInf", ["h"], ["inf"]),
        helper.make_node("IsInf", ["h"], ["pos"], detect_negative=0),
        helper.make_node("IsInf", ["h"], ["neg"], detect_positive=0),
        helper.make_node("IsInf", ["h"], ["none"], detect_positive=0, detect_negative=0),
        helper.make_node("IsNaN", ["h"], ["nan"]),
    ]
    path = _save(
        tmp_path,
        nodes,
        [("i", i16, [2, 3, 4]), ("j", i16, [4]), ("h", f16, [6])],
        [(n, i16, [2, 3, 4]) for n in ("and", "or", "xor", "not")]
        + [(n, b, [6]) for n in ("inf", "pos", "neg", "none", "nan")],
        opset=20,
    )
    rng = np.random.default_rng(5)
    feeds = {
        "i": rng.integers(-(2**15), 2**15, (2, 3, 4)).astype(np.int16),
        "j": rng.integers(-(2**15), 2**15, (4,)).astype(np.int16),
        "h": np.array([np.inf, -np.inf, np.nan, 0.0, -1.5, 65504.0], np.float16),
    }
    model = synapc.import_model(path)
    for target in ("GENERIC", "VS680"):
        _assert_same(synapc.compile(model, target).run(list(feeds.values())),
                     _reference(path, feeds))  # fmt: skip


def test_legacy_broadcast_before_opset_7(tmp_path: Path) -> None:
    """Opset 6: B aligned with A from attribute `axis`, or from the end without it;
    without `broadcast` the shapes must be equal."""
    f, b, i32 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT32
    nodes = [
        helper.make_node("Greater", ["a", "b"], ["g"], broadcast=1, axis=1),
        helper.make_node("And", ["g", "m"], ["y"], broadcast=1),
        helper.make_node("Equal", ["i", "j"], ["e"], broadcast=1, axis=0),
    ]
    inputs = [("a", f, [2, 3, 4, 5]), ("b", f, [3, 4]), ("m", b, [5])]
    inputs += [("i", i32, [3, 2]), ("j", i32, [3])]
    outputs = [("y", b, [2, 3, 4, 5]), ("e", b, [3, 2])]
    path = _save(tmp_path, nodes, inputs, outputs, opset=6)
    rng = np.random.default_rng(6)
    a = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    w = rng.normal(size=(3, 4)).astype(np.float32)
    m = rng.random(5) > 0.3
    i, j = (
        rng.integers(0, 3, (3, 2)).astype(np.int32),
        rng.integers(0, 3, 3).astype(np.int32),
    )
    y, e = synapc.compile(synapc.import_model(path), "GENERIC").run([a, w, m, i, j])
    np.testing.assert_array_equal(y, (a > w[:, :, None]) & m)
    np.testing.assert_array_equal(e, i == j[:, None])
    unaligned = helper.make_node("Less", ["a", "b"], ["y"], name="old_less")
    path = _save(tmp_path, [unaligned], [("a", f, [2, 3]), ("b", f, [3])], [("y", b, None)],
                 opset=6)  # fmt: skip
    with pytest.raises(synapc.SynapcError, match="without attribute 'broadcast' they must"):
        synapc.import_model(path)


# -- refusals ----------------------------------------------------------------------------
F, I32, B = TensorProto.FLOAT, TensorProto.INT32, TensorProto.BOOL

_REFUSED = [
    (
        "Greater",
        [B, B],
        {},
        "input 'a' is i1; Greater takes numbers (booleans have no order)",
    ),
    ("Equal", [F, I32], {}, "inputs 'a' (f32) and 'b' (i32) have different element types"),
    ("And", [F, F], {}, "input 'a' is f32; And takes booleans only"),
    ("Not", [I32], {}, "input 'a' is i32; Not takes booleans only"),
    ("BitwiseAnd", [F, F], {}, "input 'a' is f32; BitwiseAnd takes integers only"),
    ("BitwiseNot", [B], {}, "input 'a' is i1; BitwiseNot takes integers only"),
    ("BitShift", [I32, I32], {"direction": "UP"}, "attribute 'direction' is 'UP'"),
    ("IsNaN", [I32], {}, "input 'a' is i32; IsNaN takes floats only"),
    ("IsInf", [I32], {}, "input 'a' is i32; IsInf takes floats only"),
    ("Where", [F, F, F], {}, "input 'a' is f32; Where takes a boolean condition only"),
    ("Where", [B, F, I32], {}, "inputs 'b' (f32) and 'c' (i32) have different element"),
]


@pytest.mark.parametrize(
    ("op_type", "types", "attrs", "message"),
    _REFUSED,
    ids=[f"{r[0]}-{k}" for k, r in enumerate(_REFUSED)],
)
def test_refusals_name_node_and_operator(
    tmp_path: Path, op_type: str, types: list[int], attrs: dict, message: str
) -> None:
    names = "abc"[: len(types)]
    node = helper.make_node(op_type, list(names), ["out"], name="bad_node", **attrs)
    path = _save(
        tmp_path,
        [node],
        [(n, t, [2, 3]) for n, t in zip(names, types, strict=True)],
        [("out", B, [2, 3])],
        opset=20,
    )
    with pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path)
    text = str(error.value)
    assert f"node 'bad_node' ({op_type}, opset 20)" in text
    assert message in text
    assert "\n" not in text


def test_uint64_runs_and_strings_are_refused_clearly(tmp_path: Path) -> None:
    """uint64 runs as uint32 on the device (as int64 runs as int32); a type without a
    synap element type is refused naming the input."""
    u64 = TensorProto.UINT64
    node = helper.make_node("Equal", ["a", "b"], ["out"])
    path = _save(tmp_path, [node], [("a", u64, [2]), ("b", u64, [2])], [("out", B, [2])])
    exe = synapc.compile(synapc.import_model(path), "GENERIC")
    a, b = np.array([3, 2**31 + 5], np.uint64), np.array([3, 5], np.uint64)
    np.testing.assert_array_equal(exe.run([a, b])[0], [True, False])
    s = TensorProto.STRING
    path = _save(tmp_path, [node], [("a", s, [2]), ("b", s, [2])], [("out", B, [2])])
    with pytest.raises(synapc.SynapcError, match="input 'a' has element type STRING"):
        synapc.import_model(path)


_INVALID_IR = [
    ("synap.greater %a, %a : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>",
     "booleans have no order"),
    ("synap.less %f, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>",
     "result #0 must be boolean (i1), got f32"),
    ("synap.equal %f, %i : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xi1>",
     "operand element types f32 and i32 differ"),
    ("synap.logical_and %f, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>",
     "operands must be boolean (i1), got f32"),
    ("synap.logical_not %i : (tensor<2xi32>) -> tensor<2xi32>",
     "input must be boolean (i1), got i32"),
    ("synap.bitwise_or %a, %a : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>",
     "operands must be integers, got i1"),
    ("synap.shift_left %f, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>",
     "operands must be integers, got f32"),
    ("synap.bitwise_not %f : (tensor<2xf32>) -> tensor<2xf32>",
     "input must be integers, got f32"),
    ("synap.is_nan %i : (tensor<2xi32>) -> tensor<2xi1>", "input must be float, got i32"),
    ("synap.select %f, %f, %f : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) "
     "-> tensor<2xf32>", "condition must be boolean (i1), got f32"),
    ("synap.select %a, %f, %i : (tensor<2xi1>, tensor<2xf32>, tensor<2xi32>) "
     "-> tensor<2xf32>", "value element types f32 and i32 differ"),
    ("synap.select %a, %f, %f : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) "
     "-> tensor<2xi32>", "result element type i32 does not match"),
    ("synap.select %a, %f, %f : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) "
     "-> tensor<3xf32>", "result #0 shape [3] should be [2]"),
]  # fmt: skip


@pytest.mark.parametrize(("op", "message"), _INVALID_IR, ids=range(len(_INVALID_IR)))
def test_verifier_refuses_invalid_ops(op: str, message: str) -> None:
    text = (
        "func.func @main(%a: tensor<2xi1>, %f: tensor<2xf32>, %i: tensor<2xi32>) {\n"
        f"  %0 = {op}\n  func.return\n}}\n"
    )
    module = parse_module(text, WeightStore())
    with pytest.raises(VerifyException, match=re.escape(message)):
        module.verify()
