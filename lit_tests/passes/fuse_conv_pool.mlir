// RUN: synapc-opt %s --split-input-file -p fuse-conv-pool | filecheck %s

// A float conv2d (bias, relu) whose only user is a max pool becomes one conv2d_pool with
// the conv's properties, the pool's window as pool_* properties, the conv's source layer
// and the pool's result type.
// CHECK-LABEL: func.func @float_conv_relu_pool
// CHECK-NEXT:    %w = synap.constant dense_resource<w> : tensor<8x3x3x3xf32>
// CHECK-NEXT:    %b = synap.constant dense_resource<b> : tensor<8xf32>
// CHECK-NEXT:    %p = synap.conv2d_pool %x, %w, %b {layer_name = "conv", layer_index = 2 : i64, fused_layers = ["pool"], pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation relu>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %p : tensor<1x4x4x8xf32>
func.func @float_conv_relu_pool(%x: tensor<1x8x8x3xf32>) -> tensor<1x4x4x8xf32> {
  %w = synap.constant dense_resource<w> : tensor<8x3x3x3xf32>
  %b = synap.constant dense_resource<b> : tensor<8xf32>
  %c = synap.conv2d %x, %w, %b {layer_name = "conv", layer_index = 2 : i64, pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation relu>} : (tensor<1x8x8x3xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %p = synap.max_pool2d %c {layer_name = "pool", layer_index = 3 : i64, kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %p : tensor<1x4x4x8xf32>
}

// -----

// Every conv property and pool property carries over (strided, dilated, grouped conv
// without bias; padded 3x3 pool with stride 2).
// CHECK-LABEL: func.func @all_properties
// CHECK-NEXT:    %w = synap.constant
// CHECK-NEXT:    %p = synap.conv2d_pool %x, %w {strides = array<i64: 1, 2>, dilations = array<i64: 2, 1>, pad = array<i64: 2, 2, 1, 0>, groups = 2 : i64, pool_kernel = array<i64: 3, 3>, pool_strides = array<i64: 2, 2>, pool_pad = array<i64: 1, 1, 1, 1>} : (tensor<1x9x9x4xf32>, tensor<6x3x3x2xf32>) -> tensor<1x5x2x6xf32>
// CHECK-NEXT:    func.return %p
func.func @all_properties(%x: tensor<1x9x9x4xf32>) -> tensor<1x5x2x6xf32> {
  %w = synap.constant dense_resource<w> : tensor<6x3x3x2xf32>
  %c = synap.conv2d %x, %w {strides = array<i64: 1, 2>, dilations = array<i64: 2, 1>, pad = array<i64: 2, 2, 1, 0>, groups = 2 : i64} : (tensor<1x9x9x4xf32>, tensor<6x3x3x2xf32>) -> tensor<1x9x4x6xf32>
  %p = synap.max_pool2d %c {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} : (tensor<1x9x4x6xf32>) -> tensor<1x5x2x6xf32>
  func.return %p : tensor<1x5x2x6xf32>
}

// -----

// Float: the pool's activation (a clamp, which commutes with max) is folded into the
// conv's: none then relu6 = relu6; relu6 then relu_n1_to_1 = relu_0_to_1 (the
// intersection of [0, 6] and [-1, 1]).
// CHECK-LABEL: func.func @float_pool_activation
// CHECK-NEXT:    %w = synap.constant
// CHECK-NEXT:    %p = synap.conv2d_pool %x, %w {activation = #synap<activation relu6>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>}
// CHECK-NEXT:    %q = synap.conv2d_pool %x, %w {activation = #synap<activation relu_0_to_1>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>}
// CHECK-NEXT:    func.return %p, %q
func.func @float_pool_activation(%x: tensor<1x8x8x3xf32>) -> (tensor<1x3x3x8xf32>, tensor<1x3x3x8xf32>) {
  %w = synap.constant dense_resource<w> : tensor<8x3x3x3xf32>
  %c = synap.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<8x3x3x3xf32>) -> tensor<1x6x6x8xf32>
  %p = synap.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, activation = #synap<activation relu6>} : (tensor<1x6x6x8xf32>) -> tensor<1x3x3x8xf32>
  %d = synap.conv2d %x, %w {activation = #synap<activation relu6>} : (tensor<1x8x8x3xf32>, tensor<8x3x3x3xf32>) -> tensor<1x6x6x8xf32>
  %q = synap.max_pool2d %d {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, activation = #synap<activation relu_n1_to_1>} : (tensor<1x6x6x8xf32>) -> tensor<1x3x3x8xf32>
  func.return %p, %q : tensor<1x3x3x8xf32>, tensor<1x3x3x8xf32>
}

// -----

// Two conv/pool stages fuse into two conv2d_pool ops; a second pool after a fused pair
// stays (it reads a conv2d_pool, not a conv2d).
// CHECK-LABEL: func.func @chain
// CHECK:         %p1 = synap.conv2d_pool %x, %w1
// CHECK-NEXT:    %p2 = synap.conv2d_pool %p1, %w2
// CHECK-NEXT:    %p3 = synap.max_pool2d %p2
// CHECK-NEXT:    func.return %p3
func.func @chain(%x: tensor<1x16x16x3xf32>) -> tensor<1x3x3x4xf32> {
  %w1 = synap.constant dense_resource<w1> : tensor<8x3x3x3xf32>
  %w2 = synap.constant dense_resource<w2> : tensor<4x1x1x8xf32>
  %c1 = synap.conv2d %x, %w1 {pad = array<i64: 1, 1, 1, 1>} : (tensor<1x16x16x3xf32>, tensor<8x3x3x3xf32>) -> tensor<1x16x16x8xf32>
  %p1 = synap.max_pool2d %c1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x16x8xf32>) -> tensor<1x8x8x8xf32>
  %c2 = synap.conv2d %p1, %w2 : (tensor<1x8x8x8xf32>, tensor<4x1x1x8xf32>) -> tensor<1x8x8x4xf32>
  %p2 = synap.max_pool2d %c2 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  %p3 = synap.max_pool2d %p2 {kernel = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x3x3x4xf32>
  func.return %p3 : tensor<1x3x3x4xf32>
}

// -----

// Not fused: the conv result has another use (the function returns it too).
// CHECK-LABEL: func.func @conv_used_twice
// CHECK-NEXT:    %w = synap.constant
// CHECK-NEXT:    %c = synap.conv2d
// CHECK-NEXT:    %p = synap.max_pool2d %c
// CHECK-NEXT:    func.return %c, %p
func.func @conv_used_twice(%x: tensor<1x8x8x3xf32>) -> (tensor<1x6x6x8xf32>, tensor<1x3x3x8xf32>) {
  %w = synap.constant dense_resource<w> : tensor<8x3x3x3xf32>
  %c = synap.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<8x3x3x3xf32>) -> tensor<1x6x6x8xf32>
  %p = synap.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x8xf32>) -> tensor<1x3x3x8xf32>
  func.return %c, %p : tensor<1x6x6x8xf32>, tensor<1x3x3x8xf32>
}

// -----

// Not fused: two pools read the same conv.
// CHECK-LABEL: func.func @two_pools
// CHECK-NEXT:    %w = synap.constant
// CHECK-NEXT:    %c = synap.conv2d
// CHECK-NEXT:    %p = synap.max_pool2d %c
// CHECK-NEXT:    %q = synap.max_pool2d %c
// CHECK-NOT:     synap.conv2d_pool
func.func @two_pools(%x: tensor<1x8x8x3xf32>) -> (tensor<1x3x3x8xf32>, tensor<1x5x5x8xf32>) {
  %w = synap.constant dense_resource<w> : tensor<8x3x3x3xf32>
  %c = synap.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<8x3x3x3xf32>) -> tensor<1x6x6x8xf32>
  %p = synap.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x8xf32>) -> tensor<1x3x3x8xf32>
  %q = synap.max_pool2d %c {kernel = array<i64: 2, 2>} : (tensor<1x6x6x8xf32>) -> tensor<1x5x5x8xf32>
  func.return %p, %q : tensor<1x3x3x8xf32>, tensor<1x5x5x8xf32>
}

