// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of the ops of dialects/synap/conversion.py (cast, quantize,
// dequantize): their element type rules, the same-shape rule, and the generic checks of
// SynapOp.verify_ in base.py (element kinds may differ here by design).

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// A non-tensor operand is rejected by the IRDL operand constraint.
// CHECK: memref<2x3xf32> should be of base attribute tensor
func.func @f(%x: memref<2x3xf32>) {
  %0 = synap.cast %x : (memref<2x3xf32>) -> tensor<2x3xi32>
  func.return
}

// -----

// A dynamic operand shape.
// CHECK: synap.cast "cast": operand #0 must have a static shape, got tensor<?x3xf32>
func.func @f(%x: tensor<?x3xf32>) {
  %0 = synap.cast %x {layer_name = "cast"} : (tensor<?x3xf32>) -> tensor<?x3xi32>
  func.return
}

// -----

// A dynamic result shape.
// CHECK: synap.quantize "q": result #0 must have a static shape, got tensor<?x3x!quant.uniform<u8:f32, 0.0235:128>>
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.quantize %x {layer_name = "q"} : (tensor<2x3xf32>) -> tensor<?x3x!quant.uniform<u8:f32, 0.0235:128>>
  func.return
}

// -----

// An unsupported element type (index).
// CHECK: synap.cast "cast": result #0 has unsupported element type index
func.func @f(%x: tensor<2x3xi32>) {
  %0 = synap.cast %x {layer_name = "cast"} : (tensor<2x3xi32>) -> tensor<2x3xindex>
  func.return
}

// -----

// cast: a result shape other than the input's.
// CHECK: synap.cast "cast": result #0 shape [6] should be [2, 3]
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.cast %x {layer_name = "cast"} : (tensor<2x3xf32>) -> tensor<6xi32>
  func.return
}

// -----

// quantize: a result shape other than the input's.
// CHECK: synap.quantize "quantize": result #0 shape [6] should be [2, 3]
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.quantize %x {layer_name = "quantize"} : (tensor<2x3xf32>) -> tensor<6x!quant.uniform<u8:f32, 0.0235:128>>
  func.return
}

// -----

// dequantize: a result shape other than the input's.
// CHECK: synap.dequantize "dequantize": result #0 shape [6] should be [2, 3]
func.func @f(%x: tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>) {
  %0 = synap.dequantize %x {layer_name = "dequantize"} : (tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<6xf32>
  func.return
}

// -----

// cast: a quantized input.
// CHECK: synap.cast "cast": cast does not take quantized types; use quantize or dequantize
func.func @f(%x: tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>) {
  %0 = synap.cast %x {layer_name = "cast"} : (tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<2x3xf32>
  func.return
}

// -----

// cast: a quantized result.
// CHECK: synap.cast @3: cast does not take quantized types; use quantize or dequantize
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.cast %x {layer_index = 3 : i64} : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>
  func.return
}

// -----

// quantize: a float result.
// CHECK: synap.quantize "q": result must be quantized, got f16
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.quantize %x {layer_name = "q"} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  func.return
}

// -----

// quantize: an integer result.
// CHECK: synap.quantize "q": result must be quantized, got i8
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.quantize %x {layer_name = "q"} : (tensor<2x3xf32>) -> tensor<2x3xi8>
  func.return
}

// -----

// quantize: an integer input.
// CHECK: synap.quantize "q": input must be float or quantized, got i32
func.func @f(%x: tensor<2x3xi32>) {
  %0 = synap.quantize %x {layer_name = "q"} : (tensor<2x3xi32>) -> tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>
  func.return
}

// -----

// dequantize: a float input.
// CHECK: synap.dequantize "dq": input must be quantized, got f32
func.func @f(%x: tensor<2x3xf32>) {
  %0 = synap.dequantize %x {layer_name = "dq"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// dequantize: an integer input.
// CHECK: synap.dequantize "dq": input must be quantized, got i8
func.func @f(%x: tensor<2x3xi8>) {
  %0 = synap.dequantize %x {layer_name = "dq"} : (tensor<2x3xi8>) -> tensor<2x3xf32>
  func.return
}

// -----

// dequantize: an integer result.
// CHECK: synap.dequantize "dq": result must be float, got i32
func.func @f(%x: tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>) {
  %0 = synap.dequantize %x {layer_name = "dq"} : (tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<2x3xi32>
  func.return
}

// -----

// dequantize: a quantized result (requantization is quantize's job).
// CHECK: synap.dequantize "dq": result must be float, got !quant.uniform<u8:f32, 0.0235:128>
func.func @f(%x: tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>) {
  %0 = synap.dequantize %x {layer_name = "dq"} : (tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<2x3x!quant.uniform<u8:f32, 0.0235:128>>
  func.return
}
