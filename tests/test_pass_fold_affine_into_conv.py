"""`fold-affine-into-conv` (alias `fold-batchnorm`) keeps what the graph computes: each
module runs on the JAX backend before and after the pass, and the elementwise op must be
gone (or, where the fold is not allowed, still there)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from synapc.compiler import optimize
from synapc.dialects.synap.constant import ConstantOp
from synapc.dialects.synap.conv import Conv2DOp
from synapc.testing.pass_check import check_pipeline, model_from_text

PASS = "fold-affine-into-conv"
LIT = Path(__file__).resolve().parents[1] / "lit_tests/passes/fold_affine_into_conv.mlir"
AFFINE = ("synap.mul", "synap.add", "synap.sub", "synap.div")

POSITIVE_LIT_CASES = [
    "conv_mul_add",
    "depthwise_scalar_mul_no_bias",
    "fully_connected_div",
    "fully_connected_constant_minus_layer",
    "transpose_conv_sub_relu",
    "add_then_mul_with_relu6",
]


def lit_case(name: str) -> str:
    """The chunk of the lit file that defines `@name` (with its blobs), renamed to
    `@main`."""
    for chunk in LIT.read_text().split("// -----"):
        if f"func.func @{name}(" in chunk:
            return chunk.replace(f"@{name}(", "@main(")
    raise KeyError(name)


def affine_ops(text: str) -> int:
    """How many elementwise affine ops a module's text has."""
    return sum(len(re.findall(rf"\b{re.escape(op)}\b", text)) for op in AFFINE)


def assert_folded(text: str, rtol: float = 1e-5, pipeline: str = PASS) -> str:
    """Run the pass on `text`, check the outputs, and assert that every affine op went
    away; returns the optimized module's text."""
    assert affine_ops(text) > 0
    result = check_pipeline(text, [pipeline], rtol=rtol)
    optimized = str(result.optimized.module)
    assert affine_ops(optimized) == 0, optimized
    return optimized


@pytest.mark.parametrize("name", POSITIVE_LIT_CASES)
def test_lit_cases_keep_outputs(name: str) -> None:
    assert_folded(lit_case(name))


def test_conv_batchnorm_with_random_weights() -> None:
    """Strided, padded, grouped 3x3 conv with bias; BN as mul [1,1,1,C] then add [C]
    (constant on the left) with a fused relu."""
    optimized = assert_folded(
        """
!x = tensor<1x9x9x4xf32>
!w = tensor<6x3x3x2xf32>
!c = tensor<6xf32>
!s = tensor<1x1x1x6xf32>
!y = tensor<1x5x5x6xf32>
func.func @main(%x: !x) -> !y {
  %w = synap.constant dense_resource<w> : !w
  %b = synap.constant dense_resource<b> : !c
  %s = synap.constant dense_resource<s> : !s
  %t = synap.constant dense_resource<t> : !c
  %y = synap.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>,
    groups = 2 : i64, layer_name = "conv"} : (!x, !w, !c) -> !y
  %m = synap.mul %y, %s : (!y, !s) -> !y
  %a = synap.add %t, %m {activation = #synap<activation relu>} : (!c, !y) -> !y
  func.return %a : !y
}
"""
    )
    assert 'layer_name = "conv"' in optimized and "activation relu" in optimized


def test_depthwise_multiplier_sub_then_div() -> None:
    """Depthwise with channel multiplier 2 (filter axis 3 holds C*M), no bias."""
    assert_folded(
        """
!x = tensor<1x6x6x3xf32>
!w = tensor<1x3x3x6xf32>
!y = tensor<1x4x4x6xf32>
func.func @main(%x: !x) -> !y {
  %w = synap.constant dense_resource<w> : !w
  %t = synap.constant dense_resource<t> : tensor<1x1x1x6xf32>
  %d = synap.constant dense_resource<d> : tensor<6xf32>
  %y = synap.depthwise_conv2d %x, %w : (!x, !w) -> !y
  %s = synap.sub %y, %t : (!y, tensor<1x1x1x6xf32>) -> !y
  %q = synap.div %s, %d : (!y, tensor<6xf32>) -> !y
  func.return %q : !y
}
"""
    )


def test_transpose_conv_strided_mul_add() -> None:
    """Transposed conv (filter [Cout, KH, KW, Cin], output channel axis 0), stride 2."""
    assert_folded(
        """
!x = tensor<1x4x4x3xf32>
!w = tensor<5x3x3x3xf32>
!c = tensor<5xf32>
!y = tensor<1x9x9x5xf32>
func.func @main(%x: !x) -> !y {
  %w = synap.constant dense_resource<w> : !w
  %b = synap.constant dense_resource<b> : !c
  %s = synap.constant dense_resource<s> : !c
  %t = synap.constant dense_resource<t> : tensor<1x1x1x5xf32>
  %y = synap.transpose_conv2d %x, %w, %b {strides = array<i64: 2, 2>} : (!x, !w, !c) -> !y
  %m = synap.mul %y, %s : (!y, !c) -> !y
  %a = synap.add %m, %t : (!y, tensor<1x1x1x5xf32>) -> !y
  func.return %a : !y
}
"""
    )


