// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the ops of dialects/synap/data_movement.py: concat, split, slice,
// strided_slice, reshape, transpose, pad, tile, broadcast_to, gather, depth_to_space and
// space_to_depth.

// CHECK-LABEL: func.func @concat(
func.func @concat(%a: tensor<1x4x4x3xf32>, %b: tensor<1x4x4x5xf32>, %q: tensor<2x3x!quant.uniform<u8:f32, 0.1:1>>, %r: tensor<1x3x!quant.uniform<u8:f32, 0.2:2>>) {
  // The required axis; three inputs.
  // CHECK-NEXT: %0 = synap.concat %a, %b, %a {axis = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<1x4x4x5xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x11xf32>
  // GENERIC: %0 = "synap.concat"(%a, %b, %a) <{axis = 3 : i64}> : (tensor<1x4x4x3xf32>, tensor<1x4x4x5xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x11xf32>
  %0 = synap.concat %a, %b, %a {axis = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<1x4x4x5xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x4x11xf32>
  // Negative axis, layer attributes.
  // CHECK-NEXT: %1 = synap.concat %a, %b {layer_name = "cat", layer_index = 26 : i64, axis = -1 : i64} : (tensor<1x4x4x3xf32>, tensor<1x4x4x5xf32>) -> tensor<1x4x4x8xf32>
  // GENERIC: %1 = "synap.concat"(%a, %b) <{axis = -1 : i64}> {layer_name = "cat", layer_index = 26 : i64} : (tensor<1x4x4x3xf32>, tensor<1x4x4x5xf32>) -> tensor<1x4x4x8xf32>
  %1 = synap.concat %a, %b {layer_name = "cat", layer_index = 26 : i64, axis = -1 : i64} : (tensor<1x4x4x3xf32>, tensor<1x4x4x5xf32>) -> tensor<1x4x4x8xf32>
  // A single input.
  // CHECK-NEXT: %2 = synap.concat %a {axis = 0 : i64} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %2 = synap.concat %a {axis = 0 : i64} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  // Quantized inputs with different parameters.
  // CHECK-NEXT: %3 = synap.concat %q, %r {axis = 0 : i64} : (tensor<2x3x!quant.uniform<u8:f32, 0.1:1>>, tensor<1x3x!quant.uniform<u8:f32, 0.2:2>>) -> tensor<3x3x!quant.uniform<u8:f32, 0.2:2>>
  %3 = synap.concat %q, %r {axis = 0 : i64} : (tensor<2x3x!quant.uniform<u8:f32, 0.1:1>>, tensor<1x3x!quant.uniform<u8:f32, 0.2:2>>) -> tensor<3x3x!quant.uniform<u8:f32, 0.2:2>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @split(
func.func @split(%x: tensor<1x4x4x6xf32>, %q: tensor<4x!quant.uniform<i8:f32, 0.5>>) {
  // Two equal pieces along the channels.
  // CHECK-NEXT: %0, %1 = synap.split %x {axis = 3 : i64} : (tensor<1x4x4x6xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>)
  // GENERIC: %0, %1 = "synap.split"(%x) <{axis = 3 : i64}> : (tensor<1x4x4x6xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>)
  %0, %1 = synap.split %x {axis = 3 : i64} : (tensor<1x4x4x6xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x3xf32>)
  // Three unequal pieces, negative axis, layer attributes.
  // CHECK-NEXT: %2, %3, %4 = synap.split %x {layer_name = "split", layer_index = 27 : i64, axis = -3 : i64} : (tensor<1x4x4x6xf32>) -> (tensor<1x1x4x6xf32>, tensor<1x2x4x6xf32>, tensor<1x1x4x6xf32>)
  // GENERIC: %2, %3, %4 = "synap.split"(%x) <{axis = -3 : i64}> {layer_name = "split", layer_index = 27 : i64} : (tensor<1x4x4x6xf32>) -> (tensor<1x1x4x6xf32>, tensor<1x2x4x6xf32>, tensor<1x1x4x6xf32>)
  %2, %3, %4 = synap.split %x {layer_name = "split", layer_index = 27 : i64, axis = -3 : i64} : (tensor<1x4x4x6xf32>) -> (tensor<1x1x4x6xf32>, tensor<1x2x4x6xf32>, tensor<1x1x4x6xf32>)
  // A single piece (a copy).
  // CHECK-NEXT: %5 = synap.split %x {axis = 0 : i64} : (tensor<1x4x4x6xf32>) -> tensor<1x4x4x6xf32>
  %5 = synap.split %x {axis = 0 : i64} : (tensor<1x4x4x6xf32>) -> tensor<1x4x4x6xf32>
  // Quantized pieces.
  // CHECK-NEXT: %6, %7 = synap.split %q {axis = 0 : i64} : (tensor<4x!quant.uniform<i8:f32, 0.5>>) -> (tensor<1x!quant.uniform<i8:f32, 0.5>>, tensor<3x!quant.uniform<i8:f32, 0.5>>)
  %6, %7 = synap.split %q {axis = 0 : i64} : (tensor<4x!quant.uniform<i8:f32, 0.5>>) -> (tensor<1x!quant.uniform<i8:f32, 0.5>>, tensor<3x!quant.uniform<i8:f32, 0.5>>)
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @slice(
func.func @slice(%x: tensor<1x8x8x3xf32>, %q: tensor<6x!quant.uniform<u8:f32, 0.5:7>>) {
  // The required start; the result type gives the size.
  // CHECK-NEXT: %0 = synap.slice %x {start = array<i64: 0, 2, 2, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  // GENERIC: %0 = "synap.slice"(%x) <{start = array<i64: 0, 2, 2, 0>}> : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  %0 = synap.slice %x {start = array<i64: 0, 2, 2, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  // Layer attributes; a window touching the end; an empty window along one axis.
  // CHECK-NEXT: %1 = synap.slice %x {layer_name = "crop", layer_index = 28 : i64, start = array<i64: 0, 7, 0, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x1x8x2xf32>
  %1 = synap.slice %x {layer_name = "crop", layer_index = 28 : i64, start = array<i64: 0, 7, 0, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x1x8x2xf32>
  // CHECK-NEXT: %2 = synap.slice %x {start = array<i64: 0, 8, 0, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x0x8x3xf32>
  %2 = synap.slice %x {start = array<i64: 0, 8, 0, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x0x8x3xf32>
  // Quantized.
  // CHECK-NEXT: %3 = synap.slice %q {start = array<i64: 2>} : (tensor<6x!quant.uniform<u8:f32, 0.5:7>>) -> tensor<3x!quant.uniform<u8:f32, 0.5:7>>
  %3 = synap.slice %q {start = array<i64: 2>} : (tensor<6x!quant.uniform<u8:f32, 0.5:7>>) -> tensor<3x!quant.uniform<u8:f32, 0.5:7>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @strided_slice(
func.func @strided_slice(%x: tensor<1x8x8x3xf32>, %v: tensor<5xi32>) {
  // begin, end and strides are all required.
  // CHECK-NEXT: %0 = synap.strided_slice %x {begin = array<i64: 0, 0, 0, 0>, end = array<i64: 1, 8, 8, 3>, strides = array<i64: 1, 2, 2, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  // GENERIC: %0 = "synap.strided_slice"(%x) <{begin = array<i64: 0, 0, 0, 0>, end = array<i64: 1, 8, 8, 3>, strides = array<i64: 1, 2, 2, 1>}> : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  %0 = synap.strided_slice %x {begin = array<i64: 0, 0, 0, 0>, end = array<i64: 1, 8, 8, 3>, strides = array<i64: 1, 2, 2, 1>} : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  // A reversal (end -1 with stride -1), with layer attributes.
  // CHECK-NEXT: %1 = synap.strided_slice %v {layer_name = "rev", layer_index = 29 : i64, begin = array<i64: 4>, end = array<i64: -1>, strides = array<i64: -1>} : (tensor<5xi32>) -> tensor<5xi32>
  %1 = synap.strided_slice %v {layer_name = "rev", layer_index = 29 : i64, begin = array<i64: 4>, end = array<i64: -1>, strides = array<i64: -1>} : (tensor<5xi32>) -> tensor<5xi32>
  // A stride that does not divide the extent.
  // CHECK-NEXT: %2 = synap.strided_slice %v {begin = array<i64: 1>, end = array<i64: 5>, strides = array<i64: 3>} : (tensor<5xi32>) -> tensor<2xi32>
  %2 = synap.strided_slice %v {begin = array<i64: 1>, end = array<i64: 5>, strides = array<i64: 3>} : (tensor<5xi32>) -> tensor<2xi32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @reshape(
func.func @reshape(%x: tensor<1x4x4x3xf32>, %q: tensor<1x6x!quant.uniform<i8:f32:1, {0.1,0.2,0.3,0.4,0.5,0.6}>>) {
  // Flatten.
  // CHECK-NEXT: %0 = synap.reshape %x : (tensor<1x4x4x3xf32>) -> tensor<1x48xf32>
  // GENERIC: %0 = "synap.reshape"(%x) : (tensor<1x4x4x3xf32>) -> tensor<1x48xf32>
  %0 = synap.reshape %x : (tensor<1x4x4x3xf32>) -> tensor<1x48xf32>
  // To a higher rank, with layer attributes.
  // CHECK-NEXT: %1 = synap.reshape %x {layer_name = "reshape", layer_index = 30 : i64} : (tensor<1x4x4x3xf32>) -> tensor<2x2x2x2x3xf32>
  %1 = synap.reshape %x {layer_name = "reshape", layer_index = 30 : i64} : (tensor<1x4x4x3xf32>) -> tensor<2x2x2x2x3xf32>
  // A per-axis quantized tensor whose quantized axis moves.
  // CHECK-NEXT: %2 = synap.reshape %q : (tensor<1x6x!quant.uniform<i8:f32:1, {0.1,0.2,0.3,0.4,0.5,0.6}>>) -> tensor<6x!quant.uniform<i8:f32:0, {0.1,0.2,0.3,0.4,0.5,0.6}>>
  %2 = synap.reshape %q : (tensor<1x6x!quant.uniform<i8:f32:1, {0.1,0.2,0.3,0.4,0.5,0.6}>>) -> tensor<6x!quant.uniform<i8:f32:0, {0.1,0.2,0.3,0.4,0.5,0.6}>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @transpose(
func.func @transpose(%x: tensor<1x2x3x4xf32>, %q: tensor<2x3x!quant.uniform<u16:f32, 0.001:65535>>) {
  // NHWC to NCHW.
  // CHECK-NEXT: %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  // GENERIC: %0 = "synap.transpose"(%x) <{perm = array<i64: 0, 3, 1, 2>}> : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %0 = synap.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  // The identity permutation, with layer attributes.
  // CHECK-NEXT: %1 = synap.transpose %x {layer_name = "perm", layer_index = 31 : i64, perm = array<i64: 0, 1, 2, 3>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %1 = synap.transpose %x {layer_name = "perm", layer_index = 31 : i64, perm = array<i64: 0, 1, 2, 3>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  // Quantized.
  // CHECK-NEXT: %2 = synap.transpose %q {perm = array<i64: 1, 0>} : (tensor<2x3x!quant.uniform<u16:f32, 0.001:65535>>) -> tensor<3x2x!quant.uniform<u16:f32, 0.001:65535>>
  %2 = synap.transpose %q {perm = array<i64: 1, 0>} : (tensor<2x3x!quant.uniform<u16:f32, 0.001:65535>>) -> tensor<3x2x!quant.uniform<u16:f32, 0.001:65535>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @pad(
func.func @pad(%x: tensor<1x4x4x3xf32>, %q: tensor<3x!quant.uniform<u8:f32, 0.5:10>>) {
  // Constant zero padding: mode and value at their defaults.
  // CHECK-NEXT: %0 = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x4x4x3xf32>) -> tensor<1x6x6x3xf32>
  // GENERIC: %0 = "synap.pad"(%x) <{pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, mode = #synap<pad_mode constant>, value = 0.000000e+00 : f32}> : (tensor<1x4x4x3xf32>) -> tensor<1x6x6x3xf32>
  %0 = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x4x4x3xf32>) -> tensor<1x6x6x3xf32>
  // Explicit defaults are elided.
  // CHECK-NEXT: %1 = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x4x4x3xf32>) -> tensor<1x6x6x3xf32>
  %1 = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, mode = #synap<pad_mode constant>, value = 0.000000e+00 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x6x6x3xf32>
  // A non-zero constant, with layer attributes.
  // CHECK-NEXT: %2 = synap.pad %x {layer_name = "pad", layer_index = 32 : i64, pads = array<i64: 0, 0, 2, 0, 0, 3, 0, 0>, value = -1.000000e+00 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x6x7x3xf32>
  // GENERIC: %2 = "synap.pad"(%x) <{pads = array<i64: 0, 0, 2, 0, 0, 3, 0, 0>, value = -1.000000e+00 : f32, mode = #synap<pad_mode constant>}> {layer_name = "pad", layer_index = 32 : i64} : (tensor<1x4x4x3xf32>) -> tensor<1x6x7x3xf32>
  %2 = synap.pad %x {layer_name = "pad", layer_index = 32 : i64, pads = array<i64: 0, 0, 2, 0, 0, 3, 0, 0>, value = -1.000000e+00 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x6x7x3xf32>
  // Reflect padding (pads smaller than the dimension).
  // CHECK-NEXT: %3 = synap.pad %x {pads = array<i64: 0, 0, 3, 3, 1, 2, 0, 0>, mode = #synap<pad_mode reflect>} : (tensor<1x4x4x3xf32>) -> tensor<1x10x7x3xf32>
  %3 = synap.pad %x {pads = array<i64: 0, 0, 3, 3, 1, 2, 0, 0>, mode = #synap<pad_mode reflect>} : (tensor<1x4x4x3xf32>) -> tensor<1x10x7x3xf32>
  // Edge padding.
  // CHECK-NEXT: %4 = synap.pad %x {pads = array<i64: 0, 0, 5, 5, 5, 5, 0, 0>, mode = #synap<pad_mode edge>} : (tensor<1x4x4x3xf32>) -> tensor<1x14x14x3xf32>
  %4 = synap.pad %x {pads = array<i64: 0, 0, 5, 5, 5, 5, 0, 0>, mode = #synap<pad_mode edge>} : (tensor<1x4x4x3xf32>) -> tensor<1x14x14x3xf32>
  // Symmetric padding (mirrors including the edge; may repeat the whole dimension).
  // CHECK-NEXT: %5 = synap.pad %x {pads = array<i64: 0, 0, 4, 0, 0, 4, 0, 0>, mode = #synap<pad_mode symmetric>} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  %6 = synap.pad %x {pads = array<i64: 0, 0, 4, 0, 0, 4, 0, 0>, mode = #synap<pad_mode symmetric>} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  // Quantized, with a real-valued pad value.
  // CHECK-NEXT: %6 = synap.pad %q {pads = array<i64: 1, 2>, value = 2.500000e+00 : f32} : (tensor<3x!quant.uniform<u8:f32, 0.5:10>>) -> tensor<6x!quant.uniform<u8:f32, 0.5:10>>
  %5 = synap.pad %q {pads = array<i64: 1, 2>, value = 2.500000e+00 : f32} : (tensor<3x!quant.uniform<u8:f32, 0.5:10>>) -> tensor<6x!quant.uniform<u8:f32, 0.5:10>>
  // Wrap padding (periodic; wider than the dimension is allowed).
  // CHECK-NEXT: %7 = synap.pad %x {pads = array<i64: 0, 0, 5, 1, 0, 2, 0, 0>, mode = #synap<pad_mode wrap>} : (tensor<1x4x4x3xf32>) -> tensor<1x10x6x3xf32>
  // GENERIC: %7 = "synap.pad"(%x) <{pads = array<i64: 0, 0, 5, 1, 0, 2, 0, 0>, mode = #synap<pad_mode wrap>, value = 0.000000e+00 : f32}> : (tensor<1x4x4x3xf32>) -> tensor<1x10x6x3xf32>
  %7 = synap.pad %x {pads = array<i64: 0, 0, 5, 1, 0, 2, 0, 0>, mode = #synap<pad_mode wrap>} : (tensor<1x4x4x3xf32>) -> tensor<1x10x6x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @tile(
func.func @tile(%x: tensor<2x3xf32>) {
  // The required multiples.
  // CHECK-NEXT: %0 = synap.tile %x {multiples = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<4x9xf32>
  // GENERIC: %0 = "synap.tile"(%x) <{multiples = array<i64: 2, 3>}> : (tensor<2x3xf32>) -> tensor<4x9xf32>
  %0 = synap.tile %x {multiples = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<4x9xf32>
  // All ones, with layer attributes.
  // CHECK-NEXT: %1 = synap.tile %x {layer_name = "tile", layer_index = 33 : i64, multiples = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = synap.tile %x {layer_name = "tile", layer_index = 33 : i64, multiples = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @broadcast_to(
func.func @broadcast_to(%x: tensor<3xf32>, %y: tensor<2x1xf32>) {
  // A vector to a matrix.
  // CHECK-NEXT: %0 = synap.broadcast_to %x : (tensor<3xf32>) -> tensor<4x3xf32>
  // GENERIC: %0 = "synap.broadcast_to"(%x) : (tensor<3xf32>) -> tensor<4x3xf32>
  %0 = synap.broadcast_to %x : (tensor<3xf32>) -> tensor<4x3xf32>
  // A size-1 dimension, with layer attributes.
  // CHECK-NEXT: %1 = synap.broadcast_to %y {layer_name = "bcast", layer_index = 34 : i64} : (tensor<2x1xf32>) -> tensor<5x2x6xf32>
  %1 = synap.broadcast_to %y {layer_name = "bcast", layer_index = 34 : i64} : (tensor<2x1xf32>) -> tensor<5x2x6xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @gather(
func.func @gather(%data: tensor<10x4xf32>, %idx: tensor<2x3xi32>, %idx64: tensor<5xi64>, %q: tensor<3x!quant.uniform<i8:f32, 0.5:1>>) {
  // Default axis 0 is elided.
  // CHECK-NEXT: %0 = synap.gather %data, %idx : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  // GENERIC: %0 = "synap.gather"(%data, %idx) <{axis = 0 : i64}> : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  %0 = synap.gather %data, %idx : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %1 = synap.gather %data, %idx : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  %1 = synap.gather %data, %idx {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  // Non-default (negative) axis, i64 indices, layer attributes.
  // CHECK-NEXT: %2 = synap.gather %data, %idx64 {layer_name = "gather", layer_index = 35 : i64, axis = -1 : i64} : (tensor<10x4xf32>, tensor<5xi64>) -> tensor<10x5xf32>
  // GENERIC: %2 = "synap.gather"(%data, %idx64) <{axis = -1 : i64}> {layer_name = "gather", layer_index = 35 : i64} : (tensor<10x4xf32>, tensor<5xi64>) -> tensor<10x5xf32>
  %2 = synap.gather %data, %idx64 {layer_name = "gather", layer_index = 35 : i64, axis = -1 : i64} : (tensor<10x4xf32>, tensor<5xi64>) -> tensor<10x5xf32>
  // Quantized data.
  // CHECK-NEXT: %3 = synap.gather %q, %idx64 : (tensor<3x!quant.uniform<i8:f32, 0.5:1>>, tensor<5xi64>) -> tensor<5x!quant.uniform<i8:f32, 0.5:1>>
  %3 = synap.gather %q, %idx64 : (tensor<3x!quant.uniform<i8:f32, 0.5:1>>, tensor<5xi64>) -> tensor<5x!quant.uniform<i8:f32, 0.5:1>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @depth_to_space(
func.func @depth_to_space(%x: tensor<1x2x3x8xf32>) {
  // The required block size; DCR mode (the default) is elided.
  // CHECK-NEXT: %0 = synap.depth_to_space %x {block_size = 2 : i64} : (tensor<1x2x3x8xf32>) -> tensor<1x4x6x2xf32>
  // GENERIC: %0 = "synap.depth_to_space"(%x) <{block_size = 2 : i64, mode = #synap<depth_to_space_mode dcr>}> : (tensor<1x2x3x8xf32>) -> tensor<1x4x6x2xf32>
  %0 = synap.depth_to_space %x {block_size = 2 : i64} : (tensor<1x2x3x8xf32>) -> tensor<1x4x6x2xf32>
  // CHECK-NEXT: %1 = synap.depth_to_space %x {block_size = 2 : i64} : (tensor<1x2x3x8xf32>) -> tensor<1x4x6x2xf32>
  %1 = synap.depth_to_space %x {block_size = 2 : i64, mode = #synap<depth_to_space_mode dcr>} : (tensor<1x2x3x8xf32>) -> tensor<1x4x6x2xf32>
  // CRD mode, with layer attributes.
  // CHECK-NEXT: %2 = synap.depth_to_space %x {layer_name = "d2s", layer_index = 36 : i64, block_size = 2 : i64, mode = #synap<depth_to_space_mode crd>} : (tensor<1x2x3x8xf32>) -> tensor<1x4x6x2xf32>
  // GENERIC: %2 = "synap.depth_to_space"(%x) <{block_size = 2 : i64, mode = #synap<depth_to_space_mode crd>}> {layer_name = "d2s", layer_index = 36 : i64} : (tensor<1x2x3x8xf32>) -> tensor<1x4x6x2xf32>
  %2 = synap.depth_to_space %x {layer_name = "d2s", layer_index = 36 : i64, block_size = 2 : i64, mode = #synap<depth_to_space_mode crd>} : (tensor<1x2x3x8xf32>) -> tensor<1x4x6x2xf32>
  // Block size 1 is the identity.
  // CHECK-NEXT: %3 = synap.depth_to_space %x {block_size = 1 : i64} : (tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  %3 = synap.depth_to_space %x {block_size = 1 : i64} : (tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @space_to_depth(
func.func @space_to_depth(%x: tensor<1x4x6x2xf32>, %q: tensor<1x2x2x1x!quant.uniform<u8:f32, 1.0>>) {
  // The required block size.
  // CHECK-NEXT: %0 = synap.space_to_depth %x {block_size = 2 : i64} : (tensor<1x4x6x2xf32>) -> tensor<1x2x3x8xf32>
  // GENERIC: %0 = "synap.space_to_depth"(%x) <{block_size = 2 : i64}> : (tensor<1x4x6x2xf32>) -> tensor<1x2x3x8xf32>
  %0 = synap.space_to_depth %x {block_size = 2 : i64} : (tensor<1x4x6x2xf32>) -> tensor<1x2x3x8xf32>
  // With layer attributes.
  // CHECK-NEXT: %1 = synap.space_to_depth %x {layer_name = "s2d", layer_index = 37 : i64, block_size = 2 : i64} : (tensor<1x4x6x2xf32>) -> tensor<1x2x3x8xf32>
  %1 = synap.space_to_depth %x {layer_name = "s2d", layer_index = 37 : i64, block_size = 2 : i64} : (tensor<1x4x6x2xf32>) -> tensor<1x2x3x8xf32>
  // Quantized.
  // CHECK-NEXT: %2 = synap.space_to_depth %q {block_size = 2 : i64} : (tensor<1x2x2x1x!quant.uniform<u8:f32, 1.0>>) -> tensor<1x1x1x4x!quant.uniform<u8:f32, 1.0>>
  %2 = synap.space_to_depth %q {block_size = 2 : i64} : (tensor<1x2x2x1x!quant.uniform<u8:f32, 1.0>>) -> tensor<1x1x1x4x!quant.uniform<u8:f32, 1.0>>
  // CHECK-NEXT: func.return
  func.return
}
