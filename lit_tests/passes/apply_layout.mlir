// RUN: synapc-opt %s --split-input-file -p 'apply-layout{layout=nhwc}' | filecheck %s
// RUN: synapc-opt %s --split-input-file -p 'apply-layout{layout=nchw}' | filecheck %s --check-prefix=NCHW

// An ONNX-style model (4-D input and output in NCHW, as synap.layout says): with
// layout=nhwc the input takes NHWC and is transposed back, the output is transposed to
// NHWC and both record the layout; other attributes and the 2-D output stay.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%0: tensor<1x4x5x3xf32> {synap.name = "image", synap.layout = "nhwc"}, %v: tensor<1x3xf32> {synap.name = "bias", synap.layout = "none"})
// CHECK-SAME:    -> (tensor<1x4x5x3xf32> {synap.name = "map", synap.layout = "nhwc"}, tensor<1x3xf32> {synap.name = "logits", synap.layout = "none"})
// CHECK-NEXT:    %x = synap.transpose %0 {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32>
// CHECK-NEXT:    %y = synap.sigmoid %x
// CHECK-NEXT:    %z = synap.tanh %v
// CHECK-NEXT:    %1 = synap.transpose %y {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
// CHECK-NEXT:    func.return %1, %z : tensor<1x4x5x3xf32>, tensor<1x3xf32>
// With layout=nchw (the layout it has) nothing changes.
// NCHW-LABEL: func.func @main
// NCHW-SAME:    (%x: tensor<1x3x4x5xf32> {synap.name = "image", synap.layout = "nchw"},
// NCHW-NOT:     synap.transpose
func.func @main(%x: tensor<1x3x4x5xf32> {synap.name = "image", synap.layout = "nchw"}, %v: tensor<1x3xf32> {synap.name = "bias", synap.layout = "none"}) -> (tensor<1x3x4x5xf32> {synap.name = "map", synap.layout = "nchw"}, tensor<1x3xf32> {synap.name = "logits", synap.layout = "none"}) {
  %y = synap.sigmoid %x : (tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32>
  %z = synap.tanh %v : (tensor<1x3xf32>) -> tensor<1x3xf32>
  func.return %y, %z : tensor<1x3x4x5xf32>, tensor<1x3xf32>
}

// -----

// IR without synap.layout is in its own NHWC layout: layout=nhwc leaves it, layout=nchw
// transposes its 4-D boundary and records "nchw".
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%x: tensor<1x4x5x3xf32>) -> tensor<1x4x5x3xf32>
// CHECK-NOT:     synap.transpose
// NCHW-LABEL: func.func @main
// NCHW-SAME:    (%0: tensor<1x3x4x5xf32> {synap.layout = "nchw"}) -> (tensor<1x3x4x5xf32> {synap.layout = "nchw"})
// NCHW-NEXT:    %x = synap.transpose %0 {perm = array<i64: 0, 2, 3, 1>}
// NCHW-NEXT:    %y = synap.tanh %x
// NCHW-NEXT:    %1 = synap.transpose %y {perm = array<i64: 0, 3, 1, 2>}
// NCHW-NEXT:    func.return %1
func.func @main(%x: tensor<1x4x5x3xf32>) -> tensor<1x4x5x3xf32> {
  %y = synap.tanh %x : (tensor<1x4x5x3xf32>) -> tensor<1x4x5x3xf32>
  func.return %y : tensor<1x4x5x3xf32>
}
