// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of the ops of dialects/synap/conv.py (conv2d, depthwise_conv2d,
// transpose_conv2d, fully_connected, matmul): the shape rules of shapes.py they call, the
// bias check, and the generic checks of SynapOp.verify_ in base.py. Messages name the op
// and its source layer ("name" from layer_name, else @index from layer_index).

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// A non-tensor operand is rejected by the IRDL operand constraint (before base.py's own
// 'must be a tensor' check, which is unreachable).
// CHECK: memref<1x8x8x4xf32> should be of base attribute tensor
func.func @f(%x: memref<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w : (memref<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// An unranked tensor operand is not a TensorType either.
// CHECK: tensor<*xf32> should be of base attribute tensor
func.func @f(%x: tensor<*xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w : (tensor<*xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// A dynamic operand shape.
// CHECK: synap.conv2d "c": operand #0 must have a static shape, got tensor<1x?x8x4xf32>
func.func @f(%x: tensor<1x?x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c"} : (tensor<1x?x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// A dynamic result shape.
// CHECK: synap.conv2d @1: result #0 must have a static shape, got tensor<1x6x?x16xf32>
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_index = 1 : i64} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x?x16xf32>
  func.return
}

// -----

// An unsupported element type (index) on an operand.
// CHECK: synap.conv2d: operand #1 has unsupported element type index
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xindex>) {
  %0 = synap.conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xindex>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// An unsupported element type (complex) on the result.
// CHECK: synap.conv2d: result #0 has unsupported element type complex<f32>
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xcomplex<f32>>
  func.return
}

// -----

// A result element type other than the input's (f16 vs f32).
// CHECK: synap.conv2d "kind": result #0 element type f16 does not match operand #0 element type f32
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "kind"} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf16>
  func.return
}

// -----

// A quantized result of a float input.
// CHECK: synap.conv2d: result #0 element type !quant.uniform<u8:f32, 0.5> does not match operand #0 element type f32
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16x!quant.uniform<u8:f32, 0.5>>
  func.return
}

// -----

// A float result of a quantized input.
// CHECK: synap.conv2d: result #0 element type f32 does not match operand #0 element type !quant.uniform<u8:f32, 0.5>
func.func @f(%x: tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5>>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w : (tensor<1x8x8x4x!quant.uniform<u8:f32, 0.5>>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// A result shape that differs from the inferred one.
// CHECK: synap.conv2d "shape": result #0 shape [1, 6, 6, 15] should be [1, 6, 6, 16]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "shape"} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x15xf32>
  func.return
}

// -----

// conv2d: the input is not rank 4.
// CHECK: synap.conv2d "c": input must have rank 4, got shape [8, 8, 4]
func.func @f(%x: tensor<8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c"} : (tensor<8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: the filter is not rank 4.
// CHECK: synap.conv2d "c": filter must have rank 4, got shape [16, 3, 3]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c"} : (tensor<1x8x8x4xf32>, tensor<16x3x3xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: groups below 1.
// CHECK: synap.conv2d "c": groups must be >= 1, got 0
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", groups = 0 : i64} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: filter input channels do not match the input.
// CHECK: synap.conv2d "conv1": filter input channels (3) x groups (1) must equal input channels (4)
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x3xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "conv1"} : (tensor<1x8x8x4xf32>, tensor<16x3x3x3xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: filter input channels times groups do not match the input.
// CHECK: synap.conv2d "c": filter input channels (4) x groups (2) must equal input channels (4)
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", groups = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: output channels not divisible by groups.
// CHECK: synap.conv2d "c": output channels (15) must be divisible by groups (2)
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<15x3x3x2xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", groups = 2 : i64} : (tensor<1x8x8x4xf32>, tensor<15x3x3x2xf32>) -> tensor<1x6x6x15xf32>
  func.return
}

// -----

// conv2d: strides with one value.
// CHECK: synap.conv2d "c": strides needs 2 values, got [2]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", strides = array<i64: 2>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: dilations with three values.
// CHECK: synap.conv2d "c": dilations needs 2 values, got [1, 1, 1]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", dilations = array<i64: 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: pad with two values.
// CHECK: synap.conv2d "c": pad [top, bottom, left, right] needs 4 values, got [1, 1]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", pad = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: a zero stride along the height.
// CHECK: synap.conv2d "c": height: strides must be >= 1, got 0
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", strides = array<i64: 0, 1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: a negative stride along the width.
// CHECK: synap.conv2d "c": width: strides must be >= 1, got -1
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", strides = array<i64: 1, -1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: a zero dilation.
// CHECK: synap.conv2d "c": height: dilations must be >= 1, got 0
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", dilations = array<i64: 0, 1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: negative padding.
// CHECK: synap.conv2d "c": width: padding must be >= 0, got [-1, 0]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", pad = array<i64: 0, 0, -1, 0>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: a kernel taller than the padded input.
// CHECK: synap.conv2d "c": height: window of 9 does not fit into 8 + padding 0+0
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x9x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c"} : (tensor<1x8x8x4xf32>, tensor<16x9x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: a dilated kernel wider than the padded input.
// CHECK: synap.conv2d "c": width: window of 11 does not fit into 8 + padding 1+1
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c", dilations = array<i64: 1, 5>, pad = array<i64: 0, 0, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: a bias that is not one value per output channel.
// CHECK: synap.conv2d "c": bias shape [8] should be [16]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>, %b: tensor<8xf32>) {
  %0 = synap.conv2d %x, %w, %b {layer_name = "c"} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<8xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// conv2d: a bias of rank 2.
// CHECK: synap.conv2d @9: bias shape [1, 16] should be [16]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<16x3x3x4xf32>, %b: tensor<1x16xf32>) {
  %0 = synap.conv2d %x, %w, %b {layer_index = 9 : i64} : (tensor<1x8x8x4xf32>, tensor<16x3x3x4xf32>, tensor<1x16xf32>) -> tensor<1x6x6x16xf32>
  func.return
}

