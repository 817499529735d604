// RUN: synapc-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// Syntax errors of synap.constant's custom form (ConstantOp.parse in
// dialects/synap/constant.py), reported at the offending attribute.

// Inline values are not accepted: the values live in the WeightStore.
// CHECK: constant_syntax_invalid.mlir:[[# @LINE + 4]]:23
// CHECK-NEXT: %0 = synap.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: synap.constant takes a dense_resource<handle> : tensor<...> value
func.func @f() {
  %0 = synap.constant dense<1.000000e+00> : tensor<4xf32>
  func.return
}

// -----

// A scalar attribute, after the attribute dictionary.
// CHECK: constant_syntax_invalid.mlir:[[# @LINE + 4]]:42
// CHECK-NEXT: %0 = synap.constant {layer_name = "w"} 1.000000e+00 : f32
// CHECK: synap.constant takes a dense_resource<handle> : tensor<...> value
func.func @f() {
  %0 = synap.constant {layer_name = "w"} 1.000000e+00 : f32
  func.return
}

// -----

// The value may not also be given as an attribute named `value`.
// CHECK: constant_syntax_invalid.mlir:[[# @LINE + 3]]:23
// CHECK: synap.constant takes its value after the attributes, not as 'value'
func.func @f() {
  %0 = synap.constant {value = 1 : i64} dense_resource<w> : tensor<4xf32>
  func.return
}
