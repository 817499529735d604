// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of the ops of dialects/synap/pool.py (max_pool2d, avg_pool2d,
// lp_pool2d): the pool2d shape rule of shapes.py, lp_pool2d's p and dilations, and the
// generic checks of SynapOp.verify_ in base.py. (pool2d passes dilations (1, 1) itself, so
// its dilation errors cannot occur; lp_pool2d checks its own before widening the window.)

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// A non-tensor operand is rejected by the IRDL operand constraint.
// CHECK: memref<1x8x8x3xf32> should be of base attribute tensor
func.func @f(%x: memref<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {kernel = array<i64: 2, 2>} : (memref<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// A dynamic operand shape.
// CHECK: synap.max_pool2d "p": operand #0 must have a static shape, got tensor<?x8x8x3xf32>
func.func @f(%x: tensor<?x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "p", kernel = array<i64: 2, 2>} : (tensor<?x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// A dynamic result shape.
// CHECK: synap.max_pool2d "p": result #0 must have a static shape, got tensor<1x7x7x?xf32>
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "p", kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x?xf32>
  func.return
}

// -----

// An unsupported element type (index).
// CHECK: synap.max_pool2d "p": operand #0 has unsupported element type index
func.func @f(%x: tensor<1x8x8x3xindex>) {
  %0 = synap.max_pool2d %x {layer_name = "p", kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xindex>) -> tensor<1x7x7x3xindex>
  func.return
}

// -----

// A result element type other than the input's.
// CHECK: synap.max_pool2d "p": result #0 element type bf16 does not match operand #0 element type f32
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "p", kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xbf16>
  func.return
}

// -----

// A result shape that differs from the inferred one.
// CHECK: synap.max_pool2d "p": result #0 shape [1, 8, 8, 3] should be [1, 7, 7, 3]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "p", kernel = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// avg_pool2d: a result shape that differs from the inferred one.
// CHECK: synap.avg_pool2d @3: result #0 shape [1, 4, 4, 3] should be [1, 7, 7, 3]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_index = 3 : i64, kernel = array<i64: 2, 2>, count_include_pad = true} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  func.return
}

// -----

