// RUN: synapc-opt %s -p 'quantize{data_type=int8 scheme=perchannel_symmetric_affine}' | filecheck %s
// RUN: synapc-opt %s -p 'quantize{data_type=int8 scheme=perchannel_symmetric_affine fused_activations=false}' | filecheck %s --check-prefix=UNFUSED
// RUN: synapc-opt %s -p 'quantize{data_type=int8 scheme=perchannel_symmetric_affine channel_activations=false}' | filecheck %s --check-prefix=PERTENSOR

// A conv fused with the hard_swish it feeds (fused_activations, default): the conv writes
// its result in 16 bits (symmetric, from its range [-6, 6]: 6 / 32767), the hard_swish
// reads it; the hard_swish result, read by a depthwise layer only, is quantized per
// channel (channel_activations, default) from synap.calibrated_channel_range
// ([lows..., highs...]: channel 0 in [-0.375, 0.6], channel 1 in [-0.375, 6]), and the
// depthwise layer reads it as it is (its bias per channel: s_in[c] * s_w[c]).
// CHECK:      %[[C:.*]] = synap.conv2d {{.*}} -> tensor<1x2x2x2x!quant.uniform<i16:f32, 0.00018311105685598315>>
// CHECK-NEXT: %[[H:.*]] = synap.hard_swish %[[C]] {{.*}} -> tensor<1x2x2x2x!quant.uniform<i8:f32:3, {0.0038235294117647057:-30,0.025:-113}>>
// CHECK:      synap.constant dense_resource<qb{{.*}}> : tensor<2x!quant.uniform<i32:f32:0,
// CHECK-NEXT: synap.depthwise_conv2d %[[H]], {{.*}} : (tensor<1x2x2x2x!quant.uniform<i8:f32:3,

// Without fusion the conv's result is an 8-bit point of its own, per channel too
// (its only reader, hard_swish, keeps channels apart).
// UNFUSED:      synap.conv2d {{.*}} -> tensor<1x2x2x2x!quant.uniform<i8:f32:3,
// UNFUSED-NEXT: synap.hard_swish {{.*}} -> tensor<1x2x2x2x!quant.uniform<i8:f32:3,

// Without per-channel activations, one scale for hard_swish's result (its range).
// PERTENSOR:      synap.conv2d {{.*}} -> tensor<1x2x2x2x!quant.uniform<i16:f32,
// PERTENSOR-NEXT: synap.hard_swish {{.*}} -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.025{{[0-9]*}}:-113>>
func.func @main(%x: tensor<1x2x2x2xf32> {synap.name = "x", synap.calibrated_range = array<f64: -1.0, 1.0>}) -> tensor<1x2x2x2xf32> {
  %w = synap.constant dense_resource<w> : tensor<2x1x1x2xf32>
  %b = synap.constant dense_resource<b> : tensor<2xf32>
  %c = synap.conv2d %x, %w, %b {layer_name = "conv", synap.calibrated_range = [array<f64: -6.0, 6.0>], synap.calibrated_channel_range = array<f64: -3.0, -6.0, 0.6, 6.0>} : (tensor<1x2x2x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %h = synap.hard_swish %c {layer_name = "hswish", synap.calibrated_range = [array<f64: -0.375, 6.0>], synap.calibrated_channel_range = array<f64: -0.375, -0.375, 0.6, 6.0>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %dw = synap.constant dense_resource<dw> : tensor<1x1x1x2xf32>
  %db = synap.constant dense_resource<db> : tensor<2xf32>
  %y = synap.depthwise_conv2d %h, %dw, %db {layer_name = "dw", synap.calibrated_range = [array<f64: -1.0, 12.0>]} : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000003F000080BE0000803F0000403F",
      b: "0x04000000CDCCCC3DCDCC4CBE",
      dw: "0x040000000000003F00000040",
      db: "0x0400000000000000CDCCCC3D"
    }
  }
#-}
