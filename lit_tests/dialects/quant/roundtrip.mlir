// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the !quant.uniform type (dialects/quant.py):
//   per tensor: !quant.uniform<storage:expressed, scale[:zero_point]>
//   per axis:   !quant.uniform<storage:expressed:axis, {scale[:zero_point],...}>
// A zero point of 0 is elided; scales print as the shortest text that parses back to the
// same f64 (always with a '.', exponent as e-05).

// One type per storage type, each with a zero point at an end of its range.
// CHECK-LABEL: func.func @per_tensor_storage(%u8: tensor<4x!quant.uniform<u8:f32, 0.0235:128>>, %i8: tensor<4x!quant.uniform<i8:f32, 0.5:-128>>, %u16: tensor<4x!quant.uniform<u16:f32, 1.5:65535>>, %i16: tensor<4x!quant.uniform<i16:f32, 3.0517578125e-05:-32768>>, %i32: tensor<4x!quant.uniform<i32:f32, 1.0e-05:-2147483648>>, %i32max: tensor<4x!quant.uniform<i32:f32, 0.25:2147483647>>) {
// CHECK-NEXT: func.return
func.func @per_tensor_storage(%u8: tensor<4x!quant.uniform<u8:f32, 0.0235:128>>, %i8: tensor<4x!quant.uniform<i8:f32, 0.5:-128>>, %u16: tensor<4x!quant.uniform<u16:f32, 1.5:65535>>, %i16: tensor<4x!quant.uniform<i16:f32, 3.0517578125e-05:-32768>>, %i32: tensor<4x!quant.uniform<i32:f32, 1.0e-05:-2147483648>>, %i32max: tensor<4x!quant.uniform<i32:f32, 0.25:2147483647>>) {
  func.return
}

// An explicit zero point of 0 and an absent one print the same (elided); -1 is kept.
// CHECK-LABEL: func.func @zero_point_elided(%a: tensor<4x!quant.uniform<u8:f32, 0.5>>, %b: tensor<4x!quant.uniform<i8:f32, 0.5>>, %c: tensor<4x!quant.uniform<i8:f32, 0.5:-1>>) {
// CHECK-NEXT: func.return
func.func @zero_point_elided(%a: tensor<4x!quant.uniform<u8:f32, 0.5:0>>, %b: tensor<4x!quant.uniform<i8:f32, 0.5>>, %c: tensor<4x!quant.uniform<i8:f32, 0.5:-1>>) {
  func.return
}

// Scales in other spellings (0.00001, 1.0E-5, an integer) print in the canonical form;
// full f64 precision is kept.
// CHECK-LABEL: func.func @scale_spelling(%a: tensor<1x!quant.uniform<u8:f32, 1.0e-05>>, %b: tensor<1x!quant.uniform<u8:f32, 1.0e-05>>, %c: tensor<1x!quant.uniform<u8:f32, 3.0517578125e-05>>, %d: tensor<1x!quant.uniform<u8:f32, 2.0>>, %e: tensor<1x!quant.uniform<u8:f32, 0.1>>, %f: tensor<1x!quant.uniform<u8:f32, 0.0001>>, %g: tensor<1x!quant.uniform<u8:f32, 1.5e+16>>, %h: tensor<1x!quant.uniform<i32:f32, 1.0e-300>>, %i: tensor<1x!quant.uniform<u8:f32, 0.00390625>>) {
// CHECK-NEXT: func.return
func.func @scale_spelling(%a: tensor<1x!quant.uniform<u8:f32, 0.00001>>, %b: tensor<1x!quant.uniform<u8:f32, 1.0E-5>>, %c: tensor<1x!quant.uniform<u8:f32, 3.0517578125e-05>>, %d: tensor<1x!quant.uniform<u8:f32, 2>>, %e: tensor<1x!quant.uniform<u8:f32, 0.1>>, %f: tensor<1x!quant.uniform<u8:f32, 1.0e-4>>, %g: tensor<1x!quant.uniform<u8:f32, 15000000000000000.0>>, %h: tensor<1x!quant.uniform<i32:f32, 1.0e-300>>, %i: tensor<1x!quant.uniform<u8:f32, 0.00390625>>) {
  func.return
}

