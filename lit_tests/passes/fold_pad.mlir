// RUN: synapc-opt %s --split-input-file -p fold-pad | filecheck %s

// Functions named @fold_* must lose their pad, @keep_* must keep it;
// tests/test_pass_fold_pad.py runs every @fold_* case on the JAX backend before and after
// the pass and checks that the outputs are identical.

// A float zero pad of H and W becomes the conv's own padding; the conv keeps its source
// layer.
// CHECK-LABEL: func.func @fold_conv_float
// CHECK-NEXT:    %y = synap.conv2d %x, %w, %b {layer_name = "conv", layer_index = 7 : i64, fused_layers = ["pad"], pad = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>) -> tensor<1x6x6x16xf32>
// CHECK-NEXT:    func.return %y
func.func @fold_conv_float(%x: tensor<1x6x6x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x6x6x16xf32> {
  %p = synap.pad %x {layer_name = "pad", pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x6x6x8xf32>) -> tensor<1x8x8x8xf32>
  %y = synap.conv2d %p, %w, %b {layer_name = "conv", layer_index = 7 : i64} : (tensor<1x8x8x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>) -> tensor<1x6x6x16xf32>
  func.return %y : tensor<1x6x6x16xf32>
}

// -----

// An asymmetric pad adds to a strided conv's existing padding; other properties stay.
// CHECK-LABEL: func.func @fold_conv_adds_to_own_pad
// CHECK-NEXT:    %y = synap.conv2d %x, %w {strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 2, 2>, activation = #synap<activation relu>} : (tensor<1x7x7x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x4xf32>
// CHECK-NEXT:    func.return %y
func.func @fold_conv_adds_to_own_pad(%x: tensor<1x7x7x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x5x4xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 0, 1, 0, 2, 0, 0>} : (tensor<1x7x7x3xf32>) -> tensor<1x8x9x3xf32>
  %y = synap.conv2d %p, %w {strides = array<i64: 2, 2>, pad = array<i64: 1, 0, 2, 0>, activation = #synap<activation relu>} : (tensor<1x8x9x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x4xf32>
  func.return %y : tensor<1x4x5x4xf32>
}

// -----

// Float depthwise convolution with a channel multiplier.
// CHECK-LABEL: func.func @fold_depthwise_float
// CHECK-NEXT:    %y = synap.depthwise_conv2d %x, %w {pad = array<i64: 2, 2, 2, 2>} : (tensor<1x5x5x4xf32>, tensor<1x5x5x8xf32>) -> tensor<1x5x5x8xf32>
// CHECK-NEXT:    func.return %y
func.func @fold_depthwise_float(%x: tensor<1x5x5x4xf32>, %w: tensor<1x5x5x8xf32>) -> tensor<1x5x5x8xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 2, 2, 2, 2, 0, 0>} : (tensor<1x5x5x4xf32>) -> tensor<1x9x9x4xf32>
  %y = synap.depthwise_conv2d %p, %w : (tensor<1x9x9x4xf32>, tensor<1x5x5x8xf32>) -> tensor<1x5x5x8xf32>
  func.return %y : tensor<1x5x5x8xf32>
}

// -----

// Quantized conv (TFLite semantics): a pad of real 0 stores the zero point, which the
// kernel pads with.
// CHECK-LABEL: func.func @fold_conv_quant_tflite
// CHECK-NEXT:    %y = synap.conv2d %x, %w {pad = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
// CHECK-NEXT:    func.return %y
func.func @fold_conv_quant_tflite(%x: tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.conv2d %p, %w : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
  func.return %y : tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
}

// -----

// A pad value that quantizes to the zero point (0.02 / 0.05 rounds to 0) is a zero pad.
// CHECK-LABEL: func.func @fold_conv_quant_fill_rounds_to_zero_point
// CHECK-NEXT:    %y = synap.conv2d %x, %w {pad = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:    func.return %y
func.func @fold_conv_quant_fill_rounds_to_zero_point(%x: tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, value = 0.02 : f32} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.conv2d %p, %w : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
  func.return %y : tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
}

// -----

