// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the ops of dialects/synap/activation.py: clamp, leaky_relu, sigmoid, tanh,
// hard_swish, hard_sigmoid, swish, gelu, elu, exp, log, sqrt, rsqrt, abs, neg, square,
// softmax, log_softmax, l2_normalize, thresholded_relu, shrink, softplus, softsign, mish,
// sign, floor, ceil, round, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh and
// atanh. Float properties are f32 and print in MLIR's float syntax (1.000000e-01 : f32).

// CHECK-LABEL: func.func @clamp(
func.func @clamp(%x: tensor<2x8xf32>) {
  // Both bounds (ReLU6), with layer attributes.
  // CHECK-NEXT: %0 = synap.clamp %x {layer_name = "relu6", layer_index = 1 : i64, min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.clamp"(%x) <{min = 0.000000e+00 : f32, max = 6.000000e+00 : f32}> {layer_name = "relu6", layer_index = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.clamp %x {layer_name = "relu6", layer_index = 1 : i64, min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Lower bound only (ReLU); the absent bound is not printed at all.
  // CHECK-NEXT: %1 = synap.clamp %x {min = 0.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %1 = "synap.clamp"(%x) <{min = 0.000000e+00 : f32}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.clamp %x {min = 0.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Upper bound only, negative value.
  // CHECK-NEXT: %2 = synap.clamp %x {max = -1.500000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.clamp %x {max = -1.500000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Equal bounds are allowed.
  // CHECK-NEXT: %3 = synap.clamp %x {min = 1.000000e+00 : f32, max = 1.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = synap.clamp %x {min = 1.000000e+00 : f32, max = 1.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Floats in other spellings print in MLIR's float syntax.
  // CHECK-NEXT: %4 = synap.clamp %x {min = -1.000000e+00 : f32, max = 1.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = synap.clamp %x {min = -1.0 : f32, max = 1 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @leaky_relu(
func.func @leaky_relu(%x: tensor<2x8xf32>) {
  // alpha is required (no default).
  // CHECK-NEXT: %0 = synap.leaky_relu %x {alpha = 1.000000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.leaky_relu"(%x) <{alpha = 1.000000e-01 : f32}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.leaky_relu %x {alpha = 1.000000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // With layer attributes; a value that needs more than 7 digits.
  // CHECK-NEXT: %1 = synap.leaky_relu %x {layer_name = "lrelu", layer_index = 2 : i64, alpha = 1.000000e-02 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.leaky_relu %x {layer_name = "lrelu", layer_index = 2 : i64, alpha = 0.00999999977 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @no_properties(
func.func @no_properties(%x: tensor<2x8xf32>) {
  // The unary ops without properties, bare and with layer attributes.
  // CHECK-NEXT: %0 = synap.sigmoid %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.sigmoid"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.sigmoid %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.sigmoid %x {layer_name = "sigmoid", layer_index = 3 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.sigmoid %x {layer_name = "sigmoid", layer_index = 3 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %2 = synap.tanh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.tanh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %3 = synap.tanh %x {layer_name = "tanh", layer_index = 4 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = synap.tanh %x {layer_name = "tanh", layer_index = 4 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %4 = synap.hard_swish %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = synap.hard_swish %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %5 = synap.hard_swish %x {layer_name = "hswish", layer_index = 5 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %5 = synap.hard_swish %x {layer_name = "hswish", layer_index = 5 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %6 = synap.exp %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %6 = synap.exp %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %7 = synap.exp %x {layer_name = "exp", layer_index = 6 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %7 = synap.exp %x {layer_name = "exp", layer_index = 6 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %8 = synap.log %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %8 = synap.log %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %9 = synap.log %x {layer_name = "log", layer_index = 7 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %9 = synap.log %x {layer_name = "log", layer_index = 7 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %10 = synap.sqrt %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %10 = synap.sqrt %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %11 = synap.sqrt %x {layer_name = "sqrt", layer_index = 8 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %11 = synap.sqrt %x {layer_name = "sqrt", layer_index = 8 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %12 = synap.rsqrt %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %12 = synap.rsqrt %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %13 = synap.rsqrt %x {layer_name = "rsqrt", layer_index = 9 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %13 = synap.rsqrt %x {layer_name = "rsqrt", layer_index = 9 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %14 = synap.abs %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %14 = synap.abs %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %15 = synap.abs %x {layer_name = "abs", layer_index = 10 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %15 = synap.abs %x {layer_name = "abs", layer_index = 10 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %16 = synap.neg %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %16 = synap.neg %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %17 = synap.neg %x {layer_name = "neg", layer_index = 11 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %17 = synap.neg %x {layer_name = "neg", layer_index = 11 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %18 = synap.square %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %18 = synap.square %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %19 = synap.square %x {layer_name = "square", layer_index = 12 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %19 = synap.square %x {layer_name = "square", layer_index = 12 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %20 = synap.erf %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %20 = "synap.erf"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %20 = synap.erf %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %21 = synap.erf %x {layer_name = "erf", layer_index = 13 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %21 = synap.erf %x {layer_name = "erf", layer_index = 13 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @hard_sigmoid(
func.func @hard_sigmoid(%x: tensor<2x8xf32>) {
  // Defaults (alpha 0.2, beta 0.5) are elided.
  // CHECK-NEXT: %0 = synap.hard_sigmoid %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.hard_sigmoid"(%x) <{alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.hard_sigmoid %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.hard_sigmoid %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.hard_sigmoid %x {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // PyTorch's alpha 1/6, beta 0.5 (default, elided), with layer attributes.
  // CHECK-NEXT: %2 = synap.hard_sigmoid %x {layer_name = "hsig", layer_index = 13 : i64, alpha = 0.166666672 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.hard_sigmoid %x {layer_name = "hsig", layer_index = 13 : i64, alpha = 0.166666672 : f32, beta = 5.000000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Both set.
  // CHECK-NEXT: %3 = synap.hard_sigmoid %x {alpha = 2.500000e-01 : f32, beta = 2.500000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %3 = "synap.hard_sigmoid"(%x) <{alpha = 2.500000e-01 : f32, beta = 2.500000e-01 : f32}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = synap.hard_sigmoid %x {alpha = 2.500000e-01 : f32, beta = 2.500000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @swish(
func.func @swish(%x: tensor<2x8xf32>) {
  // Default beta 1 (SiLU) is elided.
  // CHECK-NEXT: %0 = synap.swish %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.swish"(%x) <{beta = 1.000000e+00 : f32}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.swish %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.swish %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.swish %x {beta = 1.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Non-default beta with layer attributes.
  // CHECK-NEXT: %2 = synap.swish %x {layer_name = "swish", layer_index = 14 : i64, beta = 1.702000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.swish %x {layer_name = "swish", layer_index = 14 : i64, beta = 1.702000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @gelu(
func.func @gelu(%x: tensor<2x8xf32>) {
  // Exact GELU (approximate = false, the default, elided).
  // CHECK-NEXT: %0 = synap.gelu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.gelu"(%x) <{approximate = false}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.gelu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.gelu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.gelu %x {approximate = false} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // The tanh approximation, with layer attributes.
  // CHECK-NEXT: %2 = synap.gelu %x {layer_name = "gelu", layer_index = 15 : i64, approximate = true} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.gelu %x {layer_name = "gelu", layer_index = 15 : i64, approximate = true} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @elu(
func.func @elu(%x: tensor<2x8xf32>) {
  // Default alpha 1 is elided.
  // CHECK-NEXT: %0 = synap.elu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.elu"(%x) <{alpha = 1.000000e+00 : f32}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.elu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.elu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.elu %x {alpha = 1.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Non-default alpha with layer attributes.
  // CHECK-NEXT: %2 = synap.elu %x {layer_name = "elu", layer_index = 16 : i64, alpha = 5.000000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.elu %x {layer_name = "elu", layer_index = 16 : i64, alpha = 5.000000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @softmax(
func.func @softmax(%x: tensor<2x8xf32>) {
  // Defaults (axis -1, beta 1) are elided.
  // CHECK-NEXT: %0 = synap.softmax %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.softmax"(%x) <{beta = 1.000000e+00 : f32, axis = -1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.softmax %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.softmax %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.softmax %x {axis = -1 : i64, beta = 1.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Both set, with layer attributes.
  // CHECK-NEXT: %2 = synap.softmax %x {layer_name = "softmax", layer_index = 17 : i64, axis = 0 : i64, beta = 5.000000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %2 = "synap.softmax"(%x) <{axis = 0 : i64, beta = 5.000000e-01 : f32}> {layer_name = "softmax", layer_index = 17 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.softmax %x {layer_name = "softmax", layer_index = 17 : i64, axis = 0 : i64, beta = 5.000000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // A negative axis other than -1.
  // CHECK-NEXT: %3 = synap.softmax %x {axis = -2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = synap.softmax %x {axis = -2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @log_softmax(
func.func @log_softmax(%x: tensor<2x8xf32>) {
  // Default axis -1 is elided.
  // CHECK-NEXT: %0 = synap.log_softmax %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.log_softmax"(%x) <{axis = -1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.log_softmax %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.log_softmax %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.log_softmax %x {axis = -1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Non-default axis, with layer attributes.
  // CHECK-NEXT: %2 = synap.log_softmax %x {layer_name = "logsm", layer_index = 18 : i64, axis = 0 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.log_softmax %x {layer_name = "logsm", layer_index = 18 : i64, axis = 0 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @l2_normalize(
func.func @l2_normalize(%x: tensor<2x8xf32>) {
  // Defaults (axis -1, epsilon 1e-12) are elided.
  // CHECK-NEXT: %0 = synap.l2_normalize %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.l2_normalize"(%x) <{epsilon = 1.000000e-12 : f32, axis = -1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.l2_normalize %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.l2_normalize %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.l2_normalize %x {axis = -1 : i64, epsilon = 1.000000e-12 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Both set, with layer attributes.
  // CHECK-NEXT: %2 = synap.l2_normalize %x {layer_name = "l2n", layer_index = 19 : i64, axis = 1 : i64, epsilon = 1.000000e-06 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.l2_normalize %x {layer_name = "l2n", layer_index = 19 : i64, axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @quantized(
func.func @quantized(%x: tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>, %h: tensor<1x8x!quant.uniform<i16:f16, 3.0517578125e-05>>) {
  // Quantized activations whose output parameters differ from the input's.
  // CHECK-NEXT: %0 = synap.sigmoid %x : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.00390625>>
  %0 = synap.sigmoid %x : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.00390625>>
  // CHECK-NEXT: %1 = synap.tanh %x : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.0078125:128>>
  %1 = synap.tanh %x : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.0078125:128>>
  // CHECK-NEXT: %2 = synap.softmax %x {layer_name = "prob", beta = 2.000000e+00 : f32} : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.00390625>>
  %2 = synap.softmax %x {layer_name = "prob", beta = 2.000000e+00 : f32} : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.00390625>>
  // CHECK-NEXT: %3 = synap.clamp %x {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>
  %3 = synap.clamp %x {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>
  // CHECK-NEXT: %4 = synap.leaky_relu %x {alpha = 2.000000e-01 : f32} : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>
  %4 = synap.leaky_relu %x {alpha = 2.000000e-01 : f32} : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>
  // CHECK-NEXT: %5 = synap.hard_swish %x : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.05:3>>
  %5 = synap.hard_swish %x : (tensor<1x8x!quant.uniform<u8:f32, 0.0625:128>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.05:3>>
  // i16 storage with an f16 expressed type.
  // CHECK-NEXT: %6 = synap.sigmoid %h : (tensor<1x8x!quant.uniform<i16:f16, 3.0517578125e-05>>) -> tensor<1x8x!quant.uniform<i16:f16, 3.0517578125e-05>>
  %6 = synap.sigmoid %h : (tensor<1x8x!quant.uniform<i16:f16, 3.0517578125e-05>>) -> tensor<1x8x!quant.uniform<i16:f16, 3.0517578125e-05>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @thresholded_relu(
func.func @thresholded_relu(%x: tensor<2x8xf32>) {
  // Default alpha 1 is elided.
  // CHECK-NEXT: %0 = synap.thresholded_relu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.thresholded_relu"(%x) <{alpha = 1.000000e+00 : f32}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.thresholded_relu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.thresholded_relu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.thresholded_relu %x {alpha = 1.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Non-default alpha with layer attributes.
  // CHECK-NEXT: %2 = synap.thresholded_relu %x {layer_name = "trelu", layer_index = 20 : i64, alpha = 5.000000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %2 = "synap.thresholded_relu"(%x) <{alpha = 5.000000e-01 : f32}> {layer_name = "trelu", layer_index = 20 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.thresholded_relu %x {layer_name = "trelu", layer_index = 20 : i64, alpha = 5.000000e-01 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @shrink(
func.func @shrink(%x: tensor<2x8xf32>, %i: tensor<2x8xi32>) {
  // Defaults (lambd 0.5, bias 0: hard shrinkage) are elided.
  // CHECK-NEXT: %0 = synap.shrink %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.shrink"(%x) <{lambd = 5.000000e-01 : f32, bias = 0.000000e+00 : f32}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.shrink %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.shrink %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.shrink %x {lambd = 5.000000e-01 : f32, bias = 0.000000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Soft shrinkage (bias = lambd) with layer attributes.
  // CHECK-NEXT: %2 = synap.shrink %x {layer_name = "shrink", layer_index = 21 : i64, lambd = 1.500000e+00 : f32, bias = 1.500000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.shrink %x {layer_name = "shrink", layer_index = 21 : i64, lambd = 1.500000e+00 : f32, bias = 1.500000e+00 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // Integer tensors, bias only.
  // CHECK-NEXT: %3 = synap.shrink %i {bias = 2.500000e-01 : f32} : (tensor<2x8xi32>) -> tensor<2x8xi32>
  // GENERIC: %3 = "synap.shrink"(%i) <{bias = 2.500000e-01 : f32, lambd = 5.000000e-01 : f32}> : (tensor<2x8xi32>) -> tensor<2x8xi32>
  %3 = synap.shrink %i {bias = 2.500000e-01 : f32} : (tensor<2x8xi32>) -> tensor<2x8xi32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @math_functions(
func.func @math_functions(%x: tensor<2x8xf32>, %i: tensor<2x8xi8>, %h: tensor<4xf16>) {
  // The unary math functions without properties: softplus, softsign, mish, sign (of
  // floats and integers), floor, ceil, round and the trigonometric / hyperbolic ones.
  // CHECK-NEXT: %0 = synap.softplus %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %0 = "synap.softplus"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = synap.softplus %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = synap.softsign %x {layer_name = "softsign", layer_index = 22 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: %1 = "synap.softsign"(%x) {layer_name = "softsign", layer_index = 22 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = synap.softsign %x {layer_name = "softsign", layer_index = 22 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %2 = synap.mish %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = synap.mish %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %3 = synap.sign %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = synap.sign %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %4 = synap.sign %i {layer_name = "sign", layer_index = 23 : i64} : (tensor<2x8xi8>) -> tensor<2x8xi8>
  %4 = synap.sign %i {layer_name = "sign", layer_index = 23 : i64} : (tensor<2x8xi8>) -> tensor<2x8xi8>
  // CHECK-NEXT: %5 = synap.floor %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %5 = synap.floor %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %6 = synap.ceil %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %6 = synap.ceil %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %7 = synap.round %h : (tensor<4xf16>) -> tensor<4xf16>
  %7 = synap.round %h : (tensor<4xf16>) -> tensor<4xf16>
  // CHECK-NEXT: %8 = synap.sin %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %8 = synap.sin %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %9 = synap.cos %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %9 = synap.cos %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %10 = synap.tan %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %10 = synap.tan %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %11 = synap.asin %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %11 = synap.asin %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %12 = synap.acos %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %12 = synap.acos %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %13 = synap.atan %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %13 = synap.atan %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %14 = synap.sinh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %14 = synap.sinh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %15 = synap.cosh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %15 = synap.cosh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %16 = synap.asinh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %16 = synap.asinh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %17 = synap.acosh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %17 = synap.acosh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %18 = synap.atanh %x {layer_name = "atanh", layer_index = 24 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %18 = synap.atanh %x {layer_name = "atanh", layer_index = 24 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: func.return
  func.return
}