// Expressed types other than f32.
// CHECK-LABEL: func.func @expressed_types(%f16: tensor<2x!quant.uniform<i16:f16, 3.0517578125e-05>>, %bf16: tensor<2x!quant.uniform<i8:bf16, 0.125:3>>, %f64: tensor<2x!quant.uniform<u8:f64, 0.5:1>>, %axis_f16: tensor<2x!quant.uniform<i8:f16:0, {0.5,0.25:-2}>>) {
// CHECK-NEXT: func.return
func.func @expressed_types(%f16: tensor<2x!quant.uniform<i16:f16, 3.0517578125e-05>>, %bf16: tensor<2x!quant.uniform<i8:bf16, 0.125:3>>, %f64: tensor<2x!quant.uniform<u8:f64, 0.5:1>>, %axis_f16: tensor<2x!quant.uniform<i8:f16:0, {0.5,0.25:-2}>>) {
  func.return
}

// Per-axis types: axes 0, 1 and 3, mixed zero points (0 elided, negative kept), a single
// channel, every storage type; the space after ',' inside the braces is dropped.
// CHECK-LABEL: func.func @per_axis(%a0: tensor<3x2x!quant.uniform<i8:f32:0, {0.1,0.2,0.3}>>, %a1: tensor<3x2x!quant.uniform<u8:f32:1, {0.5:128,1.0e-05:255}>>, %a3: tensor<4x1x1x2x!quant.uniform<i8:f32:3, {3.0517578125e-05:-5,0.5}>>, %i32: tensor<2x!quant.uniform<i32:f32:0, {1.0e-05:-2147483648,2.0e-05:2147483647}>>, %u16: tensor<2x!quant.uniform<u16:f32:0, {0.5:65535,0.5:1}>>, %i16: tensor<2x!quant.uniform<i16:f32:0, {0.5:-32768,0.25:32767}>>, %one: tensor<1x!quant.uniform<i8:f32:0, {0.5}>>) {
// CHECK-NEXT: func.return
func.func @per_axis(%a0: tensor<3x2x!quant.uniform<i8:f32:0, {0.1,0.2,0.3}>>, %a1: tensor<3x2x!quant.uniform<u8:f32:1, {0.5:128, 1.0e-05:255}>>, %a3: tensor<4x1x1x2x!quant.uniform<i8:f32:3, {3.0517578125e-05:-5,0.5:0}>>, %i32: tensor<2x!quant.uniform<i32:f32:0, {1.0e-05:-2147483648,2.0e-05:2147483647}>>, %u16: tensor<2x!quant.uniform<u16:f32:0, {0.5:65535,0.5:1}>>, %i16: tensor<2x!quant.uniform<i16:f32:0, {0.5:-32768,0.25:32767}>>, %one: tensor<1x!quant.uniform<i8:f32:0, {0.5}>>) {
  func.return
}

// Quantized types as op result types (per axis along axis 1 and per tensor).
// CHECK-LABEL: func.func @in_ops(
// CHECK-NEXT: %0 = synap.quantize %x : (tensor<1x3xf32>) -> tensor<1x3x!quant.uniform<i8:f32:1, {0.1,0.2:-3,0.3:127}>>
// CHECK-NEXT: %1 = synap.dequantize %0 : (tensor<1x3x!quant.uniform<i8:f32:1, {0.1,0.2:-3,0.3:127}>>) -> tensor<1x3xf16>
// CHECK-NEXT: %2 = synap.quantize %x : (tensor<1x3xf32>) -> tensor<1x3x!quant.uniform<u16:f32, 1.0e-05:32768>>
// CHECK-NEXT: func.return
func.func @in_ops(%x: tensor<1x3xf32>) {
  %0 = synap.quantize %x : (tensor<1x3xf32>) -> tensor<1x3x!quant.uniform<i8:f32:1, {0.1,0.2:-3,0.3:127}>>
  %1 = synap.dequantize %0 : (tensor<1x3x!quant.uniform<i8:f32:1, {0.1,0.2:-3,0.3:127}>>) -> tensor<1x3xf16>
  %2 = synap.quantize %x : (tensor<1x3xf32>) -> tensor<1x3x!quant.uniform<u16:f32, 1.0e-05:32768>>
  func.return
}