// -----

// depthwise_conv2d: the input is not rank 4.
// CHECK: synap.depthwise_conv2d "dw": input must have rank 4, got shape [1, 8, 8, 4, 1]
func.func @f(%x: tensor<1x8x8x4x1xf32>, %w: tensor<1x3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw"} : (tensor<1x8x8x4x1xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: the filter is not rank 4.
// CHECK: synap.depthwise_conv2d "dw": filter must have rank 4, got shape [3, 3, 8]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw"} : (tensor<1x8x8x4xf32>, tensor<3x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: a filter whose first dimension is not 1.
// CHECK: synap.depthwise_conv2d "dw": depthwise filter must be [1, KH, KW, C], got [2, 3, 3, 8]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<2x3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw"} : (tensor<1x8x8x4xf32>, tensor<2x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: filter channels not a multiple of the input channels.
// CHECK: synap.depthwise_conv2d "dw": filter channels (6) must be a multiple of input channels (4)
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<1x3x3x6xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw"} : (tensor<1x8x8x4xf32>, tensor<1x3x3x6xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

// depthwise_conv2d: an input with no channels (used to crash with ZeroDivisionError).
// CHECK: synap.depthwise_conv2d "dw0": filter channels (8) must be a multiple of input channels (0)
func.func @f(%x: tensor<1x8x8x0xf32>, %w: tensor<1x3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw0"} : (tensor<1x8x8x0xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: strides with one value.
// CHECK: synap.depthwise_conv2d "dw": strides needs 2 values, got [1]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<1x3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw", strides = array<i64: 1>} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: dilations with no value.
// CHECK: synap.depthwise_conv2d "dw": dilations needs 2 values, got []
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<1x3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw", dilations = array<i64>} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: pad with five values.
// CHECK: synap.depthwise_conv2d "dw": pad [top, bottom, left, right] needs 4 values, got [0, 0, 0, 0, 0]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<1x3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw", pad = array<i64: 0, 0, 0, 0, 0>} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: a zero stride along the width.
// CHECK: synap.depthwise_conv2d "dw": width: strides must be >= 1, got 0
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<1x3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw", strides = array<i64: 1, 0>} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: a negative dilation along the width.
// CHECK: synap.depthwise_conv2d "dw": width: dilations must be >= 1, got -2
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<1x3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw", dilations = array<i64: 1, -2>} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: negative padding at the top.
// CHECK: synap.depthwise_conv2d "dw": height: padding must be >= 0, got [-2, 1]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<1x3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw", pad = array<i64: -2, 1, 0, 0>} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: a window larger than the padded input.
// CHECK: synap.depthwise_conv2d "dw": height: window of 5 does not fit into 2 + padding 1+1
func.func @f(%x: tensor<1x2x8x4xf32>, %w: tensor<1x5x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw", pad = array<i64: 1, 1, 0, 0>} : (tensor<1x2x8x4xf32>, tensor<1x5x3x8xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: a bias that is not one value per output channel (filter dim 3).
// CHECK: synap.depthwise_conv2d "dw": bias shape [4] should be [8]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<1x3x3x8xf32>, %b: tensor<4xf32>) {
  %0 = synap.depthwise_conv2d %x, %w, %b {layer_name = "dw"} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>, tensor<4xf32>) -> tensor<1x6x6x8xf32>
  func.return
}

// -----

// depthwise_conv2d: a result shape that differs from the inferred one.
// CHECK: synap.depthwise_conv2d "dw": result #0 shape [1, 6, 6, 4] should be [1, 6, 6, 8]
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<1x3x3x8xf32>) {
  %0 = synap.depthwise_conv2d %x, %w {layer_name = "dw"} : (tensor<1x8x8x4xf32>, tensor<1x3x3x8xf32>) -> tensor<1x6x6x4xf32>
  func.return
}

