"""`fold-constants`: the module runs the same on the JAX backend before and after the
pass (identical integers, float within 1e-5), and the ops computed from constants are
gone."""

from __future__ import annotations

import pytest

from synapc.context import make_context
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.fold_constants import FoldConstantsPass
from synapc.testing.pass_check import PassCheck, check_pipeline, model_from_text

PASS = ["fold-constants"]
ONNX = 'builtin.module attributes {"synap.integer_semantics" = "onnx"} {\n'


def _ops(check: PassCheck) -> list[str]:
    """Names of the ops of the optimized main function, in order."""
    return [op.name for op in check.optimized.main.body.block.ops]


def _fold(text: str) -> list[str]:
    """Run the pass through `check_pipeline` on `text`; the optimized op names."""
    return _ops(check_pipeline(text, PASS))


def test_transpose_weight() -> None:
    text = """
func.func @main(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = synap.constant dense_resource<w> : tensor<2x3xf32>
  %t = synap.transpose %w {layer_name = "wt", perm = array<i64: 1, 0>}
      : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = synap.add %x, %t : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}"""
    check = check_pipeline(text, PASS)
    assert _ops(check) == ["synap.constant", "synap.add", "func.return"]
    (constant,) = [op for op in check.optimized.main.body.block.ops
                   if isinstance(op, ConstantOp)]  # fmt: skip
    assert constant.layer_name is not None and constant.layer_name.data == "wt"
    assert constant.handle != "w"  # the transposed weight, not the original


def test_float_chain() -> None:
    text = """
func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %a = synap.constant dense_resource<a> : tensor<4xf32>
  %r = synap.reshape %a : (tensor<4xf32>) -> tensor<2x2xf32>
  %o = synap.constant dense_resource<o> : tensor<2x2xf32>
  %s = synap.add %r, %o : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = synap.mul %s, %r : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %e = synap.exp %m : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = synap.sub %x, %e : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}"""
    assert _fold(text) == ["synap.constant", "synap.sub", "func.return"]


def test_shape_arithmetic_i64() -> None:
    text = """
func.func @main(%x: tensor<3xi64>) -> tensor<3xi64> {
  %a = synap.constant dense_resource<a> : tensor<2xi64>
  %b = synap.constant dense_resource<b> : tensor<2xi64>
  %m = synap.mul %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %n = synap.constant dense_resource<n> : tensor<1xi64>
  %c = synap.concat %m, %n {axis = 0 : i64}
      : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  %y = synap.add %x, %c : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}"""
    assert _fold(text) == ["synap.constant", "synap.add", "func.return"]


def test_split_and_cast() -> None:
    text = """
func.func @main(%x: tensor<1x3xi32>) -> (tensor<1x3xi32>, tensor<1x1xf32>) {
  %w = synap.constant dense_resource<w> : tensor<1x4xf32>
  %a:2 = synap.split %w {axis = 1 : i64}
      : (tensor<1x4xf32>) -> (tensor<1x1xf32>, tensor<1x3xf32>)
  %i = synap.cast %a#1 : (tensor<1x3xf32>) -> tensor<1x3xi32>
  %y = synap.add %x, %i : (tensor<1x3xi32>, tensor<1x3xi32>) -> tensor<1x3xi32>
  func.return %y, %a#0 : tensor<1x3xi32>, tensor<1x1xf32>
}"""
    ops = _fold(text)
    assert "synap.split" not in ops and "synap.cast" not in ops
    assert ops.count("synap.constant") == 2


def test_conv_of_constants_uses_filter_layout() -> None:
    text = """
func.func @main(%x: tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32> {
  %i = synap.constant dense_resource<i> : tensor<1x6x6x3xf32>
  %w = synap.constant dense_resource<w> : tensor<5x3x3x3xf32>
  %b = synap.constant dense_resource<b> : tensor<5xf32>
  %c = synap.conv2d %i, %w, %b
      : (tensor<1x6x6x3xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) -> tensor<1x4x4x5xf32>
  %y = synap.add %x, %c : (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  func.return %y : tensor<1x4x4x5xf32>
}"""
    assert _fold(text) == ["synap.constant", "synap.add", "func.return"]


# -- quantized ---------------------------------------------------------------------------
U8 = "!quant.uniform<u8:f32, 0.0235:128>"
U8B = "!quant.uniform<u8:f32, 0.0471:3>"
U8C = "!quant.uniform<u8:f32, 0.031:120>"
U8H = "!quant.uniform<u8:f32, 0.0942:3>"  # half U8B's resolution: requantizing ties
I8W = "!quant.uniform<i8:f32, 0.0123>"
I8PA = "!quant.uniform<i8:f32:0, {0.011,0.02,0.013,0.009}>"
I32PA = "!quant.uniform<i32:f32:0, {2.585e-4,4.7e-4,3.055e-4,2.115e-4}>"
A, B, C, H = (f"tensor<1x8x8x16x{q}>" for q in (U8, U8B, U8C, U8H))
IN, W, BIAS, OUT = (f"tensor<1x8x8x3x{U8}>", f"tensor<4x3x3x3x{I8PA}>",
                    f"tensor<4x{I32PA}>", f"tensor<1x6x6x4x{U8}>")  # fmt: skip
