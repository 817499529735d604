// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=MODULES
// RUN: sed -n '1,/^\/\/ -----$/p' %s > %t.rt
// RUN: synapc-opt %t.rt > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %t.rt --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %t.3 > %t.5 && diff %t.1 %t.5

// The op of dialects/synap/fused.py, synap.conv2d_pool (a conv2d with bias and fused
// activation, then a max pool, as one NPU layer). The first chunk round-trips: the custom
// form re-prints as written (CHECK), the generic form spells out every property
// (GENERIC), printing is a fixed point in both forms and the generic form parses back to
// the same custom text (the sed line cuts out the first chunk). The other chunks are the
// verifier errors: the conv2d shape rule, then the pool2d rule on the convolution result
// (prefixed "pooling of the convolution result"), and the operand checks shared with
// synap.conv2d.

// MODULES-COUNT-1: builtin.module {
// MODULES-NOT:     builtin.module {

// CHECK-LABEL: func.func @conv2d_pool(
func.func @conv2d_pool(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>, %b: tensor<16xf32>, %wg: tensor<16x3x3x2xf32>) {
  // Only the required pool window: 8x8 -conv 3x3-> 6x6 -pool 2x2 stride 1-> 5x5.
  // CHECK-NEXT: %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x5x5x16xf32>
  // GENERIC: %0 = "synap.conv2d_pool"(%x, %w) <{pool_kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, groups = 1 : i64, pool_strides = array<i64: 1, 1>, pool_pad = array<i64: 0, 0, 0, 0>, activation = #synap<activation none>}> : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x5x5x16xf32>
  %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x5x5x16xf32>
  // Defaults spelled out are elided; a bias.
  // CHECK-NEXT: %1 = synap.conv2d_pool %x, %w, %b {pool_kernel = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<16xf32>) -> tensor<1x5x5x16xf32>
  %1 = synap.conv2d_pool %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, groups = 1 : i64, activation = #synap<activation none>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 1, 1>, pool_pad = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<16xf32>) -> tensor<1x5x5x16xf32>
  // Every property set, with layer_name and layer_index: conv 8x8 -> 5x7 (as synap.conv2d),
  // then a 3x3 pool, stride 2, pad [1, 0, 1, 1] -> 2x4.
  // CHECK-NEXT: %2 = synap.conv2d_pool %x, %wg, %b {layer_name = "conv1", layer_index = 3 : i64, strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad = array<i64: 1, 2, 3, 0>, groups = 2 : i64, activation = #synap<activation relu6>, pool_kernel = array<i64: 3, 3>, pool_strides = array<i64: 2, 2>, pool_pad = array<i64: 1, 0, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x2xf32>, tensor<16xf32>) -> tensor<1x2x4x16xf32>
  // GENERIC: %2 = "synap.conv2d_pool"(%x, %wg, %b) <{strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad = array<i64: 1, 2, 3, 0>, groups = 2 : i64, activation = #synap<activation relu6>, pool_kernel = array<i64: 3, 3>, pool_strides = array<i64: 2, 2>, pool_pad = array<i64: 1, 0, 1, 1>}> {layer_name = "conv1", layer_index = 3 : i64} : (tensor<1x8x8x4xf32>, tensor<16x3x3x2xf32>, tensor<16xf32>) -> tensor<1x2x4x16xf32>
  %2 = synap.conv2d_pool %x, %wg, %b {layer_name = "conv1", layer_index = 3 : i64, strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad = array<i64: 1, 2, 3, 0>, groups = 2 : i64, activation = #synap<activation relu6>, pool_kernel = array<i64: 3, 3>, pool_strides = array<i64: 2, 2>, pool_pad = array<i64: 1, 0, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x2xf32>, tensor<16xf32>) -> tensor<1x2x4x16xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @conv2d_pool_quantized(
func.func @conv2d_pool_quantized(%x: tensor<1x4x4x3x!quant.uniform<u8:f32, 0.0235:128>>, %w: tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>, %b: tensor<4x!quant.uniform<i32:f32:0, {0.01175,0.005875,0.0029375,7.171630859375e-07}>>) {
  // A quantized layer: u8 input, per-axis i8 filter and i32 bias, i8 result.
  // CHECK-NEXT: %0 = synap.conv2d_pool %x, %w, %b {layer_name = "q/conv", activation = #synap<activation relu>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>} : (tensor<1x4x4x3x!quant.uniform<u8:f32, 0.0235:128>>, tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>, tensor<4x!quant.uniform<i32:f32:0, {0.01175,0.005875,0.0029375,7.171630859375e-07}>>) -> tensor<1x2x2x4x!quant.uniform<i8:f32, 0.05:-3>>
  %0 = synap.conv2d_pool %x, %w, %b {layer_name = "q/conv", activation = #synap<activation relu>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>} : (tensor<1x4x4x3x!quant.uniform<u8:f32, 0.0235:128>>, tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>, tensor<4x!quant.uniform<i32:f32:0, {0.01175,0.005875,0.0029375,7.171630859375e-07}>>) -> tensor<1x2x2x4x!quant.uniform<i8:f32, 0.05:-3>>
  // CHECK-NEXT: func.return
  func.return
}

// -----

// The pool_kernel property is required.
// CHECK: property 'pool_kernel' expected in operation 'synap.conv2d_pool'
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d_pool %x, %w : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// A wrong result shape names the shape that conv then pool imply.
// CHECK: synap.conv2d_pool "cp": result #0 shape [1, 6, 6, 16] should be [1, 3, 3, 16]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d_pool %x, %w {layer_name = "cp", pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// The convolution's shape rule: filter channels x groups must equal input channels.
// CHECK: synap.conv2d_pool @7: filter input channels (3) x groups (1) must equal input channels (4)
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x3xf32>) {
  %0 = synap.conv2d_pool %x, %w {layer_index = 7 : i64, pool_kernel = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x3xf32>) -> tensor<1x5x5x16xf32>
  func.return
}

// -----

// The convolution's strides need two values.
// CHECK: synap.conv2d_pool: strides needs 2 values, got [2]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d_pool %x, %w {strides = array<i64: 2>, pool_kernel = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x5x5x16xf32>
  func.return
}

// -----

// The pool window does not fit into the convolution result.
// CHECK: synap.conv2d_pool: pooling of the convolution result [1, 6, 6, 16]: height: window of 7 does not fit into 6 + padding 0+0
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 7, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x1x5x16xf32>
  func.return
}

