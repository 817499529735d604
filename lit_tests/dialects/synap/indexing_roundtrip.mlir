// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the ops of dialects/synap/indexing.py: gather_elements, gather_nd,
// scatter_elements and scatter_nd (with #synap<scatter_reduction ...>), one_hot, trilu,
// top_k (two results), reverse_sequence and einsum (a string equation); defaults are
// elided, layer attributes kept, quantized and boolean operands where the ops move
// stored values.

// CHECK-LABEL: func.func @gathers(
func.func @gathers(%d: tensor<1x4x4x5xf32>, %i: tensor<1x4x4x2xi32>, %i64: tensor<2x3x2xi64>, %q: tensor<6x!quant.uniform<u8:f32, 0.5:3>>, %qi: tensor<4xi32>) {
  // Along the last axis.
  // CHECK-NEXT: %0 = synap.gather_elements %d, %i {axis = 3 : i64} : (tensor<1x4x4x5xf32>, tensor<1x4x4x2xi32>) -> tensor<1x4x4x2xf32>
  // GENERIC: %0 = "synap.gather_elements"(%d, %i) <{axis = 3 : i64}> : (tensor<1x4x4x5xf32>, tensor<1x4x4x2xi32>) -> tensor<1x4x4x2xf32>
  %0 = synap.gather_elements %d, %i {axis = 3 : i64} : (tensor<1x4x4x5xf32>, tensor<1x4x4x2xi32>) -> tensor<1x4x4x2xf32>
  // The default axis 0 is elided.
  // CHECK-NEXT: %1 = synap.gather_elements %d, %i : (tensor<1x4x4x5xf32>, tensor<1x4x4x2xi32>) -> tensor<1x4x4x2xf32>
  %1 = synap.gather_elements %d, %i {axis = 0 : i64} : (tensor<1x4x4x5xf32>, tensor<1x4x4x2xi32>) -> tensor<1x4x4x2xf32>
  // Quantized data, negative axis, layer attributes.
  // CHECK-NEXT: %2 = synap.gather_elements %q, %qi {layer_name = "ge", layer_index = 3 : i64, axis = -1 : i64} : (tensor<6x!quant.uniform<u8:f32, 0.5:3>>, tensor<4xi32>) -> tensor<4x!quant.uniform<u8:f32, 0.5:3>>
  %2 = synap.gather_elements %q, %qi {layer_name = "ge", layer_index = 3 : i64, axis = -1 : i64} : (tensor<6x!quant.uniform<u8:f32, 0.5:3>>, tensor<4xi32>) -> tensor<4x!quant.uniform<u8:f32, 0.5:3>>
  // Index tuples of length 2 into the leading dimensions; batch_dims defaulted.
  // CHECK-NEXT: %3 = synap.gather_nd %d, %i64 : (tensor<1x4x4x5xf32>, tensor<2x3x2xi64>) -> tensor<2x3x4x5xf32>
  // GENERIC: %3 = "synap.gather_nd"(%d, %i64) <{batch_dims = 0 : i64}> : (tensor<1x4x4x5xf32>, tensor<2x3x2xi64>) -> tensor<2x3x4x5xf32>
  %3 = synap.gather_nd %d, %i64 : (tensor<1x4x4x5xf32>, tensor<2x3x2xi64>) -> tensor<2x3x4x5xf32>
  // Explicit batch_dims = 0 is elided.
  // CHECK-NEXT: %4 = synap.gather_nd %d, %i64 : (tensor<1x4x4x5xf32>, tensor<2x3x2xi64>) -> tensor<2x3x4x5xf32>
  %4 = synap.gather_nd %d, %i64 {batch_dims = 0 : i64} : (tensor<1x4x4x5xf32>, tensor<2x3x2xi64>) -> tensor<2x3x4x5xf32>
  // One batch dimension, i64 data, layer name.
  // CHECK-NEXT: %5 = synap.gather_nd %i64, %i64 {layer_name = "gnd", batch_dims = 1 : i64} : (tensor<2x3x2xi64>, tensor<2x3x2xi64>) -> tensor<2x3xi64>
  %5 = synap.gather_nd %i64, %i64 {layer_name = "gnd", batch_dims = 1 : i64} : (tensor<2x3x2xi64>, tensor<2x3x2xi64>) -> tensor<2x3xi64>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @scatters(
func.func @scatters(%d: tensor<3x5xf32>, %i: tensor<2x5xi64>, %u: tensor<2x5xf32>, %b: tensor<3x5xi1>, %ub: tensor<2x5xi1>, %nd: tensor<2x1xi32>, %us: tensor<2x5xf32>) {
  // Replace along axis 0: both defaults elided.
  // CHECK-NEXT: %0 = synap.scatter_elements %d, %i, %u : (tensor<3x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<3x5xf32>
  // GENERIC: %0 = "synap.scatter_elements"(%d, %i, %u) <{axis = 0 : i64, reduction = #synap<scatter_reduction none>}> : (tensor<3x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<3x5xf32>
  %0 = synap.scatter_elements %d, %i, %u : (tensor<3x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<3x5xf32>
  // Explicit defaults are elided.
  // CHECK-NEXT: %1 = synap.scatter_elements %d, %i, %u : (tensor<3x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<3x5xf32>
  %1 = synap.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = #synap<scatter_reduction none>} : (tensor<3x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<3x5xf32>
  // Add along the last axis, layer attributes.
  // CHECK-NEXT: %2 = synap.scatter_elements %d, %i, %u {layer_name = "se", layer_index = 4 : i64, axis = -1 : i64, reduction = #synap<scatter_reduction add>} : (tensor<3x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<3x5xf32>
  %2 = synap.scatter_elements %d, %i, %u {layer_name = "se", layer_index = 4 : i64, axis = -1 : i64, reduction = #synap<scatter_reduction add>} : (tensor<3x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<3x5xf32>
  // Multiply.
  // CHECK-NEXT: %3 = synap.scatter_elements %d, %i, %u {reduction = #synap<scatter_reduction mul>} : (tensor<3x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<3x5xf32>
  %3 = synap.scatter_elements %d, %i, %u {reduction = #synap<scatter_reduction mul>} : (tensor<3x5xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<3x5xf32>
  // Booleans.
  // CHECK-NEXT: %4 = synap.scatter_elements %b, %i, %ub {axis = 1 : i64} : (tensor<3x5xi1>, tensor<2x5xi64>, tensor<2x5xi1>) -> tensor<3x5xi1>
  %4 = synap.scatter_elements %b, %i, %ub {axis = 1 : i64} : (tensor<3x5xi1>, tensor<2x5xi64>, tensor<2x5xi1>) -> tensor<3x5xi1>
  // scatter_nd: rows replaced by index tuples of length 1.
  // CHECK-NEXT: %5 = synap.scatter_nd %d, %nd, %us : (tensor<3x5xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  // GENERIC: %5 = "synap.scatter_nd"(%d, %nd, %us) <{reduction = #synap<scatter_reduction none>}> : (tensor<3x5xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  %5 = synap.scatter_nd %d, %nd, %us : (tensor<3x5xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  // Maximum.
  // CHECK-NEXT: %6 = synap.scatter_nd %d, %nd, %us {reduction = #synap<scatter_reduction max>} : (tensor<3x5xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  %6 = synap.scatter_nd %d, %nd, %us {reduction = #synap<scatter_reduction max>} : (tensor<3x5xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  // Minimum, layer name.
  // CHECK-NEXT: %7 = synap.scatter_nd %d, %nd, %us {layer_name = "snd", reduction = #synap<scatter_reduction min>} : (tensor<3x5xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  %7 = synap.scatter_nd %d, %nd, %us {layer_name = "snd", reduction = #synap<scatter_reduction min>} : (tensor<3x5xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @one_hot(
func.func @one_hot(%i: tensor<2x3xi64>, %f: tensor<4xf32>, %v: tensor<2xf32>, %vi: tensor<2xi32>) {
  // Depth along a new last axis (axis defaulted), float values.
  // CHECK-NEXT: %0 = synap.one_hot %i, %v {depth = 5 : i64} : (tensor<2x3xi64>, tensor<2xf32>) -> tensor<2x3x5xf32>
  // GENERIC: %0 = "synap.one_hot"(%i, %v) <{depth = 5 : i64, axis = -1 : i64}> : (tensor<2x3xi64>, tensor<2xf32>) -> tensor<2x3x5xf32>
  %0 = synap.one_hot %i, %v {depth = 5 : i64} : (tensor<2x3xi64>, tensor<2xf32>) -> tensor<2x3x5xf32>
  // Integer values along a new first axis.
  // CHECK-NEXT: %1 = synap.one_hot %i, %vi {depth = 5 : i64, axis = 0 : i64} : (tensor<2x3xi64>, tensor<2xi32>) -> tensor<5x2x3xi32>
  %1 = synap.one_hot %i, %vi {depth = 5 : i64, axis = 0 : i64} : (tensor<2x3xi64>, tensor<2xi32>) -> tensor<5x2x3xi32>
  // Float indices; explicit axis -1 is elided; layer attributes.
  // CHECK-NEXT: %2 = synap.one_hot %f, %v {layer_name = "oh", layer_index = 9 : i64, depth = 3 : i64} : (tensor<4xf32>, tensor<2xf32>) -> tensor<4x3xf32>
  %2 = synap.one_hot %f, %v {layer_name = "oh", layer_index = 9 : i64, depth = 3 : i64, axis = -1 : i64} : (tensor<4xf32>, tensor<2xf32>) -> tensor<4x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @trilu(
func.func @trilu(%x: tensor<2x3x4xf32>, %i: tensor<4x4xi64>, %q: tensor<3x3x!quant.uniform<i8:f32, 0.25:-2>>) {
  // Upper triangle of each matrix, k = 0 (both defaults elided).
  // CHECK-NEXT: %0 = synap.trilu %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // GENERIC: %0 = "synap.trilu"(%x) <{k = 0 : i64, upper = true}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %0 = synap.trilu %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // Explicit defaults are elided.
  // CHECK-NEXT: %1 = synap.trilu %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = synap.trilu %x {k = 0 : i64, upper = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // Strictly lower triangle of integers, layer name.
  // CHECK-NEXT: %2 = synap.trilu %i {layer_name = "tril", k = -1 : i64, upper = false} : (tensor<4x4xi64>) -> tensor<4x4xi64>
  %2 = synap.trilu %i {layer_name = "tril", k = -1 : i64, upper = false} : (tensor<4x4xi64>) -> tensor<4x4xi64>
  // Quantized input, k above the diagonal.
  // CHECK-NEXT: %3 = synap.trilu %q {k = 2 : i64} : (tensor<3x3x!quant.uniform<i8:f32, 0.25:-2>>) -> tensor<3x3x!quant.uniform<i8:f32, 0.25:-2>>
  %3 = synap.trilu %q {k = 2 : i64} : (tensor<3x3x!quant.uniform<i8:f32, 0.25:-2>>) -> tensor<3x3x!quant.uniform<i8:f32, 0.25:-2>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @top_k(
func.func @top_k(%x: tensor<1x4x4x5xf32>, %i: tensor<6xi32>) {
  // The 2 largest along the last axis (defaults elided), i64 indices.
  // CHECK-NEXT: %0, %1 = synap.top_k %x {k = 2 : i64} : (tensor<1x4x4x5xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xi64>)
  // GENERIC: %0, %1 = "synap.top_k"(%x) <{k = 2 : i64, axis = -1 : i64, largest = true}> : (tensor<1x4x4x5xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xi64>)
  %0, %1 = synap.top_k %x {k = 2 : i64} : (tensor<1x4x4x5xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xi64>)
  // Explicit axis and largest = true.
  // CHECK-NEXT: %2, %3 = synap.top_k %x {k = 3 : i64, axis = 3 : i64} : (tensor<1x4x4x5xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xi64>)
  %2, %3 = synap.top_k %x {k = 3 : i64, axis = 3 : i64, largest = true} : (tensor<1x4x4x5xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xi64>)
  // All values of integers sorted smallest first, i32 indices, layer attributes.
  // CHECK-NEXT: %4, %5 = synap.top_k %i {layer_name = "topk", layer_index = 11 : i64, k = 6 : i64, axis = 0 : i64, largest = false} : (tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>)
  // GENERIC: %4, %5 = "synap.top_k"(%i) <{k = 6 : i64, axis = 0 : i64, largest = false}> {layer_name = "topk", layer_index = 11 : i64} : (tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>)
  %4, %5 = synap.top_k %i {layer_name = "topk", layer_index = 11 : i64, k = 6 : i64, axis = 0 : i64, largest = false} : (tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>)
  // k = 0: empty results.
  // CHECK-NEXT: %6, %7 = synap.top_k %x {k = 0 : i64, axis = 1 : i64} : (tensor<1x4x4x5xf32>) -> (tensor<1x0x4x5xf32>, tensor<1x0x4x5xi64>)
  %6, %7 = synap.top_k %x {k = 0 : i64, axis = 1 : i64} : (tensor<1x4x4x5xf32>) -> (tensor<1x0x4x5xf32>, tensor<1x0x4x5xi64>)
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @reverse_sequence(
func.func @reverse_sequence(%x: tensor<1x4x4x5xf32>, %n: tensor<4xi64>, %m: tensor<3xi32>, %b: tensor<4x3xi1>) {
  // Batch along dimension 1, time along dimension 2.
  // CHECK-NEXT: %0 = synap.reverse_sequence %x, %n {batch_axis = 1 : i64, time_axis = 2 : i64} : (tensor<1x4x4x5xf32>, tensor<4xi64>) -> tensor<1x4x4x5xf32>
  // GENERIC: %0 = "synap.reverse_sequence"(%x, %n) <{batch_axis = 1 : i64, time_axis = 2 : i64}> : (tensor<1x4x4x5xf32>, tensor<4xi64>) -> tensor<1x4x4x5xf32>
  %0 = synap.reverse_sequence %x, %n {batch_axis = 1 : i64, time_axis = 2 : i64} : (tensor<1x4x4x5xf32>, tensor<4xi64>) -> tensor<1x4x4x5xf32>
  // Booleans, i32 lengths, negative batch axis, layer name.
  // CHECK-NEXT: %1 = synap.reverse_sequence %b, %m {layer_name = "rev", batch_axis = -1 : i64, time_axis = 0 : i64} : (tensor<4x3xi1>, tensor<3xi32>) -> tensor<4x3xi1>
  %1 = synap.reverse_sequence %b, %m {layer_name = "rev", batch_axis = -1 : i64, time_axis = 0 : i64} : (tensor<4x3xi1>, tensor<3xi32>) -> tensor<4x3xi1>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @einsum(
func.func @einsum(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %s: tensor<4x4xf32>, %i: tensor<3x1xi32>, %j: tensor<5x4xi32>) {
  // Batched matrix product.
  // CHECK-NEXT: %0 = synap.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  // GENERIC: %0 = "synap.einsum"(%a, %b) <{equation = "bij,bjk->bik"}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %0 = synap.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  // Diagonal.
  // CHECK-NEXT: %1 = synap.einsum %s {equation = "ii->i"} : (tensor<4x4xf32>) -> tensor<4xf32>
  %1 = synap.einsum %s {equation = "ii->i"} : (tensor<4x4xf32>) -> tensor<4xf32>
  // Trace to a scalar, layer attributes.
  // CHECK-NEXT: %2 = synap.einsum %s {layer_name = "trace", layer_index = 12 : i64, equation = "ii->"} : (tensor<4x4xf32>) -> tensor<f32>
  %2 = synap.einsum %s {layer_name = "trace", layer_index = 12 : i64, equation = "ii->"} : (tensor<4x4xf32>) -> tensor<f32>
  // Integers; a dimension of 1 broadcasts against 4.
  // CHECK-NEXT: %3 = synap.einsum %i, %j {equation = "ab,cb->acb"} : (tensor<3x1xi32>, tensor<5x4xi32>) -> tensor<3x5x4xi32>
  %3 = synap.einsum %i, %j {equation = "ab,cb->acb"} : (tensor<3x1xi32>, tensor<5x4xi32>) -> tensor<3x5x4xi32>
  // A transpose.
  // CHECK-NEXT: %4 = synap.einsum %a {equation = "bij->jbi"} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %4 = synap.einsum %a {equation = "bij->jbi"} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK-NEXT: func.return
  func.return
}
