"""Semantic tests of `canonicalize-layout`: outputs are unchanged (identical integers,
float within 1e-5) and the transposes really move or disappear."""

from __future__ import annotations

import pytest

from synapc.testing.pass_check import check_pipeline

PASS = ["canonicalize-layout"]

U8 = "!quant.uniform<u8:f32, 0.05:128>"
U8B = "!quant.uniform<u8:f32, 0.1:120>"
I8 = "!quant.uniform<i8:f32, 0.02:-3>"


def _module(body: str, semantics: str | None = None) -> str:
    if semantics is None:
        return body
    return (
        f'builtin.module attributes {{"synap.integer_semantics" = "{semantics}"}} {{\n'
        f"{body}\n}}"
    )


def _count(text: str, op: str) -> int:
    return text.count(f"= {op} ")


NCHW_CHAIN = """
func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w1 = synap.constant dense_resource<w1> : tensor<4x3x3x4xf32>
  %w2 = synap.constant dense_resource<w2> : tensor<4x1x1x4xf32>
  %b = synap.constant dense_resource<b> : tensor<4x1x1xf32>
  %0 = synap.transpose %x {perm = array<i64: 0, 2, 3, 1>}
      : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %1 = synap.conv2d %0, %w1 {pad = array<i64: 1, 1, 1, 1>}
      : (tensor<1x8x8x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  %2 = synap.transpose %1 {perm = array<i64: 0, 3, 1, 2>}
      : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %3 = synap.clamp %2 {min = 0.0 : f32} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %4 = synap.add %3, %b : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %5 = synap.transpose %4 {perm = array<i64: 0, 2, 3, 1>}
      : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %6 = synap.conv2d %5, %w2
      : (tensor<1x8x8x4xf32>, tensor<4x1x1x4xf32>) -> tensor<1x8x8x4xf32>
  %7 = synap.transpose %6 {perm = array<i64: 0, 3, 1, 2>}
      : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  func.return %7 : tensor<1x4x8x8xf32>
}
"""


def test_nchw_chain_keeps_boundary_transposes_only() -> None:
    text = str(check_pipeline(NCHW_CHAIN, PASS).optimized.module)
    assert _count(text, "synap.transpose") == 2
    assert "tensor<4xf32>" in text  # the NCHW bias became an NHWC one


QUANTIZED_CHAIN = f"""
func.func @main(%x: tensor<1x2x6x6x{U8}>) -> tensor<1x2x6x6x{U8B}> {{
  %w1 = synap.constant dense_resource<w1> : tensor<2x3x3x2x{I8}>
  %b = synap.constant dense_resource<b> : tensor<2x1x1x{U8B}>
  %0 = synap.transpose %x {{perm = array<i64: 0, 2, 3, 1>}}
      : (tensor<1x2x6x6x{U8}>) -> tensor<1x6x6x2x{U8}>
  %1 = synap.conv2d %0, %w1 {{pad = array<i64: 1, 1, 1, 1>}}
      : (tensor<1x6x6x2x{U8}>, tensor<2x3x3x2x{I8}>) -> tensor<1x6x6x2x{U8B}>
  %2 = synap.transpose %1 {{perm = array<i64: 0, 3, 1, 2>}}
      : (tensor<1x6x6x2x{U8B}>) -> tensor<1x2x6x6x{U8B}>
  %3 = synap.sigmoid %2
      : (tensor<1x2x6x6x{U8B}>) -> tensor<1x2x6x6x!quant.uniform<u8:f32, 0.00390625:0>>
  %4 = synap.mul %3, %b
      : (tensor<1x2x6x6x!quant.uniform<u8:f32, 0.00390625:0>>, tensor<2x1x1x{U8B}>)
      -> tensor<1x2x6x6x{U8}>
  %5 = synap.transpose %4 {{perm = array<i64: 0, 2, 3, 1>}}
      : (tensor<1x2x6x6x{U8}>) -> tensor<1x6x6x2x{U8}>
  %6 = synap.max_pool2d %5 {{kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>}}
      : (tensor<1x6x6x2x{U8}>) -> tensor<1x6x6x2x{U8}>
  %7 = synap.transpose %6 {{perm = array<i64: 0, 3, 1, 2>}}
      : (tensor<1x6x6x2x{U8}>) -> tensor<1x2x6x6x{U8}>
  %8 = synap.add %7, %b
      : (tensor<1x2x6x6x{U8}>, tensor<2x1x1x{U8B}>) -> tensor<1x2x6x6x{U8B}>
  func.return %8 : tensor<1x2x6x6x{U8B}>
}}
"""


