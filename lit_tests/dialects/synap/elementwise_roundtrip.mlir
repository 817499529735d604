// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the ops of dialects/synap/elementwise.py: add, sub, mul, div (with a
// fused activation), maximum, minimum, pow, squared_difference (no properties), prelu and
// mod (fmod).

// CHECK-LABEL: func.func @with_activation(
func.func @with_activation(%a: tensor<1x4x4x3xf32>, %b: tensor<3xf32>, %c: tensor<1x1x4x1xf32>) {
  // add with the default activation (none), same shapes.
  // CHECK-NEXT: %0 = synap.add %a, %a : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  // GENERIC: %0 = "synap.add"(%a, %a) <{pot_scale_int16 = true, activation = #synap<activation none>}> : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %0 = synap.add %a, %a : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  // add with an explicit default activation, elided; broadcasting a per-channel vector.
  // CHECK-NEXT: %1 = synap.add %a, %b : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %1 = synap.add %a, %b {activation = #synap<activation none>} : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // add with activation and layer attributes; both operands broadcast.
  // CHECK-NEXT: %2 = synap.add %c, %b {layer_name = "add_1", layer_index = 12 : i64, activation = #synap<activation relu>} : (tensor<1x1x4x1xf32>, tensor<3xf32>) -> tensor<1x1x4x3xf32>
  // GENERIC: %2 = "synap.add"(%c, %b) <{activation = #synap<activation relu>, pot_scale_int16 = true}> {layer_name = "add_1", layer_index = 12 : i64} : (tensor<1x1x4x1xf32>, tensor<3xf32>) -> tensor<1x1x4x3xf32>
  %2 = synap.add %c, %b {layer_name = "add_1", layer_index = 12 : i64, activation = #synap<activation relu>} : (tensor<1x1x4x1xf32>, tensor<3xf32>) -> tensor<1x1x4x3xf32>
  // sub, default and with every attribute.
  // CHECK-NEXT: %3 = synap.sub %a, %b : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %3 = synap.sub %a, %b : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // CHECK-NEXT: %4 = synap.sub %b, %a {layer_name = "sub", layer_index = 13 : i64, activation = #synap<activation relu6>} : (tensor<3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %4 = synap.sub %b, %a {layer_name = "sub", layer_index = 13 : i64, activation = #synap<activation relu6>} : (tensor<3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  // mul, default and with every attribute.
  // CHECK-NEXT: %5 = synap.mul %a, %b : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %5 = synap.mul %a, %b : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // CHECK-NEXT: %6 = synap.mul %a, %a {layer_name = "mul", layer_index = 14 : i64, activation = #synap<activation relu_n1_to_1>} : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %6 = synap.mul %a, %a {layer_name = "mul", layer_index = 14 : i64, activation = #synap<activation relu_n1_to_1>} : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  // div, default and with every attribute.
  // CHECK-NEXT: %7 = synap.div %a, %b : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %7 = synap.div %a, %b : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // CHECK-NEXT: %8 = synap.div %a, %a {layer_name = "div", layer_index = 15 : i64, activation = #synap<activation relu_0_to_1>} : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %8 = synap.div %a, %a {layer_name = "div", layer_index = 15 : i64, activation = #synap<activation relu_0_to_1>} : (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @without_properties(
func.func @without_properties(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi32>) {
  // maximum and minimum: no properties, layer attributes only.
  // CHECK-NEXT: %0 = synap.maximum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // GENERIC: %0 = "synap.maximum"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = synap.maximum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = synap.maximum %a, %a {layer_name = "max", layer_index = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = synap.maximum %a, %a {layer_name = "max", layer_index = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %2 = synap.minimum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = synap.minimum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %3 = synap.minimum %a, %a {layer_name = "min", layer_index = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = synap.minimum %a, %a {layer_name = "min", layer_index = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // Integer operands of one integer type.
  // CHECK-NEXT: %4 = synap.minimum %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %4 = synap.minimum %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  // pow (float or integer operands).
  // CHECK-NEXT: %5 = synap.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %5 = synap.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %6 = synap.pow %a, %a {layer_name = "pow", layer_index = 3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = synap.pow %a, %a {layer_name = "pow", layer_index = 3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // squared_difference.
  // CHECK-NEXT: %7 = synap.squared_difference %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %7 = synap.squared_difference %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %8 = synap.squared_difference %a, %a {layer_name = "sqdiff", layer_index = 4 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = synap.squared_difference %a, %a {layer_name = "sqdiff", layer_index = 4 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %9 = synap.pow %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %9 = synap.pow %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @f16(
func.func @f16(%a: tensor<4xf16>, %b: tensor<1xf16>) {
  // f16 operands and result.
  // CHECK-NEXT: %0 = synap.add %a, %b : (tensor<4xf16>, tensor<1xf16>) -> tensor<4xf16>
  %0 = synap.add %a, %b : (tensor<4xf16>, tensor<1xf16>) -> tensor<4xf16>
  // CHECK-NEXT: %1 = synap.pow %a, %b : (tensor<4xf16>, tensor<1xf16>) -> tensor<4xf16>
  %1 = synap.pow %a, %b : (tensor<4xf16>, tensor<1xf16>) -> tensor<4xf16>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @quantized(
func.func @quantized(%a: tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, %b: tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>, %s: tensor<4x!quant.uniform<i8:f32, 0.05>>) {
  // Quantized operands with different scales and zero points, quantized result.
  // CHECK-NEXT: %0 = synap.add %a, %b {activation = #synap<activation relu>} : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.3:50>>
  %0 = synap.add %a, %b {activation = #synap<activation relu>} : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.3:50>>
  // CHECK-NEXT: %1 = synap.sub %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<i8:f32, 0.3:-1>>
  %1 = synap.sub %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<i8:f32, 0.3:-1>>
  // CHECK-NEXT: %2 = synap.mul %a, %s : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<4x!quant.uniform<i8:f32, 0.05>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.005>>
  %2 = synap.mul %a, %s : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<4x!quant.uniform<i8:f32, 0.05>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.005>>
  // CHECK-NEXT: %3 = synap.div %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.01>>
  %3 = synap.div %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.01>>
  // CHECK-NEXT: %4 = synap.maximum %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>
  %4 = synap.maximum %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>
  // CHECK-NEXT: %5 = synap.minimum %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>
  %5 = synap.minimum %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>
  // CHECK-NEXT: %6 = synap.squared_difference %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.04>>
  %6 = synap.squared_difference %a, %b : (tensor<1x4x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x4x!quant.uniform<u8:f32, 0.2:100>>) -> tensor<1x4x!quant.uniform<u8:f32, 0.04>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @prelu(
func.func @prelu(%x: tensor<1x4x4x3xf32>, %slope: tensor<3xf32>, %slope4: tensor<1x1x1x3xf32>, %q: tensor<1x2x2x3x!quant.uniform<i8:f32, 0.1:-2>>, %qs: tensor<3x!quant.uniform<i8:f32:0, {0.01,0.02,0.03}>>) {
  // A per-channel slope vector that broadcasts to the input.
  // CHECK-NEXT: %0 = synap.prelu %x, %slope : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // GENERIC: %0 = "synap.prelu"(%x, %slope) : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %0 = synap.prelu %x, %slope : (tensor<1x4x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  // A rank-4 slope, with layer attributes.
  // CHECK-NEXT: %1 = synap.prelu %x, %slope4 {layer_name = "prelu", layer_index = 8 : i64} : (tensor<1x4x4x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  %1 = synap.prelu %x, %slope4 {layer_name = "prelu", layer_index = 8 : i64} : (tensor<1x4x4x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x4x4x3xf32>
  // Quantized input with a per-axis quantized slope.
  // CHECK-NEXT: %2 = synap.prelu %q, %qs : (tensor<1x2x2x3x!quant.uniform<i8:f32, 0.1:-2>>, tensor<3x!quant.uniform<i8:f32:0, {0.01,0.02,0.03}>>) -> tensor<1x2x2x3x!quant.uniform<i8:f32, 0.1:-2>>
  %2 = synap.prelu %q, %qs : (tensor<1x2x2x3x!quant.uniform<i8:f32, 0.1:-2>>, tensor<3x!quant.uniform<i8:f32:0, {0.01,0.02,0.03}>>) -> tensor<1x2x2x3x!quant.uniform<i8:f32, 0.1:-2>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @mod(
func.func @mod(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi32>, %j: tensor<1x3xi32>) {
  // The floored remainder (fmod false, the default) is elided.
  // CHECK-NEXT: %0 = synap.mod %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // GENERIC: %0 = "synap.mod"(%a, %b) <{fmod = false}> : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = synap.mod %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = synap.mod %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = synap.mod %a, %b {fmod = false} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // The truncated remainder, with layer attributes.
  // CHECK-NEXT: %2 = synap.mod %a, %a {layer_name = "fmod", layer_index = 5 : i64, fmod = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // GENERIC: %2 = "synap.mod"(%a, %a) <{fmod = true}> {layer_name = "fmod", layer_index = 5 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = synap.mod %a, %a {layer_name = "fmod", layer_index = 5 : i64, fmod = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // Integer operands of one integer type, broadcast.
  // CHECK-NEXT: %3 = synap.mod %i, %j : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  %3 = synap.mod %i, %j : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  // CHECK-NEXT: func.return
  func.return
}
