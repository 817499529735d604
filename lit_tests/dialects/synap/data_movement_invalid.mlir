// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of the ops of dialects/synap/data_movement.py (concat, split, slice,
// strided_slice, reshape, transpose, pad, tile, broadcast_to, gather, depth_to_space,
// space_to_depth): their shape rules in shapes.py, their own checks, and the generic checks
// of SynapOp.verify_ in base.py.

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// A non-tensor operand is rejected by the IRDL operand constraint.
// CHECK: memref<2x3xf32> should be of base attribute tensor
func.func @f(%x: memref<2x3xf32>) {
  %0 = synap.transpose %x {perm = array<i64: 1, 0>} : (memref<2x3xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

// A dynamic operand shape.
// CHECK: synap.transpose "t": operand #0 must have a static shape, got tensor<2x?xf32>
func.func @f(%x: tensor<2x?xf32>) {
  %0 = synap.transpose %x {layer_name = "t", perm = array<i64: 1, 0>} : (tensor<2x?xf32>) -> tensor<?x2xf32>
  func.return
}

// -----

// A dynamic result shape.
// CHECK: synap.transpose "t": result #0 must have a static shape, got tensor<3x?xf32>
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.transpose %x {layer_name = "t", perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x?xf32>
  func.return
}

// -----

// An unsupported element type (index).
// CHECK: synap.transpose "t": operand #0 has unsupported element type index
func.func @f(%x: tensor<2x3xindex>) {
  %0 = synap.transpose %x {layer_name = "t", perm = array<i64: 1, 0>} : (tensor<2x3xindex>) -> tensor<3x2xindex>
  func.return
}

// -----

// A result element type other than the input's.
// CHECK: synap.transpose "t": result #0 element type i16 does not match operand #0 element type i8
func.func @f(%x: tensor<2x3xi8>) {
  %0 = synap.transpose %x {layer_name = "t", perm = array<i64: 1, 0>} : (tensor<2x3xi8>) -> tensor<3x2xi16>
  func.return
}

// -----

// A result shape that differs from the permuted one.
// CHECK: synap.transpose "t": result #0 shape [2, 3] should be [3, 2]
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.transpose %x {layer_name = "t", perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// concat: no input at all.
// CHECK: synap.concat "cat": concat needs at least one input
func.func @f() {
  %0 = synap.concat {layer_name = "cat", axis = 0 : i64} : () -> tensor<1xf32>
  func.return
}

// -----

// concat: an axis past the last dimension.
// CHECK: synap.concat "cat": axis 2 is out of range for rank 2
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  %0 = synap.concat %a, %b {layer_name = "cat", axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

// concat: inputs of different ranks.
// CHECK: synap.concat "cat": input #1 has rank 3, expected 2
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  %0 = synap.concat %a, %b {layer_name = "cat", axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

// concat: inputs that differ outside the concatenation axis.
// CHECK: synap.concat "cat": input #2 has size 4 in dimension 0, expected 2
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<4x3xf32>) {
  %0 = synap.concat %a, %b, %c {layer_name = "cat", axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<4x3xf32>) -> tensor<2x7xf32>
  func.return
}

// -----

// concat: a result shape other than the sum along the axis.
// CHECK: synap.concat "cat": result #0 shape [2, 5] should be [2, 6]
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  %0 = synap.concat %a, %b {layer_name = "cat", axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

// concat: a result element type other than the first input's.
// CHECK: synap.concat "cat": result #0 element type !quant.uniform<i8:f32, 0.5> does not match operand #0 element type f32
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  %0 = synap.concat %a, %b {layer_name = "cat", axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6x!quant.uniform<i8:f32, 0.5>>
  func.return
}

// -----

// split: an axis past the last dimension.
// CHECK: synap.split "split": axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x6xf32>) {
  %0, %1 = synap.split %x {layer_name = "split", axis = 2 : i64} : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  func.return
}

// -----

// split: an empty piece.
// CHECK: synap.split "split": split sizes must be >= 1, got [0, 6]
func.func @f(%x: tensor<2x6xf32>) {
  %0, %1 = synap.split %x {layer_name = "split", axis = 1 : i64} : (tensor<2x6xf32>) -> (tensor<2x0xf32>, tensor<2x6xf32>)
  func.return
}

// -----

// split: a result without the split axis reads as size 0 (the message then talks of sizes,
// not ranks).
// CHECK: synap.split "split1": split sizes must be >= 1, got [3, 0]
func.func @f(%x: tensor<2x6xf32>) {
  %0, %1 = synap.split %x {layer_name = "split1", axis = 1 : i64} : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
  func.return
}

// -----

// split: no result at all.
// CHECK: synap.split "split0": split sizes must be >= 1, got []
func.func @f(%x: tensor<2x6xf32>) {
  synap.split %x {layer_name = "split0", axis = 1 : i64} : (tensor<2x6xf32>) -> ()
  func.return
}

// -----

// split: pieces that do not add up to the axis size.
// CHECK: synap.split "split": split sizes [2, 2] add up to 4, not the axis size 6
func.func @f(%x: tensor<2x6xf32>) {
  %0, %1 = synap.split %x {layer_name = "split", axis = -1 : i64} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  func.return
}

// -----

// split: a piece that differs from the input outside the split axis.
// CHECK: synap.split "split": result #1 shape [3, 4] should be [2, 4]
func.func @f(%x: tensor<2x6xf32>) {
  %0, %1 = synap.split %x {layer_name = "split", axis = 1 : i64} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<3x4xf32>)
  func.return
}

// -----

// split: a piece whose element type differs from the input's.
// CHECK: synap.split "split": result #1 element type f16 does not match operand #0 element type f32
func.func @f(%x: tensor<2x6xf32>) {
  %0, %1 = synap.split %x {layer_name = "split", axis = 1 : i64} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x4xf16>)
  func.return
}

// -----

// slice: start with fewer values than the input rank.
// CHECK: synap.slice "crop": start has 3 values for rank 4
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.slice %x {layer_name = "crop", start = array<i64: 0, 2, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  func.return
}

// -----

// slice: a result rank other than the input's.
// CHECK: synap.slice "crop": result rank 3 differs from input rank 4
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.slice %x {layer_name = "crop", start = array<i64: 0, 2, 2, 0>} : (tensor<1x8x8x3xf32>) -> tensor<4x4x3xf32>
  func.return
}

// -----

// slice: a window that runs past the end.
// CHECK: synap.slice "crop": dimension 1: start 6 + size 4 exceeds 8
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.slice %x {layer_name = "crop", start = array<i64: 0, 6, 2, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  func.return
}

// -----

// slice: a negative start.
// CHECK: synap.slice "crop": dimension 3: start -1 + size 1 exceeds 3
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.slice %x {layer_name = "crop", start = array<i64: 0, 2, 2, -1>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x1xf32>
  func.return
}

// -----

// slice: a result element type other than the input's.
// CHECK: synap.slice "crop": result #0 element type f16 does not match operand #0 element type f32
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.slice %x {layer_name = "crop", start = array<i64: 0, 2, 2, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf16>
  func.return
}

// -----

// strided_slice: begin with fewer values than the input rank.
// CHECK: synap.strided_slice "ss": begin has 1 values for rank 2
func.func @f(%x: tensor<4x8xf32>) {
  %0 = synap.strided_slice %x {layer_name = "ss", begin = array<i64: 0>, end = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// strided_slice: end with more values than the input rank.
// CHECK: synap.strided_slice "ss": end has 3 values for rank 2
func.func @f(%x: tensor<4x8xf32>) {
  %0 = synap.strided_slice %x {layer_name = "ss", begin = array<i64: 0, 0>, end = array<i64: 4, 8, 1>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// strided_slice: strides with fewer values than the input rank.
// CHECK: synap.strided_slice "ss": strides has 1 values for rank 2
func.func @f(%x: tensor<4x8xf32>) {
  %0 = synap.strided_slice %x {layer_name = "ss", begin = array<i64: 0, 0>, end = array<i64: 4, 8>, strides = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// strided_slice: a zero stride.
// CHECK: synap.strided_slice "ss": dimension 1: stride must not be 0
func.func @f(%x: tensor<4x8xf32>) {
  %0 = synap.strided_slice %x {layer_name = "ss", begin = array<i64: 0, 0>, end = array<i64: 4, 8>, strides = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// strided_slice: begin past the end of the dimension.
// CHECK: synap.strided_slice "ss": dimension 0: begin 5 is outside [0, 4]
func.func @f(%x: tensor<4x8xf32>) {
  %0 = synap.strided_slice %x {layer_name = "ss", begin = array<i64: 5, 0>, end = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// strided_slice: a negative begin (importers resolve negative indices).
// CHECK: synap.strided_slice "ss": dimension 1: begin -1 is outside [0, 8]
func.func @f(%x: tensor<4x8xf32>) {
  %0 = synap.strided_slice %x {layer_name = "ss", begin = array<i64: 0, -1>, end = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// strided_slice: end past the end of the dimension.
// CHECK: synap.strided_slice "ss": dimension 1: end 9 is outside [-1, 8]
func.func @f(%x: tensor<4x8xf32>) {
  %0 = synap.strided_slice %x {layer_name = "ss", begin = array<i64: 0, 0>, end = array<i64: 4, 9>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// strided_slice: end below -1.
// CHECK: synap.strided_slice "ss": dimension 0: end -2 is outside [-1, 4]
func.func @f(%x: tensor<4x8xf32>) {
  %0 = synap.strided_slice %x {layer_name = "ss", begin = array<i64: 3, 0>, end = array<i64: -2, 8>, strides = array<i64: -1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// strided_slice: a result shape other than the slice's.
// CHECK: synap.strided_slice "ss": result #0 shape [4, 8] should be [2, 3]
func.func @f(%x: tensor<4x8xf32>) {
  %0 = synap.strided_slice %x {layer_name = "ss", begin = array<i64: 0, 1>, end = array<i64: 4, 8>, strides = array<i64: 2, 3>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// reshape: a different element count.
// CHECK: synap.reshape "flat": cannot reshape 48 elements into 50
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.reshape %x {layer_name = "flat"} : (tensor<1x4x4x3xf32>) -> tensor<1x50xf32>
  func.return
}

// -----

// reshape: a result element type other than the input's.
// CHECK: synap.reshape "flat": result #0 element type f32 does not match operand #0 element type i32
func.func @f(%x: tensor<1x4x4x3xi32>) {
  %0 = synap.reshape %x {layer_name = "flat"} : (tensor<1x4x4x3xi32>) -> tensor<1x48xf32>
  func.return
}

// -----

// transpose: a permutation with too few entries.
// CHECK: synap.transpose "perm": perm [0, 1] is not a permutation of 4 dimensions
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.transpose %x {layer_name = "perm", perm = array<i64: 0, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// transpose: a repeated entry.
// CHECK: synap.transpose "perm": perm [0, 0, 1, 2] is not a permutation of 4 dimensions
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.transpose %x {layer_name = "perm", perm = array<i64: 0, 0, 1, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// transpose: an out-of-range entry.
// CHECK: synap.transpose "perm": perm [0, 1, 2, 4] is not a permutation of 4 dimensions
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.transpose %x {layer_name = "perm", perm = array<i64: 0, 1, 2, 4>} : (tensor<1x8x8x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// pad: pads with fewer than two values per dimension.
// CHECK: synap.pad "pad": pads needs 8 values, got 4
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.pad %x {layer_name = "pad", pads = array<i64: 0, 0, 1, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// pad: a negative pad.
// CHECK: synap.pad "pad": pads must be >= 0, got [0, 0, -1, 0, 0, 0, 0, 0]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.pad %x {layer_name = "pad", pads = array<i64: 0, 0, -1, 0, 0, 0, 0, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x7x8x3xf32>
  func.return
}

// -----

// pad: reflect padding before a dimension as large as the dimension.
// CHECK: synap.pad "reflect": reflect padding of dimension 3 must be < its size 3
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.pad %x {layer_name = "reflect", pads = array<i64: 0, 0, 0, 0, 0, 0, 3, 0>, mode = #synap<pad_mode reflect>} : (tensor<1x8x8x3xf32>) -> tensor<1x8x8x6xf32>
  func.return
}

// -----

// pad: reflect padding after a dimension larger than the dimension.
// CHECK: synap.pad "reflect": reflect padding of dimension 1 must be < its size 8
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.pad %x {layer_name = "reflect", pads = array<i64: 0, 0, 0, 9, 0, 0, 0, 0>, mode = #synap<pad_mode reflect>} : (tensor<1x8x8x3xf32>) -> tensor<1x17x8x3xf32>
  func.return
}

// -----

// pad: a result shape other than the padded one.
// CHECK: synap.pad "pad": result #0 shape [1, 8, 8, 3] should be [1, 10, 10, 3]
func.func @f(%x: tensor<1x8x8x3xf32>) {
  %0 = synap.pad %x {layer_name = "pad", pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// tile: multiples with fewer values than the input rank.
// CHECK: synap.tile "tile": multiples has 1 values for rank 2
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.tile %x {layer_name = "tile", multiples = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// tile: a zero multiple.
// CHECK: synap.tile "tile": multiples must be >= 1, got [0, 1]
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.tile %x {layer_name = "tile", multiples = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<0x3xf32>
  func.return
}

// -----

// tile: a result shape other than the tiled one.
// CHECK: synap.tile "tile": result #0 shape [2, 3] should be [4, 9]
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.tile %x {layer_name = "tile", multiples = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// broadcast_to: a target smaller than the input.
// CHECK: synap.broadcast_to "bc": shape [3] does not broadcast to [1]
func.func @f(%x: tensor<3xf32>) {
  %0 = synap.broadcast_to %x {layer_name = "bc"} : (tensor<3xf32>) -> tensor<1xf32>
  func.return
}

// -----

// broadcast_to: a target of lower rank.
// CHECK: synap.broadcast_to "bc": shape [2, 3] does not broadcast to [3]
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.broadcast_to %x {layer_name = "bc"} : (tensor<2x3xf32>) -> tensor<3xf32>
  func.return
}

// -----

// broadcast_to: sizes that do not broadcast at all.
// CHECK: synap.broadcast_to "bc": shapes [[3], [4]] are not broadcast-compatible
func.func @f(%x: tensor<3xf32>) {
  %0 = synap.broadcast_to %x {layer_name = "bc"} : (tensor<3xf32>) -> tensor<4xf32>
  func.return
}

// -----

// gather: an axis past the last dimension.
// CHECK: synap.gather "g": axis 2 is out of range for rank 2
func.func @f(%d: tensor<10x4xf32>, %i: tensor<5xi32>) {
  %0 = synap.gather %d, %i {layer_name = "g", axis = 2 : i64} : (tensor<10x4xf32>, tensor<5xi32>) -> tensor<10x5xf32>
  func.return
}

// -----

// gather: float indices.
// CHECK: synap.gather "g": indices must be integers, got f32
func.func @f(%d: tensor<10x4xf32>, %i: tensor<5xf32>) {
  %0 = synap.gather %d, %i {layer_name = "g"} : (tensor<10x4xf32>, tensor<5xf32>) -> tensor<5x4xf32>
  func.return
}

// -----

// gather: quantized indices.
// CHECK: synap.gather "g": indices must be integers, got !quant.uniform<i8:f32, 0.5>
func.func @f(%d: tensor<10x4xf32>, %i: tensor<5x!quant.uniform<i8:f32, 0.5>>) {
  %0 = synap.gather %d, %i {layer_name = "g"} : (tensor<10x4xf32>, tensor<5x!quant.uniform<i8:f32, 0.5>>) -> tensor<5x4xf32>
  func.return
}

// -----

// gather: a result shape other than data[:axis] + indices + data[axis+1:].
// CHECK: synap.gather "g": result #0 shape [5, 10] should be [10, 5]
func.func @f(%d: tensor<10x4xf32>, %i: tensor<5xi32>) {
  %0 = synap.gather %d, %i {layer_name = "g", axis = 1 : i64} : (tensor<10x4xf32>, tensor<5xi32>) -> tensor<5x10xf32>
  func.return
}

// -----

// depth_to_space: the input is not rank 4.
// CHECK: synap.depth_to_space "d2s": input must have rank 4, got shape [2, 3, 8]
func.func @f(%x: tensor<2x3x8xf32>) {
  %0 = synap.depth_to_space %x {layer_name = "d2s", block_size = 2 : i64} : (tensor<2x3x8xf32>) -> tensor<4x6x2xf32>
  func.return
}

// -----

// depth_to_space: a zero block size.
// CHECK: synap.depth_to_space "d2s": block size must be >= 1, got 0
func.func @f(%x: tensor<1x2x3x8xf32>) {
  %0 = synap.depth_to_space %x {layer_name = "d2s", block_size = 0 : i64} : (tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  func.return
}

// -----

// depth_to_space: channels not divisible by the block size squared.
// CHECK: synap.depth_to_space "d2s": channels (6) must be divisible by block size squared (4)
func.func @f(%x: tensor<1x2x3x6xf32>) {
  %0 = synap.depth_to_space %x {layer_name = "d2s", block_size = 2 : i64} : (tensor<1x2x3x6xf32>) -> tensor<1x4x6x1xf32>
  func.return
}

// -----

// depth_to_space: a result shape other than the rearranged one.
// CHECK: synap.depth_to_space "d2s": result #0 shape [1, 2, 3, 8] should be [1, 4, 6, 2]
func.func @f(%x: tensor<1x2x3x8xf32>) {
  %0 = synap.depth_to_space %x {layer_name = "d2s", block_size = 2 : i64, mode = #synap<depth_to_space_mode crd>} : (tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  func.return
}

// -----

// depth_to_space: block_size is required (xDSL's own message).
// CHECK: property 'block_size' expected in operation 'synap.depth_to_space'
func.func @f(%x: tensor<1x2x3x8xf32>) {
  %0 = synap.depth_to_space %x : (tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  func.return
}

// -----

// space_to_depth: the input is not rank 4.
// CHECK: synap.space_to_depth "s2d": input must have rank 4, got shape [1, 1, 4, 6, 2]
func.func @f(%x: tensor<1x1x4x6x2xf32>) {
  %0 = synap.space_to_depth %x {layer_name = "s2d", block_size = 2 : i64} : (tensor<1x1x4x6x2xf32>) -> tensor<1x2x3x8xf32>
  func.return
}

// -----

// space_to_depth: a negative block size.
// CHECK: synap.space_to_depth "s2d": block size must be >= 1, got -1
func.func @f(%x: tensor<1x4x6x2xf32>) {
  %0 = synap.space_to_depth %x {layer_name = "s2d", block_size = -1 : i64} : (tensor<1x4x6x2xf32>) -> tensor<1x4x6x2xf32>
  func.return
}

// -----

// space_to_depth: a height not divisible by the block size.
// CHECK: synap.space_to_depth "s2d": height (5) and width (6) must be divisible by block size (2)
func.func @f(%x: tensor<1x5x6x2xf32>) {
  %0 = synap.space_to_depth %x {layer_name = "s2d", block_size = 2 : i64} : (tensor<1x5x6x2xf32>) -> tensor<1x2x3x8xf32>
  func.return
}

// -----

// space_to_depth: a result shape other than the rearranged one.
// CHECK: synap.space_to_depth "s2d": result #0 shape [1, 4, 6, 2] should be [1, 2, 3, 8]
func.func @f(%x: tensor<1x4x6x2xf32>) {
  %0 = synap.space_to_depth %x {layer_name = "s2d", block_size = 2 : i64} : (tensor<1x4x6x2xf32>) -> tensor<1x4x6x2xf32>
  func.return
}

// -----

// concat: every input is of input #0's kind.
// CHECK: synap.concat "cat": operand element types f32 and i8 differ
func.func @f(%a: tensor<2xf32>, %b: tensor<2xi8>) {
  %0 = synap.concat %a, %b {layer_name = "cat", axis = 0 : i64} : (tensor<2xf32>, tensor<2xi8>) -> tensor<4xf32>
  func.return
}

// -----

// pad: symmetric padding may repeat the whole dimension but not more.
// CHECK: synap.pad "sym": symmetric padding of dimension 0 must be <= its size 2
func.func @f(%x: tensor<2xf32>) {
  %0 = synap.pad %x {layer_name = "sym", pads = array<i64: 3, 0>, mode = #synap<pad_mode symmetric>} : (tensor<2xf32>) -> tensor<5xf32>
  func.return
}