@pytest.mark.parametrize("semantics", [None, "onnx"])
def test_quantized_chain(semantics: str | None) -> None:
    text = str(check_pipeline(_module(QUANTIZED_CHAIN, semantics), PASS).optimized.module)
    assert _count(text, "synap.transpose") == 2
    # the last transpose sank below the final add
    assert text.index("synap.add") < text.rindex("synap.transpose")


def test_multiple_uses_do_not_sink() -> None:
    text = """
func.func @main(%x: tensor<1x8x8x4xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>}
      : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = synap.sigmoid %0 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %0, %1 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}
"""
    out = str(check_pipeline(text, PASS).optimized.module)
    assert "(tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>" in out  # sigmoid unmoved


UNARY_CHAIN = f"""
func.func @main(%x: tensor<1x8x8x4x{U8}>) -> (tensor<1x4x8x8xi32>, tensor<1x4x8x8x{U8B}>) {{
  %0 = synap.transpose %x {{perm = array<i64: 0, 3, 1, 2>}}
      : (tensor<1x8x8x4x{U8}>) -> tensor<1x4x8x8x{U8}>
  %1 = synap.dequantize %0 : (tensor<1x4x8x8x{U8}>) -> tensor<1x4x8x8xf32>
  %2 = synap.tanh %1 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %3 = synap.leaky_relu %2 {{alpha = 0.1 : f32}}
      : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %4 = synap.quantize %3
      : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8x!quant.uniform<i8:f32, 0.01:0>>
  %5 = synap.dequantize %4
      : (tensor<1x4x8x8x!quant.uniform<i8:f32, 0.01:0>>) -> tensor<1x4x8x8xf32>
  %6 = synap.cast %5 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xi32>
  %7 = synap.transpose %x {{perm = array<i64: 0, 3, 1, 2>}}
      : (tensor<1x8x8x4x{U8}>) -> tensor<1x4x8x8x{U8}>
  %8 = synap.clamp %7 {{min = 0.0 : f32, max = 6.0 : f32}}
      : (tensor<1x4x8x8x{U8}>) -> tensor<1x4x8x8x{U8}>
  %9 = synap.hard_swish %8 : (tensor<1x4x8x8x{U8}>) -> tensor<1x4x8x8x{U8}>
  %10 = synap.quantize %9 : (tensor<1x4x8x8x{U8}>) -> tensor<1x4x8x8x{U8B}>
  func.return %6, %10 : tensor<1x4x8x8xi32>, tensor<1x4x8x8x{U8B}>
}}
"""


@pytest.mark.parametrize("semantics", [None, "onnx"])
def test_unary_chain(semantics: str | None) -> None:
    out = str(check_pipeline(_module(UNARY_CHAIN, semantics), PASS).optimized.module)
    assert "(tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xi32>" in out  # cast runs in NHWC
    assert f"(tensor<1x8x8x4x{U8}>) -> tensor<1x8x8x4x{U8B}>" in out  # requantize too
    assert _count(out, "synap.transpose") == 2


def test_per_axis_quantize_does_not_sink() -> None:
    text = """
func.func @main(%x: tensor<1x8x8x2xf32>)
    -> tensor<1x2x8x8x!quant.uniform<i8:f32:1, {0.1,0.2}>> {
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>}
      : (tensor<1x8x8x2xf32>) -> tensor<1x2x8x8xf32>
  %1 = synap.quantize %0
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8x!quant.uniform<i8:f32:1, {0.1,0.2}>>
  func.return %1 : tensor<1x2x8x8x!quant.uniform<i8:f32:1, {0.1,0.2}>>
}
"""
    out = str(check_pipeline(text, PASS).optimized.module)
    assert "synap.quantize %0 : (tensor<1x2x8x8xf32>)" in out


BINARY = """
func.func @main(%x: tensor<1x8x8x4xf32>, %y: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
  %h = synap.constant dense_resource<h> : tensor<8x1xf32>
  %s = synap.constant dense_resource<s> : tensor<1xf32>
  %c = synap.constant dense_resource<c> : tensor<1x4x8x8xf32>
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>}
      : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = synap.transpose %y {perm = array<i64: 0, 3, 1, 2>}
      : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %2 = synap.mul %0, %1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %3 = synap.sub %h, %2 : (tensor<8x1xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %4 = synap.div %3, %s : (tensor<1x4x8x8xf32>, tensor<1xf32>) -> tensor<1x4x8x8xf32>
  %5 = synap.squared_difference %c, %4
      : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %6 = synap.transpose %5 {perm = array<i64: 0, 2, 3, 1>}
      : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  func.return %6 : tensor<1x8x8x4xf32>
}
"""