// Quantized int8 conv with per-channel weights under ONNX semantics (the pad runs as
// dequantize -> pad -> quantize there; its zero fill still stores the zero point).
// CHECK-LABEL: func.func @fold_conv_quant_onnx
// CHECK-NEXT:    %y = synap.conv2d %x, %w {strides = array<i64: 2, 2>, pad = array<i64: 1, 2, 1, 2>} : (tensor<1x7x7x8x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x3x3x8x!quant.uniform<i8:f32:0, {0.01,0.02,0.03,0.04}>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.1:5>>
// CHECK-NEXT:    func.return %y
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @fold_conv_quant_onnx(%x: tensor<1x7x7x8x!quant.uniform<i8:f32, 0.05:-3>>, %w: tensor<4x3x3x8x!quant.uniform<i8:f32:0, {0.01,0.02,0.03,0.04}>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.1:5>> {
    %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x7x7x8x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<1x9x9x8x!quant.uniform<i8:f32, 0.05:-3>>
    %y = synap.conv2d %p, %w {strides = array<i64: 2, 2>, pad = array<i64: 0, 1, 0, 1>} : (tensor<1x9x9x8x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x3x3x8x!quant.uniform<i8:f32:0, {0.01,0.02,0.03,0.04}>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.1:5>>
    func.return %y : tensor<1x4x4x4x!quant.uniform<i8:f32, 0.1:5>>
  }
}

// -----

// Quantized int8 depthwise conv (TFLite semantics), zero point -3.
// CHECK-LABEL: func.func @fold_depthwise_quant_tflite
// CHECK-NEXT:    %y = synap.depthwise_conv2d %x, %w {pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation relu6>}
// CHECK-NEXT:    func.return %y
func.func @fold_depthwise_quant_tflite(%x: tensor<1x5x5x4x!quant.uniform<i8:f32, 0.05:-3>>, %w: tensor<1x3x3x4x!quant.uniform<i8:f32:3, {0.01,0.02,0.03,0.04}>>) -> tensor<1x5x5x4x!quant.uniform<i8:f32, 0.1:5>> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x5x5x4x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<1x7x7x4x!quant.uniform<i8:f32, 0.05:-3>>
  %y = synap.depthwise_conv2d %p, %w {activation = #synap<activation relu6>} : (tensor<1x7x7x4x!quant.uniform<i8:f32, 0.05:-3>>, tensor<1x3x3x4x!quant.uniform<i8:f32:3, {0.01,0.02,0.03,0.04}>>) -> tensor<1x5x5x4x!quant.uniform<i8:f32, 0.1:5>>
  func.return %y : tensor<1x5x5x4x!quant.uniform<i8:f32, 0.1:5>>
}

// -----

// Quantized int8 depthwise conv under ONNX semantics.
// CHECK-LABEL: func.func @fold_depthwise_quant_onnx
// CHECK-NEXT:    %y = synap.depthwise_conv2d %x, %w {pad = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:    func.return %y
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @fold_depthwise_quant_onnx(%x: tensor<1x5x5x4x!quant.uniform<i8:f32, 0.05:-3>>, %w: tensor<1x3x3x4x!quant.uniform<i8:f32:3, {0.01,0.02,0.03,0.04}>>) -> tensor<1x5x5x4x!quant.uniform<i8:f32, 0.1:5>> {
    %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x5x5x4x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<1x7x7x4x!quant.uniform<i8:f32, 0.05:-3>>
    %y = synap.depthwise_conv2d %p, %w : (tensor<1x7x7x4x!quant.uniform<i8:f32, 0.05:-3>>, tensor<1x3x3x4x!quant.uniform<i8:f32:3, {0.01,0.02,0.03,0.04}>>) -> tensor<1x5x5x4x!quant.uniform<i8:f32, 0.1:5>>
    func.return %y : tensor<1x5x5x4x!quant.uniform<i8:f32, 0.1:5>>
  }
}

// -----

// A quantized fill other than the zero point (0.5 stores 138) is not the conv's padding.
// CHECK-LABEL: func.func @keep_conv_quant_fill_not_zero_point
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    %y = synap.conv2d %p, %w :
func.func @keep_conv_quant_fill_not_zero_point(%x: tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, value = 0.5 : f32} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.conv2d %p, %w : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
  func.return %y : tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
}

// -----

