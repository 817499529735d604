// RUN: synapc-opt %s --split-input-file -p fuse-activation | filecheck %s

// A clamp with an activation's bounds folds into the producer's activation; the producer
// keeps its layer name. ReLU (min 0), ReLU6, ReLU_N1_TO_1 and clip(0, 1) all fuse.
// CHECK-LABEL: func.func @float_conv_layers
// CHECK-NEXT:    %[[A:.*]] = synap.conv2d %x, %w {layer_name = "conv1", layer_index = 3 : i64, fused_layers = ["relu1"], activation = #synap<activation relu6>}
// CHECK-NEXT:    %[[B:.*]] = synap.depthwise_conv2d %x, %dw {activation = #synap<activation relu_n1_to_1>}
// CHECK-NEXT:    %[[C:.*]] = synap.transpose_conv2d %x, %tw {activation = #synap<activation relu_0_to_1>}
// CHECK-NEXT:    %[[D:.*]] = synap.fully_connected %v, %fw {activation = #synap<activation relu>}
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]], %[[D]] :
func.func @float_conv_layers(%x: tensor<1x6x6x4xf32>, %w: tensor<8x3x3x4xf32>, %dw: tensor<1x3x3x4xf32>, %tw: tensor<2x3x3x4xf32>, %v: tensor<2x16xf32>, %fw: tensor<5x16xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x4xf32>, tensor<1x8x8x2xf32>, tensor<2x5xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "conv1", layer_index = 3 : i64} : (tensor<1x6x6x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x4x4x8xf32>
  %1 = synap.clamp %0 {layer_name = "relu1", min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %2 = synap.depthwise_conv2d %x, %dw : (tensor<1x6x6x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x4x4x4xf32>
  %3 = synap.clamp %2 {min = -1.0 : f32, max = 1.0 : f32} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %4 = synap.transpose_conv2d %x, %tw : (tensor<1x6x6x4xf32>, tensor<2x3x3x4xf32>) -> tensor<1x8x8x2xf32>
  %5 = synap.clamp %4 {min = 0.0 : f32, max = 1.0 : f32} : (tensor<1x8x8x2xf32>) -> tensor<1x8x8x2xf32>
  %6 = synap.fully_connected %v, %fw : (tensor<2x16xf32>, tensor<5x16xf32>) -> tensor<2x5xf32>
  %7 = synap.clamp %6 {min = 0.0 : f32} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %1, %3, %5, %7 : tensor<1x4x4x8xf32>, tensor<1x4x4x4xf32>, tensor<1x8x8x2xf32>, tensor<2x5xf32>
}

// -----

// Elementwise and pooling producers fuse too.
// CHECK-LABEL: func.func @float_elementwise_pool
// CHECK-NEXT:    %[[A:.*]] = synap.add %a, %b {activation = #synap<activation relu>}
// CHECK-NEXT:    %[[S:.*]] = synap.sub %a, %b {activation = #synap<activation relu6>}
// CHECK-NEXT:    %[[M:.*]] = synap.mul %a, %b {activation = #synap<activation relu_n1_to_1>}
// CHECK-NEXT:    %[[D:.*]] = synap.div %a, %b {activation = #synap<activation relu>}
// CHECK-NEXT:    %[[P:.*]] = synap.max_pool2d %a {kernel = array<i64: 2, 2>, activation = #synap<activation relu6>}
// CHECK-NEXT:    %[[Q:.*]] = synap.avg_pool2d %a {kernel = array<i64: 2, 2>, activation = #synap<activation relu>}
// CHECK-NEXT:    func.return %[[A]], %[[S]], %[[M]], %[[D]], %[[P]], %[[Q]] :
func.func @float_elementwise_pool(%a: tensor<1x4x4x3xf32>, %b: tensor<1x4x4x3xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) {
  %0 = synap.add %a, %b : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %1 = synap.clamp %0 {min = 0.0 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %2 = synap.sub %a, %b : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %3 = synap.clamp %2 {min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %4 = synap.mul %a, %b : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %5 = synap.clamp %4 {min = -1.0 : f32, max = 1.0 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %6 = synap.div %a, %b : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %7 = synap.clamp %6 {min = 0.0 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %8 = synap.max_pool2d %a {kernel = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x3x3x3xf32>
  %9 = synap.clamp %8 {min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %10 = synap.avg_pool2d %a {kernel = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x3x3x3xf32>
  %11 = synap.clamp %10 {min = 0.0 : f32} : (tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %1, %3, %5, %7, %9, %11 : tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>
}

// -----

// A producer that already has an activation takes the intersection of both ranges when
// it is an activation: relu then relu6 = relu6, relu6 then relu = relu6,
// relu_n1_to_1 then relu = relu_0_to_1, and a chain of clamps folds step by step, each
// clamp's layer joining the producer's fused_layers in graph order.
// CHECK-LABEL: func.func @compose
// CHECK-NEXT:    %[[A:.*]] = synap.add %a, %b {activation = #synap<activation relu6>}
// CHECK-NEXT:    %[[S:.*]] = synap.sub %a, %b {activation = #synap<activation relu6>}
// CHECK-NEXT:    %[[M:.*]] = synap.mul %a, %b {activation = #synap<activation relu_0_to_1>}
// CHECK-NEXT:    %[[D:.*]] = synap.div %a, %b {layer_name = "div", fused_layers = ["bn", "relu6", "clip"], activation = #synap<activation relu_0_to_1>}
// CHECK-NEXT:    func.return %[[A]], %[[S]], %[[M]], %[[D]] :
func.func @compose(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = synap.add %a, %b {activation = #synap<activation relu>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = synap.clamp %0 {min = 0.0 : f32, max = 6.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = synap.sub %a, %b {activation = #synap<activation relu6>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = synap.clamp %2 {min = 0.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = synap.mul %a, %b {activation = #synap<activation relu_n1_to_1>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = synap.clamp %4 {min = 0.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %6 = synap.div %a, %b {layer_name = "div", fused_layers = ["bn"]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = synap.clamp %6 {layer_name = "relu6", min = 0.0 : f32, max = 6.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %8 = synap.clamp %7 {layer_name = "clip", min = -1.0 : f32, max = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1, %3, %5, %8 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// No fusion: bounds that are no activation (clip(0, 4), max only, min -1 only), a
// producer result with a second use, a producer without an activation property
// (matmul, maximum), a block argument.
// CHECK-LABEL: func.func @not_fused
// CHECK-NEXT:    %0 = synap.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %1 = synap.clamp %0 {min = 0.000000e+00 : f32, max = 4.000000e+00 : f32}
// CHECK-NEXT:    %2 = synap.sub %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %3 = synap.clamp %2 {max = 6.000000e+00 : f32}
// CHECK-NEXT:    %4 = synap.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %5 = synap.clamp %4 {min = -1.000000e+00 : f32}
// CHECK-NEXT:    %6 = synap.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %7 = synap.clamp %6 {min = 0.000000e+00 : f32}
// CHECK-NEXT:    %8 = synap.maximum %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %9 = synap.clamp %8 {min = 0.000000e+00 : f32}
// CHECK-NEXT:    %10 = synap.clamp %a {min = 0.000000e+00 : f32}
// CHECK-NEXT:    %11 = synap.matmul %m, %m : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    %12 = synap.clamp %11 {min = 0.000000e+00 : f32}
// CHECK-NEXT:    func.return
func.func @not_fused(%a: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>) {
  %0 = synap.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = synap.clamp %0 {min = 0.0 : f32, max = 4.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = synap.sub %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = synap.clamp %2 {max = 6.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = synap.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = synap.clamp %4 {min = -1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %6 = synap.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = synap.clamp %6 {min = 0.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %8 = synap.maximum %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %9 = synap.clamp %8 {min = 0.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %10 = synap.clamp %a {min = 0.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %11 = synap.matmul %m, %m : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %12 = synap.clamp %11 {min = 0.0 : f32} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %1, %3, %5, %6, %7, %9, %10, %12 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>
}

// -----

// Quantized, TFLite semantics (the default): the clamp of one type fuses whatever the
// scale, even when a bound falls halfway between two steps (scale 2: both kernels round
// 1 / 2 away from zero).
// CHECK-LABEL: func.func @quantized_tflite
// CHECK-NEXT:    %[[C:.*]] = synap.conv2d %x, %w {activation = #synap<activation relu6>}
// CHECK-NEXT:    %[[F:.*]] = synap.fully_connected %v, %fw {activation = #synap<activation relu>}
// CHECK-NEXT:    %[[A:.*]] = synap.add %a, %b {activation = #synap<activation relu_n1_to_1>}
// CHECK-NEXT:    %[[P:.*]] = synap.avg_pool2d %a {kernel = array<i64: 2, 2>, activation = #synap<activation relu6>}
// CHECK-NEXT:    func.return %[[C]], %[[F]], %[[A]], %[[P]] :
func.func @quantized_tflite(%x: tensor<1x4x4x8x!quant.uniform<u8:f32, 0.02:128>>, %w: tensor<6x3x3x8x!quant.uniform<i8:f32, 0.01>>, %v: tensor<2x16x!quant.uniform<i8:f32, 0.05:-3>>, %fw: tensor<4x16x!quant.uniform<i8:f32, 0.02>>, %a: tensor<1x4x4x3x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<1x4x4x3x!quant.uniform<i8:f32, 0.25:-2>>) -> (tensor<1x2x2x6x!quant.uniform<u8:f32, 0.1:128>>, tensor<2x4x!quant.uniform<i8:f32, 0.2:-10>>, tensor<1x4x4x3x!quant.uniform<i8:f32, 2.0:0>>, tensor<1x3x3x3x!quant.uniform<i8:f32, 0.5:1>>) {
  %0 = synap.conv2d %x, %w : (tensor<1x4x4x8x!quant.uniform<u8:f32, 0.02:128>>, tensor<6x3x3x8x!quant.uniform<i8:f32, 0.01>>) -> tensor<1x2x2x6x!quant.uniform<u8:f32, 0.1:128>>
  %1 = synap.clamp %0 {min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x2x2x6x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<1x2x2x6x!quant.uniform<u8:f32, 0.1:128>>
  %2 = synap.fully_connected %v, %fw : (tensor<2x16x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x16x!quant.uniform<i8:f32, 0.02>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.2:-10>>
  %3 = synap.clamp %2 {min = 0.0 : f32} : (tensor<2x4x!quant.uniform<i8:f32, 0.2:-10>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.2:-10>>
  %4 = synap.add %a, %b : (tensor<1x4x4x3x!quant.uniform<i8:f32, 0.5:1>>, tensor<1x4x4x3x!quant.uniform<i8:f32, 0.25:-2>>) -> tensor<1x4x4x3x!quant.uniform<i8:f32, 2.0:0>>
  %5 = synap.clamp %4 {min = -1.0 : f32, max = 1.0 : f32} : (tensor<1x4x4x3x!quant.uniform<i8:f32, 2.0:0>>) -> tensor<1x4x4x3x!quant.uniform<i8:f32, 2.0:0>>
  %6 = synap.avg_pool2d %a {kernel = array<i64: 2, 2>} : (tensor<1x4x4x3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<1x3x3x3x!quant.uniform<i8:f32, 0.5:1>>
  %7 = synap.clamp %6 {min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x3x3x3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<1x3x3x3x!quant.uniform<i8:f32, 0.5:1>>
  func.return %1, %3, %5, %7 : tensor<1x2x2x6x!quant.uniform<u8:f32, 0.1:128>>, tensor<2x4x!quant.uniform<i8:f32, 0.2:-10>>, tensor<1x4x4x3x!quant.uniform<i8:f32, 2.0:0>>, tensor<1x3x3x3x!quant.uniform<i8:f32, 0.5:1>>
}

// -----

// Quantized clamps that do not fuse: one that requantizes (output type differs from the
// producer's), a per-axis output, a 32-bit storage type.
// CHECK-LABEL: func.func @quantized_not_fused
// CHECK-NEXT:    %0 = synap.add %a, %a
// CHECK-NEXT:    %1 = synap.clamp %0 {min = 0.000000e+00 : f32}
// CHECK-NEXT:    %2 = synap.add %p, %p
// CHECK-NEXT:    %3 = synap.clamp %2 {min = 0.000000e+00 : f32}
// CHECK-NEXT:    %4 = synap.add %i, %i
// CHECK-NEXT:    %5 = synap.clamp %4 {min = 0.000000e+00 : f32}
// CHECK-NEXT:    func.return
func.func @quantized_not_fused(%a: tensor<4x!quant.uniform<i8:f32, 0.5>>, %p: tensor<1x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>, %i: tensor<4x!quant.uniform<i32:f32, 0.5>>) -> (tensor<4x!quant.uniform<i8:f32, 0.25>>, tensor<1x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>, tensor<4x!quant.uniform<i32:f32, 0.5>>) {
  %0 = synap.add %a, %a : (tensor<4x!quant.uniform<i8:f32, 0.5>>, tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.5>>
  %1 = synap.clamp %0 {min = 0.0 : f32} : (tensor<4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.25>>
  %2 = synap.add %p, %p : (tensor<1x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>, tensor<1x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>) -> tensor<1x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
  %3 = synap.clamp %2 {min = 0.0 : f32} : (tensor<1x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>) -> tensor<1x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>
  %4 = synap.add %i, %i : (tensor<4x!quant.uniform<i32:f32, 0.5>>, tensor<4x!quant.uniform<i32:f32, 0.5>>) -> tensor<4x!quant.uniform<i32:f32, 0.5>>
  %5 = synap.clamp %4 {min = 0.0 : f32} : (tensor<4x!quant.uniform<i32:f32, 0.5>>) -> tensor<4x!quant.uniform<i32:f32, 0.5>>
  func.return %1, %3, %5 : tensor<4x!quant.uniform<i8:f32, 0.25>>, tensor<1x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>, tensor<4x!quant.uniform<i32:f32, 0.5>>
}

// -----

// Quantized, ONNX semantics: a conv-like layer fuses where clamping dequantized values
// and requantizing them ties-to-even gives the integers the fused activation's range
// (rounded half away) gives: relu6 at scale 0.1. Other producers clamp float32 values
// before quantizing, which matches whenever dequantize -> quantize is exact: add with
// relu_n1_to_1 even at scale 2, where the bounds are halfway between two steps.
// CHECK-LABEL: func.func @quantized_onnx
// CHECK-NEXT:    %[[C:.*]] = synap.conv2d %x, %w {activation = #synap<activation relu6>}
// CHECK-NEXT:    %[[A:.*]] = synap.add %a, %b {activation = #synap<activation relu_n1_to_1>}
// CHECK-NEXT:    %[[P:.*]] = synap.max_pool2d %a {kernel = array<i64: 2, 2>, activation = #synap<activation relu>}
// CHECK-NEXT:    func.return %[[C]], %[[A]], %[[P]] :
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @quantized_onnx(%x: tensor<1x4x4x8x!quant.uniform<u8:f32, 0.02:128>>, %w: tensor<6x3x3x8x!quant.uniform<i8:f32, 0.01>>, %a: tensor<1x4x4x3x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<1x4x4x3x!quant.uniform<i8:f32, 0.25:-2>>) -> (tensor<1x2x2x6x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x4x3x!quant.uniform<i8:f32, 2.0:3>>, tensor<1x3x3x3x!quant.uniform<i8:f32, 0.5:1>>) {
    %0 = synap.conv2d %x, %w : (tensor<1x4x4x8x!quant.uniform<u8:f32, 0.02:128>>, tensor<6x3x3x8x!quant.uniform<i8:f32, 0.01>>) -> tensor<1x2x2x6x!quant.uniform<u8:f32, 0.1:128>>
    %1 = synap.clamp %0 {min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x2x2x6x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<1x2x2x6x!quant.uniform<u8:f32, 0.1:128>>
    %2 = synap.add %a, %b : (tensor<1x4x4x3x!quant.uniform<i8:f32, 0.5:1>>, tensor<1x4x4x3x!quant.uniform<i8:f32, 0.25:-2>>) -> tensor<1x4x4x3x!quant.uniform<i8:f32, 2.0:3>>
    %3 = synap.clamp %2 {min = -1.0 : f32, max = 1.0 : f32} : (tensor<1x4x4x3x!quant.uniform<i8:f32, 2.0:3>>) -> tensor<1x4x4x3x!quant.uniform<i8:f32, 2.0:3>>
    %4 = synap.max_pool2d %a {kernel = array<i64: 2, 2>} : (tensor<1x4x4x3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<1x3x3x3x!quant.uniform<i8:f32, 0.5:1>>
    %5 = synap.clamp %4 {min = 0.0 : f32} : (tensor<1x3x3x3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<1x3x3x3x!quant.uniform<i8:f32, 0.5:1>>
    func.return %1, %3, %5 : tensor<1x2x2x6x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x4x3x!quant.uniform<i8:f32, 2.0:3>>, tensor<1x3x3x3x!quant.uniform<i8:f32, 0.5:1>>
  }
}

// -----

// Quantized, ONNX semantics, not fused: conv-like layers whose output scale puts a bound
// halfway between two steps (1 / 0.4 = 2.5, 1 / 2 = 0.5), which the clamp rounds to even
// and the fused range away from zero; a quantized div (0 / 0 gives NaN, which the fused
// clamp keeps).
// CHECK-LABEL: func.func @quantized_onnx_not_fused
// CHECK-NEXT:    %0 = synap.conv2d %x, %w
// CHECK-NEXT:    %1 = synap.clamp %0 {min = -1.000000e+00 : f32, max = 1.000000e+00 : f32}
// CHECK-NEXT:    %2 = synap.fully_connected %v, %fw
// CHECK-NEXT:    %3 = synap.clamp %2 {min = 0.000000e+00 : f32, max = 1.000000e+00 : f32}
// CHECK-NEXT:    %4 = synap.div %a, %b
// CHECK-NEXT:    %5 = synap.clamp %4 {min = 0.000000e+00 : f32}
// CHECK-NEXT:    func.return
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @quantized_onnx_not_fused(%x: tensor<1x4x4x8x!quant.uniform<u8:f32, 0.02:128>>, %w: tensor<6x3x3x8x!quant.uniform<i8:f32, 0.01>>, %v: tensor<2x16x!quant.uniform<i8:f32, 0.05:-3>>, %fw: tensor<4x16x!quant.uniform<i8:f32, 0.02>>, %a: tensor<4x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<4x!quant.uniform<i8:f32, 0.25:-2>>) -> (tensor<1x2x2x6x!quant.uniform<u8:f32, 0.4:128>>, tensor<2x4x!quant.uniform<i8:f32, 2.0:-10>>, tensor<4x!quant.uniform<i8:f32, 0.5:1>>) {
    %0 = synap.conv2d %x, %w : (tensor<1x4x4x8x!quant.uniform<u8:f32, 0.02:128>>, tensor<6x3x3x8x!quant.uniform<i8:f32, 0.01>>) -> tensor<1x2x2x6x!quant.uniform<u8:f32, 0.4:128>>
    %1 = synap.clamp %0 {min = -1.0 : f32, max = 1.0 : f32} : (tensor<1x2x2x6x!quant.uniform<u8:f32, 0.4:128>>) -> tensor<1x2x2x6x!quant.uniform<u8:f32, 0.4:128>>
    %2 = synap.fully_connected %v, %fw : (tensor<2x16x!quant.uniform<i8:f32, 0.05:-3>>, tensor<4x16x!quant.uniform<i8:f32, 0.02>>) -> tensor<2x4x!quant.uniform<i8:f32, 2.0:-10>>
    %3 = synap.clamp %2 {min = 0.0 : f32, max = 1.0 : f32} : (tensor<2x4x!quant.uniform<i8:f32, 2.0:-10>>) -> tensor<2x4x!quant.uniform<i8:f32, 2.0:-10>>
    %4 = synap.div %a, %b : (tensor<4x!quant.uniform<i8:f32, 0.5:1>>, tensor<4x!quant.uniform<i8:f32, 0.25:-2>>) -> tensor<4x!quant.uniform<i8:f32, 0.5:1>>
    %5 = synap.clamp %4 {min = 0.0 : f32} : (tensor<4x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<4x!quant.uniform<i8:f32, 0.5:1>>
    func.return %1, %3, %5 : tensor<1x2x2x6x!quant.uniform<u8:f32, 0.4:128>>, tensor<2x4x!quant.uniform<i8:f32, 2.0:-10>>, tensor<4x!quant.uniform<i8:f32, 0.5:1>>
  }
}

// -----

// maximum(x, 0 constant) is a ReLU: float zeros, or stored zero points of x's quantized
// type; the constant goes with the maximum.
// CHECK-LABEL: func.func @maximum_zero
// CHECK-NEXT:    %[[A:.*]] = synap.add %a, %a {layer_name = "add", fused_layers = ["relu"], activation = #synap<activation relu>}
// CHECK-NEXT:    %[[Q:.*]] = synap.add %q, %q {activation = #synap<activation relu>}
// CHECK-NEXT:    func.return %[[A]], %[[Q]] :
func.func @maximum_zero(%a: tensor<1x4xf32>, %q: tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>) -> (tensor<1x4xf32>, tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>) {
  %zero = synap.constant dense_resource<zero> : tensor<1xf32>
  %qzero = synap.constant dense_resource<qzero> : tensor<1x!quant.uniform<u8:f32, 0.1:128>>
  %0 = synap.add %a, %a {layer_name = "add"} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %1 = synap.maximum %0, %zero {layer_name = "relu"} : (tensor<1x4xf32>, tensor<1xf32>) -> tensor<1x4xf32>
  %2 = synap.add %q, %q : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>
  %3 = synap.maximum %qzero, %2 : (tensor<1x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>
  func.return %1, %3 : tensor<1x4xf32>, tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>
}

{-#
  dialect_resources: {
    builtin: {
      qzero: "0x0100000080",
      zero: "0x0400000000000000"
    }
  }
#-}

// -----

// maximum with a constant that is not zero, or stored zeros of another quantized type,
// or with a broadcast to a larger shape, is kept.
// CHECK-LABEL: func.func @maximum_not_zero
// CHECK-NEXT:    %{{.*}} = synap.constant dense_resource<one>
// CHECK-NEXT:    %{{.*}} = synap.constant dense_resource<qzero>
// CHECK-NEXT:    %{{.*}} = synap.constant dense_resource<wide>
// CHECK-NEXT:    %[[A:.*]] = synap.add %a, %a : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    synap.maximum %[[A]]
// CHECK-NEXT:    %[[Q:.*]] = synap.add %q, %q : ({{.*}}) -> tensor<1x4x!quant.uniform<u8:f32, 0.1:100>>
// CHECK-NEXT:    synap.maximum %[[Q]]
// CHECK-NEXT:    %[[B:.*]] = synap.add %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    synap.maximum %[[B]]
// CHECK-NEXT:    func.return
func.func @maximum_not_zero(%a: tensor<1x4xf32>, %q: tensor<1x4x!quant.uniform<u8:f32, 0.1:100>>, %b: tensor<4xf32>) -> (tensor<1x4xf32>, tensor<1x4x!quant.uniform<u8:f32, 0.1:100>>, tensor<2x4xf32>) {
  %one = synap.constant dense_resource<one> : tensor<1xf32>
  %qzero = synap.constant dense_resource<qzero> : tensor<1x!quant.uniform<u8:f32, 0.1:128>>
  %wide = synap.constant dense_resource<wide> : tensor<2x1xf32>
  %0 = synap.add %a, %a : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %1 = synap.maximum %0, %one : (tensor<1x4xf32>, tensor<1xf32>) -> tensor<1x4xf32>
  %2 = synap.add %q, %q : (tensor<1x4x!quant.uniform<u8:f32, 0.1:100>>, tensor<1x4x!quant.uniform<u8:f32, 0.1:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.1:100>>
  %3 = synap.maximum %2, %qzero : (tensor<1x4x!quant.uniform<u8:f32, 0.1:100>>, tensor<1x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.1:100>>
  %4 = synap.add %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = synap.maximum %4, %wide : (tensor<4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  func.return %1, %3, %5 : tensor<1x4xf32>, tensor<1x4x!quant.uniform<u8:f32, 0.1:100>>, tensor<2x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      one: "0x040000000000803f",
      qzero: "0x0100000080",
      wide: "0x040000000000000000000000"
    }
  }
#-}