def test_binary_with_constants_and_transposed_operands() -> None:
    out = str(check_pipeline(BINARY, PASS).optimized.module)
    assert _count(out, "synap.transpose") == 0
    assert "tensor<8x1x1xf32>" in out  # the H-broadcast constant in NHWC


QUANTIZED_BINARY = f"""
func.func @main(%x: tensor<1x4x4x2x{U8}>) -> tensor<1x4x4x2x{U8}> {{
  %c = synap.constant dense_resource<c> : tensor<2x1x1x{U8B}>
  %a = synap.constant dense_resource<a> : tensor<2x1x1x!quant.uniform<i8:f32, 0.01:0>>
  %0 = synap.transpose %x {{perm = array<i64: 0, 3, 1, 2>}}
      : (tensor<1x4x4x2x{U8}>) -> tensor<1x2x4x4x{U8}>
  %1 = synap.add %0, %c
      : (tensor<1x2x4x4x{U8}>, tensor<2x1x1x{U8B}>) -> tensor<1x2x4x4x{U8B}>
  %2 = synap.prelu %1, %a
      : (tensor<1x2x4x4x{U8B}>, tensor<2x1x1x!quant.uniform<i8:f32, 0.01:0>>)
      -> tensor<1x2x4x4x{U8}>
  %3 = synap.sub %c, %2
      : (tensor<2x1x1x{U8B}>, tensor<1x2x4x4x{U8}>) -> tensor<1x2x4x4x{U8}>
  %4 = synap.transpose %3 {{perm = array<i64: 0, 2, 3, 1>}}
      : (tensor<1x2x4x4x{U8}>) -> tensor<1x4x4x2x{U8}>
  func.return %4 : tensor<1x4x4x2x{U8}>
}}
"""


@pytest.mark.parametrize("semantics", [None, "onnx"])
def test_quantized_binary(semantics: str | None) -> None:
    out = str(check_pipeline(_module(QUANTIZED_BINARY, semantics), PASS).optimized.module)
    assert _count(out, "synap.transpose") == 0
    assert f"tensor<2x{U8B}>" in out


CONCAT = """
func.func @main(%x: tensor<1x8x8x4xf32>, %y: tensor<1x8x8x2xf32>) -> tensor<1x8x8x9xf32> {
  %k = synap.constant dense_resource<k> : tensor<1x3x8x8xf32>
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>}
      : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = synap.transpose %y {perm = array<i64: 0, 3, 1, 2>}
      : (tensor<1x8x8x2xf32>) -> tensor<1x2x8x8xf32>
  %2 = synap.concat %0, %k, %1 {axis = -3 : i64}
      : (tensor<1x4x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x2x8x8xf32>)
      -> tensor<1x9x8x8xf32>
  %3 = synap.transpose %2 {perm = array<i64: 0, 2, 3, 1>}
      : (tensor<1x9x8x8xf32>) -> tensor<1x8x8x9xf32>
  func.return %3 : tensor<1x8x8x9xf32>
}
"""


def test_concat_renumbers_axis() -> None:
    out = str(check_pipeline(CONCAT, PASS).optimized.module)
    assert _count(out, "synap.transpose") == 0
    assert "axis = 3 : i64" in out


