// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of synap.constant (dialects/synap/constant.py): the value type
// against the result type (reachable in generic form only; the custom form takes the
// result type from the value), and the generic result checks of SynapOp.verify_ in
// base.py. Syntax errors are in constant_syntax_invalid.mlir.

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// A dynamic result shape.
// CHECK: synap.constant "w": result #0 must have a static shape, got tensor<?x3xf32>
func.func @f() {
  %0 = synap.constant {layer_name = "w"} dense_resource<w> : tensor<?x3xf32>
  func.return
}

// -----

// An unsupported element type (index).
// CHECK: synap.constant @4: result #0 has unsupported element type index
func.func @f() {
  %0 = synap.constant {layer_index = 4 : i64} dense_resource<w> : tensor<4xindex>
  func.return
}

// -----

// A per-axis quantized type with one scale too many for its axis.
// CHECK: synap.constant: result #0: 3 scales for quantized axis 0 of size 2
func.func @f() {
  %0 = synap.constant dense_resource<w> : tensor<2x!quant.uniform<i8:f32:0, {0.5,0.25,0.125}>>
  func.return
}

// -----

// A non-tensor value and result (a vector) fails the IRDL result constraint.
// CHECK: result 'result' at position 0 does not verify:
// CHECK-NEXT: vector<4xf32> should be of base attribute tensor
func.func @f() {
  %0 = synap.constant dense_resource<w> : vector<4xf32>
  func.return
}

// -----

// Generic form: a value type other than the result type.
// CHECK: synap.constant "w": value type tensor<4xf32> does not match result type tensor<5xf32>
func.func @f() {
  %0 = "synap.constant"() <{value = dense_resource<w> : tensor<4xf32>}> {layer_name = "w"} : () -> tensor<5xf32>
  func.return
}

// -----

// Generic form: a value element type other than the result's.
// CHECK: synap.constant: value type tensor<4x!quant.uniform<u8:f32, 0.5>> does not match result type tensor<4xi8>
func.func @f() {
  %0 = "synap.constant"() <{value = dense_resource<w> : tensor<4x!quant.uniform<u8:f32, 0.5>>}> : () -> tensor<4xi8>
  func.return
}

// -----

// Generic form: no value (xDSL's own message).
// CHECK: property 'value' expected in operation 'synap.constant'
func.func @f() {
  %0 = "synap.constant"() : () -> tensor<4xf32>
  func.return
}

// -----

// Generic form: an operand (xDSL's own message).
// CHECK: Expected 0 operands, but got 1
func.func @f(%x: tensor<4xf32>) {
  %0 = "synap.constant"(%x) <{value = dense_resource<w> : tensor<4xf32>}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
