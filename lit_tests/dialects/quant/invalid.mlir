// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every error of UniformQuantizedType.verify and verify_quantized_tensor
// (dialects/quant.py). A bad type is rejected while it is parsed, so its message comes
// alone (no location, no IR dump). Unreachable from text, since the parser always builds
// them consistently: "scales must be stored as f64", "zero points must be stored as i64",
// "N scales but M zero points" and "a per-tensor type has one scale, got N".

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// A storage type that is not u8, i8, u16, i16 or i32.
// CHECK: quant.uniform: storage type 'u4' is not one of u8, i8, u16, i16, i32
func.func @f(%a: tensor<4x!quant.uniform<u4:f32, 0.5>>) {
  func.return
}

// -----

// A signed-integer spelling MLIR's builtin types use is not a storage type either.
// CHECK: quant.uniform: storage type 'si8' is not one of u8, i8, u16, i16, i32
func.func @f(%a: tensor<4x!quant.uniform<si8:f32, 0.5>>) {
  func.return
}

// -----

// An integer expressed type.
// CHECK: quant.uniform: expressed type must be f16, bf16, f32 or f64, got i32
func.func @f(%a: tensor<4x!quant.uniform<u8:i32, 0.5>>) {
  func.return
}

// -----

// A tensor as expressed type.
// CHECK: quant.uniform: expressed type must be f16, bf16, f32 or f64, got tensor<2xf32>
func.func @f(%a: tensor<4x!quant.uniform<u8:tensor<2xf32>, 0.5>>) {
  func.return
}

// -----

// A per-axis type without any scale.
// CHECK: quant.uniform: at least one scale is required
func.func @f(%a: tensor<4x!quant.uniform<i8:f32:0, {}>>) {
  func.return
}

// -----

// A negative quantized axis.
// CHECK: quant.uniform: quantized axis must be >= 0, got -1
func.func @f(%a: tensor<4x!quant.uniform<i8:f32:-1, {0.5}>>) {
  func.return
}

// -----

// A zero scale.
// CHECK: quant.uniform: scale must be positive and finite, got 0.0 (index 0)
func.func @f(%a: tensor<4x!quant.uniform<i8:f32, 0.0>>) {
  func.return
}

// -----

// A negative scale.
// CHECK: quant.uniform: scale must be positive and finite, got -0.5 (index 0)
func.func @f(%a: tensor<4x!quant.uniform<u8:f32, -0.5:3>>) {
  func.return
}

// -----

// An infinite scale (1.0e400 overflows f64), reported with its per-axis index.
// CHECK: quant.uniform: scale must be positive and finite, got inf (index 2)
func.func @f(%a: tensor<3x!quant.uniform<i8:f32:0, {0.5,0.5,1.0e400}>>) {
  func.return
}

// -----

// An integer scale too large for f64 is infinite too (it used to crash the parser).
// CHECK: quant.uniform: scale must be positive and finite, got inf (index 0)
func.func @f(%a: tensor<4x!quant.uniform<i8:f32, 100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000>>) {
  func.return
}

// -----

// A zero point below the u8 range.
// CHECK: quant.uniform: zero point -1 is outside the u8 storage range [0, 255]
func.func @f(%a: tensor<4x!quant.uniform<u8:f32, 0.5:-1>>) {
  func.return
}

// -----

// A zero point above the i8 range, in the second channel of a per-axis type.
// CHECK: quant.uniform: zero point 128 is outside the i8 storage range [-128, 127]
func.func @f(%a: tensor<2x!quant.uniform<i8:f32:0, {0.5:1,0.5:128}>>) {
  func.return
}

// -----

// A zero point above the u16 range.
// CHECK: quant.uniform: zero point 65536 is outside the u16 storage range [0, 65535]
func.func @f(%a: tensor<4x!quant.uniform<u16:f32, 0.5:65536>>) {
  func.return
}

// -----

// A zero point below the i16 range.
// CHECK: quant.uniform: zero point -32769 is outside the i16 storage range [-32768, 32767]
func.func @f(%a: tensor<4x!quant.uniform<i16:f32, 0.5:-32769>>) {
  func.return
}

// -----

// A zero point above the i32 range.
// CHECK: quant.uniform: zero point 2147483648 is outside the i32 storage range [-2147483648, 2147483647]
func.func @f(%a: tensor<4x!quant.uniform<i32:f32, 0.5:2147483648>>) {
  func.return
}

// -----

// verify_quantized_tensor, through a synap operand: the axis does not exist.
// CHECK: synap.sigmoid: operand #0: quantized axis 1 is out of range for rank 1
func.func @f(%a: tensor<4x!quant.uniform<u8:f32:1, {0.5}>>) {
  %0 = synap.sigmoid %a : (tensor<4x!quant.uniform<u8:f32:1, {0.5}>>) -> tensor<4x!quant.uniform<u8:f32:1, {0.5}>>
  func.return
}

// -----

// verify_quantized_tensor, through a synap operand: fewer scales than the axis has indices.
// CHECK: synap.sigmoid "act": operand #0: 2 scales for quantized axis 0 of size 4
func.func @f(%a: tensor<4x!quant.uniform<u8:f32:0, {0.5,0.25}>>) {
  %0 = synap.sigmoid %a {layer_name = "act"} : (tensor<4x!quant.uniform<u8:f32:0, {0.5,0.25}>>) -> tensor<4x!quant.uniform<u8:f32, 0.5>>
  func.return
}

// -----

// verify_quantized_tensor, through a synap result: more scales than the axis has indices.
// CHECK: synap.quantize @4: result #0: 3 scales for quantized axis 1 of size 2
func.func @f(%x: tensor<1x2xf32>) {
  %0 = synap.quantize %x {layer_index = 4 : i64} : (tensor<1x2xf32>) -> tensor<1x2x!quant.uniform<i8:f32:1, {0.5,0.25,0.125}>>
  func.return
}

// -----

// verify_quantized_tensor, through the result of a constant: a rank-0 tensor has no axis 0.
// CHECK: synap.constant: result #0: quantized axis 0 is out of range for rank 0
func.func @f() {
  %0 = synap.constant dense_resource<w> : tensor<!quant.uniform<i8:f32:0, {0.5}>>
  func.return
}
