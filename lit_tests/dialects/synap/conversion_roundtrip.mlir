// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the ops of dialects/synap/conversion.py: cast, quantize and dequantize.
// The result type carries the target element type; cast's `saturate` (float8 targets)
// and `exponent_rounding` (float8e8m0 targets) are elided at their defaults.

// CHECK-LABEL: func.func @cast(
func.func @cast(%f: tensor<2x3xf32>, %i: tensor<2x3xi32>, %h: tensor<4xf16>) {
  // Float to integer and back.
  // CHECK-NEXT: %0 = synap.cast %f : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // GENERIC: %0 = "synap.cast"(%f) <{saturate = true, exponent_rounding = #synap<exponent_rounding up>}> : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %0 = synap.cast %f : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // CHECK-NEXT: %1 = synap.cast %i {layer_name = "cast", layer_index = 39 : i64} : (tensor<2x3xi32>) -> tensor<2x3xf32>
  %1 = synap.cast %i {layer_name = "cast", layer_index = 39 : i64} : (tensor<2x3xi32>) -> tensor<2x3xf32>
  // Float to float, integer to integer, to i1.
  // CHECK-NEXT: %2 = synap.cast %h : (tensor<4xf16>) -> tensor<4xf32>
  %2 = synap.cast %h : (tensor<4xf16>) -> tensor<4xf32>
  // CHECK-NEXT: %3 = synap.cast %i : (tensor<2x3xi32>) -> tensor<2x3xi8>
  %3 = synap.cast %i : (tensor<2x3xi32>) -> tensor<2x3xi8>
  // CHECK-NEXT: %4 = synap.cast %f : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %4 = synap.cast %f : (tensor<2x3xf32>) -> tensor<2x3xi1>
  // To and from the storage-only types, with the float8 properties.
  // CHECK-NEXT: %5 = synap.cast %f {saturate = false} : (tensor<2x3xf32>) -> tensor<2x3xf8E5M2>
  %5 = synap.cast %f {saturate = false} : (tensor<2x3xf32>) -> tensor<2x3xf8E5M2>
  // CHECK-NEXT: %6 = synap.cast %f {exponent_rounding = #synap<exponent_rounding nearest>} : (tensor<2x3xf32>) -> tensor<2x3xf8E8M0FNU>
  %6 = synap.cast %f {exponent_rounding = #synap<exponent_rounding nearest>} : (tensor<2x3xf32>) -> tensor<2x3xf8E8M0FNU>
  // CHECK-NEXT: %7 = synap.cast %5 : (tensor<2x3xf8E5M2>) -> tensor<2x3xi4>
  %7 = synap.cast %5 : (tensor<2x3xf8E5M2>) -> tensor<2x3xi4>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @quantize(
func.func @quantize(%f: tensor<1x4xf32>, %h: tensor<4xf16>, %q: tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>, %w: tensor<3x2xf32>) {
  // Float to per-tensor u8.
  // CHECK-NEXT: %0 = synap.quantize %f : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>
  // GENERIC: %0 = "synap.quantize"(%f) : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>
  %0 = synap.quantize %f : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>
  // Requantization to other parameters, with layer attributes.
  // CHECK-NEXT: %1 = synap.quantize %q {layer_name = "requant", layer_index = 40 : i64} : (tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<1x4x!quant.uniform<i8:f32, 0.047:-128>>
  %1 = synap.quantize %q {layer_name = "requant", layer_index = 40 : i64} : (tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<1x4x!quant.uniform<i8:f32, 0.047:-128>>
  // f16 to i16 with an f16 expressed type.
  // CHECK-NEXT: %2 = synap.quantize %h : (tensor<4xf16>) -> tensor<4x!quant.uniform<i16:f16, 3.0517578125e-05>>
  %2 = synap.quantize %h : (tensor<4xf16>) -> tensor<4x!quant.uniform<i16:f16, 3.0517578125e-05>>
  // Per-axis quantization along axis 1.
  // CHECK-NEXT: %3 = synap.quantize %w : (tensor<3x2xf32>) -> tensor<3x2x!quant.uniform<i8:f32:1, {0.1,0.2:-5}>>
  %3 = synap.quantize %w : (tensor<3x2xf32>) -> tensor<3x2x!quant.uniform<i8:f32:1, {0.1,0.2:-5}>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @dequantize(
func.func @dequantize(%q: tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>, %p: tensor<3x2x!quant.uniform<i32:f32:0, {1.0e-05,2.0e-05:7,4.0e-05}>>) {
  // Per-tensor u8 to f32.
  // CHECK-NEXT: %0 = synap.dequantize %q : (tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<1x4xf32>
  // GENERIC: %0 = "synap.dequantize"(%q) : (tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<1x4xf32>
  %0 = synap.dequantize %q : (tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<1x4xf32>
  // To f16, with layer attributes.
  // CHECK-NEXT: %1 = synap.dequantize %q {layer_name = "deq", layer_index = 41 : i64} : (tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<1x4xf16>
  %1 = synap.dequantize %q {layer_name = "deq", layer_index = 41 : i64} : (tensor<1x4x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<1x4xf16>
  // Per-axis i32.
  // CHECK-NEXT: %2 = synap.dequantize %p : (tensor<3x2x!quant.uniform<i32:f32:0, {1.0e-05,2.0e-05:7,4.0e-05}>>) -> tensor<3x2xf32>
  %2 = synap.dequantize %p : (tensor<3x2x!quant.uniform<i32:f32:0, {1.0e-05,2.0e-05:7,4.0e-05}>>) -> tensor<3x2xf32>
  // CHECK-NEXT: func.return
  func.return
}
