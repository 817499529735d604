// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the ops of dialects/synap/pool.py: max_pool2d, avg_pool2d and lp_pool2d.
// `kernel` has no default and always prints; strides, pad, activation (and
// count_include_pad, p and dilations) are elided at their defaults.

// CHECK-LABEL: func.func @max_pool2d(
func.func @max_pool2d(%x: tensor<1x8x8x3xf32>) {
  // Only the required kernel.
  // CHECK-NEXT: %0 = synap.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  // GENERIC: %0 = "synap.max_pool2d"(%x) <{kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, activation = #synap<activation none>}> : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  %0 = synap.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  // Explicit defaults are elided.
  // CHECK-NEXT: %1 = synap.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  %1 = synap.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, activation = #synap<activation none>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  // Every property set, with layer attributes.
  // CHECK-NEXT: %2 = synap.max_pool2d %x {layer_name = "pool1", layer_index = 2 : i64, kernel = array<i64: 3, 2>, strides = array<i64: 2, 3>, pad = array<i64: 1, 1, 0, 1>, activation = #synap<activation relu>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x3x3xf32>
  // GENERIC: %2 = "synap.max_pool2d"(%x) <{kernel = array<i64: 3, 2>, strides = array<i64: 2, 3>, pad = array<i64: 1, 1, 0, 1>, activation = #synap<activation relu>}> {layer_name = "pool1", layer_index = 2 : i64} : (tensor<1x8x8x3xf32>) -> tensor<1x4x3x3xf32>
  %2 = synap.max_pool2d %x {layer_name = "pool1", layer_index = 2 : i64, kernel = array<i64: 3, 2>, strides = array<i64: 2, 3>, pad = array<i64: 1, 1, 0, 1>, activation = #synap<activation relu>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x3x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @max_pool2d_quantized(
func.func @max_pool2d_quantized(%x: tensor<1x4x4x2x!quant.uniform<u8:f32, 0.5:3>>) {
  // Quantized max pooling (global 4x4 window).
  // CHECK-NEXT: %0 = synap.max_pool2d %x {layer_name = "qpool", kernel = array<i64: 4, 4>, strides = array<i64: 4, 4>} : (tensor<1x4x4x2x!quant.uniform<u8:f32, 0.5:3>>) -> tensor<1x1x1x2x!quant.uniform<u8:f32, 0.5:3>>
  %0 = synap.max_pool2d %x {layer_name = "qpool", kernel = array<i64: 4, 4>, strides = array<i64: 4, 4>} : (tensor<1x4x4x2x!quant.uniform<u8:f32, 0.5:3>>) -> tensor<1x1x1x2x!quant.uniform<u8:f32, 0.5:3>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @avg_pool2d(
func.func @avg_pool2d(%x: tensor<1x8x8x3xf32>) {
  // Only the required kernel.
  // CHECK-NEXT: %0 = synap.avg_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  // GENERIC: %0 = "synap.avg_pool2d"(%x) <{kernel = array<i64: 2, 2>, count_include_pad = false, strides = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, activation = #synap<activation none>}> : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  %0 = synap.avg_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  // Explicit defaults, count_include_pad included, are elided.
  // CHECK-NEXT: %1 = synap.avg_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  %1 = synap.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, activation = #synap<activation none>, count_include_pad = false} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  // Every property set, with layer attributes.
  // CHECK-NEXT: %2 = synap.avg_pool2d %x {layer_name = "pool2", layer_index = 9 : i64, kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation relu6>, count_include_pad = true} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  // GENERIC: %2 = "synap.avg_pool2d"(%x) <{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation relu6>, count_include_pad = true}> {layer_name = "pool2", layer_index = 9 : i64} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  %2 = synap.avg_pool2d %x {layer_name = "pool2", layer_index = 9 : i64, kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation relu6>, count_include_pad = true} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @avg_pool2d_quantized(
func.func @avg_pool2d_quantized(%x: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.25:-7>>) {
  // Quantized average pooling with a different output scale.
  // CHECK-NEXT: %0 = synap.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, count_include_pad = true} : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.25:-7>>) -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.125>>
  %0 = synap.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, count_include_pad = true} : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.25:-7>>) -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.125>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @lp_pool2d(
func.func @lp_pool2d(%x: tensor<1x8x8x3xf32>) {
  // Only the required kernel: p = 2 (L2 pooling) by default.
  // CHECK-NEXT: %0 = synap.lp_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  // GENERIC: %0 = "synap.lp_pool2d"(%x) <{kernel = array<i64: 2, 2>, p = 2.000000e+00 : f32, dilations = array<i64: 1, 1>, strides = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, activation = #synap<activation none>}> : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  %0 = synap.lp_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  // Explicit defaults are elided.
  // CHECK-NEXT: %1 = synap.lp_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  %1 = synap.lp_pool2d %x {kernel = array<i64: 2, 2>, p = 2.0 : f32, dilations = array<i64: 1, 1>, strides = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, activation = #synap<activation none>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  // Every property set, with layer attributes: a 3x3 window dilated to 5 rows.
  // CHECK-NEXT: %2 = synap.lp_pool2d %x {layer_name = "lp", layer_index = 4 : i64, kernel = array<i64: 3, 3>, p = 3.000000e+00 : f32, dilations = array<i64: 2, 1>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation relu>} : (tensor<1x8x8x3xf32>) -> tensor<1x3x4x3xf32>
  // GENERIC: %2 = "synap.lp_pool2d"(%x) <{kernel = array<i64: 3, 3>, p = 3.000000e+00 : f32, dilations = array<i64: 2, 1>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation relu>}> {layer_name = "lp", layer_index = 4 : i64} : (tensor<1x8x8x3xf32>) -> tensor<1x3x4x3xf32>
  %2 = synap.lp_pool2d %x {layer_name = "lp", layer_index = 4 : i64, kernel = array<i64: 3, 3>, p = 3.0 : f32, dilations = array<i64: 2, 1>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation relu>} : (tensor<1x8x8x3xf32>) -> tensor<1x3x4x3xf32>
  // CHECK-NEXT: func.return
  func.return
}
