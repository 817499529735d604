// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of the ops of dialects/synap/reduce.py (reduce_mean, reduce_sum,
// reduce_max, reduce_min, reduce_prod, argmax, argmin, cumsum): the reduce / arg_reduce
// shape rules of shapes.py, the arg-reduce result type check, cumsum's axis, and the
// generic checks of SynapOp.verify_ in base.py.

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// A non-tensor operand is rejected by the IRDL operand constraint.
// CHECK: memref<1x7x7x8xf32> should be of base attribute tensor
func.func @f(%x: memref<1x7x7x8xf32>) {
  %0 = synap.reduce_mean %x {axes = array<i64: 1, 2>} : (memref<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// A dynamic operand shape.
// CHECK: synap.reduce_mean "gap": operand #0 must have a static shape, got tensor<?x7x7x8xf32>
func.func @f(%x: tensor<?x7x7x8xf32>) {
  %0 = synap.reduce_mean %x {layer_name = "gap", axes = array<i64: 1, 2>} : (tensor<?x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// A dynamic result shape.
// CHECK: synap.reduce_mean "gap": result #0 must have a static shape, got tensor<1x?xf32>
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_mean %x {layer_name = "gap", axes = array<i64: 1, 2>} : (tensor<1x7x7x8xf32>) -> tensor<1x?xf32>
  func.return
}

// -----

// An unsupported element type (index).
// CHECK: synap.reduce_mean "gap": operand #0 has unsupported element type index
func.func @f(%x: tensor<1x7x7x8xindex>) {
  %0 = synap.reduce_mean %x {layer_name = "gap", axes = array<i64: 1, 2>} : (tensor<1x7x7x8xindex>) -> tensor<1x8xindex>
  func.return
}

// -----

// A quantized result of a float input.
// CHECK: synap.reduce_mean "gap": result #0 element type !quant.uniform<u8:f32, 0.1> does not match operand #0 element type f32
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_mean %x {layer_name = "gap", axes = array<i64: 1, 2>} : (tensor<1x7x7x8xf32>) -> tensor<1x8x!quant.uniform<u8:f32, 0.1>>
  func.return
}

// -----

// A result shape that ignores keep_dims.
// CHECK: synap.reduce_mean "gap": result #0 shape [1, 8] should be [1, 1, 1, 8]
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_mean %x {layer_name = "gap", axes = array<i64: 1, 2>, keep_dims = true} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// A result shape that keeps the reduced dimensions without keep_dims.
// CHECK: synap.reduce_mean "gap": result #0 shape [1, 1, 1, 8] should be [1, 8]
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_mean %x {layer_name = "gap", axes = array<i64: 1, 2>} : (tensor<1x7x7x8xf32>) -> tensor<1x1x1x8xf32>
  func.return
}

// -----

// reduce_mean: an axis past the last dimension.
// CHECK: synap.reduce_mean "reduce_mean": axis 4 is out of range for rank 4
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_mean %x {layer_name = "reduce_mean", axes = array<i64: 1, 4>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_mean: a negative axis before the first dimension.
// CHECK: synap.reduce_mean "reduce_mean": axis -5 is out of range for rank 4
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_mean %x {layer_name = "reduce_mean", axes = array<i64: -5>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_mean: the same axis twice (once negative).
// CHECK: synap.reduce_mean "reduce_mean": axes [1, -3] repeat an axis
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_mean %x {layer_name = "reduce_mean", axes = array<i64: 1, -3>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_sum: an axis past the last dimension.
// CHECK: synap.reduce_sum "reduce_sum": axis 4 is out of range for rank 4
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_sum %x {layer_name = "reduce_sum", axes = array<i64: 1, 4>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_sum: a negative axis before the first dimension.
// CHECK: synap.reduce_sum "reduce_sum": axis -5 is out of range for rank 4
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_sum %x {layer_name = "reduce_sum", axes = array<i64: -5>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_sum: the same axis twice (once negative).
// CHECK: synap.reduce_sum "reduce_sum": axes [1, -3] repeat an axis
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_sum %x {layer_name = "reduce_sum", axes = array<i64: 1, -3>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_max: an axis past the last dimension.
// CHECK: synap.reduce_max "reduce_max": axis 4 is out of range for rank 4
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_max %x {layer_name = "reduce_max", axes = array<i64: 1, 4>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_max: a negative axis before the first dimension.
// CHECK: synap.reduce_max "reduce_max": axis -5 is out of range for rank 4
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_max %x {layer_name = "reduce_max", axes = array<i64: -5>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_max: the same axis twice (once negative).
// CHECK: synap.reduce_max "reduce_max": axes [1, -3] repeat an axis
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_max %x {layer_name = "reduce_max", axes = array<i64: 1, -3>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_min: an axis past the last dimension.
// CHECK: synap.reduce_min "reduce_min": axis 4 is out of range for rank 4
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_min %x {layer_name = "reduce_min", axes = array<i64: 1, 4>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_min: a negative axis before the first dimension.
// CHECK: synap.reduce_min "reduce_min": axis -5 is out of range for rank 4
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_min %x {layer_name = "reduce_min", axes = array<i64: -5>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_min: the same axis twice (once negative).
// CHECK: synap.reduce_min "reduce_min": axes [1, -3] repeat an axis
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_min %x {layer_name = "reduce_min", axes = array<i64: 1, -3>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// reduce_sum: axes is required (xDSL's own message).
// CHECK: property 'axes' expected in operation 'synap.reduce_sum'
func.func @f(%x: tensor<1x7x7x8xf32>) {
  %0 = synap.reduce_sum %x : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  func.return
}

// -----

// argmax: an axis past the last dimension.
// CHECK: synap.argmax "argmax": axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmax %x {layer_name = "argmax", axis = 2 : i64} : (tensor<2x10xf32>) -> tensor<2xi32>
  func.return
}

// -----

// argmax: a negative axis before the first dimension.
// CHECK: synap.argmax "argmax": axis -3 is out of range for rank 2
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmax %x {layer_name = "argmax", axis = -3 : i64} : (tensor<2x10xf32>) -> tensor<2xi32>
  func.return
}

// -----

// argmax: a float result.
// CHECK: synap.argmax "argmax": result element type must be i32 or i64, got f32
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmax %x {layer_name = "argmax", axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2xf32>
  func.return
}

// -----

// argmax: a narrow integer result.
// CHECK: synap.argmax "argmax": result element type must be i32 or i64, got i8
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmax %x {layer_name = "argmax", axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2xi8>
  func.return
}

// -----

// argmax: a result shape without the keep_dims dimension.
// CHECK: synap.argmax "argmax": result #0 shape [2] should be [2, 1]
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmax %x {layer_name = "argmax", axis = 1 : i64, keep_dims = true} : (tensor<2x10xf32>) -> tensor<2xi64>
  func.return
}

// -----

// argmin: an axis past the last dimension.
// CHECK: synap.argmin "argmin": axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmin %x {layer_name = "argmin", axis = 2 : i64} : (tensor<2x10xf32>) -> tensor<2xi32>
  func.return
}

// -----

// argmin: a negative axis before the first dimension.
// CHECK: synap.argmin "argmin": axis -3 is out of range for rank 2
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmin %x {layer_name = "argmin", axis = -3 : i64} : (tensor<2x10xf32>) -> tensor<2xi32>
  func.return
}

// -----

// argmin: a float result.
// CHECK: synap.argmin "argmin": result element type must be i32 or i64, got f32
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmin %x {layer_name = "argmin", axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2xf32>
  func.return
}

// -----

// argmin: a narrow integer result.
// CHECK: synap.argmin "argmin": result element type must be i32 or i64, got i8
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmin %x {layer_name = "argmin", axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2xi8>
  func.return
}

// -----

// argmin: a result shape without the keep_dims dimension.
// CHECK: synap.argmin "argmin": result #0 shape [2] should be [2, 1]
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmin %x {layer_name = "argmin", axis = 1 : i64, keep_dims = true} : (tensor<2x10xf32>) -> tensor<2xi64>
  func.return
}

// -----

// argmax: a quantized result (it is an index, not a value).
// CHECK: synap.argmax @5: result element type must be i32 or i64, got !quant.uniform<u8:f32, 0.1>
func.func @f(%x: tensor<2x10x!quant.uniform<u8:f32, 0.1>>) {
  %0 = synap.argmax %x {layer_index = 5 : i64, axis = 1 : i64} : (tensor<2x10x!quant.uniform<u8:f32, 0.1>>) -> tensor<2x!quant.uniform<u8:f32, 0.1>>
  func.return
}

// -----

// argmax: an unsupported result element type (index) fails the generic check first.
// CHECK: synap.argmax: result #0 has unsupported element type index
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmax %x {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2xindex>
  func.return
}

// -----

// argmin: axis is required (xDSL's own message).
// CHECK: property 'axis' expected in operation 'synap.argmin'
func.func @f(%x: tensor<2x10xf32>) {
  %0 = synap.argmin %x : (tensor<2x10xf32>) -> tensor<2xi32>
  func.return
}

// -----

// reduce_prod: the reduce shape rule (an axis named twice).
// CHECK: synap.reduce_prod "rp": axes [1, -1] repeat an axis
func.func @f(%x: tensor<2x5xf32>) {
  %0 = synap.reduce_prod %x {layer_name = "rp", axes = array<i64: 1, -1>} : (tensor<2x5xf32>) -> tensor<2xf32>
  func.return
}

// -----

// cumsum: an axis beyond the input's rank.
// CHECK: synap.cumsum "cs": axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x5xi32>) {
  %0 = synap.cumsum %x {layer_name = "cs", axis = 2 : i64} : (tensor<2x5xi32>) -> tensor<2x5xi32>
  func.return
}

// -----

// cumsum: the result has the input's shape.
// CHECK: synap.cumsum "cs": result #0 shape [2, 4] should be [2, 5]
func.func @f(%x: tensor<2x5xf32>) {
  %0 = synap.cumsum %x {layer_name = "cs", axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// cumsum: axis is required (xDSL's own message).
// CHECK: property 'axis' expected in operation 'synap.cumsum'
func.func @f(%x: tensor<2x5xf32>) {
  %0 = synap.cumsum %x {layer_name = "cs"} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return
}