// -----

// pool_kernel needs two values.
// CHECK: synap.conv2d_pool: pooling of the convolution result [1, 6, 6, 16]: kernel needs 2 values, got [2]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x5x5x16xf32>
  func.return
}

// -----

// pool_kernel values must be >= 1.
// CHECK: synap.conv2d_pool: pooling of the convolution result [1, 6, 6, 16]: kernel must be >= 1, got [0, 2]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 0, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x7x5x16xf32>
  func.return
}

// -----

// pool_strides must be >= 1.
// CHECK: synap.conv2d_pool: pooling of the convolution result [1, 6, 6, 16]: width: strides must be >= 1, got 0
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 1, 0>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x5x5x16xf32>
  func.return
}

// -----

// pool_pad needs four values, each >= 0.
// CHECK: synap.conv2d_pool: pooling of the convolution result [1, 6, 6, 16]: pad [top, bottom, left, right] needs 4 values, got [1, 1]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 2, 2>, pool_pad = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x5x5x16xf32>
  func.return
}

// -----

// CHECK: synap.conv2d_pool: pooling of the convolution result [1, 6, 6, 16]: height: padding must be >= 0, got [-1, 0]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 2, 2>, pool_pad = array<i64: -1, 0, 0, 0>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x4x5x16xf32>
  func.return
}

// -----

// The bias checks of synap.conv2d: one value per output channel.
// CHECK: synap.conv2d_pool "b": bias shape [8] should be [16]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>, %b: tensor<8xf32>) {
  %0 = synap.conv2d_pool %x, %w, %b {layer_name = "b", pool_kernel = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<8xf32>) -> tensor<1x5x5x16xf32>
  func.return
}

// -----

// A float bias on a quantized layer.
// CHECK: synap.conv2d_pool: bias element type f32 does not fit input element type !quant.uniform<u8:f32, 0.5:128>
func.func @f(%x: tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>, %w: tensor<16x3x3x4x!quant.uniform<u8:f32, 0.25:120>>, %b: tensor<16xf32>) {
  %0 = synap.conv2d_pool %x, %w, %b {pool_kernel = array<i64: 2, 2>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>, tensor<16x3x3x4x!quant.uniform<u8:f32, 0.25:120>>, tensor<16xf32>) -> tensor<1x5x5x16x!quant.uniform<u8:f32, 1.0:128>>
  func.return
}

// -----

// The filter checks of synap.conv2d: a float layer's filter has the input's float type
// (or is quantized).
// CHECK: synap.conv2d_pool: filter element type f16 does not fit input element type f32
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf16>) {
  %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf16>) -> tensor<1x5x5x16xf32>
  func.return
}

// -----

// The generic checks of base.py: the result kind follows the input's.
// CHECK: synap.conv2d_pool: result #0 element type f32 does not match operand #0 element type !quant.uniform<u8:f32, 0.5:128>
func.func @f(%x: tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>, %w: tensor<16x3x3x4x!quant.uniform<u8:f32, 0.25:120>>) {
  %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 2, 2>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>, tensor<16x3x3x4x!quant.uniform<u8:f32, 0.25:120>>) -> tensor<1x5x5x16xf32>
  func.return
}

// -----

// A dynamic result shape.
// CHECK: synap.conv2d_pool: result #0 must have a static shape, got tensor<1x?x5x16xf32>
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d_pool %x, %w {pool_kernel = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x?x5x16xf32>
  func.return
}

