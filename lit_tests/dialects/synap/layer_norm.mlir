// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics --print-op-generic | filecheck %s --check-prefix=GENERIC

// synap.layer_norm (dialects/synap/normalization.py): the first chunk round-trips (its
// text is the printed form, so CHECK-NEXT proves print(parse(text)) == text), with the
// scale and bias groups each optional, axis and epsilon elided at their defaults (-1 and
// 1e-5); the other chunks are the verifier's errors. The generic form carries the
// operand segment sizes.

// CHECK-LABEL: func.func @layer_norm(
func.func @layer_norm(%x: tensor<2x5x8xf32>, %g: tensor<8xf32>, %b: tensor<1x1x8xf32>) {
  // Scale and bias, with layer attributes and a non-default epsilon.
  // CHECK-NEXT: %0 = synap.layer_norm %x scale %g : tensor<8xf32> bias %b : tensor<1x1x8xf32> {layer_name = "ln", layer_index = 3 : i64, epsilon = 1.000000e-03 : f32} : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  // GENERIC: %0 = "synap.layer_norm"(%x, %g, %b) <{epsilon = 1.000000e-03 : f32, axis = -1 : i64}> {layer_name = "ln", layer_index = 3 : i64, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
  %0 = synap.layer_norm %x scale %g : tensor<8xf32> bias %b : tensor<1x1x8xf32> {layer_name = "ln", layer_index = 3 : i64, epsilon = 1.000000e-03 : f32} : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  // Scale only.
  // CHECK-NEXT: %1 = synap.layer_norm %x scale %g : tensor<8xf32> : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  // GENERIC: operandSegmentSizes = array<i32: 1, 1, 0>
  %1 = synap.layer_norm %x scale %g : tensor<8xf32> : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  // Bias only.
  // CHECK-NEXT: %2 = synap.layer_norm %x bias %g : tensor<8xf32> : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  // GENERIC: operandSegmentSizes = array<i32: 1, 0, 1>
  %2 = synap.layer_norm %x bias %g : tensor<8xf32> : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  // Neither, over a non-last axis.
  // CHECK-NEXT: %3 = synap.layer_norm %x {axis = 1 : i64} : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  // GENERIC: operandSegmentSizes = array<i32: 1, 0, 0>
  %3 = synap.layer_norm %x {axis = 1 : i64} : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// float16, rank 1.
// CHECK-LABEL: func.func @layer_norm_f16(
// CHECK-NEXT: %0 = synap.layer_norm %h scale %h : tensor<4xf16> : tensor<4xf16> -> tensor<4xf16>
func.func @layer_norm_f16(%h: tensor<4xf16>) {
  %0 = synap.layer_norm %h scale %h : tensor<4xf16> : tensor<4xf16> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: synap.layer_norm: scale shape [3] does not broadcast to the input shape [2, 8]
func.func @f(%x: tensor<2x8xf32>, %g: tensor<3xf32>) {
  %0 = synap.layer_norm %x scale %g : tensor<3xf32> : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

// A bias that would widen the result.
// CHECK: synap.layer_norm: bias shape [3, 1, 8] does not broadcast to the input shape [2, 8]
func.func @f(%x: tensor<2x8xf32>, %b: tensor<3x1x8xf32>) {
  %0 = synap.layer_norm %x bias %b : tensor<3x1x8xf32> : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

// CHECK: synap.layer_norm: axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.layer_norm %x {axis = 2 : i64} : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

// CHECK: synap.layer_norm: epsilon must be >= 0, got -0.001
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.layer_norm %x {epsilon = -1.000000e-03 : f32} : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

// CHECK: synap.layer_norm "ln": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.layer_norm %x {layer_name = "ln"} : tensor<2x8xf32> -> tensor<8x2xf32>
  func.return
}

// -----

// CHECK: synap.layer_norm: operand element types f32 and f16 differ
func.func @f(%x: tensor<2x8xf32>, %g: tensor<8xf16>) {
  %0 = synap.layer_norm %x scale %g : tensor<8xf16> : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}
