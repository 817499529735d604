// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the ops of dialects/synap/logical.py: the comparisons (equal, greater,
// greater_equal, less, less_equal) of float, integer, boolean and quantized operands;
// is_inf (with its detect_negative / detect_positive properties, elided when true) and
// is_nan; the boolean logical_and / or / xor / not; the integer bitwise_and / or / xor /
// not and shift_left / shift_right; and select. Binary and ternary ops broadcast.

// CHECK-LABEL: func.func @comparisons(
func.func @comparisons(%a: tensor<1x4x4x3xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi32>, %u: tensor<3xui8>, %p: tensor<2x3xi1>, %h: tensor<4xf16>) {
  // Comparisons give i1 results of the broadcast shape; equal also compares booleans.
  // CHECK-NEXT: %0 = synap.equal %a, %b : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xi1>
  // GENERIC: %0 = "synap.equal"(%a, %b) : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xi1>
  %0 = synap.equal %a, %b : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xi1>
  // CHECK-NEXT: %1 = synap.equal %p, %p {layer_name = "eq", layer_index = 3 : i64} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %1 = synap.equal %p, %p {layer_name = "eq", layer_index = 3 : i64} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %2 = synap.greater %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
  // GENERIC: %2 = "synap.greater"(%i, %i) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
  %2 = synap.greater %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %3 = synap.greater_equal %b, %a {layer_name = "ge", layer_index = 4 : i64} : (tensor<3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xi1>
  // GENERIC: %3 = "synap.greater_equal"(%b, %a) {layer_name = "ge", layer_index = 4 : i64} : (tensor<3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xi1>
  %3 = synap.greater_equal %b, %a {layer_name = "ge", layer_index = 4 : i64} : (tensor<3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xi1>
  // CHECK-NEXT: %4 = synap.less %u, %u : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
  // GENERIC: %4 = "synap.less"(%u, %u) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
  %4 = synap.less %u, %u : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
  // CHECK-NEXT: %5 = synap.less_equal %h, %h : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1>
  // GENERIC: %5 = "synap.less_equal"(%h, %h) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1>
  %5 = synap.less_equal %h, %h : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @quantized(
func.func @quantized(%a: tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, %b: tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>, %c: tensor<4xi1>) {
  // Quantized comparisons (equal or different quantization) and a select whose values
  // are requantized to the result's quantization.
  // CHECK-NEXT: %0 = synap.greater %a, %a : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<1x4xi1>
  %0 = synap.greater %a, %a : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<1x4xi1>
  // CHECK-NEXT: %1 = synap.less %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4xi1>
  %1 = synap.less %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4xi1>
  // CHECK-NEXT: %2 = synap.select %c, %a, %b : (tensor<4xi1>, tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.3:50>>
  // GENERIC: %2 = "synap.select"(%c, %a, %b) : (tensor<4xi1>, tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.3:50>>
  %2 = synap.select %c, %a, %b : (tensor<4xi1>, tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.3:50>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @float_tests(
func.func @float_tests(%a: tensor<2x3xf32>, %h: tensor<4xf16>) {
  // is_inf with default properties (elided), one or both given, then is_nan.
  // CHECK-NEXT: %0 = synap.is_inf %a : (tensor<2x3xf32>) -> tensor<2x3xi1>
  // GENERIC: %0 = "synap.is_inf"(%a) <{detect_negative = true, detect_positive = true}> : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %0 = synap.is_inf %a : (tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %1 = synap.is_inf %a {detect_negative = false} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %1 = synap.is_inf %a {detect_negative = false} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %2 = synap.is_inf %h {layer_name = "inf", layer_index = 5 : i64, detect_positive = false} : (tensor<4xf16>) -> tensor<4xi1>
  %2 = synap.is_inf %h {layer_name = "inf", layer_index = 5 : i64, detect_positive = false, detect_negative = true} : (tensor<4xf16>) -> tensor<4xi1>
  // CHECK-NEXT: %3 = synap.is_nan %a : (tensor<2x3xf32>) -> tensor<2x3xi1>
  // GENERIC: %3 = "synap.is_nan"(%a) : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %3 = synap.is_nan %a : (tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %4 = synap.is_nan %h {layer_name = "nan", layer_index = 6 : i64} : (tensor<4xf16>) -> tensor<4xi1>
  %4 = synap.is_nan %h {layer_name = "nan", layer_index = 6 : i64} : (tensor<4xf16>) -> tensor<4xi1>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @logic(
func.func @logic(%p: tensor<2x3xi1>, %q: tensor<3xi1>) {
  // Boolean logic with broadcasting.
  // CHECK-NEXT: %0 = synap.logical_and %p, %q : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // GENERIC: %0 = "synap.logical_and"(%p, %q) : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %0 = synap.logical_and %p, %q : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %1 = synap.logical_or %q, %p {layer_name = "or", layer_index = 7 : i64} : (tensor<3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // GENERIC: %1 = "synap.logical_or"(%q, %p) {layer_name = "or", layer_index = 7 : i64} : (tensor<3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %1 = synap.logical_or %q, %p {layer_name = "or", layer_index = 7 : i64} : (tensor<3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %2 = synap.logical_xor %p, %p : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // GENERIC: %2 = "synap.logical_xor"(%p, %p) : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %2 = synap.logical_xor %p, %p : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %3 = synap.logical_not %q : (tensor<3xi1>) -> tensor<3xi1>
  // GENERIC: %3 = "synap.logical_not"(%q) : (tensor<3xi1>) -> tensor<3xi1>
  %3 = synap.logical_not %q : (tensor<3xi1>) -> tensor<3xi1>
  // CHECK-NEXT: %4 = synap.logical_not %p {layer_name = "not", layer_index = 8 : i64} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %4 = synap.logical_not %p {layer_name = "not", layer_index = 8 : i64} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @bits(
func.func @bits(%i: tensor<2x3xi32>, %j: tensor<3xi32>, %u: tensor<2x3xui8>, %s: tensor<1xui8>, %w: tensor<4xi64>) {
  // Bitwise ops and shifts of signed, unsigned and 64-bit integers, broadcast.
  // CHECK-NEXT: %0 = synap.bitwise_and %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // GENERIC: %0 = "synap.bitwise_and"(%i, %j) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %0 = synap.bitwise_and %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // CHECK-NEXT: %1 = synap.bitwise_or %u, %u {layer_name = "or", layer_index = 9 : i64} : (tensor<2x3xui8>, tensor<2x3xui8>) -> tensor<2x3xui8>
  // GENERIC: %1 = "synap.bitwise_or"(%u, %u) {layer_name = "or", layer_index = 9 : i64} : (tensor<2x3xui8>, tensor<2x3xui8>) -> tensor<2x3xui8>
  %1 = synap.bitwise_or %u, %u {layer_name = "or", layer_index = 9 : i64} : (tensor<2x3xui8>, tensor<2x3xui8>) -> tensor<2x3xui8>
  // CHECK-NEXT: %2 = synap.bitwise_xor %w, %w : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  // GENERIC: %2 = "synap.bitwise_xor"(%w, %w) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = synap.bitwise_xor %w, %w : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  // CHECK-NEXT: %3 = synap.bitwise_not %u : (tensor<2x3xui8>) -> tensor<2x3xui8>
  // GENERIC: %3 = "synap.bitwise_not"(%u) : (tensor<2x3xui8>) -> tensor<2x3xui8>
  %3 = synap.bitwise_not %u : (tensor<2x3xui8>) -> tensor<2x3xui8>
  // CHECK-NEXT: %4 = synap.shift_left %u, %s : (tensor<2x3xui8>, tensor<1xui8>) -> tensor<2x3xui8>
  // GENERIC: %4 = "synap.shift_left"(%u, %s) : (tensor<2x3xui8>, tensor<1xui8>) -> tensor<2x3xui8>
  %4 = synap.shift_left %u, %s : (tensor<2x3xui8>, tensor<1xui8>) -> tensor<2x3xui8>
  // CHECK-NEXT: %5 = synap.shift_right %i, %j {layer_name = "shr", layer_index = 10 : i64} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // GENERIC: %5 = "synap.shift_right"(%i, %j) {layer_name = "shr", layer_index = 10 : i64} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %5 = synap.shift_right %i, %j {layer_name = "shr", layer_index = 10 : i64} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @select(
func.func @select(%c: tensor<2x1xi1>, %a: tensor<3xf32>, %b: tensor<2x3xf32>, %p: tensor<i1>, %q: tensor<3xi1>, %i: tensor<1x3xi8>) {
  // select broadcasts the condition and both values (a rank-0 condition too) and takes
  // float, boolean and integer values.
  // CHECK-NEXT: %0 = synap.select %c, %a, %b : (tensor<2x1xi1>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = synap.select %c, %a, %b : (tensor<2x1xi1>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = synap.select %p, %q, %q {layer_name = "where", layer_index = 11 : i64} : (tensor<i1>, tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %1 = synap.select %p, %q, %q {layer_name = "where", layer_index = 11 : i64} : (tensor<i1>, tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  // CHECK-NEXT: %2 = synap.select %c, %i, %i : (tensor<2x1xi1>, tensor<1x3xi8>, tensor<1x3xi8>) -> tensor<2x3xi8>
  %2 = synap.select %c, %i, %i : (tensor<2x1xi1>, tensor<1x3xi8>, tensor<1x3xi8>) -> tensor<2x3xi8>
  // CHECK-NEXT: func.return
  func.return
}