// A pad that requantizes (input and result types differ) is not a plain copy.
// CHECK-LABEL: func.func @keep_pad_requantizes
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    %y = synap.conv2d %p, %w :
func.func @keep_pad_requantizes(%x: tensor<1x6x6x4x!quant.uniform<u8:f32, 0.04:128>>, %w: tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.04:128>>) -> tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.conv2d %p, %w : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
  func.return %y : tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
}

// -----

// A float fill other than 0.0 is not the conv's padding.
// CHECK-LABEL: func.func @keep_conv_float_nonzero_fill
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    %y = synap.conv2d %p, %w :
func.func @keep_conv_float_nonzero_fill(%x: tensor<1x6x6x4xf32>, %w: tensor<4x3x3x4xf32>) -> tensor<1x6x6x4xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, value = 1.0 : f32} : (tensor<1x6x6x4xf32>) -> tensor<1x8x8x4xf32>
  %y = synap.conv2d %p, %w : (tensor<1x8x8x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  func.return %y : tensor<1x6x6x4xf32>
}

// -----

// Reflect, symmetric and edge pads never fold.
// CHECK-LABEL: func.func @keep_reflect_and_edge
// CHECK-NEXT:    %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, mode = #synap<pad_mode reflect>}
// CHECK-NEXT:    %q = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, mode = #synap<pad_mode edge>}
// CHECK-NEXT:    %r = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, mode = #synap<pad_mode symmetric>}
// CHECK-NEXT:    synap.conv2d %p, %w :
// CHECK-NEXT:    synap.conv2d %q, %w :
// CHECK-NEXT:    synap.conv2d %r, %w :
func.func @keep_reflect_and_edge(%x: tensor<1x6x6x4xf32>, %w: tensor<4x3x3x4xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, mode = #synap<pad_mode reflect>} : (tensor<1x6x6x4xf32>) -> tensor<1x8x8x4xf32>
  %q = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, mode = #synap<pad_mode edge>} : (tensor<1x6x6x4xf32>) -> tensor<1x8x8x4xf32>
  %r = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, mode = #synap<pad_mode symmetric>} : (tensor<1x6x6x4xf32>) -> tensor<1x8x8x4xf32>
  %a = synap.conv2d %p, %w : (tensor<1x8x8x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  %b = synap.conv2d %q, %w : (tensor<1x8x8x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  %c = synap.conv2d %r, %w : (tensor<1x8x8x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  func.return %a, %b, %c : tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>
}

// -----

// Pads of the channel or batch axis are not spatial padding.
// CHECK-LABEL: func.func @keep_channel_pad
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.conv2d %p, %w :
func.func @keep_channel_pad(%x: tensor<1x6x6x4xf32>, %w: tensor<4x3x3x6xf32>) -> tensor<1x6x6x4xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 1, 1>} : (tensor<1x6x6x4xf32>) -> tensor<1x8x8x6xf32>
  %y = synap.conv2d %p, %w : (tensor<1x8x8x6xf32>, tensor<4x3x3x6xf32>) -> tensor<1x6x6x4xf32>
  func.return %y : tensor<1x6x6x4xf32>
}

// CHECK-LABEL: func.func @keep_batch_pad
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.max_pool2d %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} :
func.func @keep_batch_pad(%x: tensor<1x6x6x4xf32>) -> tensor<2x3x3x4xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 1, 0, 0, 0, 0, 0, 0>, value = 0xFF800000 : f32} : (tensor<1x6x6x4xf32>) -> tensor<2x6x6x4xf32>
  %y = synap.max_pool2d %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x6x6x4xf32>) -> tensor<2x3x3x4xf32>
  func.return %y : tensor<2x3x3x4xf32>
}

// -----

// A pad that something else also reads stays, and then no layer takes it over.
// CHECK-LABEL: func.func @keep_pad_also_returned
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    %y = synap.conv2d %p, %w :
func.func @keep_pad_also_returned(%x: tensor<1x6x6x4xf32>, %w: tensor<4x3x3x4xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x8x8x4xf32>) {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x6x6x4xf32>) -> tensor<1x8x8x4xf32>
  %y = synap.conv2d %p, %w : (tensor<1x8x8x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  func.return %y, %p : tensor<1x6x6x4xf32>, tensor<1x8x8x4xf32>
}