T = f"tensor<1x16x8x8x{U8B}>"

QUANTIZED = f"""
  func.func @main(%x: {C}) -> ({C}, {A}, {OUT}, {T}, {H}) {{
    %f = synap.constant dense_resource<f> : tensor<1x8x8x16xf32>
    %q = synap.quantize %f : (tensor<1x8x8x16xf32>) -> {A}
    %a = synap.constant dense_resource<a> : {B}
    %s = synap.add %q, %a : ({A}, {B}) -> {C}
    %y = synap.mul %x, %s : ({C}, {C}) -> {C}
    %g = synap.sigmoid %a : ({B}) -> {A}
    %i = synap.constant dense_resource<i> : {IN}
    %w = synap.constant dense_resource<w> : {W}
    %b = synap.constant dense_resource<b> : {BIAS}
    %c = synap.conv2d %i, %w, %b : ({IN}, {W}, {BIAS}) -> {OUT}
    %t = synap.transpose %a {{perm = array<i64: 0, 3, 1, 2>}} : ({B}) -> {T}
    %h = synap.quantize %a : ({B}) -> {H}
    func.return %y, %g, %c, %t, %h : {C}, {A}, {OUT}, {T}, {H}
  }}
"""
FOLDED = ["synap.quantize", "synap.add", "synap.sigmoid", "synap.conv2d", "synap.transpose"]


@pytest.mark.parametrize("semantics", ["tflite", "onnx"])
def test_quantized(semantics: str) -> None:
    text = QUANTIZED if semantics == "tflite" else ONNX + QUANTIZED + "}"
    ops = _fold(text)
    assert not set(FOLDED) & set(ops), ops
    assert ops.count("synap.constant") == 5 and "synap.mul" in ops


def test_quantized_per_tensor_conv_uses_filter_layout() -> None:
    w = f"tensor<4x3x3x3x{I8W}>"
    text = f"""
func.func @main(%x: {OUT}) -> {OUT} {{
  %i = synap.constant dense_resource<i> : {IN}
  %w = synap.constant dense_resource<w> : {w}
  %c = synap.conv2d %i, %w : ({IN}, {w}) -> {OUT}
  %y = synap.add %x, %c : ({OUT}, {OUT}) -> {OUT}
  func.return %y : {OUT}
}}"""
    for module in (text, ONNX + text + "}"):
        assert _fold(module) == ["synap.constant", "synap.add", "func.return"]


def test_requantizing_transpose_folds_only_under_onnx() -> None:
    w, t = f"tensor<2x4x{U8}>", f"tensor<4x2x{U8B}>"
    body = f"""
  func.func @main(%x: {t}) -> {t} {{
    %w = synap.constant dense_resource<w> : {w}
    %t = synap.transpose %w {{perm = array<i64: 1, 0>}} : ({w}) -> {t}
    %y = synap.add %x, %t : ({t}, {t}) -> {t}
    func.return %y : {t}
  }}
"""
    assert "synap.transpose" not in _fold(ONNX + body + "}")
    # TFLite semantics: the backend refuses the op, so the pass leaves it alone.
    model = model_from_text(body)
    FoldConstantsPass().apply(make_context(model.weights), model.module)
    assert "synap.transpose" in str(model.module)


# -- what must not fold --------------------------------------------------------------------
def test_argument_operand_is_kept() -> None:
    text = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = synap.constant dense_resource<w> : tensor<4xf32>
  %y = synap.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}"""
    assert _fold(text) == ["synap.constant", "synap.add", "func.return"]


def test_max_elements_and_shared_constants() -> None:
    text = """
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>) {
  %w = synap.constant dense_resource<w> : tensor<2x3xf32>
  %t = synap.transpose %w {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = synap.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %v = synap.constant dense_resource<v> : tensor<2xf32>
  %n = synap.neg %v : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y, %t, %n : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>
}"""
    model = model_from_text(text)
    FoldConstantsPass(max_elements=4).apply(make_context(model.weights), model.module)
    ops = [op.name for op in model.main.body.block.ops]
    # the 6-element transpose is over the limit; the 2-element neg folds and its
    # operand, read by nothing else, is erased
    assert ops == ["synap.constant", "synap.transpose", "synap.add", "synap.constant",
                   "func.return"]  # fmt: skip
    handles = [op.handle for op in model.main.body.block.ops if isinstance(op, ConstantOp)]
    assert handles[0] == "w" and "v" not in handles
    # with the default limit the transpose folds, and `w` stays for the add
    check = check_pipeline(text, PASS)
    ops = _ops(check)
    assert "synap.transpose" not in ops and "synap.neg" not in ops
    assert ops.count("synap.constant") == 3
