// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the ops of dialects/synap/reduce.py: reduce_mean, reduce_sum, reduce_max,
// reduce_min, reduce_prod (required `axes`, keep_dims default false), argmax, argmin
// (required `axis`, keep_dims default false, i32 or i64 result) and cumsum (required
// `axis`, exclusive and reverse default false).

// CHECK-LABEL: func.func @reduce(
func.func @reduce(%x: tensor<1x7x7x8xf32>) {
  // reduce_mean over H and W (global average pooling), keep_dims defaulted.
  // CHECK-NEXT: %0 = synap.reduce_mean %x {axes = array<i64: 1, 2>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  // GENERIC: %0 = "synap.reduce_mean"(%x) <{axes = array<i64: 1, 2>, keep_dims = false}> : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  %0 = synap.reduce_mean %x {axes = array<i64: 1, 2>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  // Explicit keep_dims = false is elided.
  // CHECK-NEXT: %1 = synap.reduce_mean %x {axes = array<i64: 1, 2>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  %1 = synap.reduce_mean %x {axes = array<i64: 1, 2>, keep_dims = false} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  // keep_dims with negative axes and layer attributes.
  // CHECK-NEXT: %2 = synap.reduce_mean %x {layer_name = "gap", layer_index = 20 : i64, axes = array<i64: -3, -2>, keep_dims = true} : (tensor<1x7x7x8xf32>) -> tensor<1x1x1x8xf32>
  // GENERIC: %2 = "synap.reduce_mean"(%x) <{axes = array<i64: -3, -2>, keep_dims = true}> {layer_name = "gap", layer_index = 20 : i64} : (tensor<1x7x7x8xf32>) -> tensor<1x1x1x8xf32>
  %2 = synap.reduce_mean %x {layer_name = "gap", layer_index = 20 : i64, axes = array<i64: -3, -2>, keep_dims = true} : (tensor<1x7x7x8xf32>) -> tensor<1x1x1x8xf32>
  // reduce_sum: default and every attribute.
  // CHECK-NEXT: %3 = synap.reduce_sum %x {axes = array<i64: 3>} : (tensor<1x7x7x8xf32>) -> tensor<1x7x7xf32>
  %3 = synap.reduce_sum %x {axes = array<i64: 3>} : (tensor<1x7x7x8xf32>) -> tensor<1x7x7xf32>
  // CHECK-NEXT: %4 = synap.reduce_sum %x {layer_name = "sum", layer_index = 21 : i64, axes = array<i64: 3>, keep_dims = true} : (tensor<1x7x7x8xf32>) -> tensor<1x7x7x1xf32>
  %4 = synap.reduce_sum %x {layer_name = "sum", layer_index = 21 : i64, axes = array<i64: 3>, keep_dims = true} : (tensor<1x7x7x8xf32>) -> tensor<1x7x7x1xf32>
  // reduce_max: default and every attribute.
  // CHECK-NEXT: %5 = synap.reduce_max %x {axes = array<i64: 0, 1, 2, 3>} : (tensor<1x7x7x8xf32>) -> tensor<f32>
  %5 = synap.reduce_max %x {axes = array<i64: 0, 1, 2, 3>} : (tensor<1x7x7x8xf32>) -> tensor<f32>
  // CHECK-NEXT: %6 = synap.reduce_max %x {layer_name = "max", layer_index = 22 : i64, axes = array<i64: 2>, keep_dims = true} : (tensor<1x7x7x8xf32>) -> tensor<1x7x1x8xf32>
  %6 = synap.reduce_max %x {layer_name = "max", layer_index = 22 : i64, axes = array<i64: 2>, keep_dims = true} : (tensor<1x7x7x8xf32>) -> tensor<1x7x1x8xf32>
  // reduce_min: default and every attribute.
  // CHECK-NEXT: %7 = synap.reduce_min %x {axes = array<i64: 1>} : (tensor<1x7x7x8xf32>) -> tensor<1x7x8xf32>
  %7 = synap.reduce_min %x {axes = array<i64: 1>} : (tensor<1x7x7x8xf32>) -> tensor<1x7x8xf32>
  // CHECK-NEXT: %8 = synap.reduce_min %x {layer_name = "min", layer_index = 23 : i64, axes = array<i64: 1>, keep_dims = true} : (tensor<1x7x7x8xf32>) -> tensor<1x1x7x8xf32>
  %8 = synap.reduce_min %x {layer_name = "min", layer_index = 23 : i64, axes = array<i64: 1>, keep_dims = true} : (tensor<1x7x7x8xf32>) -> tensor<1x1x7x8xf32>
  // An empty axis list reduces nothing.
  // CHECK-NEXT: %9 = synap.reduce_sum %x {axes = array<i64>} : (tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  %9 = synap.reduce_sum %x {axes = array<i64>} : (tensor<1x7x7x8xf32>) -> tensor<1x7x7x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @reduce_quantized(
func.func @reduce_quantized(%x: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:-3>>) {
  // Quantized reductions.
  // CHECK-NEXT: %0 = synap.reduce_mean %x {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<1x1x1x2x!quant.uniform<i8:f32, 0.25:-3>>
  %0 = synap.reduce_mean %x {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<1x1x1x2x!quant.uniform<i8:f32, 0.25:-3>>
  // CHECK-NEXT: %1 = synap.reduce_max %x {axes = array<i64: 3>} : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<1x4x4x!quant.uniform<i8:f32, 0.5:-3>>
  %1 = synap.reduce_max %x {axes = array<i64: 3>} : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<1x4x4x!quant.uniform<i8:f32, 0.5:-3>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @arg_reduce(
func.func @arg_reduce(%x: tensor<2x10xf32>, %q: tensor<1x5x!quant.uniform<u8:f32, 0.1>>) {
  // argmax with the required axis and an i32 result.
  // CHECK-NEXT: %0 = synap.argmax %x {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2xi32>
  // GENERIC: %0 = "synap.argmax"(%x) <{axis = 1 : i64, keep_dims = false}> : (tensor<2x10xf32>) -> tensor<2xi32>
  %0 = synap.argmax %x {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2xi32>
  // Explicit keep_dims = false is elided.
  // CHECK-NEXT: %1 = synap.argmax %x {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2xi32>
  %1 = synap.argmax %x {axis = 1 : i64, keep_dims = false} : (tensor<2x10xf32>) -> tensor<2xi32>
  // keep_dims, negative axis, i64 result and layer attributes.
  // CHECK-NEXT: %2 = synap.argmax %x {layer_name = "argmax", layer_index = 24 : i64, axis = -1 : i64, keep_dims = true} : (tensor<2x10xf32>) -> tensor<2x1xi64>
  // GENERIC: %2 = "synap.argmax"(%x) <{axis = -1 : i64, keep_dims = true}> {layer_name = "argmax", layer_index = 24 : i64} : (tensor<2x10xf32>) -> tensor<2x1xi64>
  %2 = synap.argmax %x {layer_name = "argmax", layer_index = 24 : i64, axis = -1 : i64, keep_dims = true} : (tensor<2x10xf32>) -> tensor<2x1xi64>
  // argmin: default and every attribute.
  // CHECK-NEXT: %3 = synap.argmin %x {axis = 0 : i64} : (tensor<2x10xf32>) -> tensor<10xi64>
  %3 = synap.argmin %x {axis = 0 : i64} : (tensor<2x10xf32>) -> tensor<10xi64>
  // CHECK-NEXT: %4 = synap.argmin %x {layer_name = "argmin", layer_index = 25 : i64, axis = 0 : i64, keep_dims = true} : (tensor<2x10xf32>) -> tensor<1x10xi32>
  %4 = synap.argmin %x {layer_name = "argmin", layer_index = 25 : i64, axis = 0 : i64, keep_dims = true} : (tensor<2x10xf32>) -> tensor<1x10xi32>
  // A quantized input gives an integer (not quantized) result.
  // CHECK-NEXT: %5 = synap.argmax %q {axis = 1 : i64} : (tensor<1x5x!quant.uniform<u8:f32, 0.1>>) -> tensor<1xi32>
  %5 = synap.argmax %q {axis = 1 : i64} : (tensor<1x5x!quant.uniform<u8:f32, 0.1>>) -> tensor<1xi32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @reduce_prod(
func.func @reduce_prod(%x: tensor<1x7x7x8xf32>, %i: tensor<3x4xi32>) {
  // reduce_prod: default, explicit keep_dims = false elided.
  // CHECK-NEXT: %0 = synap.reduce_prod %x {axes = array<i64: 1, 2>} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  // GENERIC: %0 = "synap.reduce_prod"(%x) <{axes = array<i64: 1, 2>, keep_dims = false}> : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  %0 = synap.reduce_prod %x {axes = array<i64: 1, 2>, keep_dims = false} : (tensor<1x7x7x8xf32>) -> tensor<1x8xf32>
  // Every attribute, on integers.
  // CHECK-NEXT: %1 = synap.reduce_prod %i {layer_name = "prod", layer_index = 26 : i64, axes = array<i64: -1>, keep_dims = true} : (tensor<3x4xi32>) -> tensor<3x1xi32>
  %1 = synap.reduce_prod %i {layer_name = "prod", layer_index = 26 : i64, axes = array<i64: -1>, keep_dims = true} : (tensor<3x4xi32>) -> tensor<3x1xi32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @cumsum(
func.func @cumsum(%x: tensor<2x5xf32>, %i: tensor<2x5xi64>) {
  // Only the required axis; explicit defaults are elided.
  // CHECK-NEXT: %0 = synap.cumsum %x {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  // GENERIC: %0 = "synap.cumsum"(%x) <{axis = 1 : i64, exclusive = false, reverse = false}> : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %0 = synap.cumsum %x {axis = 1 : i64, exclusive = false, reverse = false} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  // Every attribute, a negative axis and integers.
  // CHECK-NEXT: %1 = synap.cumsum %i {layer_name = "running", layer_index = 27 : i64, axis = -2 : i64, exclusive = true, reverse = true} : (tensor<2x5xi64>) -> tensor<2x5xi64>
  // GENERIC: %1 = "synap.cumsum"(%i) <{axis = -2 : i64, exclusive = true, reverse = true}> {layer_name = "running", layer_index = 27 : i64} : (tensor<2x5xi64>) -> tensor<2x5xi64>
  %1 = synap.cumsum %i {layer_name = "running", layer_index = 27 : i64, axis = -2 : i64, exclusive = true, reverse = true} : (tensor<2x5xi64>) -> tensor<2x5xi64>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @cumprod(
func.func @cumprod(%x: tensor<2x5xf32>, %i: tensor<5xi32>) {
  // CHECK-NEXT: %0 = synap.cumprod %x {axis = 0 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  // GENERIC: %0 = "synap.cumprod"(%x) <{axis = 0 : i64, exclusive = false, reverse = false}> : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %0 = synap.cumprod %x {axis = 0 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  // CHECK-NEXT: %1 = synap.cumprod %i {layer_name = "product", layer_index = 28 : i64, axis = -1 : i64, exclusive = true, reverse = true} : (tensor<5xi32>) -> tensor<5xi32>
  // GENERIC: %1 = "synap.cumprod"(%i) <{axis = -1 : i64, exclusive = true, reverse = true}> {layer_name = "product", layer_index = 28 : i64} : (tensor<5xi32>) -> tensor<5xi32>
  %1 = synap.cumprod %i {layer_name = "product", layer_index = 28 : i64, axis = -1 : i64, exclusive = true, reverse = true} : (tensor<5xi32>) -> tensor<5xi32>
  // CHECK-NEXT: func.return
  func.return
}