// CHECK-LABEL: func.func @keep_pad_also_read_by_unfoldable_pool
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    %y = synap.conv2d %p, %w :
// CHECK-NEXT:    %z = synap.max_pool2d %p {kernel = array<i64: 3, 3>} :
func.func @keep_pad_also_read_by_unfoldable_pool(%x: tensor<1x6x6x4xf32>, %w: tensor<4x3x3x4xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x6x6x4xf32>) -> tensor<1x8x8x4xf32>
  %y = synap.conv2d %p, %w : (tensor<1x8x8x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  %z = synap.max_pool2d %p {kernel = array<i64: 3, 3>} : (tensor<1x8x8x4xf32>) -> tensor<1x6x6x4xf32>
  func.return %y, %z : tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>
}

// -----

// A pad read by several layers that can all take it folds into each of them; its source
// layer goes to the first of them only (so that it is listed once).
// CHECK-LABEL: func.func @fold_shared_by_two_layers
// CHECK-NEXT:    %y = synap.conv2d %x, %w {layer_name = "conv", fused_layers = ["pad"], pad = array<i64: 1, 1, 1, 1>} :
// CHECK-NEXT:    %z = synap.avg_pool2d %x {layer_name = "pool", count_include_pad = true, kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>} :
// CHECK-NEXT:    func.return %y, %z
func.func @fold_shared_by_two_layers(%x: tensor<1x6x6x4xf32>, %w: tensor<4x3x3x4xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) {
  %p = synap.pad %x {layer_name = "pad", pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x6x6x4xf32>) -> tensor<1x8x8x4xf32>
  %y = synap.conv2d %p, %w {layer_name = "conv"} : (tensor<1x8x8x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  %z = synap.avg_pool2d %p {layer_name = "pool", kernel = array<i64: 3, 3>} : (tensor<1x8x8x4xf32>) -> tensor<1x6x6x4xf32>
  func.return %y, %z : tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>
}

// -----

// Float max pool: a -inf fill is exactly the pool's own padding.
// CHECK-LABEL: func.func @fold_max_pool_float_neg_inf
// CHECK-NEXT:    %y = synap.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 2, 0, 1, 1>} :
// CHECK-NEXT:    func.return %y
func.func @fold_max_pool_float_neg_inf(%x: tensor<1x6x6x4xf32>) -> tensor<1x3x3x4xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 2, 0, 1, 1, 0, 0>, value = 0xFF800000 : f32} : (tensor<1x6x6x4xf32>) -> tensor<1x8x8x4xf32>
  %y = synap.max_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x3x3x4xf32>
  func.return %y : tensor<1x3x3x4xf32>
}

// -----