def test_fully_connected_rank3_scalar_scale_and_shift() -> None:
    """Fully connected over a [1, 4, 8] input; a [1] scale and a rank-0 shift."""
    assert_folded(
        """
!x = tensor<1x4x8xf32>
!y = tensor<1x4x6xf32>
func.func @main(%x: !x) -> !y {
  %w = synap.constant dense_resource<w> : tensor<6x8xf32>
  %s = synap.constant dense_resource<s> : tensor<1xf32>
  %t = synap.constant dense_resource<t> : tensor<f32>
  %y = synap.fully_connected %x, %w : (!x, tensor<6x8xf32>) -> !y
  %m = synap.mul %y, %s : (!y, tensor<1xf32>) -> !y
  %a = synap.add %m, %t : (!y, tensor<f32>) -> !y
  func.return %a : !y
}
"""
    )


def test_float16_layer_keeps_float16_weights() -> None:
    """An f16 layer folds with f16 weights (float16 rounding: a looser tolerance)."""
    optimized = assert_folded(
        """
!x = tensor<1x5x5x3xf16>
!w = tensor<4x3x3x3xf16>
!y = tensor<1x3x3x4xf16>
func.func @main(%x: !x) -> !y {
  %w = synap.constant dense_resource<w> : !w
  %b = synap.constant dense_resource<b> : tensor<4xf16>
  %s = synap.constant dense_resource<s> : tensor<4xf16>
  %y = synap.conv2d %x, %w, %b : (!x, !w, tensor<4xf16>) -> !y
  %m = synap.mul %y, %s : (!y, tensor<4xf16>) -> !y
  func.return %m : !y
}
""",
        rtol=1e-2,
    )
    assert "tensor<4x3x3x3xf16>" in optimized


def test_fold_batchnorm_alias_runs_the_same_pass() -> None:
    assert_folded(lit_case("conv_mul_add"), pipeline="fold-batchnorm")


def test_shared_filter_is_not_changed() -> None:
    """Two convs share one filter; folding the scale after one of them leaves the shared
    array (and the other conv's operand) untouched."""
    text = """
!x = tensor<1x4x4x2xf32>
!w = tensor<3x1x1x2xf32>
!y = tensor<1x4x4x3xf32>
func.func @main(%x: !x) -> (!y, !y) {
  %w = synap.constant dense_resource<shared> : !w
  %s = synap.constant dense_resource<s> : tensor<3xf32>
  %y = synap.conv2d %x, %w : (!x, !w) -> !y
  %z = synap.conv2d %x, %w : (!x, !w) -> !y
  %m = synap.mul %y, %s : (!y, tensor<3xf32>) -> !y
  func.return %m, %z : !y, !y
}
"""
    model = model_from_text(text)
    original = np.array(model.weights["shared"])
    result = check_pipeline(model, [PASS])
    np.testing.assert_array_equal(result.optimized.weights["shared"], original)
    convs = [op for op in result.optimized.module.walk() if isinstance(op, Conv2DOp)]
    handles = {
        op.filter.owner.handle for op in convs if isinstance(op.filter.owner, ConstantOp)
    }
    assert len(handles) == 2 and "shared" in handles
    assert affine_ops(str(result.optimized.module)) == 0


QUANTIZED = """
!x = tensor<1x4x4x2x!quant.uniform<u8:f32, 0.05:128>>
!w = tensor<3x1x1x2x!quant.uniform<u8:f32, 0.02:120>>
!b = tensor<3x!quant.uniform<i32:f32, 0.001>>
!s = tensor<3x!quant.uniform<u8:f32, 0.01:0>>
!y = tensor<1x4x4x3x!quant.uniform<u8:f32, 0.1:128>>
!z = tensor<1x4x4x3x!quant.uniform<u8:f32, 0.2:128>>
builtin.module ATTRS {
func.func @main(%x: !x) -> !z {
  %w = synap.constant dense_resource<w> : !w
  %b = synap.constant dense_resource<b> : !b
  %s = synap.constant dense_resource<s> : !s
  %y = synap.conv2d %x, %w, %b : (!x, !w, !b) -> !y
  %m = synap.mul %y, %s : (!y, !s) -> !z
  func.return %m : !z
}
}
"""


@pytest.mark.parametrize(
    "attrs", ["", 'attributes {"synap.integer_semantics" = "onnx"}'], ids=["tflite", "onnx"]
)
def test_quantized_layer_is_left_alone(attrs: str) -> None:
    """Quantized graphs never fold (the integers would change), under either semantics;
    the outputs stay identical integers."""
    result = check_pipeline(QUANTIZED.replace("ATTRS", attrs), [PASS])
    assert affine_ops(str(result.optimized.module)) == 1
    assert result.before[0].dtype == np.uint8


def test_two_uses_are_left_alone() -> None:
    optimized = optimize(model_from_text(lit_case("layer_result_has_two_uses")), [PASS])
    assert affine_ops(str(optimized.module)) == 1
