// RUN: synapc-opt %s --split-input-file -p match-activations | filecheck %s

// Decomposed activations of float graphs become one op: hard-swish, swish, GELU (erf and
// tanh forms) and layer normalization (see passes/match_activations.py). The pass reads constant values,
// so every case carries its blobs. Each positive case is also run before and after the
// pass on the JAX backend by tests/test_pass_match_activations.py.

// hard-swish as PyTorch exports it before opset 14: x * clip(x + 3, 0, 6) / 6. The fused
// op takes the last op's layer; the others' go into its fused_layers, in graph order.
// CHECK-LABEL: func.func @hard_swish_div
// CHECK-NEXT:    %[[Y:.*]] = synap.hard_swish %x {layer_name = "div", fused_layers = ["add", "clip", "mul"]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x8xf32>
func.func @hard_swish_div(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %three = synap.constant dense_resource<three> : tensor<1x1x1x1xf32>
  %six = synap.constant dense_resource<six> : tensor<1x1x1x1xf32>
  %a = synap.add %x, %three {layer_name = "add"} : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %r = synap.clamp %a {layer_name = "clip", min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %m = synap.mul %x, %r {layer_name = "mul"} : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.div %m, %six {layer_name = "div"} : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      three: "0x0400000000004040",
      six: "0x040000000000C040"
    }
  }
#-}

// -----

