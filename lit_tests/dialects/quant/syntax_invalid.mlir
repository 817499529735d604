// RUN: synapc-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// Syntax errors in !quant.uniform (dialects/quant.py, parse_parameters), reported at the
// offending token.

// The storage type must be an identifier.
// CHECK: syntax_invalid.mlir:[[# @LINE + 2]]:42
// CHECK: identifier expected (quantized storage type)
func.func @f(%a: tensor<4x!quant.uniform<8:f32, 0.5>>) {
  func.return
}

// -----

// A per-tensor type has exactly one scale.
// CHECK: syntax_invalid.mlir:[[# @LINE + 2]]:53
// CHECK: Expected '>'
func.func @f(%a: tensor<4x!quant.uniform<u8:f32, 0.5, 0.25>>) {
  func.return
}

// -----

// A per-axis type puts its scales in braces.
// CHECK: syntax_invalid.mlir:[[# @LINE + 2]]:52
// CHECK: '{' expected
func.func @f(%a: tensor<4x!quant.uniform<u8:f32:0, 0.5>>) {
  func.return
}

// -----

// A per-tensor type has no braces.
// CHECK: syntax_invalid.mlir:[[# @LINE + 2]]:50
// CHECK: integer or float literal expected (quantization scale)
func.func @f(%a: tensor<4x!quant.uniform<u8:f32, {0.5}>>) {
  func.return
}

// -----

// A zero point is an integer.
// CHECK: syntax_invalid.mlir:[[# @LINE + 2]]:54
// CHECK: Expected integer literal
func.func @f(%a: tensor<4x!quant.uniform<u8:f32, 0.5:3.5>>) {
  func.return
}

// -----

// A zero point beyond 64 bits is a parse error (it used to crash with an OverflowError).
// CHECK: syntax_invalid.mlir:[[# @LINE + 2]]:55
// CHECK: zero point 99999999999999999999 does not fit in 64 bits
func.func @f(%a: tensor<4x!quant.uniform<i32:f32, 0.5:99999999999999999999>>) {
  func.return
}