// Float max pool after a fused RELU: the zero fill never beats the values (>= 0), and
// every window still covers input cells.
// CHECK-LABEL: func.func @fold_max_pool_float_after_relu
// CHECK-NEXT:    %r = synap.conv2d %x, %w {activation = #synap<activation relu>} :
// CHECK-NEXT:    %y = synap.max_pool2d %r {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} :
// CHECK-NEXT:    func.return %y
func.func @fold_max_pool_float_after_relu(%x: tensor<1x8x8x4xf32>, %w: tensor<4x1x1x4xf32>) -> tensor<1x4x4x4xf32> {
  %r = synap.conv2d %x, %w {activation = #synap<activation relu>} : (tensor<1x8x8x4xf32>, tensor<4x1x1x4xf32>) -> tensor<1x8x8x4xf32>
  %p = synap.pad %r {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x4xf32>) -> tensor<1x10x10x4xf32>
  %y = synap.max_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x10x10x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// Float max pool after synap.clamp with min >= 0.
// CHECK-LABEL: func.func @fold_max_pool_float_after_clamp
// CHECK-NEXT:    %r = synap.clamp %x
// CHECK-NEXT:    %y = synap.max_pool2d %r {kernel = array<i64: 2, 2>, pad = array<i64: 1, 0, 0, 1>} :
// CHECK-NEXT:    func.return %y
func.func @fold_max_pool_float_after_clamp(%x: tensor<1x5x5x4xf32>) -> tensor<1x5x5x4xf32> {
  %r = synap.clamp %x {min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x5x5x4xf32>) -> tensor<1x5x5x4xf32>
  %p = synap.pad %r {pads = array<i64: 0, 0, 1, 0, 0, 1, 0, 0>} : (tensor<1x5x5x4xf32>) -> tensor<1x6x6x4xf32>
  %y = synap.max_pool2d %p {kernel = array<i64: 2, 2>} : (tensor<1x6x6x4xf32>) -> tensor<1x5x5x4xf32>
  func.return %y : tensor<1x5x5x4xf32>
}

// -----

// Float max pool: a zero fill of values that may be negative could win the max.
// CHECK-LABEL: func.func @keep_max_pool_float_zero_fill_of_any_values
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.max_pool2d %p
func.func @keep_max_pool_float_zero_fill_of_any_values(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x4xf32>) -> tensor<1x10x10x4xf32>
  %y = synap.max_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x10x10x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @keep_max_pool_float_after_negative_clamp
// CHECK-NEXT:    %r = synap.clamp
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.max_pool2d %p
func.func @keep_max_pool_float_after_negative_clamp(%x: tensor<1x5x5x4xf32>) -> tensor<1x5x5x4xf32> {
  %r = synap.clamp %x {min = -1.0 : f32, max = 1.0 : f32} : (tensor<1x5x5x4xf32>) -> tensor<1x5x5x4xf32>
  %p = synap.pad %r {pads = array<i64: 0, 0, 1, 0, 0, 1, 0, 0>} : (tensor<1x5x5x4xf32>) -> tensor<1x6x6x4xf32>
  %y = synap.max_pool2d %p {kernel = array<i64: 2, 2>} : (tensor<1x6x6x4xf32>) -> tensor<1x5x5x4xf32>
  func.return %y : tensor<1x5x5x4xf32>
}

// CHECK-LABEL: func.func @keep_max_pool_float_after_relu_n1_to_1
// CHECK-NEXT:    %r = synap.conv2d
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.max_pool2d %p
func.func @keep_max_pool_float_after_relu_n1_to_1(%x: tensor<1x8x8x4xf32>, %w: tensor<4x1x1x4xf32>) -> tensor<1x4x4x4xf32> {
  %r = synap.conv2d %x, %w {activation = #synap<activation relu_n1_to_1>} : (tensor<1x8x8x4xf32>, tensor<4x1x1x4xf32>) -> tensor<1x8x8x4xf32>
  %p = synap.pad %r {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x4xf32>) -> tensor<1x10x10x4xf32>
  %y = synap.max_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x10x10x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// After a RELU, but the first window (rows 0-1) would see padding only: it gives 0 with
// the pad and -inf with the pool's own padding.
// CHECK-LABEL: func.func @keep_max_pool_window_of_padding_only
// CHECK-NEXT:    %r = synap.conv2d
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.max_pool2d %p
func.func @keep_max_pool_window_of_padding_only(%x: tensor<1x4x4x4xf32>, %w: tensor<4x1x1x4xf32>) -> tensor<1x3x2x4xf32> {
  %r = synap.conv2d %x, %w {activation = #synap<activation relu>} : (tensor<1x4x4x4xf32>, tensor<4x1x1x4xf32>) -> tensor<1x4x4x4xf32>
  %p = synap.pad %r {pads = array<i64: 0, 0, 2, 0, 0, 0, 0, 0>} : (tensor<1x4x4x4xf32>) -> tensor<1x6x4x4xf32>
  %y = synap.max_pool2d %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x4x4xf32>) -> tensor<1x3x2x4xf32>
  func.return %y : tensor<1x3x2x4xf32>
}

// -----

// Quantized max pool after a quantized conv with a fused RELU (TFLite semantics): the
// stored values are >= the zero point the pad writes.
// CHECK-LABEL: func.func @fold_max_pool_quant_after_relu_tflite
// CHECK-NEXT:    %r = synap.conv2d %x, %w {activation = #synap<activation relu>} :
// CHECK-NEXT:    %y = synap.max_pool2d %r {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>} :
// CHECK-NEXT:    func.return %y
func.func @fold_max_pool_quant_after_relu_tflite(%x: tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<4x1x1x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>> {
  %r = synap.conv2d %x, %w {activation = #synap<activation relu>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x1x1x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
  %p = synap.pad %r {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>) -> tensor<1x8x8x4x!quant.uniform<u8:f32, 0.1:100>>
  %y = synap.max_pool2d %p {kernel = array<i64: 3, 3>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.1:100>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
  func.return %y : tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
}

// -----

// The same on int8 under ONNX semantics, after synap.clamp (min 0) and with a pool that
// requantizes its output.
// CHECK-LABEL: func.func @fold_max_pool_quant_after_clamp_onnx
// CHECK-NEXT:    %r = synap.clamp %x
// CHECK-NEXT:    %y = synap.max_pool2d %r {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} :
// CHECK-NEXT:    func.return %y
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @fold_max_pool_quant_after_clamp_onnx(%x: tensor<1x7x7x4x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.04:-20>> {
    %r = synap.clamp %x {min = 0.0 : f32} : (tensor<1x7x7x4x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<1x7x7x4x!quant.uniform<i8:f32, 0.05:-3>>
    %p = synap.pad %r {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x7x7x4x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<1x9x9x4x!quant.uniform<i8:f32, 0.05:-3>>
    %y = synap.max_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x9x9x4x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.04:-20>>
    func.return %y : tensor<1x4x4x4x!quant.uniform<i8:f32, 0.04:-20>>
  }
}

// -----

// Quantized max pool after a RELU conv under ONNX semantics.
// CHECK-LABEL: func.func @fold_max_pool_quant_after_relu_onnx
// CHECK-NEXT:    %r = synap.conv2d %x, %w {activation = #synap<activation relu>} :
// CHECK-NEXT:    %y = synap.max_pool2d %r {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>} :
// CHECK-NEXT:    func.return %y
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @fold_max_pool_quant_after_relu_onnx(%x: tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<4x1x1x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>> {
    %r = synap.conv2d %x, %w {activation = #synap<activation relu>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x1x1x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
    %p = synap.pad %r {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>) -> tensor<1x8x8x4x!quant.uniform<u8:f32, 0.1:100>>
    %y = synap.max_pool2d %p {kernel = array<i64: 3, 3>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.1:100>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
    func.return %y : tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:100>>
  }
}

// -----

// Quantized max pool, zero-point fill of values that may be below the zero point.
// CHECK-LABEL: func.func @keep_max_pool_quant_zero_fill_of_any_values
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.max_pool2d %p
func.func @keep_max_pool_quant_zero_fill_of_any_values(%x: tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.max_pool2d %p {kernel = array<i64: 3, 3>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>
  func.return %y : tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>
}

// -----

// Quantized max pool (TFLite semantics), a fill storing the storage minimum (-6.4 / 0.05
// + 128 = 0): the integer kernel's own padding, even for the windows of padding only.
// CHECK-LABEL: func.func @fold_max_pool_quant_storage_min_tflite
// CHECK-NEXT:    %y = synap.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pad = array<i64: 2, 0, 1, 1>} :
// CHECK-NEXT:    func.return %y
func.func @fold_max_pool_quant_storage_min_tflite(%x: tensor<1x4x4x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x3x3x4x!quant.uniform<u8:f32, 0.1:100>> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 2, 0, 1, 1, 0, 0>, value = -6.4 : f32} : (tensor<1x4x4x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.max_pool2d %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x3x3x4x!quant.uniform<u8:f32, 0.1:100>>
  func.return %y : tensor<1x3x3x4x!quant.uniform<u8:f32, 0.1:100>>
}

// -----

// Under ONNX semantics a window of padding only requantizes the dequantized minimum to
// the output's parameters, where the pool's own padding gives the output's minimum: with
// a requantizing pool and such a window the pad stays.
// CHECK-LABEL: func.func @keep_max_pool_quant_storage_min_onnx
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.max_pool2d %p
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @keep_max_pool_quant_storage_min_onnx(%x: tensor<1x4x4x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x3x3x4x!quant.uniform<u8:f32, 0.1:100>> {
    %p = synap.pad %x {pads = array<i64: 0, 0, 2, 0, 1, 1, 0, 0>, value = -6.4 : f32} : (tensor<1x4x4x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>
    %y = synap.max_pool2d %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x3x3x4x!quant.uniform<u8:f32, 0.1:100>>
    func.return %y : tensor<1x3x3x4x!quant.uniform<u8:f32, 0.1:100>>
  }
}

// -----

// Under ONNX semantics a -inf fill stores the minimum; with the pool's own types it folds.
// CHECK-LABEL: func.func @fold_max_pool_quant_neg_inf_onnx
// CHECK-NEXT:    %y = synap.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pad = array<i64: 2, 0, 1, 1>} :
// CHECK-NEXT:    func.return %y
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @fold_max_pool_quant_neg_inf_onnx(%x: tensor<1x4x4x4x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<1x3x3x4x!quant.uniform<i8:f32, 0.05:-3>> {
    %p = synap.pad %x {pads = array<i64: 0, 0, 2, 0, 1, 1, 0, 0>, value = 0xFF800000 : f32} : (tensor<1x4x4x4x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<1x6x6x4x!quant.uniform<i8:f32, 0.05:-3>>
    %y = synap.max_pool2d %p {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x4x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<1x3x3x4x!quant.uniform<i8:f32, 0.05:-3>>
    func.return %y : tensor<1x3x3x4x!quant.uniform<i8:f32, 0.05:-3>>
  }
}

// -----

// Float avg pool without padding of its own: every window held k*k cells of the padded
// tensor, so the folded pool counts its padding.
// CHECK-LABEL: func.func @fold_avg_pool_float
// CHECK-NEXT:    %y = synap.avg_pool2d %x {layer_name = "pool", count_include_pad = true, kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} :
// CHECK-NEXT:    func.return %y
func.func @fold_avg_pool_float(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x4xf32>) -> tensor<1x10x10x4xf32>
  %y = synap.avg_pool2d %p {layer_name = "pool", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x10x10x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// Float avg pool that already counts its own padding.
// CHECK-LABEL: func.func @fold_avg_pool_float_counting_pad
// CHECK-NEXT:    %y = synap.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 2, 1, 1, 2>, activation = #synap<activation relu>} :
// CHECK-NEXT:    func.return %y
func.func @fold_avg_pool_float_counting_pad(%x: tensor<1x6x6x4xf32>) -> tensor<1x4x4x4xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 0, 0, 1, 0, 0>} : (tensor<1x6x6x4xf32>) -> tensor<1x7x7x4xf32>
  %y = synap.avg_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, count_include_pad = true, activation = #synap<activation relu>} : (tensor<1x7x7x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// Float avg pool that leaves its own padding out of the divisor while it counted the pad's
// cells: one flag cannot say both.
// CHECK-LABEL: func.func @keep_avg_pool_own_pad_not_counted
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.avg_pool2d %p
func.func @keep_avg_pool_own_pad_not_counted(%x: tensor<1x6x6x4xf32>) -> tensor<1x4x4x4xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 0, 0, 1, 0, 0>} : (tensor<1x6x6x4xf32>) -> tensor<1x7x7x4xf32>
  %y = synap.avg_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} : (tensor<1x7x7x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @keep_avg_pool_nonzero_fill
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.avg_pool2d %p
func.func @keep_avg_pool_nonzero_fill(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, value = 0.5 : f32} : (tensor<1x8x8x4xf32>) -> tensor<1x10x10x4xf32>
  %y = synap.avg_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x10x10x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// Quantized avg pool (TFLite semantics): the integer kernel averages stored integers over
// the in-bound cells and has no count_include_pad.
// CHECK-LABEL: func.func @keep_avg_pool_quant_tflite
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.avg_pool2d %p
func.func @keep_avg_pool_quant_tflite(%x: tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x4x4x4x!quant.uniform<u8:f32, 0.05:128>> {
  %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x10x10x4x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.avg_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x10x10x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x4x4x4x!quant.uniform<u8:f32, 0.05:128>>
  func.return %y : tensor<1x4x4x4x!quant.uniform<u8:f32, 0.05:128>>
}

// -----

// Quantized avg pool under ONNX semantics: not folded either (a quantized pool with
// count_include_pad is not a form the importers or TFLite's kernels produce).
// CHECK-LABEL: func.func @keep_avg_pool_quant_onnx
// CHECK-NEXT:    %p = synap.pad
// CHECK-NEXT:    synap.avg_pool2d %p
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @keep_avg_pool_quant_onnx(%x: tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x4x4x4x!quant.uniform<u8:f32, 0.05:128>> {
    %p = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x10x10x4x!quant.uniform<u8:f32, 0.05:128>>
    %y = synap.avg_pool2d %p {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x10x10x4x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x4x4x4x!quant.uniform<u8:f32, 0.05:128>>
    func.return %y : tensor<1x4x4x4x!quant.uniform<u8:f32, 0.05:128>>
  }
}
