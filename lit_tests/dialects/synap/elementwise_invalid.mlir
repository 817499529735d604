// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of the ops of dialects/synap/elementwise.py (add, sub, mul, div,
// maximum, minimum, pow, squared_difference, prelu): broadcasting (shapes.broadcast and
// broadcast_to), the operand element type check, pow's float check, and the generic checks
// of SynapOp.verify_ in base.py.

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// A non-tensor operand is rejected by the IRDL operand constraint.
// CHECK: memref<2x3xf32> should be of base attribute tensor
func.func @f(%a: tensor<2x3xf32>, %b: memref<2x3xf32>) {
  %0 = synap.add %a, %b : (tensor<2x3xf32>, memref<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// A dynamic operand shape.
// CHECK: synap.add "add": operand #1 must have a static shape, got tensor<?x3xf32>
func.func @f(%a: tensor<2x3xf32>, %b: tensor<?x3xf32>) {
  %0 = synap.add %a, %b {layer_name = "add"} : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// A dynamic result shape.
// CHECK: synap.add "add": result #0 must have a static shape, got tensor<?x3xf32>
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  %0 = synap.add %a, %b {layer_name = "add"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  func.return
}

// -----

// An unsupported element type (index).
// CHECK: synap.add "add": operand #0 has unsupported element type index
func.func @f(%a: tensor<2x3xindex>, %b: tensor<2x3xindex>) {
  %0 = synap.add %a, %b {layer_name = "add"} : (tensor<2x3xindex>, tensor<2x3xindex>) -> tensor<2x3xindex>
  func.return
}

// -----

// A quantized result of float operands.
// CHECK: synap.add "add": result #0 element type !quant.uniform<u8:f32, 0.5:3> does not match operand #0 element type f32
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  %0 = synap.add %a, %b {layer_name = "add"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<u8:f32, 0.5:3>>
  func.return
}

// -----

// A result element type other than the operands' (i8 vs i32).
// CHECK: synap.add "add": result #0 element type i8 does not match operand #0 element type i32
func.func @f(%a: tensor<2x3xi32>, %b: tensor<2x3xi32>) {
  %0 = synap.add %a, %b {layer_name = "add"} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi8>
  func.return
}

// -----

// A result shape that differs from the broadcast shape.
// CHECK: synap.add "add": result #0 shape [3] should be [2, 3]
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = synap.add %a, %b {layer_name = "add"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

// add: operand shapes that do not broadcast.
// CHECK: synap.add "add": shapes [[2, 3], [2]] are not broadcast-compatible
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  %0 = synap.add %a, %b {layer_name = "add"} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// add: operands of different element types (f32 and f16).
// CHECK: synap.add @0: operand element types f32 and f16 differ
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  %0 = synap.add %a, %b {layer_index = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  func.return
}

// -----

// sub: operand shapes that do not broadcast.
// CHECK: synap.sub "sub": shapes [[2, 3], [2]] are not broadcast-compatible
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  %0 = synap.sub %a, %b {layer_name = "sub"} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// sub: operands of different element types (!quant.uniform<u8:f32, 0.25> and f32).
// CHECK: synap.sub @1: operand element types !quant.uniform<u8:f32, 0.25> and f32 differ
func.func @f(%a: tensor<2x3x!quant.uniform<u8:f32, 0.25>>, %b: tensor<2x3xf32>) {
  %0 = synap.sub %a, %b {layer_index = 1 : i64} : (tensor<2x3x!quant.uniform<u8:f32, 0.25>>, tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<u8:f32, 0.25>>
  func.return
}

// -----

// mul: operand shapes that do not broadcast.
// CHECK: synap.mul "mul": shapes [[2, 3], [2]] are not broadcast-compatible
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  %0 = synap.mul %a, %b {layer_name = "mul"} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// mul: operands of different element types (i32 and i8).
// CHECK: synap.mul @2: operand element types i32 and i8 differ
func.func @f(%a: tensor<2x3xi32>, %b: tensor<2x3xi8>) {
  %0 = synap.mul %a, %b {layer_index = 2 : i64} : (tensor<2x3xi32>, tensor<2x3xi8>) -> tensor<2x3xi32>
  func.return
}

// -----

// div: operand shapes that do not broadcast.
// CHECK: synap.div "div": shapes [[2, 3], [2]] are not broadcast-compatible
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  %0 = synap.div %a, %b {layer_name = "div"} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// div: operands of different element types (f32 and !quant.uniform<u8:f32, 0.5:3>).
// CHECK: synap.div @3: operand element types f32 and !quant.uniform<u8:f32, 0.5:3> differ
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3x!quant.uniform<u8:f32, 0.5:3>>) {
  %0 = synap.div %a, %b {layer_index = 3 : i64} : (tensor<2x3xf32>, tensor<2x3x!quant.uniform<u8:f32, 0.5:3>>) -> tensor<2x3xf32>
  func.return
}

// -----

// maximum: operand shapes that do not broadcast.
// CHECK: synap.maximum "maximum": shapes [[2, 3], [2]] are not broadcast-compatible
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  %0 = synap.maximum %a, %b {layer_name = "maximum"} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// maximum: operands of different element types (bf16 and f32).
// CHECK: synap.maximum @4: operand element types bf16 and f32 differ
func.func @f(%a: tensor<2x3xbf16>, %b: tensor<2x3xf32>) {
  %0 = synap.maximum %a, %b {layer_index = 4 : i64} : (tensor<2x3xbf16>, tensor<2x3xf32>) -> tensor<2x3xbf16>
  func.return
}

// -----

// minimum: operand shapes that do not broadcast.
// CHECK: synap.minimum "minimum": shapes [[2, 3], [2]] are not broadcast-compatible
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  %0 = synap.minimum %a, %b {layer_name = "minimum"} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// minimum: operands of different element types (i32 and f32).
// CHECK: synap.minimum @5: operand element types i32 and f32 differ
func.func @f(%a: tensor<2x3xi32>, %b: tensor<2x3xf32>) {
  %0 = synap.minimum %a, %b {layer_index = 5 : i64} : (tensor<2x3xi32>, tensor<2x3xf32>) -> tensor<2x3xi32>
  func.return
}

// -----

// pow: operand shapes that do not broadcast.
// CHECK: synap.pow "pow": shapes [[2, 3], [2]] are not broadcast-compatible
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  %0 = synap.pow %a, %b {layer_name = "pow"} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// pow: operands of different element types (f64 and f32).
// CHECK: synap.pow @6: operand element types f64 and f32 differ
func.func @f(%a: tensor<2x3xf64>, %b: tensor<2x3xf32>) {
  %0 = synap.pow %a, %b {layer_index = 6 : i64} : (tensor<2x3xf64>, tensor<2x3xf32>) -> tensor<2x3xf64>
  func.return
}

// -----

// squared_difference: operand shapes that do not broadcast.
// CHECK: synap.squared_difference "squared_difference": shapes [[2, 3], [2]] are not broadcast-compatible
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  %0 = synap.squared_difference %a, %b {layer_name = "squared_difference"} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// squared_difference: operands of different element types (i16 and i8).
// CHECK: synap.squared_difference @7: operand element types i16 and i8 differ
func.func @f(%a: tensor<2x3xi16>, %b: tensor<2x3xi8>) {
  %0 = synap.squared_difference %a, %b {layer_index = 7 : i64} : (tensor<2x3xi16>, tensor<2x3xi8>) -> tensor<2x3xi16>
  func.return
}

// -----

// add: operand shapes that do not broadcast in a leading dimension.
// CHECK: synap.add: shapes [[4, 1, 3], [2, 5, 3]] are not broadcast-compatible
func.func @f(%a: tensor<4x1x3xf32>, %b: tensor<2x5x3xf32>) {
  %0 = synap.add %a, %b : (tensor<4x1x3xf32>, tensor<2x5x3xf32>) -> tensor<4x5x3xf32>
  func.return
}

// -----

// pow: boolean operands.
// CHECK: synap.pow "pow": pow needs float or integer operands, got i1
func.func @f(%a: tensor<2x3xi1>, %b: tensor<2x3xi1>) {
  %0 = synap.pow %a, %b {layer_name = "pow"} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return
}

// -----

// pow: quantized operands.
// CHECK: synap.pow "pow": pow needs float or integer operands, got !quant.uniform<u8:f32, 0.5:3>
func.func @f(%a: tensor<2x3x!quant.uniform<u8:f32, 0.5:3>>, %b: tensor<2x3x!quant.uniform<u8:f32, 0.5:3>>) {
  %0 = synap.pow %a, %b {layer_name = "pow"} : (tensor<2x3x!quant.uniform<u8:f32, 0.5:3>>, tensor<2x3x!quant.uniform<u8:f32, 0.5:3>>) -> tensor<2x3x!quant.uniform<u8:f32, 0.5:3>>
  func.return
}

// -----

// prelu: a slope whose shape does not broadcast against the input.
// CHECK: synap.prelu "prelu": shapes [[1, 1, 1, 4], [1, 4, 4, 3]] are not broadcast-compatible
func.func @f(%x: tensor<1x4x4x3xf32>, %s: tensor<1x1x1x4xf32>) {
  %0 = synap.prelu %x, %s {layer_name = "prelu"} : (tensor<1x4x4x3xf32>, tensor<1x1x1x4xf32>) -> tensor<1x4x4x3xf32>
  func.return
}

// -----

// prelu: a slope of higher rank than the input.
// CHECK: synap.prelu "prelu": shape [2, 1, 1, 1, 3] does not broadcast to [1, 4, 4, 3]
func.func @f(%x: tensor<1x4x4x3xf32>, %s: tensor<2x1x1x1x3xf32>) {
  %0 = synap.prelu %x, %s {layer_name = "prelu"} : (tensor<1x4x4x3xf32>, tensor<2x1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  func.return
}

// -----

// prelu: a slope that would enlarge a dimension of the input.
// CHECK: synap.prelu "prelu": shape [1, 4, 1, 1] does not broadcast to [1, 1, 4, 3]
func.func @f(%x: tensor<1x1x4x3xf32>, %s: tensor<1x4x1x1xf32>) {
  %0 = synap.prelu %x, %s {layer_name = "prelu"} : (tensor<1x1x4x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x1x4x3xf32>
  func.return
}

// -----

// prelu: a result shape other than the input's.
// CHECK: synap.prelu "prelu": result #0 shape [1, 4, 4, 1] should be [1, 4, 4, 3]
func.func @f(%x: tensor<1x4x4x3xf32>, %s: tensor<3xf32>) {
  %0 = synap.prelu %x, %s {layer_name = "prelu"} : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x1xf32>
  func.return
}

// -----

// prelu: a result element type other than the input's.
// CHECK: synap.prelu "prelu": result #0 element type f16 does not match operand #0 element type f32
func.func @f(%x: tensor<1x4x4x3xf32>, %s: tensor<3xf32>) {
  %0 = synap.prelu %x, %s {layer_name = "prelu"} : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf16>
  func.return
}

// -----

// prelu: the slope is of the input's kind.
// CHECK: synap.prelu "p": operand element types f32 and i32 differ
func.func @f(%x: tensor<1x2x2x3xf32>, %s: tensor<3xi32>) {
  %0 = synap.prelu %x, %s {layer_name = "p"} : (tensor<1x2x2x3xf32>, tensor<3xi32>) -> tensor<1x2x2x3xf32>
  func.return
}
