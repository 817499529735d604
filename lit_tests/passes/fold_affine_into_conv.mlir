// RUN: synapc-opt %s --split-input-file -p fold-affine-into-conv | filecheck %s
// RUN: synapc-opt %s --split-input-file -p fold-batchnorm | filecheck %s

// fold-affine-into-conv (alias fold-batchnorm): a constant per-channel mul / add / sub /
// div after a float conv2d, depthwise_conv2d, fully_connected or transpose_conv2d folds
// into the layer's weights (scaled along the output-channel axis) and bias. Every case
// carries its weights as blobs, since the pass reads them; the folded blobs are checked.

// Batch-norm as mul then add: w' = w * s, b' = (b * s) + t, the layer's name is kept.
// w = [1, 2], b = [1, -1], s = [2, 0.5], t = [0.5, 0.25] -> w' = [2, 1], b' = [2.5, -0.25].
// CHECK-LABEL: func.func @conv_mul_add(
// CHECK-NEXT:    %[[W:.*]] = synap.constant dense_resource<c1_w_0> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<c1_b_1> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = synap.conv2d %x, %[[W]], %[[B]] {layer_name = "conv1", layer_index = 4 : i64, fused_layers = ["bn1/mul", "bn1/add"]} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x2x2x2xf32>
// CHECK:         c1_b_1: "0x0400000000002040000080BE",
// CHECK-NEXT:    c1_w_0: "0x04000000000000400000803F"
func.func @conv_mul_add(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = synap.constant dense_resource<c1_w> : tensor<2x1x1x1xf32>
  %b = synap.constant dense_resource<c1_b> : tensor<2xf32>
  %s = synap.constant dense_resource<c1_s> : tensor<1x1x1x2xf32>
  %t = synap.constant dense_resource<c1_t> : tensor<2xf32>
  %y = synap.conv2d %x, %w, %b {layer_name = "conv1", layer_index = 4 : i64} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %m = synap.mul %y, %s {layer_name = "bn1/mul"} : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  %a = synap.add %m, %t {layer_name = "bn1/add"} : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %a : tensor<1x2x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      c1_w: "0x040000000000803F00000040",
      c1_b: "0x040000000000803F000080BF",
      c1_s: "0x04000000000000400000003F",
      c1_t: "0x040000000000003F0000803E"
    }
  }
#-}

// -----