SOFTMAX_REDUCE = f"""
func.func @main(%x: tensor<1x8x6x4xf32>, %q: tensor<1x8x6x4x{U8}>)
      -> (tensor<1x4x8x6xf32>, tensor<1x4xf32>, tensor<1x4x1x6xf32>, tensor<4x1x{U8}>) {{
  %0 = synap.transpose %x {{perm = array<i64: 0, 3, 1, 2>}}
      : (tensor<1x8x6x4xf32>) -> tensor<1x4x8x6xf32>
  %1 = synap.log_softmax %0 {{axis = 1 : i64}}
      : (tensor<1x4x8x6xf32>) -> tensor<1x4x8x6xf32>
  %2 = synap.transpose %x {{perm = array<i64: 0, 3, 1, 2>}}
      : (tensor<1x8x6x4xf32>) -> tensor<1x4x8x6xf32>
  %3 = synap.reduce_mean %2 {{axes = array<i64: 2, 3>}}
      : (tensor<1x4x8x6xf32>) -> tensor<1x4xf32>
  %4 = synap.transpose %x {{perm = array<i64: 0, 3, 1, 2>}}
      : (tensor<1x8x6x4xf32>) -> tensor<1x4x8x6xf32>
  %5 = synap.reduce_sum %4 {{axes = array<i64: -2>, keep_dims = true}}
      : (tensor<1x4x8x6xf32>) -> tensor<1x4x1x6xf32>
  %6 = synap.transpose %q {{perm = array<i64: 0, 3, 1, 2>}}
      : (tensor<1x8x6x4x{U8}>) -> tensor<1x4x8x6x{U8}>
  %7 = synap.reduce_max %6 {{axes = array<i64: 0, 2>}}
      : (tensor<1x4x8x6x{U8}>) -> tensor<4x6x{U8}>
  %8 = synap.reduce_min %7 {{axes = array<i64: 1>, keep_dims = true}}
      : (tensor<4x6x{U8}>) -> tensor<4x1x{U8}>
  func.return %1, %3, %5, %8
      : tensor<1x4x8x6xf32>, tensor<1x4xf32>, tensor<1x4x1x6xf32>, tensor<4x1x{U8}>
}}
"""


@pytest.mark.parametrize("semantics", [None, "onnx"])
def test_softmax_and_reductions(semantics: str | None) -> None:
    out = str(check_pipeline(_module(SOFTMAX_REDUCE, semantics), PASS).optimized.module)
    assert "synap.log_softmax %x {axis = 3 : i64}" in out
    assert "synap.reduce_mean %x {axes = array<i64: 1, 2>}" in out
    assert "synap.reduce_sum %x {axes = array<i64: 1>, keep_dims = true}" in out
    assert "synap.reduce_max %q {axes = array<i64: 0, 1>}" in out
    # the max's transpose sinks through the min too and becomes a reshape (it only moves
    # a unit dimension); log_softmax and reduce_sum keep one transpose each
    assert "{axes = array<i64: 0>, keep_dims = true} : (tensor<6x4x" in out
    assert _count(out, "synap.reshape") == 1
    assert _count(out, "synap.transpose") == 2


def test_unit_transpose_becomes_reshape() -> None:
    text = """
func.func @main(%y: tensor<1x1x1x4xf32>) -> tensor<4xf32> {
  %0 = synap.transpose %y {perm = array<i64: 0, 3, 1, 2>}
      : (tensor<1x1x1x4xf32>) -> tensor<1x4x1x1xf32>
  %1 = synap.reshape %0 : (tensor<1x4x1x1xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
"""
    out = str(check_pipeline(text, PASS).optimized.module)
    assert "synap.transpose" not in out
    assert _count(out, "synap.reshape") == 1


FLATTEN = """
func.func @main(%x: tensor<2x3x4x5xf32>) -> tensor<2x6xf32> {
  %t = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>}
      : (tensor<2x3x4x5xf32>) -> tensor<2x5x3x4xf32>
  %r = synap.reshape %t : (tensor<2x5x3x4xf32>) -> tensor<2x60xf32>
  %w = synap.constant dense_resource<w> : tensor<6x60xf32>
  %b = synap.constant dense_resource<b> : tensor<6xf32>
  %y = synap.fully_connected %r, %w, %b
      : (tensor<2x60xf32>, tensor<6x60xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  func.return %y : tensor<2x6xf32>
}
"""


def test_flatten_transpose_folds_into_fully_connected_weights() -> None:
    result = check_pipeline(FLATTEN, ["canonicalize-layout"])
    assert "synap.transpose" not in str(result.optimized)


def test_flatten_transpose_stays_when_weights_are_shared() -> None:
    text = (
        FLATTEN.replace(
            "func.return %y : tensor<2x6xf32>",
            "%z = synap.fully_connected %x, %w : (tensor<2x60xf32>, tensor<6x60xf32>) -> "
            "tensor<2x6xf32>\n  func.return %y, %z : tensor<2x6xf32>, tensor<2x6xf32>",
        )
        .replace(
            "(%x: tensor<2x3x4x5xf32>) -> tensor<2x6xf32>",
            "(%x: tensor<2x3x4x5xf32>, %v: tensor<2x60xf32>) -> "
            "(tensor<2x6xf32>, tensor<2x6xf32>)",
        )
        .replace("fully_connected %x,", "fully_connected %v,")
    )
    result = check_pipeline(text, ["canonicalize-layout"])
    assert "synap.transpose" in str(result.optimized)
