// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic | synapc-opt > %t.3 && synapc-opt %s > %t.4 && diff %t.3 %t.4

// Round trip of the ops of dialects/synap/window_nd.py (pools and convolutions over
// 1 to 3 spatial axes with dilations; pad holds a (begin, end) pair per spatial axis).

// CHECK-LABEL: func.func @pools(
func.func @pools(%x: tensor<1x4x5x6x2xf32>) {
  // CHECK-NEXT: %0 = synap.max_pool_nd %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x4x5x6x2xf32>) -> tensor<1x3x4x5x2xf32>
  %0 = synap.max_pool_nd %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x4x5x6x2xf32>) -> tensor<1x3x4x5x2xf32>
  // CHECK-NEXT: %1 = synap.avg_pool_nd %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 2, 1, 1>, pad = array<i64: 1, 0, 0, 1, 0, 0>, count_include_pad = true} : (tensor<1x4x5x6x2xf32>) -> tensor<1x2x3x3x2xf32>
  %1 = synap.avg_pool_nd %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, dilations = array<i64: 2, 1, 1>, pad = array<i64: 1, 0, 0, 1, 0, 0>, count_include_pad = true} : (tensor<1x4x5x6x2xf32>) -> tensor<1x2x3x3x2xf32>
  // CHECK-NEXT: %2 = synap.lp_pool_nd %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 0, 0, 0, 0>, p = 3.000000e+00 : f32} : (tensor<1x4x5x6x2xf32>) -> tensor<1x3x4x5x2xf32>
  %2 = synap.lp_pool_nd %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 0, 0, 0, 0>, p = 3.000000e+00 : f32} : (tensor<1x4x5x6x2xf32>) -> tensor<1x3x4x5x2xf32>
  // CHECK-NEXT: %3 = synap.max_pool_indices_nd %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 0, 0, 0, 0>, storage_order = 1 : i64} : (tensor<1x4x5x6x2xf32>) -> tensor<1x3x4x5x2xi64>
  %3 = synap.max_pool_indices_nd %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 0, 0, 0, 0>, storage_order = 1 : i64} : (tensor<1x4x5x6x2xf32>) -> tensor<1x3x4x5x2xi64>
  // CHECK-NEXT: func.return
  func.return
}
// CHECK-LABEL: func.func @convs(
func.func @convs(%x: tensor<1x4x5x6x2xf32>, %w: tensor<4x3x3x3x1xf32>, %b: tensor<4xf32>) {
  // CHECK-NEXT: %0 = synap.conv_nd %x, %w, %b {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad = array<i64: 1, 1, 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x5x6x2xf32>, tensor<4x3x3x3x1xf32>, tensor<4xf32>) -> tensor<1x4x5x6x4xf32>
  %0 = synap.conv_nd %x, %w, %b {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad = array<i64: 1, 1, 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x5x6x2xf32>, tensor<4x3x3x3x1xf32>, tensor<4xf32>) -> tensor<1x4x5x6x4xf32>
  // CHECK-NEXT: %1 = synap.transpose_conv_nd %x, %w {strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 1, 1, 0, -1>, groups = 2 : i64} : (tensor<1x4x5x6x2xf32>, tensor<4x3x3x3x1xf32>) -> tensor<1x9x9x14x4xf32>
  %1 = synap.transpose_conv_nd %x, %w {strides = array<i64: 2, 2, 2>, dilations = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 1, 1, 0, -1>, groups = 2 : i64} : (tensor<1x4x5x6x2xf32>, tensor<4x3x3x3x1xf32>) -> tensor<1x9x9x14x4xf32>
  // CHECK-NEXT: func.return
  func.return
}
