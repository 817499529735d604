// RUN: synapc-opt %s --split-input-file -p canonicalize | filecheck %s

// Identities disappear: same-type reshape, identity transpose, zero pad, zero-start slice
// of the whole tensor, all-ones tile, same-type cast/quantize/broadcast, one-input concat.
// CHECK-LABEL: func.func @identities
// CHECK-NEXT:    func.return %{{.*}} : tensor<2x3xf32>
func.func @identities(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = synap.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = synap.transpose %a {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = synap.pad %b {pads = array<i64: 0, 0, 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %d = synap.slice %c {start = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = synap.tile %d {multiples = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %f = synap.cast %e : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %g = synap.broadcast_to %f : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %h = synap.concat %g {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %h : tensor<2x3xf32>
}

// -----

// Ops that move data are kept: a real transpose, a non-zero pad, a partial slice.
// CHECK-LABEL: func.func @not_identities
// CHECK-NEXT:    synap.transpose
// CHECK-NEXT:    synap.pad
// CHECK-NEXT:    synap.slice
// CHECK-NEXT:    func.return
func.func @not_identities(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = synap.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %b = synap.pad %a {pads = array<i64: 0, 0, 1, 0>} : (tensor<3x2xf32>) -> tensor<3x3xf32>
  %c = synap.slice %b {start = array<i64: 0, 0>} : (tensor<3x3xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}

// -----

// Transpose pairs cancel; a chain composes into one transpose (perm p then q = p[q]).
// CHECK-LABEL: func.func @transposes
// CHECK-NEXT:    %[[T:.*]] = synap.transpose %{{.*}} {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %{{.*}}, %[[T]] : tensor<2x3x4xf32>, tensor<4x2x3xf32>
func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
  %a = synap.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %b = synap.transpose %a {perm = array<i64: 1, 0, 2>} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
  %c = synap.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %d = synap.transpose %c {perm = array<i64: 1, 0, 2>} : (tensor<2x4x3xf32>) -> tensor<4x2x3xf32>
  func.return %b, %d : tensor<2x3x4xf32>, tensor<4x2x3xf32>
}

// -----

// Reshape chains collapse into one reshape, or vanish when they come back to the input.
// CHECK-LABEL: func.func @reshapes
// CHECK-NEXT:    %[[R:.*]] = synap.reshape %{{.*}} : (tensor<2x6xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    func.return %{{.*}}, %[[R]] : tensor<2x6xf32>, tensor<3x4xf32>
func.func @reshapes(%x: tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<3x4xf32>) {
  %a = synap.reshape %x : (tensor<2x6xf32>) -> tensor<12xf32>
  %b = synap.reshape %a : (tensor<12xf32>) -> tensor<2x6xf32>
  %c = synap.reshape %a : (tensor<12xf32>) -> tensor<3x4xf32>
  func.return %b, %c : tensor<2x6xf32>, tensor<3x4xf32>
}

// -----

// A quantize to a different scale is a requantization, not an identity.
// CHECK-LABEL: func.func @requantize
// CHECK-NEXT:    synap.quantize
func.func @requantize(%x: tensor<4x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<4x!quant.uniform<u8:f32, 0.25:128>> {
  %a = synap.quantize %x : (tensor<4x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<4x!quant.uniform<u8:f32, 0.25:128>>
  func.return %a : tensor<4x!quant.uniform<u8:f32, 0.25:128>>
}