// x * (relu6(3 + x) * (1/6)): the constant on either side, the division folded into the
// relu6 factor, scalar constants of rank 0.
// CHECK-LABEL: func.func @hard_swish_inner_scale
// CHECK-NEXT:    %[[Y:.*]] = synap.hard_swish %x : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x8xf32>
func.func @hard_swish_inner_scale(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %three = synap.constant dense_resource<three> : tensor<f32>
  %sixth = synap.constant dense_resource<sixth> : tensor<f32>
  %a = synap.add %three, %x : (tensor<f32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %r = synap.clamp %a {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s = synap.mul %sixth, %r : (tensor<f32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %x, %s : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      three: "0x0400000000004040",
      sixth: "0x04000000ABAA2A3E"
    }
  }
#-}

// -----

// relu6 fused into the add (TFLite style); a broadcast constant of equal values.
// CHECK-LABEL: func.func @hard_swish_fused_relu6
// CHECK-NEXT:    %[[Y:.*]] = synap.hard_swish %x : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x8xf32>
func.func @hard_swish_fused_relu6(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %three = synap.constant dense_resource<three> : tensor<8xf32>
  %sixth = synap.constant dense_resource<sixth> : tensor<1x1x1x1xf32>
  %a = synap.add %x, %three {activation = #synap<activation relu6>} : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %m = synap.mul %a, %x : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %m, %sixth : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      three: "0x040000000000404000004040000040400000404000004040000040400000404000004040",
      sixth: "0x04000000ABAA2A3E"
    }
  }
#-}

// -----

// x * hard_sigmoid(x) with PyTorch's alpha 1/6 and beta 1/2.
// CHECK-LABEL: func.func @hard_swish_hard_sigmoid
// CHECK-NEXT:    %[[Y:.*]] = synap.hard_swish %x : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x8xf32>
func.func @hard_swish_hard_sigmoid(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %h = synap.hard_sigmoid %x {alpha = 0.166666672 : f32} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %x, %h : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}

// -----

// Not hard-swish: ONNX's default hard_sigmoid (alpha 0.2), a divisor of 5, a per-channel
// (not all-equal) "three", and relu6 of a different tensor.
// CHECK-LABEL: func.func @not_hard_swish
// CHECK-NOT:     synap.hard_swish
// CHECK:         func.return
func.func @not_hard_swish(%x: tensor<1x4x4x8xf32>, %z: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) {
  %h = synap.hard_sigmoid %x : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y0 = synap.mul %x, %h : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %three = synap.constant dense_resource<three> : tensor<1x1x1x1xf32>
  %five = synap.constant dense_resource<five> : tensor<1x1x1x1xf32>
  %a1 = synap.add %x, %three : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %r1 = synap.clamp %a1 {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %m1 = synap.mul %x, %r1 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y1 = synap.div %m1, %five : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %ramp = synap.constant dense_resource<ramp> : tensor<8xf32>
  %six = synap.constant dense_resource<six> : tensor<1x1x1x1xf32>
  %a2 = synap.add %x, %ramp : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xf32>
  %r2 = synap.clamp %a2 {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %m2 = synap.mul %x, %r2 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y2 = synap.div %m2, %six : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %a3 = synap.add %z, %three : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %r3 = synap.clamp %a3 {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %m3 = synap.mul %x, %r3 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y3 = synap.div %m3, %six : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  func.return %y0, %y1, %y2, %y3 : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      three: "0x0400000000004040",
      five: "0x040000000000A040",
      six: "0x040000000000C040",
      ramp: "0x0400000000004040000080400000A0400000C0400000E040000000410000104100002041"
    }
  }
#-}

// -----

// An intermediate with another user (the relu6 is also returned) keeps the chain.
// CHECK-LABEL: func.func @hard_swish_shared_intermediate
// CHECK-NOT:     synap.hard_swish
// CHECK:         func.return
func.func @hard_swish_shared_intermediate(%x: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) {
  %three = synap.constant dense_resource<three> : tensor<1x1x1x1xf32>
  %six = synap.constant dense_resource<six> : tensor<1x1x1x1xf32>
  %a = synap.add %x, %three : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %r = synap.clamp %a {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %m = synap.mul %x, %r : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.div %m, %six : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  func.return %y, %r : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      three: "0x0400000000004040",
      six: "0x040000000000C040"
    }
  }
#-}

// -----

// Quantized: each op of the chain rounds to its own scale, hard_swish would not, so the
// integers would change: not fused.
// CHECK-LABEL: func.func @hard_swish_quantized
// CHECK-NOT:     synap.hard_swish
// CHECK:         func.return
func.func @hard_swish_quantized(%x: tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>> {
  %three = synap.constant dense_resource<qthree> : tensor<1x1x1x1x!quant.uniform<u8:f32, 0.05:128>>
  %six = synap.constant dense_resource<qsix> : tensor<1x1x1x1x!quant.uniform<u8:f32, 0.05:128>>
  %a = synap.add %x, %three : (tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>, tensor<1x1x1x1x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>
  %r = synap.clamp %a {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>
  %m = synap.mul %x, %r : (tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>, tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.div %m, %six : (tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>, tensor<1x1x1x1x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>
  func.return %y : tensor<1x4x4x8x!quant.uniform<u8:f32, 0.05:128>>
}
{-#
  dialect_resources: {
    builtin: {
      qthree: "0x01000000BC",
      qsix: "0x01000000F8"
    }
  }
#-}

// -----

// SiLU: x * sigmoid(x), either operand order.
// CHECK-LABEL: func.func @swish
// CHECK-NEXT:    %[[Y:.*]] = synap.swish %x {layer_name = "silu"} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x8xf32>
func.func @swish(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %s = synap.sigmoid %x : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %s, %x {layer_name = "silu"} : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}

// -----

// x * sigmoid(1.702 * x) is a swish with beta 1.702.
// CHECK-LABEL: func.func @swish_beta
// CHECK-NEXT:    %[[Y:.*]] = synap.swish %x {beta = 1.702000e+00 : f32} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x8xf32>
func.func @swish_beta(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %beta = synap.constant dense_resource<beta> : tensor<1x1x1x1xf32>
  %b = synap.mul %beta, %x : (tensor<1x1x1x1xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s = synap.sigmoid %b : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %x, %s : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      beta: "0x0400000023DBD93F"
    }
  }
#-}

// -----

// Not swish: the sigmoid of another tensor, a sigmoid with a second user, a gating
// product scaled by 2.
// CHECK-LABEL: func.func @not_swish
// CHECK-NOT:     synap.swish
// CHECK:         func.return
func.func @not_swish(%x: tensor<1x4x4x8xf32>, %z: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) {
  %s0 = synap.sigmoid %z : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y0 = synap.mul %x, %s0 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s1 = synap.sigmoid %x : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y1 = synap.mul %x, %s1 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %two = synap.constant dense_resource<two> : tensor<1x1x1x1xf32>
  %s2 = synap.sigmoid %z : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %m2 = synap.mul %s2, %two : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %y2 = synap.mul %m2, %z : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %y0, %y1, %s1, %y2 : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      two: "0x0400000000000040"
    }
  }
#-}

// -----

// GELU, tanh form, as PyTorch exports it (x * 0.5 first, x^3 as pow).
// CHECK-LABEL: func.func @gelu_tanh_pow
// CHECK-NEXT:    %[[Y:.*]] = synap.gelu %x {approximate = true} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x8xf32>
func.func @gelu_tanh_pow(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %half = synap.constant dense_resource<half> : tensor<1x1x1x1xf32>
  %three = synap.constant dense_resource<three> : tensor<1x1x1x1xf32>
  %c = synap.constant dense_resource<c> : tensor<1x1x1x1xf32>
  %k = synap.constant dense_resource<k> : tensor<1x1x1x1xf32>
  %one = synap.constant dense_resource<one> : tensor<1x1x1x1xf32>
  %h = synap.mul %x, %half : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %p = synap.pow %x, %three : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %q = synap.mul %p, %c : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %w = synap.add %x, %q : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %u = synap.mul %w, %k : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %t = synap.tanh %u : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s = synap.add %t, %one : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %h, %s : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      half: "0x040000000000003F",
      three: "0x0400000000004040",
      c: "0x040000001327373D",
      k: "0x040000002A424C3F",
      one: "0x040000000000803F"
    }
  }
#-}

// -----

// GELU, tanh form, x^3 as x * x * x, the 0.5 applied last, constants on the left.
// CHECK-LABEL: func.func @gelu_tanh_cube
// CHECK-NEXT:    %[[Y:.*]] = synap.gelu %x {approximate = true} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x8xf32>
func.func @gelu_tanh_cube(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %half = synap.constant dense_resource<half> : tensor<1x1x1x1xf32>
  %c = synap.constant dense_resource<c> : tensor<1x1x1x1xf32>
  %k = synap.constant dense_resource<k> : tensor<1x1x1x1xf32>
  %one = synap.constant dense_resource<one> : tensor<1x1x1x1xf32>
  %x2 = synap.mul %x, %x : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %x3 = synap.mul %x2, %x : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %q = synap.mul %c, %x3 : (tensor<1x1x1x1xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %w = synap.add %q, %x : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %u = synap.mul %k, %w : (tensor<1x1x1x1xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %t = synap.tanh %u : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s = synap.add %one, %t : (tensor<1x1x1x1xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %m = synap.mul %x, %s : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %half, %m : (tensor<1x1x1x1xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      half: "0x040000000000003F",
      c: "0x040000001327373D",
      k: "0x040000002A424C3F",
      one: "0x040000000000803F"
    }
  }
#-}

// -----

// GELU, exact form, as PyTorch exports nn.GELU(): x / sqrt(2), erf, + 1, * x, * 0.5.
// CHECK-LABEL: func.func @gelu_erf_div
// CHECK-NEXT:    %[[Y:.*]] = synap.gelu %x {layer_name = "mul_1", fused_layers = ["div", "erf", "add", "mul"]} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x8xf32>
func.func @gelu_erf_div(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %sqrt2 = synap.constant dense_resource<sqrt2> : tensor<f32>
  %one = synap.constant dense_resource<one> : tensor<f32>
  %half = synap.constant dense_resource<half> : tensor<f32>
  %d = synap.div %x, %sqrt2 {layer_name = "div"} : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  %e = synap.erf %d {layer_name = "erf"} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s = synap.add %e, %one {layer_name = "add"} : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  %m = synap.mul %x, %s {layer_name = "mul"} : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %m, %half {layer_name = "mul_1"} : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      sqrt2: "0x04000000F304B53F",
      one: "0x040000000000803F",
      half: "0x040000000000003F"
    }
  }
#-}

// -----

// GELU, exact form, scaled by 1/sqrt(2) with the 0.5 applied to x first.
// CHECK-LABEL: func.func @gelu_erf_mul
// CHECK-NEXT:    %[[Y:.*]] = synap.gelu %x : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1x4x4x8xf32>
func.func @gelu_erf_mul(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %k = synap.constant dense_resource<k> : tensor<1x1x1x1xf32>
  %one = synap.constant dense_resource<one> : tensor<1x1x1x1xf32>
  %half = synap.constant dense_resource<half> : tensor<1x1x1x1xf32>
  %h = synap.mul %half, %x : (tensor<1x1x1x1xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %d = synap.mul %x, %k : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %e = synap.erf %d : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s = synap.add %one, %e : (tensor<1x1x1x1xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %h, %s : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %y : tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      k: "0x04000000F304353F",
      one: "0x040000000000803F",
      half: "0x040000000000003F"
    }
  }
#-}

// -----

// Not GELU: erf(x / 2) (wrong scale), and erf(x / sqrt(2)) whose erf has a second use.
// CHECK-LABEL: func.func @not_gelu_erf
// CHECK-NOT:     synap.gelu
// CHECK:         func.return
func.func @not_gelu_erf(%x: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) {
  %two = synap.constant dense_resource<two> : tensor<f32>
  %sqrt2 = synap.constant dense_resource<sqrt2> : tensor<f32>
  %one = synap.constant dense_resource<one> : tensor<f32>
  %half = synap.constant dense_resource<half> : tensor<f32>
  %d = synap.div %x, %two : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  %e = synap.erf %d : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s = synap.add %e, %one : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  %m = synap.mul %x, %s : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %m, %half : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  %d1 = synap.div %x, %sqrt2 : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  %e1 = synap.erf %d1 : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s1 = synap.add %e1, %one : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  %m1 = synap.mul %x, %s1 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %y1 = synap.mul %m1, %half : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  func.return %y, %y1, %e1 : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      two: "0x0400000000000040",
      sqrt2: "0x04000000F304B53F",
      one: "0x040000000000803F",
      half: "0x040000000000003F"
    }
  }
#-}

// -----

// Not GELU: a cubic coefficient of 0.04, and x^2 instead of x^3.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT:     synap.gelu
// CHECK:         func.return
func.func @not_gelu(%x: tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) {
  %half = synap.constant dense_resource<half> : tensor<1x1x1x1xf32>
  %three = synap.constant dense_resource<three> : tensor<1x1x1x1xf32>
  %c = synap.constant dense_resource<c> : tensor<1x1x1x1xf32>
  %k = synap.constant dense_resource<k> : tensor<1x1x1x1xf32>
  %one = synap.constant dense_resource<one> : tensor<1x1x1x1xf32>
  %c_gelu = synap.constant dense_resource<c_gelu> : tensor<1x1x1x1xf32>
  %h = synap.mul %x, %half : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %p = synap.pow %x, %three : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %q = synap.mul %p, %c : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %w = synap.add %x, %q : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %u = synap.mul %w, %k : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %t = synap.tanh %u : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s = synap.add %t, %one : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %y = synap.mul %h, %s : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %h1 = synap.mul %x, %half : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %p1 = synap.square %x : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %q1 = synap.mul %p1, %c_gelu : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %w1 = synap.add %x, %q1 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %u1 = synap.mul %w1, %k : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %t1 = synap.tanh %u1 : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s1 = synap.add %t1, %one : (tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
  %y1 = synap.mul %h1, %s1 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  func.return %y, %y1 : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      half: "0x040000000000003F",
      three: "0x0400000000004040",
      c: "0x040000000AD7233D",
      k: "0x040000002A424C3F",
      one: "0x040000000000803F",
      c_gelu: "0x040000001327373D"
    }
  }
#-}

// -----

// LayerNormalization exactly as the ONNX importer decomposes it.
// CHECK-LABEL: func.func @layer_norm_onnx
// CHECK-NEXT:    %[[G:.*]] = synap.constant dense_resource<g> : tensor<1x1x8xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<b> : tensor<1x1x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = synap.layer_norm %x scale %[[G]] : tensor<1x1x8xf32> bias %[[B]] : tensor<1x1x8xf32> {layer_name = "ln", layer_index = 0 : i64, epsilon = 1.000000e-03 : f32} : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<2x5x8xf32>
func.func @layer_norm_onnx(%x: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %g = synap.constant dense_resource<g> : tensor<1x1x8xf32>
  %b = synap.constant dense_resource<b> : tensor<1x1x8xf32>
  %m = synap.reduce_mean %x {layer_name = "ln", layer_index = 0 : i64, axes = array<i64: 2>, keep_dims = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %d = synap.sub %x, %m {layer_name = "ln", layer_index = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %sq = synap.square %d {layer_name = "ln", layer_index = 0 : i64} : (tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %v = synap.reduce_mean %sq {layer_name = "ln", layer_index = 0 : i64, axes = array<i64: 2>, keep_dims = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %eps = synap.constant dense_resource<eps> : tensor<1x1x1xf32>
  %ve = synap.add %v, %eps {layer_name = "ln", layer_index = 0 : i64} : (tensor<2x5x1xf32>, tensor<1x1x1xf32>) -> tensor<2x5x1xf32>
  %r = synap.rsqrt %ve {layer_name = "ln", layer_index = 0 : i64} : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %n = synap.mul %d, %r {layer_name = "ln", layer_index = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %s = synap.mul %n, %g {layer_name = "ln", layer_index = 0 : i64} : (tensor<2x5x8xf32>, tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
  %y = synap.add %s, %b {layer_name = "ln", layer_index = 0 : i64} : (tensor<2x5x8xf32>, tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
  func.return %y : tensor<2x5x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      g: "0x04000000D2D8883F8F08953F8D75883F42473D3F572D973F5C6D8B3F0C82643F6AE08E3F",
      b: "0x040000003054953D0EF4703D9C44BA3B03EFDF3D67D316BEB17405BDE079C5BD9449F53D",
      eps: "0x040000006F12833A"
    }
  }
#-}

// -----

// LayerNorm as PyTorch exports it before opset 17: pow 2, sqrt and div, axis -1,
// gamma as a rank-1 tensor.
// CHECK-LABEL: func.func @layer_norm_pytorch
// CHECK-NEXT:    %[[G:.*]] = synap.constant dense_resource<g> : tensor<8xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<b> : tensor<8xf32>
// CHECK-NEXT:    %[[Y:.*]] = synap.layer_norm %x scale %[[G]] : tensor<8xf32> bias %[[B]] : tensor<8xf32> {layer_name = "add_beta"} : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<2x5x8xf32>
func.func @layer_norm_pytorch(%x: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %g = synap.constant dense_resource<g> : tensor<8xf32>
  %b = synap.constant dense_resource<b> : tensor<8xf32>
  %two = synap.constant dense_resource<two> : tensor<f32>
  %eps = synap.constant dense_resource<eps> : tensor<f32>
  %m = synap.reduce_mean %x {axes = array<i64: -1>, keep_dims = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %d = synap.sub %x, %m : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %sq = synap.pow %d, %two : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5x8xf32>
  %v = synap.reduce_mean %sq {axes = array<i64: -1>, keep_dims = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %ve = synap.add %eps, %v : (tensor<f32>, tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %sd = synap.sqrt %ve : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %n = synap.div %d, %sd : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %s = synap.mul %g, %n : (tensor<8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %y = synap.add %s, %b {layer_name = "add_beta"} : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  func.return %y : tensor<2x5x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      g: "0x04000000D2D8883F8F08953F8D75883F42473D3F572D973F5C6D8B3F0C82643F6AE08E3F",
      b: "0x040000003054953D0EF4703D9C44BA3B03EFDF3D67D316BEB17405BDE079C5BD9449F53D",
      two: "0x0400000000000040",
      eps: "0x04000000ACC52737"
    }
  }
#-}

// -----

// Without gamma and beta (d * d for the square): the residual add that follows is not
// a per-channel bias and stays.
// CHECK-LABEL: func.func @layer_norm_no_affine
// CHECK-NEXT:    %[[N:.*]] = synap.layer_norm %x {epsilon = 1.000000e-12 : f32} : tensor<2x5x8xf32> -> tensor<2x5x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = synap.add %[[N]], %z : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<2x5x8xf32>
func.func @layer_norm_no_affine(%x: tensor<2x5x8xf32>, %z: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %eps = synap.constant dense_resource<eps> : tensor<1x1x1xf32>
  %m = synap.reduce_mean %x {axes = array<i64: 2>, keep_dims = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %d = synap.sub %x, %m : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %sq = synap.mul %d, %d : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %v = synap.reduce_mean %sq {axes = array<i64: 2>, keep_dims = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %ve = synap.add %v, %eps : (tensor<2x5x1xf32>, tensor<1x1x1xf32>) -> tensor<2x5x1xf32>
  %r = synap.rsqrt %ve : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %n = synap.mul %r, %d : (tensor<2x5x1xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %y = synap.add %n, %z : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  func.return %y : tensor<2x5x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      eps: "0x04000000CCBC8C2B"
    }
  }
#-}

// -----

// Not a layer norm: the mean is used elsewhere, the two means reduce different axes,
// the variance subtracts another mean.
// CHECK-LABEL: func.func @not_layer_norm
// CHECK-NOT:     synap.layer_norm
// CHECK:         func.return
func.func @not_layer_norm(%x: tensor<2x5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x1xf32>, tensor<2x5x8xf32>) {
  %eps = synap.constant dense_resource<eps> : tensor<1x1x1xf32>
  %m = synap.reduce_mean %x {axes = array<i64: 2>, keep_dims = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %d = synap.sub %x, %m : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %sq = synap.square %d : (tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %v = synap.reduce_mean %sq {axes = array<i64: 2>, keep_dims = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %ve = synap.add %v, %eps : (tensor<2x5x1xf32>, tensor<1x1x1xf32>) -> tensor<2x5x1xf32>
  %r = synap.rsqrt %ve : (tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %n = synap.mul %d, %r : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %m1 = synap.reduce_mean %x {axes = array<i64: 2>, keep_dims = true} : (tensor<2x5x8xf32>) -> tensor<2x5x1xf32>
  %d1 = synap.sub %x, %m1 : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %sq1 = synap.square %d1 : (tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %v1 = synap.reduce_mean %sq1 {axes = array<i64: 1>, keep_dims = true} : (tensor<2x5x8xf32>) -> tensor<2x1x8xf32>
  %ve1 = synap.add %v1, %eps : (tensor<2x1x8xf32>, tensor<1x1x1xf32>) -> tensor<2x1x8xf32>
  %r1 = synap.rsqrt %ve1 : (tensor<2x1x8xf32>) -> tensor<2x1x8xf32>
  %n1 = synap.mul %d1, %r1 : (tensor<2x5x8xf32>, tensor<2x1x8xf32>) -> tensor<2x5x8xf32>
  func.return %n, %m, %n1 : tensor<2x5x8xf32>, tensor<2x5x1xf32>, tensor<2x5x8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      eps: "0x04000000ACC52737"
    }
  }
#-}

// -----

// A quantized layer-norm chain is not fused (its intermediates round).
// CHECK-LABEL: func.func @layer_norm_quantized
// CHECK-NOT:     synap.layer_norm
// CHECK:         func.return
func.func @layer_norm_quantized(%x: tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>> {
  %eps = synap.constant dense_resource<qeps> : tensor<1x1x1x!quant.uniform<i8:f32, 0.05:-3>>
  %m = synap.reduce_mean %x {axes = array<i64: 2>, keep_dims = true} : (tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<2x5x1x!quant.uniform<i8:f32, 0.05:-3>>
  %d = synap.sub %x, %m : (tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>, tensor<2x5x1x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>
  %sq = synap.mul %d, %d : (tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>, tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>
  %v = synap.reduce_mean %sq {axes = array<i64: 2>, keep_dims = true} : (tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<2x5x1x!quant.uniform<i8:f32, 0.05:-3>>
  %ve = synap.add %v, %eps : (tensor<2x5x1x!quant.uniform<i8:f32, 0.05:-3>>, tensor<1x1x1x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<2x5x1x!quant.uniform<i8:f32, 0.05:-3>>
  %r = synap.rsqrt %ve : (tensor<2x5x1x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<2x5x1x!quant.uniform<i8:f32, 0.05:-3>>
  %n = synap.mul %d, %r : (tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>, tensor<2x5x1x!quant.uniform<i8:f32, 0.05:-3>>) -> tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>
  func.return %n : tensor<2x5x8x!quant.uniform<i8:f32, 0.05:-3>>
}
{-#
  dialect_resources: {
    builtin: {
      qeps: "0x01000000FD"
    }
  }
#-}
