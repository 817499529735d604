// RUN: synapc-opt %S/../../examples/conv_pad_relu_pool.mlir -p optimize --elide-weights | filecheck %s --check-prefix=EXAMPLE
// RUN: synapc-opt %s -p optimize | filecheck %s

// The default pipeline on the shipped example: pad, conv, ReLU and max pool become one
// fused layer, which names the source layers it computes.
// EXAMPLE:       func.func @main
// EXAMPLE-NEXT:    synap.constant
// EXAMPLE-NEXT:    synap.constant
// EXAMPLE-NEXT:    synap.conv2d_pool %x, %{{.*}}, %{{.*}} {layer_name = "conv1", fused_layers = ["pad1", "relu1", "pool1"], pad = array<i64: 1, 1, 1, 1>, activation = #synap<activation relu>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>}
// EXAMPLE-NEXT:    func.return

// Rounds repeat until nothing changes: sinking the NCHW transposes lets the pair cancel,
// which exposes the clamp to its conv and then the pool. The fused layer names every
// source layer it absorbed, the cancelled transposes too, in source order (sinking put
// the transpose "conv_out" after the clamp).
// CHECK-LABEL: func.func @nchw
// CHECK-NEXT:    %[[IN:.*]] = synap.transpose %x {layer_name = "to_nhwc", perm = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT:    synap.constant
// CHECK-NEXT:    %[[F:.*]] = synap.conv2d_pool %[[IN]], %{{.*}} {layer_name = "conv", fused_layers = ["conv_out", "relu6", "pool_in", "pool"], {{.*}}activation = #synap<activation relu6>, pool_kernel = array<i64: 2, 2>, pool_strides = array<i64: 2, 2>}
// CHECK-NEXT:    %[[OUT:.*]] = synap.transpose %[[F]] {layer_name = "pool_out", perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    func.return %[[OUT]]
func.func @nchw(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %a = synap.transpose %x {layer_name = "to_nhwc", perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %w = synap.constant dense_resource<w> : tensor<4x3x3x4xf32>
  %c = synap.conv2d %a, %w {layer_name = "conv", pad = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<4x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  %b = synap.transpose %c {layer_name = "conv_out", perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x8x8xf32>
  %r = synap.clamp %b {layer_name = "relu6", min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %d = synap.transpose %r {layer_name = "pool_in", perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %p = synap.max_pool2d %d {layer_name = "pool", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  %e = synap.transpose %p {layer_name = "pool_out", perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %e : tensor<1x4x4x4xf32>
}