// max_pool2d: the input is not rank 4.
// CHECK: synap.max_pool2d "mp": input must have rank 4, got shape [8, 8, 3]
func.func @f(%x: tensor<8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "mp", kernel = array<i64: 2, 2>} : (tensor<8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// max_pool2d: a kernel with one value.
// CHECK: synap.max_pool2d "mp": kernel needs 2 values, got [2]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "mp", kernel = array<i64: 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// max_pool2d: a zero kernel size.
// CHECK: synap.max_pool2d "mp": kernel must be >= 1, got [2, 0]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "mp", kernel = array<i64: 2, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// max_pool2d: strides with three values.
// CHECK: synap.max_pool2d "mp": strides needs 2 values, got [1, 1, 1]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "mp", kernel = array<i64: 2, 2>, strides = array<i64: 1, 1, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// max_pool2d: pad with two values.
// CHECK: synap.max_pool2d "mp": pad [top, bottom, left, right] needs 4 values, got [1, 1]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "mp", kernel = array<i64: 2, 2>, pad = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// max_pool2d: a zero stride along the height.
// CHECK: synap.max_pool2d "mp": height: strides must be >= 1, got 0
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "mp", kernel = array<i64: 2, 2>, strides = array<i64: 0, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// max_pool2d: a negative stride along the width.
// CHECK: synap.max_pool2d "mp": width: strides must be >= 1, got -2
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "mp", kernel = array<i64: 2, 2>, strides = array<i64: 1, -2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// max_pool2d: negative padding at the bottom.
// CHECK: synap.max_pool2d "mp": height: padding must be >= 0, got [0, -1]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "mp", kernel = array<i64: 2, 2>, pad = array<i64: 0, -1, 0, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// max_pool2d: a window wider than the padded input.
// CHECK: synap.max_pool2d "mp": width: window of 10 does not fit into 8 + padding 0+1
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "mp", kernel = array<i64: 2, 10>, pad = array<i64: 0, 0, 0, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// max_pool2d: a window taller than the input.
// CHECK: synap.max_pool2d "mp": height: window of 9 does not fit into 8 + padding 0+0
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.max_pool2d %x {layer_name = "mp", kernel = array<i64: 9, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// avg_pool2d: the input is not rank 4.
// CHECK: synap.avg_pool2d "ap": input must have rank 4, got shape [8, 8, 3]
func.func @f(%x: tensor<8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_name = "ap", kernel = array<i64: 2, 2>} : (tensor<8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// avg_pool2d: a kernel with one value.
// CHECK: synap.avg_pool2d "ap": kernel needs 2 values, got [2]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_name = "ap", kernel = array<i64: 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// avg_pool2d: a zero kernel size.
// CHECK: synap.avg_pool2d "ap": kernel must be >= 1, got [2, 0]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_name = "ap", kernel = array<i64: 2, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// avg_pool2d: strides with three values.
// CHECK: synap.avg_pool2d "ap": strides needs 2 values, got [1, 1, 1]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_name = "ap", kernel = array<i64: 2, 2>, strides = array<i64: 1, 1, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// avg_pool2d: pad with two values.
// CHECK: synap.avg_pool2d "ap": pad [top, bottom, left, right] needs 4 values, got [1, 1]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_name = "ap", kernel = array<i64: 2, 2>, pad = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// avg_pool2d: a zero stride along the height.
// CHECK: synap.avg_pool2d "ap": height: strides must be >= 1, got 0
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_name = "ap", kernel = array<i64: 2, 2>, strides = array<i64: 0, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// avg_pool2d: a negative stride along the width.
// CHECK: synap.avg_pool2d "ap": width: strides must be >= 1, got -2
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_name = "ap", kernel = array<i64: 2, 2>, strides = array<i64: 1, -2>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// avg_pool2d: negative padding at the bottom.
// CHECK: synap.avg_pool2d "ap": height: padding must be >= 0, got [0, -1]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_name = "ap", kernel = array<i64: 2, 2>, pad = array<i64: 0, -1, 0, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// avg_pool2d: a window wider than the padded input.
// CHECK: synap.avg_pool2d "ap": width: window of 10 does not fit into 8 + padding 0+1
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_name = "ap", kernel = array<i64: 2, 10>, pad = array<i64: 0, 0, 0, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// avg_pool2d: a window taller than the input.
// CHECK: synap.avg_pool2d "ap": height: window of 9 does not fit into 8 + padding 0+0
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.avg_pool2d %x {layer_name = "ap", kernel = array<i64: 9, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// lp_pool2d: p must be positive.
// CHECK: synap.lp_pool2d "lp": p must be a positive number, got 0
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.lp_pool2d %x {layer_name = "lp", kernel = array<i64: 2, 2>, p = 0.0 : f32} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// lp_pool2d: p must be a number (NaN is not).
// CHECK: synap.lp_pool2d "lp": p must be a positive number, got nan
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.lp_pool2d %x {layer_name = "lp", kernel = array<i64: 3, 3>, p = 0x7FC00000 : f32} : (tensor<1x8x8x3xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// lp_pool2d: dilations below 1.
// CHECK: synap.lp_pool2d "lp": dilations must be two values >= 1, got [0, 1]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.lp_pool2d %x {layer_name = "lp", kernel = array<i64: 2, 2>, dilations = array<i64: 0, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x7x3xf32>
  func.return
}

// -----

// lp_pool2d: a dilated window (4 * (3 - 1) + 1 = 9 rows) taller than the input.
// CHECK: synap.lp_pool2d "lp": height: window of 9 does not fit into 8 + padding 0+0
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.lp_pool2d %x {layer_name = "lp", kernel = array<i64: 3, 3>, dilations = array<i64: 4, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x6x6x3xf32>
  func.return
}

// -----

// lp_pool2d: a result shape that ignores the dilations.
// CHECK: synap.lp_pool2d "lp": result #0 shape [1, 6, 6, 3] should be [1, 4, 6, 3]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.lp_pool2d %x {layer_name = "lp", kernel = array<i64: 3, 3>, dilations = array<i64: 2, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x6x6x3xf32>
  func.return
}
