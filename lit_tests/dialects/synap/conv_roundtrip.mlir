// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the ops of dialects/synap/conv.py: conv2d, depthwise_conv2d,
// transpose_conv2d, fully_connected, matmul. Properties print inside the attribute
// dictionary after layer_name/layer_index; properties equal to their default are elided
// in the custom form and printed in full in the generic form (GENERIC lines).

// CHECK-LABEL: func.func @conv2d(
func.func @conv2d(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>, %b: tensor<16xf32>, %wg: tensor<16x3x3x2xf32>) {
  // All properties at their defaults, no bias: nothing but operands and types.
  // CHECK-NEXT: %0 = synap.conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  // GENERIC: %0 = "synap.conv2d"(%x, %w) <{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, groups = 1 : i64, activation = #synap<activation none>}> : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  %0 = synap.conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  // Defaults spelled out explicitly are elided when printed.
  // CHECK-NEXT: %1 = synap.conv2d %x, %w, %b : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<16xf32>) -> tensor<1x6x6x16xf32>
  %1 = synap.conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, groups = 1 : i64, activation = #synap<activation none>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<16xf32>) -> tensor<1x6x6x16xf32>
  // Every property set, with layer_name and layer_index (grouped, strided, dilated, padded).
  // CHECK-NEXT: %2 = synap.conv2d %x, %wg, %b {layer_name = "conv1", layer_index = 3 : i64, strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad = array<i64: 1, 2, 3, 0>, groups = 2 : i64, activation = #synap<activation relu6>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x2xf32>, tensor<16xf32>) -> tensor<1x5x7x16xf32>
  // GENERIC: %2 = "synap.conv2d"(%x, %wg, %b) <{strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad = array<i64: 1, 2, 3, 0>, groups = 2 : i64, activation = #synap<activation relu6>}> {layer_name = "conv1", layer_index = 3 : i64} : (tensor<1x8x8x4xf32>, tensor<16x3x3x2xf32>, tensor<16xf32>) -> tensor<1x5x7x16xf32>
  %2 = synap.conv2d %x, %wg, %b {layer_name = "conv1", layer_index = 3 : i64, strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad = array<i64: 1, 2, 3, 0>, groups = 2 : i64, activation = #synap<activation relu6>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x2xf32>, tensor<16xf32>) -> tensor<1x5x7x16xf32>
  // Discardable attributes print before the properties, whatever the input order.
  // CHECK-NEXT: %3 = synap.conv2d %x, %w, %b {layer_index = 4 : i64, activation = #synap<activation relu>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<16xf32>) -> tensor<1x6x6x16xf32>
  %3 = synap.conv2d %x, %w, %b {activation = #synap<activation relu>, layer_index = 4 : i64} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<16xf32>) -> tensor<1x6x6x16xf32>
  // The other fused activations.
  // CHECK-NEXT: %4 = synap.conv2d %x, %w {activation = #synap<activation relu_n1_to_1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  %4 = synap.conv2d %x, %w {activation = #synap<activation relu_n1_to_1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  // CHECK-NEXT: %5 = synap.conv2d %x, %w {activation = #synap<activation relu_0_to_1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  %5 = synap.conv2d %x, %w {activation = #synap<activation relu_0_to_1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @conv2d_quantized(
func.func @conv2d_quantized(%x: tensor<1x4x4x3x!quant.uniform<u8:f32, 0.0235:128>>, %w: tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>, %b: tensor<4x!quant.uniform<i32:f32:0, {0.01175,0.005875,0.0029375,7.171630859375e-07}>>) {
  // A quantized conv: u8 per-tensor input, per-axis i8 filter, per-axis i32 bias.
  // CHECK-NEXT: %0 = synap.conv2d %x, %w, %b {layer_name = "q/conv"} : (tensor<1x4x4x3x!quant.uniform<u8:f32, 0.0235:128>>, tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>, tensor<4x!quant.uniform<i32:f32:0, {0.01175,0.005875,0.0029375,7.171630859375e-07}>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.05:-3>>
  // GENERIC: %0 = "synap.conv2d"(%x, %w, %b) <{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, groups = 1 : i64, activation = #synap<activation none>}> {layer_name = "q/conv"} : (tensor<1x4x4x3x!quant.uniform<u8:f32, 0.0235:128>>, tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>, tensor<4x!quant.uniform<i32:f32:0, {0.01175,0.005875,0.0029375,7.171630859375e-07}>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.05:-3>>
  %0 = synap.conv2d %x, %w, %b {layer_name = "q/conv"} : (tensor<1x4x4x3x!quant.uniform<u8:f32, 0.0235:128>>, tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>, tensor<4x!quant.uniform<i32:f32:0, {0.01175,0.005875,0.0029375,7.171630859375e-07}>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.05:-3>>
  // A dynamic-fixed-point result (i16 storage, scale 2^-8, zero point 0).
  // CHECK-NEXT: %1 = synap.conv2d %x, %w {activation = #synap<activation relu>} : (tensor<1x4x4x3x!quant.uniform<u8:f32, 0.0235:128>>, tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>) -> tensor<1x4x4x4x!quant.uniform<i16:f32, 0.00390625>>
  %1 = synap.conv2d %x, %w {activation = #synap<activation relu>} : (tensor<1x4x4x3x!quant.uniform<u8:f32, 0.0235:128>>, tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>) -> tensor<1x4x4x4x!quant.uniform<i16:f32, 0.00390625>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @depthwise_conv2d(
func.func @depthwise_conv2d(%x: tensor<1x8x8x4xf32>, %w: tensor<1x3x3x8xf32>, %b: tensor<8xf32>) {
  // All properties at their defaults (multiplier 2), no bias.
  // CHECK-NEXT: %0 = synap.depthwise_conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  // GENERIC: %0 = "synap.depthwise_conv2d"(%x, %w) <{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, activation = #synap<activation none>}> : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  %0 = synap.depthwise_conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  // Explicit defaults are elided.
  // CHECK-NEXT: %1 = synap.depthwise_conv2d %x, %w, %b : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>, tensor<8xf32>) -> tensor<1x6x6x8xf32>
  %1 = synap.depthwise_conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, activation = #synap<activation none>} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>, tensor<8xf32>) -> tensor<1x6x6x8xf32>
  // Every property set, with layer attributes.
  // CHECK-NEXT: %2 = synap.depthwise_conv2d %x, %w, %b {layer_name = "dw1", layer_index = 7 : i64, strides = array<i64: 2, 2>, dilations = array<i64: 2, 1>, pad = array<i64: 2, 2, 1, 1>, activation = #synap<activation relu6>} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  // GENERIC: %2 = "synap.depthwise_conv2d"(%x, %w, %b) <{strides = array<i64: 2, 2>, dilations = array<i64: 2, 1>, pad = array<i64: 2, 2, 1, 1>, activation = #synap<activation relu6>}> {layer_name = "dw1", layer_index = 7 : i64} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %2 = synap.depthwise_conv2d %x, %w, %b {layer_name = "dw1", layer_index = 7 : i64, strides = array<i64: 2, 2>, dilations = array<i64: 2, 1>, pad = array<i64: 2, 2, 1, 1>, activation = #synap<activation relu6>} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @depthwise_conv2d_quantized(
func.func @depthwise_conv2d_quantized(%x: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.1:-128>>, %w: tensor<1x3x3x2x!quant.uniform<i8:f32:3, {0.02,0.03}>>, %b: tensor<2x!quant.uniform<i32:f32:0, {0.002,0.003}>>) {
  // A quantized depthwise conv: i8 input, filter quantized along its channel axis (3).
  // CHECK-NEXT: %0 = synap.depthwise_conv2d %x, %w, %b {layer_name = "dw_q", pad = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.1:-128>>, tensor<1x3x3x2x!quant.uniform<i8:f32:3, {0.02,0.03}>>, tensor<2x!quant.uniform<i32:f32:0, {0.002,0.003}>>) -> tensor<1x4x4x2x!quant.uniform<i8:f32, 0.2:5>>
  %0 = synap.depthwise_conv2d %x, %w, %b {layer_name = "dw_q", pad = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.1:-128>>, tensor<1x3x3x2x!quant.uniform<i8:f32:3, {0.02,0.03}>>, tensor<2x!quant.uniform<i32:f32:0, {0.002,0.003}>>) -> tensor<1x4x4x2x!quant.uniform<i8:f32, 0.2:5>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @transpose_conv2d(
func.func @transpose_conv2d(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>, %b: tensor<3xf32>) {
  // All properties at their defaults, no bias.
  // CHECK-NEXT: %0 = synap.transpose_conv2d %x, %w : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  // GENERIC: %0 = "synap.transpose_conv2d"(%x, %w) <{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, activation = #synap<activation none>}> : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  %0 = synap.transpose_conv2d %x, %w : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  // Every property set: stride 2, dilation 2, crop 1 at top and left, -1 (output
  // padding) at the bottom and right.
  // CHECK-NEXT: %1 = synap.transpose_conv2d %x, %w, %b {layer_name = "deconv", layer_index = 11 : i64, strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pad = array<i64: 1, -1, 1, -1>, activation = #synap<activation relu>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>, tensor<3xf32>) -> tensor<1x11x11x3xf32>
  // GENERIC: %1 = "synap.transpose_conv2d"(%x, %w, %b) <{strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pad = array<i64: 1, -1, 1, -1>, activation = #synap<activation relu>}> {layer_name = "deconv", layer_index = 11 : i64} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>, tensor<3xf32>) -> tensor<1x11x11x3xf32>
  %1 = synap.transpose_conv2d %x, %w, %b {layer_name = "deconv", layer_index = 11 : i64, strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pad = array<i64: 1, -1, 1, -1>, activation = #synap<activation relu>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>, tensor<3xf32>) -> tensor<1x11x11x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @transpose_conv2d_quantized(
func.func @transpose_conv2d_quantized(%x: tensor<1x2x2x8x!quant.uniform<u8:f32, 0.5:10>>, %w: tensor<3x2x2x8x!quant.uniform<i8:f32:0, {0.1,0.2,0.3}>>, %b: tensor<3x!quant.uniform<i32:f32:0, {0.05,0.1,0.15}>>) {
  // A quantized transposed conv with per-axis filter and bias.
  // CHECK-NEXT: %0 = synap.transpose_conv2d %x, %w, %b {strides = array<i64: 2, 2>} : (tensor<1x2x2x8x!quant.uniform<u8:f32, 0.5:10>>, tensor<3x2x2x8x!quant.uniform<i8:f32:0, {0.1,0.2,0.3}>>, tensor<3x!quant.uniform<i32:f32:0, {0.05,0.1,0.15}>>) -> tensor<1x4x4x3x!quant.uniform<u8:f32, 0.25:7>>
  %0 = synap.transpose_conv2d %x, %w, %b {strides = array<i64: 2, 2>} : (tensor<1x2x2x8x!quant.uniform<u8:f32, 0.5:10>>, tensor<3x2x2x8x!quant.uniform<i8:f32:0, {0.1,0.2,0.3}>>, tensor<3x!quant.uniform<i32:f32:0, {0.05,0.1,0.15}>>) -> tensor<1x4x4x3x!quant.uniform<u8:f32, 0.25:7>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @fully_connected(
func.func @fully_connected(%x: tensor<2x16xf32>, %x3: tensor<2x5x16xf32>, %w: tensor<10x16xf32>, %b: tensor<10xf32>) {
  // No bias, default activation.
  // CHECK-NEXT: %0 = synap.fully_connected %x, %w : (tensor<2x16xf32>, tensor<10x16xf32>) -> tensor<2x10xf32>
  // GENERIC: %0 = "synap.fully_connected"(%x, %w) <{activation = #synap<activation none>}> : (tensor<2x16xf32>, tensor<10x16xf32>) -> tensor<2x10xf32>
  %0 = synap.fully_connected %x, %w : (tensor<2x16xf32>, tensor<10x16xf32>) -> tensor<2x10xf32>
  // Bias, activation and layer attributes; explicit default activation elided.
  // CHECK-NEXT: %1 = synap.fully_connected %x, %w, %b {layer_name = "fc", layer_index = 0 : i64, activation = #synap<activation relu>} : (tensor<2x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %1 = synap.fully_connected %x, %w, %b {layer_name = "fc", layer_index = 0 : i64, activation = #synap<activation relu>} : (tensor<2x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  // CHECK-NEXT: %2 = synap.fully_connected %x, %w, %b : (tensor<2x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %2 = synap.fully_connected %x, %w, %b {activation = #synap<activation none>} : (tensor<2x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  // A rank-3 input keeps its leading dimensions.
  // CHECK-NEXT: %3 = synap.fully_connected %x3, %w, %b : (tensor<2x5x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<2x5x10xf32>
  %3 = synap.fully_connected %x3, %w, %b : (tensor<2x5x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<2x5x10xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @fully_connected_quantized(
func.func @fully_connected_quantized(%x: tensor<1x16x!quant.uniform<i8:f32, 0.125:-1>>, %w: tensor<4x16x!quant.uniform<i8:f32:0, {0.01,0.02,0.03,0.04}>>, %b: tensor<4x!quant.uniform<i32:f32:0, {0.00125,0.0025,0.00375,0.005}>>) {
  // A quantized fully connected layer with per-axis weights and bias.
  // CHECK-NEXT: %0 = synap.fully_connected %x, %w, %b {layer_index = 42 : i64, activation = #synap<activation relu6>} : (tensor<1x16x!quant.uniform<i8:f32, 0.125:-1>>, tensor<4x16x!quant.uniform<i8:f32:0, {0.01,0.02,0.03,0.04}>>, tensor<4x!quant.uniform<i32:f32:0, {0.00125,0.0025,0.00375,0.005}>>) -> tensor<1x4x!quant.uniform<i8:f32, 0.0625:-128>>
  %0 = synap.fully_connected %x, %w, %b {layer_index = 42 : i64, activation = #synap<activation relu6>} : (tensor<1x16x!quant.uniform<i8:f32, 0.125:-1>>, tensor<4x16x!quant.uniform<i8:f32:0, {0.01,0.02,0.03,0.04}>>, tensor<4x!quant.uniform<i32:f32:0, {0.00125,0.0025,0.00375,0.005}>>) -> tensor<1x4x!quant.uniform<i8:f32, 0.0625:-128>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @matmul(
func.func @matmul(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>, %at: tensor<2x4x3xf32>, %bt: tensor<1x5x4xf32>) {
  // Defaults: no transposition, batch dimensions broadcast.
  // CHECK-NEXT: %0 = synap.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  // GENERIC: %0 = "synap.matmul"(%a, %b) <{transpose_lhs = false, transpose_rhs = false}> : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %0 = synap.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  // Both operands transposed, with layer attributes.
  // CHECK-NEXT: %1 = synap.matmul %at, %bt {layer_name = "attn/qk", layer_index = 5 : i64, transpose_lhs = true, transpose_rhs = true} : (tensor<2x4x3xf32>, tensor<1x5x4xf32>) -> tensor<2x3x5xf32>
  // GENERIC: %1 = "synap.matmul"(%at, %bt) <{transpose_lhs = true, transpose_rhs = true}> {layer_name = "attn/qk", layer_index = 5 : i64} : (tensor<2x4x3xf32>, tensor<1x5x4xf32>) -> tensor<2x3x5xf32>
  %1 = synap.matmul %at, %bt {layer_name = "attn/qk", layer_index = 5 : i64, transpose_lhs = true, transpose_rhs = true} : (tensor<2x4x3xf32>, tensor<1x5x4xf32>) -> tensor<2x3x5xf32>
  // Explicit false flags are elided; one flag alone.
  // CHECK-NEXT: %2 = synap.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %2 = synap.matmul %a, %b {transpose_lhs = false, transpose_rhs = false} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  // CHECK-NEXT: %3 = synap.matmul %a, %bt {transpose_rhs = true} : (tensor<2x3x4xf32>, tensor<1x5x4xf32>) -> tensor<2x3x5xf32>
  %3 = synap.matmul %a, %bt {transpose_rhs = true} : (tensor<2x3x4xf32>, tensor<1x5x4xf32>) -> tensor<2x3x5xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @matmul_quantized(
func.func @matmul_quantized(%a: tensor<3x4x!quant.uniform<u16:f32, 1.0e-05:32768>>, %b: tensor<4x2x!quant.uniform<u16:f32, 2.0e-05>>) {
  // A quantized matmul with u16 storage.
  // CHECK-NEXT: %0 = synap.matmul %a, %b : (tensor<3x4x!quant.uniform<u16:f32, 1.0e-05:32768>>, tensor<4x2x!quant.uniform<u16:f32, 2.0e-05>>) -> tensor<3x2x!quant.uniform<u16:f32, 0.001:100>>
  %0 = synap.matmul %a, %b : (tensor<3x4x!quant.uniform<u16:f32, 1.0e-05:32768>>, tensor<4x2x!quant.uniform<u16:f32, 2.0e-05>>) -> tensor<3x2x!quant.uniform<u16:f32, 0.001:100>>
  // CHECK-NEXT: func.return
  func.return
}
