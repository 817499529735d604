// RUN: synapc-opt %s --split-input-file -p canonicalize-layout | filecheck %s

// The NCHW import pattern: the transposes between the two convs sink through the relu
// and the add of a per-channel constant (a 4x1x1 NCHW bias becomes a 4-element NHWC
// one), meet their inverse and cancel; only the boundary transposes stay.
// CHECK-LABEL: func.func @nchw_chain
// CHECK:         %[[T0:.*]] = synap.transpose %x {perm = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT:    %[[C1:.*]] = synap.conv2d %[[T0]], %w1
// CHECK-NEXT:    %[[R:.*]] = synap.clamp %[[C1]] {min = 0.000000e+00 : f32} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<[[BH:.*]]> : tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = synap.add %[[R]], %[[B]] : (tensor<1x8x8x4xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[C2:.*]] = synap.conv2d %[[A]], %w2
// CHECK-NEXT:    %[[T1:.*]] = synap.transpose %[[C2]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    func.return %[[T1]]
// CHECK:         [[BH]]: "0x040000000000803F0000004000004040000080C0"
func.func @nchw_chain(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w1 = synap.constant dense_resource<w1> : tensor<4x1x1x4xf32>
  %w2 = synap.constant dense_resource<w2> : tensor<4x1x1x4xf32>
  %b = synap.constant dense_resource<b> : tensor<4x1x1xf32>
  %0 = synap.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %1 = synap.conv2d %0, %w1 : (tensor<1x8x8x4xf32>, tensor<4x1x1x4xf32>) -> tensor<1x8x8x4xf32>
  %2 = synap.transpose %1 {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %3 = synap.clamp %2 {min = 0.0 : f32} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %4 = synap.add %3, %b : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %5 = synap.transpose %4 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %6 = synap.conv2d %5, %w2 : (tensor<1x8x8x4xf32>, tensor<4x1x1x4xf32>) -> tensor<1x8x8x4xf32>
  %7 = synap.transpose %6 {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  func.return %7 : tensor<1x4x8x8xf32>
}

{-#
  dialect_resources: {
    builtin: {
      b: "0x040000000000803F0000004000004040000080C0"
    }
  }
#-}

// -----

// A transpose with another user stays where it is: sinking it would compute the
// transpose twice.
// CHECK-LABEL: func.func @multiple_uses
// CHECK-NEXT:    %[[T:.*]] = synap.transpose %x
// CHECK-NEXT:    %[[S:.*]] = synap.sigmoid %[[T]] : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %[[T]], %[[S]]
func.func @multiple_uses(%x: tensor<1x8x8x4xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = synap.sigmoid %0 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %0, %1 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}

// -----

// Unary chains: activations, dequantize, quantize and cast all sink.
// CHECK-LABEL: func.func @unary_chain
// CHECK-NEXT:    synap.dequantize %x : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    synap.tanh %{{.*}} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    synap.leaky_relu %{{.*}} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    synap.quantize %{{.*}} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4x!quant.uniform<i8:f32, 0.01>>
// CHECK-NEXT:    synap.dequantize %{{.*}} : (tensor<1x8x8x4x!quant.uniform<i8:f32, 0.01>>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[C:.*]] = synap.cast %{{.*}} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xi32>
// CHECK-NEXT:    %[[T:.*]] = synap.transpose %[[C]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xi32>) -> tensor<1x4x8x8xi32>
// CHECK-NEXT:    func.return %[[T]]
func.func @unary_chain(%x: tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x8x8xi32> {
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x8x8x!quant.uniform<u8:f32, 0.5:128>>
  %1 = synap.dequantize %0 : (tensor<1x4x8x8x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x8x8xf32>
  %2 = synap.tanh %1 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %3 = synap.leaky_relu %2 {alpha = 0.1 : f32} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %4 = synap.quantize %3 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8x!quant.uniform<i8:f32, 0.01:0>>
  %5 = synap.dequantize %4 : (tensor<1x4x8x8x!quant.uniform<i8:f32, 0.01:0>>) -> tensor<1x4x8x8xf32>
  %6 = synap.cast %5 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xi32>
  func.return %6 : tensor<1x4x8x8xi32>
}

// -----

// A per-axis quantized value is not sunk: the transpose after the quantize would move
// the quantized dimension (NHWC axis 3 -> NCHW axis 1), giving it different input and
// output types, which kernels that only move stored integers do not support.
// CHECK-LABEL: func.func @per_axis_quantize
// CHECK-NEXT:    %[[T:.*]] = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x2xf32>) -> tensor<1x2x8x8xf32>
// CHECK-NEXT:    %[[Q:.*]] = synap.quantize %[[T]] : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8x!quant.uniform<i8:f32:1, {0.1,0.2}>>
// CHECK-NEXT:    func.return %[[Q]]
func.func @per_axis_quantize(%x: tensor<1x8x8x2xf32>) -> tensor<1x2x8x8x!quant.uniform<i8:f32:1, {0.1,0.2}>> {
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x2xf32>) -> tensor<1x2x8x8xf32>
  %1 = synap.quantize %0 : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8x!quant.uniform<i8:f32:1, {0.1,0.2}>>
  func.return %1 : tensor<1x2x8x8x!quant.uniform<i8:f32:1, {0.1,0.2}>>
}

// -----

// Binary ops: both operands transposed by one permutation sink together; transposes
// by different permutations, or a non-constant untransposed operand, stop the sinking.
// CHECK-LABEL: func.func @binary
// CHECK-NEXT:    %[[M:.*]] = synap.mul %x, %y : (tensor<1x8x8x4xf32>, tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[T1:.*]] = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %[[S:.*]] = synap.sub %[[T1]], %z : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
// CHECK-NEXT:    %[[T2:.*]] = synap.transpose %y {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %[[T3:.*]] = synap.transpose %u {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT:    %[[X:.*]] = synap.maximum %[[T2]], %[[T3]] : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>)
// CHECK-NEXT:    func.return %[[M]], %[[S]], %[[X]]
func.func @binary(%x: tensor<1x8x8x4xf32>, %y: tensor<1x8x8x4xf32>, %z: tensor<1x4x8x8xf32>, %u: tensor<1x8x4x8xf32>) -> (tensor<1x8x8x4xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = synap.transpose %y {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %2 = synap.mul %0, %1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %3 = synap.transpose %2 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %4 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %5 = synap.sub %4, %z : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %6 = synap.transpose %y {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %7 = synap.transpose %u {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x4x8xf32>) -> tensor<1x4x8x8xf32>
  %8 = synap.maximum %6, %7 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %3, %5, %8 : tensor<1x8x8x4xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}

// -----

// Constants of lower rank broadcast as before: an H-only 8x1 constant (NCHW) becomes
// 8x1x1 (NHWC); a constant on the left keeps its place; a one-element constant is
// reused as it is.
// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    %s = synap.constant dense_resource<s> : tensor<1xf32>
// CHECK-NEXT:    %[[H:.*]] = synap.constant dense_resource<[[HH:.*]]> : tensor<8x1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = synap.sub %[[H]], %x : (tensor<8x1x1xf32>, tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[D:.*]] = synap.div %[[S]], %s : (tensor<1x8x8x4xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    func.return %[[D]]
// CHECK:         [[HH]]: "0x040000000000803F000000400000404000008040000080C0000000C1000010C1000020C1"
func.func @constants(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
  %h = synap.constant dense_resource<h> : tensor<8x1xf32>
  %s = synap.constant dense_resource<s> : tensor<1xf32>
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = synap.sub %h, %0 : (tensor<8x1xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %2 = synap.div %1, %s : (tensor<1x4x8x8xf32>, tensor<1xf32>) -> tensor<1x4x8x8xf32>
  %3 = synap.transpose %2 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  func.return %3 : tensor<1x8x8x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      h: "0x040000000000803F000000400000404000008040000080C0000000C1000010C1000020C1",
      s: "0x0400000000000040"
    }
  }
#-}

// -----

// Quantized add of a per-channel u8 constant and PReLU with an NCHW slope: exact under
// any integer semantics (each output element still sees the same two inputs).
// CHECK-LABEL: func.func @quantized_binary
// CHECK-NEXT:    %[[C:.*]] = synap.constant dense_resource<[[CH:.*]]> : tensor<2x!quant.uniform<u8:f32, 0.1:10>>
// CHECK-NEXT:    %[[A:.*]] = synap.add %x, %[[C]] : (tensor<1x4x4x2x!quant.uniform<u8:f32, 0.5:128>>, tensor<2x!quant.uniform<u8:f32, 0.1:10>>) -> tensor<1x4x4x2x!quant.uniform<u8:f32, 0.3:120>>
// CHECK-NEXT:    %[[S:.*]] = synap.constant dense_resource<[[SH:.*]]> : tensor<2x!quant.uniform<i8:f32, 0.01>>
// CHECK-NEXT:    %[[P:.*]] = synap.prelu %[[A]], %[[S]]
// CHECK-NEXT:    func.return %[[P]] : tensor<1x4x4x2x!quant.uniform<u8:f32, 0.25:100>>
// CHECK-DAG:     [[SH]]: "0x{{[0-9A-F]+}}40C0"
// CHECK-DAG:     [[CH]]: "0x{{[0-9A-F]+}}0A14"
func.func @quantized_binary(%x: tensor<1x4x4x2x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x4x2x!quant.uniform<u8:f32, 0.25:100>> {
  %c = synap.constant dense_resource<c> : tensor<2x1x1x!quant.uniform<u8:f32, 0.1:10>>
  %a = synap.constant dense_resource<a> : tensor<2x1x1x!quant.uniform<i8:f32, 0.01:0>>
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x2x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x2x4x4x!quant.uniform<u8:f32, 0.5:128>>
  %1 = synap.add %0, %c : (tensor<1x2x4x4x!quant.uniform<u8:f32, 0.5:128>>, tensor<2x1x1x!quant.uniform<u8:f32, 0.1:10>>) -> tensor<1x2x4x4x!quant.uniform<u8:f32, 0.3:120>>
  %2 = synap.prelu %1, %a : (tensor<1x2x4x4x!quant.uniform<u8:f32, 0.3:120>>, tensor<2x1x1x!quant.uniform<i8:f32, 0.01:0>>) -> tensor<1x2x4x4x!quant.uniform<u8:f32, 0.25:100>>
  %3 = synap.transpose %2 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4x!quant.uniform<u8:f32, 0.25:100>>) -> tensor<1x4x4x2x!quant.uniform<u8:f32, 0.25:100>>
  func.return %3 : tensor<1x4x4x2x!quant.uniform<u8:f32, 0.25:100>>
}

{-#
  dialect_resources: {
    builtin: {
      c: "0x040000000A14",
      a: "0x0400000040C0"
    }
  }
#-}

// -----

// Concat of equally transposed inputs concatenates along the renumbered axis (NCHW
// channels = NHWC axis 3); an untransposed non-constant input stops it.
// CHECK-LABEL: func.func @concat
// CHECK-NEXT:    %[[C:.*]] = synap.concat %x, %y {axis = 3 : i64} : (tensor<1x8x8x4xf32>, tensor<1x8x8x2xf32>) -> tensor<1x8x8x6xf32>
// CHECK-NEXT:    %[[T:.*]] = synap.transpose %[[C]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x6xf32>) -> tensor<1x6x8x8xf32>
// CHECK-NEXT:    %[[U:.*]] = synap.transpose %x
// CHECK-NEXT:    %[[D:.*]] = synap.concat %[[U]], %z {axis = -3 : i64}
// CHECK-NEXT:    func.return %[[T]], %[[D]]
func.func @concat(%x: tensor<1x8x8x4xf32>, %y: tensor<1x8x8x2xf32>, %z: tensor<1x2x8x8xf32>) -> (tensor<1x6x8x8xf32>, tensor<1x6x8x8xf32>) {
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = synap.transpose %y {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x2xf32>) -> tensor<1x2x8x8xf32>
  %2 = synap.concat %0, %1 {axis = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x6x8x8xf32>
  %3 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %4 = synap.concat %3, %z {axis = -3 : i64} : (tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x6x8x8xf32>
  func.return %2, %4 : tensor<1x6x8x8xf32>, tensor<1x6x8x8xf32>
}

// -----

// Softmax along NCHW channels is softmax along NHWC axis 3 (float); a quantized softmax
// is left alone.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    %[[S:.*]] = synap.softmax %x {axis = 3 : i64} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[T:.*]] = synap.transpose %[[S]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %[[U:.*]] = synap.transpose %q {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %[[Q:.*]] = synap.softmax %[[U]] {axis = 1 : i64}
// CHECK-NEXT:    func.return %[[T]], %[[Q]]
func.func @softmax(%x: tensor<1x8x8x4xf32>, %q: tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8x!quant.uniform<u8:f32, 0.00390625:0>>) {
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = synap.softmax %0 {axis = 1 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %2 = synap.transpose %q {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x8x8x!quant.uniform<u8:f32, 0.5:128>>
  %3 = synap.softmax %2 {axis = 1 : i64} : (tensor<1x4x8x8x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x8x8x!quant.uniform<u8:f32, 0.00390625:0>>
  func.return %1, %3 : tensor<1x4x8x8xf32>, tensor<1x4x8x8x!quant.uniform<u8:f32, 0.00390625:0>>
}

// -----

// Reductions: a float mean over NCHW H, W is a mean over NHWC axes 1, 2 and needs no
// transpose afterwards; a quantized max sinks too (exact); a quantized mean does not
// (the ONNX emulation would sum in another order).
// CHECK-LABEL: func.func @reductions
// CHECK-NEXT:    %[[M:.*]] = synap.reduce_mean %x {axes = array<i64: 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[X:.*]] = synap.reduce_max %q {axes = array<i64: 1>, keep_dims = true} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x1x8x4x!quant.uniform<u8:f32, 0.5:128>>
// CHECK-NEXT:    %[[T:.*]] = synap.transpose %[[X]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x1x8x4x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x1x8x!quant.uniform<u8:f32, 0.5:128>>
// CHECK-NEXT:    %[[U:.*]] = synap.transpose %q {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %[[Q:.*]] = synap.reduce_mean %[[U]] {axes = array<i64: 2, 3>}
// CHECK-NEXT:    func.return %[[M]], %[[T]], %[[Q]]
func.func @reductions(%x: tensor<1x8x8x4xf32>, %q: tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>) -> (tensor<1x4xf32>, tensor<1x4x1x8x!quant.uniform<u8:f32, 0.5:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.5:128>>) {
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = synap.reduce_mean %0 {axes = array<i64: 2, 3>} : (tensor<1x4x8x8xf32>) -> tensor<1x4xf32>
  %2 = synap.transpose %q {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x8x8x!quant.uniform<u8:f32, 0.5:128>>
  %3 = synap.reduce_max %2 {axes = array<i64: 2>, keep_dims = true} : (tensor<1x4x8x8x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x1x8x!quant.uniform<u8:f32, 0.5:128>>
  %4 = synap.transpose %q {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x8x8x!quant.uniform<u8:f32, 0.5:128>>
  %5 = synap.reduce_mean %4 {axes = array<i64: 2, 3>} : (tensor<1x4x8x8x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.5:128>>
  func.return %1, %3, %5 : tensor<1x4xf32>, tensor<1x4x1x8x!quant.uniform<u8:f32, 0.5:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.5:128>>
}

// -----

// Layout-bound ops (pooling) stop a transpose; after sinking, a transpose that only
// moves unit dimensions becomes a reshape and merges with a following reshape.
// CHECK-LABEL: func.func @pool_and_unit
// CHECK-NEXT:    %[[T:.*]] = synap.transpose %x {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT:    %[[P:.*]] = synap.max_pool2d %[[T]]
// CHECK-NEXT:    %[[R:.*]] = synap.reshape %y : (tensor<1x1x1x4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[P]], %[[R]]
func.func @pool_and_unit(%x: tensor<1x8x8x4xf32>, %y: tensor<1x1x1x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<4xf32>) {
  %0 = synap.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %1 = synap.max_pool2d %0 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  %2 = synap.transpose %y {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x1x1x4xf32>) -> tensor<1x4x1x1xf32>
  %3 = synap.reshape %2 : (tensor<1x4x1x1xf32>) -> tensor<4xf32>
  func.return %1, %3 : tensor<1x4x4x4xf32>, tensor<4xf32>
}

// -----

// Source layers: a sunk transpose keeps its own layer (the op it passed keeps its one,
// see "te" and "exp"); transposes sinking as one name the first and fuse the others
// ("tx" with "ty" past the add and the sigmoid); a cancelled pair goes into the op
// producing the value passed on ("tx", "ty", "back" into the sigmoid); a transpose that
// a reduction takes over (nothing left to transpose after it) goes into the reduction.
// CHECK-LABEL: func.func @provenance
// CHECK-NEXT:    %[[A:.*]] = synap.add %x, %y {layer_name = "add"} : (tensor<1x8x8x4xf32>, tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[S:.*]] = synap.sigmoid %[[A]] {layer_name = "sig", fused_layers = ["tx", "ty", "back"]} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[M:.*]] = synap.reduce_mean %[[S]] {layer_name = "gap", fused_layers = ["tm"], axes = array<i64: 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[E:.*]] = synap.exp %x {layer_name = "exp"} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[T:.*]] = synap.transpose %[[E]] {layer_name = "te", perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    func.return %[[S]], %[[M]], %[[T]]
func.func @provenance(%x: tensor<1x8x8x4xf32>, %y: tensor<1x8x8x4xf32>) -> (tensor<1x8x8x4xf32>, tensor<1x4xf32>, tensor<1x4x8x8xf32>) {
  %0 = synap.transpose %x {layer_name = "tx", perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %1 = synap.transpose %y {layer_name = "ty", perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %2 = synap.add %0, %1 {layer_name = "add"} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %3 = synap.sigmoid %2 {layer_name = "sig"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %4 = synap.transpose %3 {layer_name = "back", perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %5 = synap.transpose %4 {layer_name = "tm", perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %6 = synap.reduce_mean %5 {layer_name = "gap", axes = array<i64: 2, 3>} : (tensor<1x4x8x8xf32>) -> tensor<1x4xf32>
  %7 = synap.transpose %x {layer_name = "te", perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %8 = synap.exp %7 {layer_name = "exp"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %4, %6, %8 : tensor<1x8x8x4xf32>, tensor<1x4xf32>, tensor<1x4x8x8xf32>
}
