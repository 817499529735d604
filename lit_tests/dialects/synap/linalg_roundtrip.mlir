// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4

// Round trip of dialects/synap/linalg.py: synap.det gives the determinant of each
// square matrix of the last two dimensions (the batch shape remains).

// CHECK-LABEL: func.func @det(
func.func @det(%m: tensor<3x3xf32>, %b: tensor<2x4x4xf16>) {
  // CHECK-NEXT: %0 = synap.det %m : (tensor<3x3xf32>) -> tensor<f32>
  // GENERIC: %0 = "synap.det"(%m) : (tensor<3x3xf32>) -> tensor<f32>
  %0 = synap.det %m : (tensor<3x3xf32>) -> tensor<f32>
  // CHECK-NEXT: %1 = synap.det %b {layer_name = "det", layer_index = 2 : i64} : (tensor<2x4x4xf16>) -> tensor<2xf16>
  %1 = "synap.det"(%b) {layer_name = "det", layer_index = 2 : i64} : (tensor<2x4x4xf16>) -> tensor<2xf16>
  func.return
}
