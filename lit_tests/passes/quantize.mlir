// RUN: synapc-opt %s -p quantize | filecheck %s
// RUN: synapc-opt %s -p 'quantize{data_type=int8 scheme=perchannel_symmetric_affine}' | filecheck %s --check-prefix=PC

// uint8 (default): the float input is quantized at the entry from its calibrated range
// (nudged to contain 0: [0.5, 2.55] -> [0, 2.55], scale 0.01, zero point 0); the conv gets u8
// weights quantized from their own values, an i32 bias at s_in * s_w and a result
// from its range; the add rescales both inputs to its own range; the reshape keeps its
// input's type; the div has no integer kernel: it runs float behind a dequantize that
// the float32 layer shares; float results stay float outputs; the annotations are gone.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%x: tensor<1x2x2x2xf32> {synap.name = "x"}) -> (tensor<1x8x!quant.uniform<u8:f32, 0.009999999999999998>>, tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>)
// CHECK-NEXT:    %[[QX:.*]] = synap.quantize %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2x!quant.uniform<u8:f32, 0.009999999999999998>>
// CHECK-NEXT:    %[[W:.*]] = synap.constant dense_resource<qw> : tensor<3x1x1x2x!quant.uniform<u8:f32, 0.00784313725490196:128>>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<qb> : tensor<3x!quant.uniform<i32:f32, 7.843137427698821e-05>>
// CHECK-NEXT:    %[[C:.*]] = synap.conv2d %[[QX]], %[[W]], %[[B]] {layer_name = "conv", activation = #synap<activation relu>} : ({{.*}}) -> tensor<1x2x2x3x!quant.uniform<u8:f32, 0.019999999999999997>>
// CHECK-NEXT:    %[[A:.*]] = synap.add %[[C]], %[[C]] {layer_name = "add"} : ({{.*}}) -> tensor<1x2x2x3x!quant.uniform<u8:f32, 0.039999999999999994>>
// CHECK-NEXT:    %[[D:.*]] = synap.dequantize %[[A]] : ({{.*}}) -> tensor<1x2x2x3xf32>
// CHECK-NEXT:    %[[V:.*]] = synap.div %[[D]], %[[D]] {layer_name = "div"} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
// CHECK-NEXT:    %[[F:.*]] = synap.sub %[[D]], %[[D]] {layer_name = "keep"} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
// CHECK-NEXT:    %[[R:.*]] = synap.reshape %[[QX]] {layer_name = "flat"} : ({{.*}}) -> tensor<1x8x!quant.uniform<u8:f32, 0.009999999999999998>>
// CHECK-NEXT:    func.return %[[R]], %[[V]], %[[F]] :
// CHECK-NOT:     synap.calibrated_range
// CHECK-NOT:     synap.quant_type

// perchannel_symmetric_affine: i8 weights symmetric per output channel (zero point 0),
// an i32 bias per channel, asymmetric int8 activations.
// PC:         synap.quantize %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.009999999999999998:-128>>
// PC-NEXT:    synap.constant dense_resource<qw> : tensor<3x1x1x2x!quant.uniform<i8:f32:0, {0.003937007874015748,0.007874015748031496,0.007874015748031496}>>
// PC-NEXT:    synap.constant dense_resource<qb> : tensor<3x!quant.uniform<i32:f32:0, {3.937007932108827e-05,7.874015864217654e-05,7.874015864217654e-05}>>
// PC-NEXT:    synap.conv2d
func.func @main(%x: tensor<1x2x2x2xf32> {synap.name = "x", synap.calibrated_range = array<f64: 0.5, 2.55>}) -> (tensor<1x8xf32>, tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) {
  %w = synap.constant dense_resource<w> : tensor<3x1x1x2xf32>
  %b = synap.constant dense_resource<b> : tensor<3xf32>
  %c = synap.conv2d %x, %w, %b {layer_name = "conv", activation = #synap<activation relu>, synap.calibrated_range = [array<f64: 0.0, 5.1>]} : (tensor<1x2x2x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  %a = synap.add %c, %c {layer_name = "add", synap.calibrated_range = [array<f64: 0.0, 10.2>]} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  %v = synap.div %a, %a {layer_name = "div", synap.calibrated_range = [array<f64: 0.0, 1.0>]} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  %f = synap.sub %a, %a {layer_name = "keep", synap.quant_type = "float32", synap.calibrated_range = [array<f64: 0.0, 0.0>]} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  %r = synap.reshape %x {layer_name = "flat", synap.calibrated_range = [array<f64: 0.5, 2.55>]} : (tensor<1x2x2x2xf32>) -> tensor<1x8xf32>
  func.return %r, %v, %f : tensor<1x8xf32>, tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000003F000080BE0000803F0000403F000080BF0000003E",
      b: "0x04000000CDCCCC3DCDCC4CBECDCC4C3D"
    }
  }
#-}