// -----

// Not fused: a pool of a non-conv producer (a function argument, an add), an average
// pool after a conv, a max pool after a depthwise conv.
// CHECK-LABEL: func.func @other_producers_and_pools
// CHECK-NEXT:    %w = synap.constant
// CHECK-NEXT:    %dw = synap.constant
// CHECK-NEXT:    %p0 = synap.max_pool2d %x
// CHECK-NEXT:    %s = synap.add
// CHECK-NEXT:    %p1 = synap.max_pool2d %s
// CHECK-NEXT:    %c = synap.conv2d
// CHECK-NEXT:    %p2 = synap.avg_pool2d %c
// CHECK-NEXT:    %d = synap.depthwise_conv2d
// CHECK-NEXT:    %p3 = synap.max_pool2d %d
// CHECK-NOT:     synap.conv2d_pool
func.func @other_producers_and_pools(%x: tensor<1x8x8x3xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x3x3x8xf32>, tensor<1x3x3x3xf32>) {
  %w = synap.constant dense_resource<w> : tensor<8x3x3x3xf32>
  %dw = synap.constant dense_resource<dw> : tensor<1x3x3x3xf32>
  %p0 = synap.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  %s = synap.add %x, %x : (tensor<1x8x8x3xf32>, tensor<1x8x8x3xf32>) -> tensor<1x8x8x3xf32>
  %p1 = synap.max_pool2d %s {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  %c = synap.conv2d %x, %w : (tensor<1x8x8x3xf32>, tensor<8x3x3x3xf32>) -> tensor<1x6x6x8xf32>
  %p2 = synap.avg_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x8xf32>) -> tensor<1x3x3x8xf32>
  %d = synap.depthwise_conv2d %x, %dw : (tensor<1x8x8x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x6x6x3xf32>
  %p3 = synap.max_pool2d %d {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %p0, %p1, %p2, %p3 : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x3x3x8xf32>, tensor<1x3x3x3xf32>
}

// -----

// Quantized (TFLite semantics): the pool keeps the conv's output type, so it is an
// exact integer max and the pair fuses; the pool's relu folds into the conv's clamp
// (both clamp to the same type's activation range).
// CHECK-LABEL: func.func @quantized_tflite
// CHECK-NEXT:    %w = synap.constant
// CHECK-NEXT:    %b = synap.constant
// CHECK-NEXT:    %p = synap.conv2d_pool %x, %w, %b {layer_name = "conv", fused_layers = ["pool"], pad = array<i64: 1, 1, 1, 1>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>} : (tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x3x3x3x!quant.uniform<i8:f32:0, {0.01,0.02,0.015,0.005}>>, tensor<4x!quant.uniform<i32:f32:0, {0.0005,0.001,0.00075,0.00025}>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.25:5>>
// CHECK-NEXT:    %q = synap.conv2d_pool %x, %w, %b {activation = #synap<activation relu>, pool_kernel = array<i64: 3, 3>, pool_strides = array<i64: 2, 2>} : {{.*}} -> tensor<1x2x2x4x!quant.uniform<i8:f32, 0.25:5>>
// CHECK-NEXT:    func.return %p, %q
func.func @quantized_tflite(%x: tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>>) -> (tensor<1x4x4x4x!quant.uniform<i8:f32, 0.25:5>>, tensor<1x2x2x4x!quant.uniform<i8:f32, 0.25:5>>) {
  %w = synap.constant dense_resource<w> : tensor<4x3x3x3x!quant.uniform<i8:f32:0, {0.01,0.02,0.015,0.005}>>
  %b = synap.constant dense_resource<b> : tensor<4x!quant.uniform<i32:f32:0, {0.0005,0.001,0.00075,0.00025}>>
  %c = synap.conv2d %x, %w, %b {layer_name = "conv", pad = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x3x3x3x!quant.uniform<i8:f32:0, {0.01,0.02,0.015,0.005}>>, tensor<4x!quant.uniform<i32:f32:0, {0.0005,0.001,0.00075,0.00025}>>) -> tensor<1x8x8x4x!quant.uniform<i8:f32, 0.25:5>>
  %p = synap.max_pool2d %c {layer_name = "pool", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4x!quant.uniform<i8:f32, 0.25:5>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.25:5>>
  %d = synap.conv2d %x, %w, %b : (tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x3x3x3x!quant.uniform<i8:f32:0, {0.01,0.02,0.015,0.005}>>, tensor<4x!quant.uniform<i32:f32:0, {0.0005,0.001,0.00075,0.00025}>>) -> tensor<1x6x6x4x!quant.uniform<i8:f32, 0.25:5>>
  %q = synap.max_pool2d %d {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, activation = #synap<activation relu>} : (tensor<1x6x6x4x!quant.uniform<i8:f32, 0.25:5>>) -> tensor<1x2x2x4x!quant.uniform<i8:f32, 0.25:5>>
  func.return %p, %q : tensor<1x4x4x4x!quant.uniform<i8:f32, 0.25:5>>, tensor<1x2x2x4x!quant.uniform<i8:f32, 0.25:5>>
}

// -----

// Not fused: a quantized pool whose output type differs from the conv's (another scale,
// another zero point, another storage type) is not an exact max of the conv's integers.
// CHECK-LABEL: func.func @quantized_pool_changes_type
// CHECK-NEXT:    %w = synap.constant
// CHECK-NEXT:    %c = synap.conv2d
// CHECK-NEXT:    %p = synap.max_pool2d %c
// CHECK-NEXT:    %d = synap.conv2d
// CHECK-NEXT:    %q = synap.max_pool2d %d
// CHECK-NEXT:    %e = synap.conv2d
// CHECK-NEXT:    %r = synap.max_pool2d %e
// CHECK-NOT:     synap.conv2d_pool
func.func @quantized_pool_changes_type(%x: tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>>) -> (tensor<1x3x3x4x!quant.uniform<i8:f32, 0.5:5>>, tensor<1x3x3x4x!quant.uniform<i8:f32, 0.25:0>>, tensor<1x3x3x4x!quant.uniform<u8:f32, 0.25:133>>) {
  %w = synap.constant dense_resource<w> : tensor<4x3x3x3x!quant.uniform<i8:f32, 0.01>>
  %c = synap.conv2d %x, %w : (tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x3x3x3x!quant.uniform<i8:f32, 0.01>>) -> tensor<1x6x6x4x!quant.uniform<i8:f32, 0.25:5>>
  %p = synap.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x4x!quant.uniform<i8:f32, 0.25:5>>) -> tensor<1x3x3x4x!quant.uniform<i8:f32, 0.5:5>>
  %d = synap.conv2d %x, %w : (tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x3x3x3x!quant.uniform<i8:f32, 0.01>>) -> tensor<1x6x6x4x!quant.uniform<i8:f32, 0.25:5>>
  %q = synap.max_pool2d %d {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x4x!quant.uniform<i8:f32, 0.25:5>>) -> tensor<1x3x3x4x!quant.uniform<i8:f32, 0.25:0>>
  %e = synap.conv2d %x, %w : (tensor<1x8x8x3x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x3x3x3x!quant.uniform<i8:f32, 0.01>>) -> tensor<1x6x6x4x!quant.uniform<i8:f32, 0.25:5>>
  %r = synap.max_pool2d %e {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x4x!quant.uniform<i8:f32, 0.25:5>>) -> tensor<1x3x3x4x!quant.uniform<u8:f32, 0.25:133>>
  func.return %p, %q, %r : tensor<1x3x3x4x!quant.uniform<i8:f32, 0.5:5>>, tensor<1x3x3x4x!quant.uniform<i8:f32, 0.25:0>>, tensor<1x3x3x4x!quant.uniform<u8:f32, 0.25:133>>
}

// -----

// ONNX semantics: a quantized pool without activation of the conv's type fuses (an
// integer max equals dequantize -> max -> quantize).
// CHECK-LABEL: func.func @quantized_onnx
// CHECK-NEXT:    %w = synap.constant
// CHECK-NEXT:    %p = synap.conv2d_pool %x, %w {activation = #synap<activation relu>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>}
// CHECK-NEXT:    func.return %p
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @quantized_onnx(%x: tensor<1x8x8x3x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x3x3x4x!quant.uniform<u8:f32, 0.25:100>> {
    %w = synap.constant dense_resource<w> : tensor<4x3x3x3x!quant.uniform<u8:f32, 0.01:120>>
    %c = synap.conv2d %x, %w {activation = #synap<activation relu>} : (tensor<1x8x8x3x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x3x3x3x!quant.uniform<u8:f32, 0.01:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.25:100>>
    %p = synap.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.25:100>>) -> tensor<1x3x3x4x!quant.uniform<u8:f32, 0.25:100>>
    func.return %p : tensor<1x3x3x4x!quant.uniform<u8:f32, 0.25:100>>
  }
}

// -----

// Not fused under ONNX semantics: a quantized pool with an activation of its own, which
// ONNX applies in float and rounds half to even (it may differ from the conv's integer
// clamp at a bound). A float pair in the same module still fuses and folds the relu.
// CHECK-LABEL: func.func @onnx_pool_activation
// CHECK-NEXT:    %w = synap.constant
// CHECK-NEXT:    %c = synap.conv2d
// CHECK-NEXT:    %p = synap.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, activation = #synap<activation relu6>}
// CHECK-NEXT:    %fw = synap.constant
// CHECK-NEXT:    %q = synap.conv2d_pool %f, %fw {activation = #synap<activation relu>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>}
// CHECK-NEXT:    func.return %p, %q
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @onnx_pool_activation(%x: tensor<1x8x8x3x!quant.uniform<u8:f32, 0.05:128>>, %f: tensor<1x8x8x3xf32>) -> (tensor<1x3x3x4x!quant.uniform<u8:f32, 0.25:100>>, tensor<1x3x3x4xf32>) {
    %w = synap.constant dense_resource<w> : tensor<4x3x3x3x!quant.uniform<u8:f32, 0.01:120>>
    %c = synap.conv2d %x, %w : (tensor<1x8x8x3x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x3x3x3x!quant.uniform<u8:f32, 0.01:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.25:100>>
    %p = synap.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, activation = #synap<activation relu6>} : (tensor<1x6x6x4x!quant.uniform<u8:f32, 0.25:100>>) -> tensor<1x3x3x4x!quant.uniform<u8:f32, 0.25:100>>
    %fw = synap.constant dense_resource<fw> : tensor<4x3x3x3xf32>
    %fc = synap.conv2d %f, %fw : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x6x4xf32>
    %q = synap.max_pool2d %fc {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, activation = #synap<activation relu>} : (tensor<1x6x6x4xf32>) -> tensor<1x3x3x4xf32>
    func.return %p, %q : tensor<1x3x3x4x!quant.uniform<u8:f32, 0.25:100>>, tensor<1x3x3x4xf32>
  }
}