// -----

// transpose_conv2d: the input is not rank 4.
// CHECK: synap.transpose_conv2d "up": input must have rank 4, got shape [4, 4, 8]
func.func @f(%x: tensor<4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up"} : (tensor<4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: the filter is not rank 4.
// CHECK: synap.transpose_conv2d "up": filter must have rank 4, got shape [3, 3, 3, 8, 1]
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8x1xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up"} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8x1xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: strides with three values.
// CHECK: synap.transpose_conv2d "up": strides needs 2 values, got [2, 2, 2]
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up", strides = array<i64: 2, 2, 2>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: dilations with one value.
// CHECK: synap.transpose_conv2d "up": dilations needs 2 values, got [1]
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up", dilations = array<i64: 1>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: pad with three values.
// CHECK: synap.transpose_conv2d "up": pad [top, bottom, left, right] needs 4 values, got [0, 0, 0]
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up", pad = array<i64: 0, 0, 0>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: filter input channels (last dimension) differ from the input's.
// CHECK: synap.transpose_conv2d "up": filter input channels (4) must equal input channels (8)
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x4xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up"} : (tensor<1x4x4x8xf32>, tensor<3x3x3x4xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: a zero stride.
// CHECK: synap.transpose_conv2d "up": strides and dilations must be >= 1
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up", strides = array<i64: 2, 0>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: a zero dilation.
// CHECK: synap.transpose_conv2d "up0": strides and dilations must be >= 1
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up0", dilations = array<i64: 0, 1>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: a negative leading (top) crop.
// CHECK: synap.transpose_conv2d "up": leading crop must be >= 0, got [-1, 0, 0, 0]
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up", pad = array<i64: -1, 0, 0, 0>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: a negative leading (left) crop.
// CHECK: synap.transpose_conv2d "up": leading crop must be >= 0, got [0, 0, -2, 0]
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up", pad = array<i64: 0, 0, -2, 0>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: crops that remove the whole height (full output 6).
// CHECK: synap.transpose_conv2d "up": height: crop 3+3 leaves no output
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up", pad = array<i64: 3, 3, 0, 0>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: crops that remove the whole width.
// CHECK: synap.transpose_conv2d "up": width: crop 4+5 leaves no output
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up", pad = array<i64: 0, 0, 4, 5>} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: a bias that is not one value per output channel (filter dim 0).
// CHECK: synap.transpose_conv2d "up": bias shape [8] should be [3]
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>, %b: tensor<8xf32>) {
  %0 = synap.transpose_conv2d %x, %w, %b {layer_name = "up"} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>, tensor<8xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// transpose_conv2d: a result shape that differs from the inferred one.
// CHECK: synap.transpose_conv2d "up": result #0 shape [1, 8, 8, 3] should be [1, 6, 6, 3]
func.func @f(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x3x8xf32>) {
  %0 = synap.transpose_conv2d %x, %w {layer_name = "up"} : (tensor<1x4x4x8xf32>, tensor<3x3x3x8xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// fully_connected: a rank-0 input.
// CHECK: synap.fully_connected "fc": input must have rank >= 1
func.func @f(%x: tensor<f32>, %w: tensor<10x16xf32>) {
  %0 = synap.fully_connected %x, %w {layer_name = "fc"} : (tensor<f32>, tensor<10x16xf32>) -> tensor<10xf32>
  func.return
}

// -----

// fully_connected: a weight that is not rank 2.
// CHECK: synap.fully_connected "fc": weight must have rank 2, got shape [10, 16, 1]
func.func @f(%x: tensor<2x16xf32>, %w: tensor<10x16x1xf32>) {
  %0 = synap.fully_connected %x, %w {layer_name = "fc"} : (tensor<2x16xf32>, tensor<10x16x1xf32>) -> tensor<2x10xf32>
  func.return
}

// -----

// fully_connected: weight inner dimension differs from the input features.
// CHECK: synap.fully_connected "fc": weight inner dimension (15) must equal input features (16)
func.func @f(%x: tensor<2x16xf32>, %w: tensor<10x15xf32>) {
  %0 = synap.fully_connected %x, %w {layer_name = "fc"} : (tensor<2x16xf32>, tensor<10x15xf32>) -> tensor<2x10xf32>
  func.return
}

// -----

// fully_connected: a bias that is not one value per output feature.
// CHECK: synap.fully_connected "fc": bias shape [16] should be [10]
func.func @f(%x: tensor<2x16xf32>, %w: tensor<10x16xf32>, %b: tensor<16xf32>) {
  %0 = synap.fully_connected %x, %w, %b {layer_name = "fc"} : (tensor<2x16xf32>, tensor<10x16xf32>, tensor<16xf32>) -> tensor<2x10xf32>
  func.return
}

// -----

// fully_connected: a result shape that differs from the inferred one.
// CHECK: synap.fully_connected "fc": result #0 shape [10] should be [2, 10]
func.func @f(%x: tensor<2x16xf32>, %w: tensor<10x16xf32>) {
  %0 = synap.fully_connected %x, %w {layer_name = "fc"} : (tensor<2x16xf32>, tensor<10x16xf32>) -> tensor<10xf32>
  func.return
}

// -----

// matmul: an operand of rank 1.
// CHECK: synap.matmul "mm": matmul operands must have rank >= 2
func.func @f(%a: tensor<4xf32>, %b: tensor<4x5xf32>) {
  %0 = synap.matmul %a, %b {layer_name = "mm"} : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
  func.return
}

// -----

// matmul: contracting dimensions differ.
// CHECK: synap.matmul "mm": contracting dimensions differ: 4 vs 3
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<3x5xf32>) {
  %0 = synap.matmul %a, %b {layer_name = "mm"} : (tensor<2x3x4xf32>, tensor<3x5xf32>) -> tensor<2x3x5xf32>
  func.return
}

// -----

// matmul: contracting dimensions differ once the lhs is transposed.
// CHECK: synap.matmul "mmt": contracting dimensions differ: 3 vs 4
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  %0 = synap.matmul %a, %b {layer_name = "mmt", transpose_lhs = true} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x4x5xf32>
  func.return
}

// -----

// matmul: batch dimensions that do not broadcast.
// CHECK: synap.matmul "mm": shapes [[2], [3]] are not broadcast-compatible
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  %0 = synap.matmul %a, %b {layer_name = "mm"} : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  func.return
}