// A scalar scale on the left of a depthwise layer without bias: the filter scales along
// axis 3 ([1, KH, KW, C]) and a zero bias is created. w = [1, 2] * 3 -> [3, 6].
// CHECK-LABEL: func.func @depthwise_scalar_mul_no_bias(
// CHECK-NEXT:    %[[W:.*]] = synap.constant dense_resource<c2_w_0> : tensor<1x1x1x2xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<c2_w_bias> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = synap.depthwise_conv2d %x, %[[W]], %[[B]] : (tensor<1x3x3x2xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:         c2_w_0: "0x04000000000040400000C040",
// CHECK-NEXT:    c2_w_bias: "0x040000000000000000000000"
func.func @depthwise_scalar_mul_no_bias(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32> {
  %w = synap.constant dense_resource<c2_w> : tensor<1x1x1x2xf32>
  %s = synap.constant dense_resource<c2_s> : tensor<f32>
  %y = synap.depthwise_conv2d %x, %w : (tensor<1x3x3x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x3x3x2xf32>
  %m = synap.mul %s, %y : (tensor<f32>, tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  func.return %m : tensor<1x3x3x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      c2_w: "0x040000000000803F00000040",
      c2_s: "0x0400000000004040"
    }
  }
#-}

// -----

// Division by a constant is a scale by its reciprocal; FC weights [N, K] scale by row.
// w = [[1, 2, 3], [4, 5, 6]] / [2, 4] -> [[0.5, 1, 1.5], [1, 1.25, 1.5]]; b = [1, 2] -> [0.5, 0.5].
// CHECK-LABEL: func.func @fully_connected_div(
// CHECK-NEXT:    %[[W:.*]] = synap.constant dense_resource<c3_w_0> : tensor<2x3xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<c3_b_0> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = synap.fully_connected %x, %[[W]], %[[B]] : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:         c3_b_0: "0x040000000000003F0000003F",
// CHECK-NEXT:    c3_w_0: "0x040000000000003F0000803F0000C03F0000803F0000A03F0000C03F"
func.func @fully_connected_div(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %w = synap.constant dense_resource<c3_w> : tensor<2x3xf32>
  %b = synap.constant dense_resource<c3_b> : tensor<2xf32>
  %d = synap.constant dense_resource<c3_d> : tensor<2xf32>
  %y = synap.fully_connected %x, %w, %b : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %q = synap.div %y, %d : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  func.return %q : tensor<1x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      c3_w: "0x040000000000803F0000004000004040000080400000A0400000C040",
      c3_b: "0x040000000000803F00000040",
      c3_d: "0x040000000000004000008040"
    }
  }
#-}

// -----

// constant - layer: scale -1, shift the constant ([1] broadcasts over the channels).
// w = [1, 2] -> [-1, -2]; no bias -> b' = [1, 1].
// CHECK-LABEL: func.func @fully_connected_constant_minus_layer(
// CHECK-NEXT:    %[[W:.*]] = synap.constant dense_resource<c4_w_0> : tensor<2x1xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<c4_w_bias> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = synap.fully_connected %x, %[[W]], %[[B]] : (tensor<1x1xf32>, tensor<2x1xf32>, tensor<2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:         c4_w_0: "0x04000000000080BF000000C0",
// CHECK-NEXT:    c4_w_bias: "0x040000000000803F0000803F"
func.func @fully_connected_constant_minus_layer(%x: tensor<1x1xf32>) -> tensor<1x2xf32> {
  %w = synap.constant dense_resource<c4_w> : tensor<2x1xf32>
  %t = synap.constant dense_resource<c4_t> : tensor<1xf32>
  %y = synap.fully_connected %x, %w : (tensor<1x1xf32>, tensor<2x1xf32>) -> tensor<1x2xf32>
  %r = synap.sub %t, %y : (tensor<1xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %r : tensor<1x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      c4_w: "0x040000000000803F00000040",
      c4_t: "0x040000000000803F"
    }
  }
#-}

// -----

// layer - constant on a transposed conv: the filter is kept (scale 1), the bias is -t,
// and the sub's fused relu moves onto the layer. t = [0.5, 0.25] -> b' = [-0.5, -0.25].
// CHECK-LABEL: func.func @transpose_conv_sub_relu(
// CHECK-NEXT:    %[[W:.*]] = synap.constant dense_resource<c5_w> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<c5_w_bias> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = synap.transpose_conv2d %x, %[[W]], %[[B]] {layer_name = "deconv", activation = #synap<activation relu>} : (tensor<1x1x1x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:         c5_w: "0x040000000000803F00000040",
// CHECK-NEXT:    c5_w_bias: "0x04000000000000BF000080BE"
func.func @transpose_conv_sub_relu(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x2xf32> {
  %w = synap.constant dense_resource<c5_w> : tensor<2x1x1x1xf32>
  %t = synap.constant dense_resource<c5_t> : tensor<1x1x1x2xf32>
  %y = synap.transpose_conv2d %x, %w {layer_name = "deconv"} : (tensor<1x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x1x1x2xf32>
  %r = synap.sub %y, %t {activation = #synap<activation relu>} : (tensor<1x1x1x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
  func.return %r : tensor<1x1x1x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      c5_w: "0x040000000000803F00000040",
      c5_t: "0x040000000000003F0000803E"
    }
  }
#-}

// -----

// add then mul folds too (the add first), and the mul's relu6 ends on the layer.
// b' = (0 + [0.5, 0.25]) * [2, 0.5] = [1, 0.125]; w' = [1, 2] * [2, 0.5] = [2, 1].
// CHECK-LABEL: func.func @add_then_mul_with_relu6(
// CHECK-NEXT:    %[[W:.*]] = synap.constant dense_resource<c6_w_0> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<c6_w_bias_0> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = synap.conv2d %x, %[[W]], %[[B]] {activation = #synap<activation relu6>} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:         c6_w_0: "0x04000000000000400000803F",
// CHECK-NEXT:    c6_w_bias_0: "0x040000000000803F0000003E"
func.func @add_then_mul_with_relu6(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = synap.constant dense_resource<c6_w> : tensor<2x1x1x1xf32>
  %t = synap.constant dense_resource<c6_t> : tensor<2xf32>
  %s = synap.constant dense_resource<c6_s> : tensor<2xf32>
  %y = synap.conv2d %x, %w : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %a = synap.add %y, %t : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %m = synap.mul %a, %s {activation = #synap<activation relu6>} : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %m : tensor<1x2x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      c6_w: "0x040000000000803F00000040",
      c6_t: "0x040000000000003F0000803E",
      c6_s: "0x04000000000000400000003F"
    }
  }
#-}

// -----

// Does not fire: the conv result is also returned, so the unscaled values are needed.
// CHECK-LABEL: func.func @layer_result_has_two_uses(
// CHECK:         synap.conv2d
// CHECK-NEXT:    synap.mul
// CHECK-NEXT:    func.return
func.func @layer_result_has_two_uses(%x: tensor<1x2x2x1xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = synap.constant dense_resource<n1_w> : tensor<2x1x1x1xf32>
  %s = synap.constant dense_resource<n1_s> : tensor<2xf32>
  %y = synap.conv2d %x, %w : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m = synap.mul %y, %s : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y, %m : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      n1_w: "0x040000000000803F00000040",
      n1_s: "0x04000000000000400000003F"
    }
  }
#-}

// -----

// Does not fire: the conv's relu sits between the conv and the scale.
// CHECK-LABEL: func.func @activation_before_affine(
// CHECK:         synap.conv2d %x, %w {activation = #synap<activation relu>}
// CHECK-NEXT:    synap.mul
// CHECK-NEXT:    func.return
func.func @activation_before_affine(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = synap.constant dense_resource<n2_w> : tensor<2x1x1x1xf32>
  %s = synap.constant dense_resource<n2_s> : tensor<2xf32>
  %y = synap.conv2d %x, %w {activation = #synap<activation relu>} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m = synap.mul %y, %s : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %m : tensor<1x2x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      n2_w: "0x040000000000803F00000040",
      n2_s: "0x04000000000000400000003F"
    }
  }
#-}

// -----

// Does not fire: the constant [1, 1, 2, 2] varies along the width, not only the channels.
// CHECK-LABEL: func.func @constant_varies_along_width(
// CHECK:         synap.conv2d
// CHECK-NEXT:    synap.mul
// CHECK-NEXT:    func.return
func.func @constant_varies_along_width(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = synap.constant dense_resource<n3_w> : tensor<2x1x1x1xf32>
  %s = synap.constant dense_resource<n3_s> : tensor<1x1x2x2xf32>
  %y = synap.conv2d %x, %w : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m = synap.mul %y, %s : (tensor<1x2x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %m : tensor<1x2x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      n3_w: "0x040000000000803F00000040",
      n3_s: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// Does not fire: the scale is a function argument.
// CHECK-LABEL: func.func @operand_not_constant(
// CHECK:         synap.conv2d
// CHECK-NEXT:    synap.mul
// CHECK-NEXT:    func.return
func.func @operand_not_constant(%x: tensor<1x2x2x1xf32>, %s: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %w = synap.constant dense_resource<n4_w> : tensor<2x1x1x1xf32>
  %y = synap.conv2d %x, %w : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m = synap.mul %y, %s : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %m : tensor<1x2x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      n4_w: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// Does not fire: the filter is a function argument, so it cannot be rewritten.
// CHECK-LABEL: func.func @filter_not_constant(
// CHECK:         synap.conv2d
// CHECK-NEXT:    synap.mul
// CHECK-NEXT:    func.return
func.func @filter_not_constant(%x: tensor<1x2x2x1xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32> {
  %s = synap.constant dense_resource<n5_s> : tensor<2xf32>
  %y = synap.conv2d %x, %w : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m = synap.mul %y, %s : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %m : tensor<1x2x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      n5_s: "0x04000000000000400000003F"
    }
  }
#-}

// -----

// Does not fire: constant / layer is not affine in the layer.
// CHECK-LABEL: func.func @constant_divided_by_layer(
// CHECK:         synap.fully_connected
// CHECK-NEXT:    synap.div
// CHECK-NEXT:    func.return
func.func @constant_divided_by_layer(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %w = synap.constant dense_resource<n6_w> : tensor<2x3xf32>
  %d = synap.constant dense_resource<n6_d> : tensor<2xf32>
  %y = synap.fully_connected %x, %w : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<1x2xf32>
  %q = synap.div %d, %y : (tensor<2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %q : tensor<1x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      n6_w: "0x040000000000803F0000004000004040000080400000A0400000C040",
      n6_d: "0x040000000000004000008040"
    }
  }
#-}

// -----

// Does not fire: a zero divisor (the result is inf / nan, not a finite scale).
// CHECK-LABEL: func.func @divide_by_zero(
// CHECK:         synap.fully_connected
// CHECK-NEXT:    synap.div
// CHECK-NEXT:    func.return
func.func @divide_by_zero(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %w = synap.constant dense_resource<n7_w> : tensor<2x3xf32>
  %d = synap.constant dense_resource<n7_d> : tensor<2xf32>
  %y = synap.fully_connected %x, %w : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<1x2xf32>
  %q = synap.div %y, %d : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  func.return %q : tensor<1x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      n7_w: "0x040000000000803F0000004000004040000080400000A0400000C040",
      n7_d: "0x040000000000004000000000"
    }
  }
#-}

// -----

// Does not fire: the [1, 1, 1, 2] constant broadcasts the [1, 2] result to rank 4.
// CHECK-LABEL: func.func @constant_broadcasts_result(
// CHECK:         synap.fully_connected
// CHECK-NEXT:    synap.add
// CHECK-NEXT:    func.return
func.func @constant_broadcasts_result(%x: tensor<1x3xf32>) -> tensor<1x1x1x2xf32> {
  %w = synap.constant dense_resource<n8_w> : tensor<2x3xf32>
  %t = synap.constant dense_resource<n8_t> : tensor<1x1x1x2xf32>
  %y = synap.fully_connected %x, %w : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<1x2xf32>
  %a = synap.add %y, %t : (tensor<1x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
  func.return %a : tensor<1x1x1x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      n8_w: "0x040000000000803F0000004000004040000080400000A0400000C040",
      n8_t: "0x040000000000003F0000803E"
    }
  }
#-}

// -----

// Does not fire: quantized layer and mul; folding would change the integers.
// CHECK-LABEL: func.func @quantized_layer(
// CHECK:         synap.conv2d
// CHECK-NEXT:    synap.mul
// CHECK-NEXT:    func.return
func.func @quantized_layer(%x: tensor<1x2x2x1x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x2x2x2x!quant.uniform<u8:f32, 0.25:128>> {
  %w = synap.constant dense_resource<n9_w> : tensor<2x1x1x1x!quant.uniform<u8:f32, 0.5:0>>
  %b = synap.constant dense_resource<n9_b> : tensor<2x!quant.uniform<i32:f32, 0.25>>
  %s = synap.constant dense_resource<n9_s> : tensor<2x!quant.uniform<u8:f32, 0.01:0>>
  %y = synap.conv2d %x, %w, %b : (tensor<1x2x2x1x!quant.uniform<u8:f32, 0.5:128>>, tensor<2x1x1x1x!quant.uniform<u8:f32, 0.5:0>>, tensor<2x!quant.uniform<i32:f32, 0.25>>) -> tensor<1x2x2x2x!quant.uniform<u8:f32, 0.1:128>>
  %m = synap.mul %y, %s : (tensor<1x2x2x2x!quant.uniform<u8:f32, 0.1:128>>, tensor<2x!quant.uniform<u8:f32, 0.01:0>>) -> tensor<1x2x2x2x!quant.uniform<u8:f32, 0.25:128>>
  func.return %m : tensor<1x2x2x2x!quant.uniform<u8:f32, 0.25:128>>
}

{-#
  dialect_resources: {
    builtin: {
      n9_w: "0x010000000102",
      n9_b: "0x040000000000000000000000",
      n9_s: "0x010000006432"
    }
  }
#-}

// -----

// Does not fire: float layer with quantized (weight-only) filter.
// CHECK-LABEL: func.func @float_layer_with_quantized_weights(
// CHECK:         synap.conv2d
// CHECK-NEXT:    synap.mul
// CHECK-NEXT:    func.return
func.func @float_layer_with_quantized_weights(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = synap.constant dense_resource<n10_w> : tensor<2x1x1x1x!quant.uniform<i8:f32, 0.5>>
  %s = synap.constant dense_resource<n10_s> : tensor<2xf32>
  %y = synap.conv2d %x, %w : (tensor<1x2x2x1xf32>, tensor<2x1x1x1x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x2x2x2xf32>
  %m = synap.mul %y, %s : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %m : tensor<1x2x2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      n10_w: "0x010000000102",
      n10_s: "0x04000000000000400000003F"
    }
  }
#-}
