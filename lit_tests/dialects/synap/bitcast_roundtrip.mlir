// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4

// Round trip of dialects/synap/bitcast.py: synap.bitcast reads each element's bits as
// the result's element type of the same width (booleans are one byte).

// CHECK-LABEL: func.func @bitcast(
func.func @bitcast(%x: tensor<2x3xf32>, %b: tensor<4xi1>, %s: tensor<f32>) {
  // CHECK-NEXT: %0 = synap.bitcast %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // GENERIC: %0 = "synap.bitcast"(%x) : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %0 = synap.bitcast %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // CHECK-NEXT: %1 = synap.bitcast %b {layer_name = "bits", layer_index = 3 : i64} : (tensor<4xi1>) -> tensor<4xui8>
  // GENERIC: %1 = "synap.bitcast"(%b) {layer_name = "bits", layer_index = 3 : i64} : (tensor<4xi1>) -> tensor<4xui8>
  %1 = synap.bitcast %b {layer_name = "bits", layer_index = 3 : i64} : (tensor<4xi1>) -> tensor<4xui8>
  // A scalar.
  // CHECK-NEXT: %2 = synap.bitcast %s : (tensor<f32>) -> tensor<ui32>
  %2 = synap.bitcast %s : (tensor<f32>) -> tensor<ui32>
  // CHECK-NEXT: func.return
  func.return
}
