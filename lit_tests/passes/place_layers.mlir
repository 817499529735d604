// RUN: synapc-opt %s -p 'place-layers{target=VS680}' | filecheck %s
// RUN: synapc-opt %s -p 'place-layers{target=GENERIC}' | filecheck %s --check-prefix=GENERIC

// Each layer gets the NPU engine that runs it (synap.engine) or why none does
// (synap.fallback, which keeps it on the CPU in `partition`): a stride-2 uint8
// convolution leaves the convolution cores for a tensor processor; int16 (dynamic fixed
// point) resize is not in the vendor's table; a layer already asking for the CPU is left
// alone. GENERIC has no NPU at all.
// CHECK:       synap.conv2d %x, %w {synap.engine = "TP", strides = array<i64: 2, 2>}
// CHECK:       synap.conv2d %x, %w {synap.engine = "NN"}
// CHECK:       synap.resize %r {synap.fallback = "RESIZE dfp-i16->dfp-i16: not supported on the NPU"}
// CHECK:       synap.tanh %f {synap.delegate = "cpu"} :
// GENERIC:     synap.conv2d %x, %w {synap.fallback = "GENERIC has no NPU", strides = array<i64: 2, 2>}
func.func @main(%x: tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>, %r: tensor<1x4x4x3x!quant.uniform<i16:f32, 0.0078125>>, %f: tensor<1x4xf32>) -> (tensor<1x3x3x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x8x8x3x!quant.uniform<i16:f32, 0.0078125>>, tensor<1x4xf32>) {
  %s2 = synap.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x3x3x4x!quant.uniform<u8:f32, 0.1:128>>
  %s1 = synap.conv2d %x, %w : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<4x3x3x4x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:128>>
  %up = synap.resize %r : (tensor<1x4x4x3x!quant.uniform<i16:f32, 0.0078125>>) -> tensor<1x8x8x3x!quant.uniform<i16:f32, 0.0078125>>
  %t = synap.tanh %f {synap.delegate = "cpu"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %s2, %s1, %up, %t : tensor<1x3x3x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x6x6x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x8x8x3x!quant.uniform<i16:f32, 0.0078125>>, tensor<1x4xf32>
}