// -----

// matmul: a result shape that differs from the inferred one.
// CHECK: synap.matmul "mm": result #0 shape [3, 5] should be [2, 3, 5]
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  %0 = synap.matmul %a, %b {layer_name = "mm"} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

// conv2d: a float layer's filter must be of the input's float type (or quantized).
// CHECK: synap.conv2d "c": filter element type f16 does not fit input element type f32
func.func @f(%x: tensor<1x4x4x3xf32>, %w: tensor<8x1x1x3xf16>) {
  %0 = synap.conv2d %x, %w {layer_name = "c"} : (tensor<1x4x4x3xf32>, tensor<8x1x1x3xf16>) -> tensor<1x4x4x8xf32>
  func.return
}

// -----

// conv2d: a quantized layer needs quantized weights.
// CHECK: synap.conv2d "c": filter element type f32 does not fit input element type !quant.uniform<u8:f32, 0.5:128>
func.func @f(%x: tensor<1x4x4x3x!quant.uniform<u8:f32, 0.5:128>>, %w: tensor<8x1x1x3xf32>) {
  %0 = synap.conv2d %x, %w {layer_name = "c"} : (tensor<1x4x4x3x!quant.uniform<u8:f32, 0.5:128>>, tensor<8x1x1x3xf32>) -> tensor<1x4x4x8x!quant.uniform<u8:f32, 0.5:128>>
  func.return
}

// -----

// fully_connected: a float layer's bias must be of the input's float type.
// CHECK: synap.fully_connected "fc": bias element type f16 does not fit input element type f32
func.func @f(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf16>) {
  %0 = synap.fully_connected %x, %w, %b {layer_name = "fc"} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf16>) -> tensor<2x4xf32>
  func.return
}

// -----

// matmul: both operands are of one kind.
// CHECK: synap.matmul "mm": operand element types f32 and f16 differ
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf16>) {
  %0 = synap.matmul %a, %b {layer_name = "mm"} : (tensor<2x3xf32>, tensor<3x4xf16>) -> tensor<2x4xf32>
  func.return
}
