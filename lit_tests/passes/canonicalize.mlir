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

// -----

// Source layers of removed ops stay findable: an identity or a cancelled transpose pair
// goes into the fused_layers of the op producing the value passed on, or, when that is a
// function argument, of the op reading it; a merged reshape chain keeps both layers.
// CHECK-LABEL: func.func @provenance
// CHECK-NEXT:    %[[S:.*]] = synap.sigmoid %x {layer_name = "sig", fused_layers = ["t1", "t2", "noop"]}
// CHECK-NEXT:    %[[T:.*]] = synap.tanh %x {layer_name = "th", fused_layers = ["arg_noop"]}
// CHECK-NEXT:    %[[R:.*]] = synap.reshape %x {layer_name = "r2", fused_layers = ["r1"]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %[[S]], %[[T]], %[[R]]
func.func @provenance(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>) {
  %s = synap.sigmoid %x {layer_name = "sig"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t1 = synap.transpose %s {layer_name = "t1", perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t2 = synap.transpose %t1 {layer_name = "t2", perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %n = synap.reshape %t2 {layer_name = "noop"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %a = synap.reshape %x {layer_name = "arg_noop"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %th = synap.tanh %a {layer_name = "th"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r1 = synap.reshape %x {layer_name = "r1"} : (tensor<2x3xf32>) -> tensor<6xf32>
  %r2 = synap.reshape %r1 {layer_name = "r2"} : (tensor<6xf32>) -> tensor<3x2xf32>
  func.return %n, %th, %r2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>
}

// -----

// A transpose pair merges into one transpose that names both; when the first transpose
// has another user it stays, and only the second one's layer moves.
// CHECK-LABEL: func.func @provenance_shared
// CHECK-NEXT:    %[[A:.*]] = synap.transpose %x {layer_name = "a", perm = array<i64: 1, 2, 0>}
// CHECK-NEXT:    %[[B:.*]] = synap.transpose %x {layer_name = "b", perm = array<i64: 2, 1, 0>}
// CHECK-NEXT:    %[[C:.*]] = synap.transpose %x {layer_name = "d", fused_layers = ["c"], perm = array<i64: 2, 0, 1>}
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]]
func.func @provenance_shared(%x: tensor<2x3x4xf32>) -> (tensor<3x4x2xf32>, tensor<4x3x2xf32>, tensor<4x2x3xf32>) {
  %a = synap.transpose %x {layer_name = "a", perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = synap.transpose %a {layer_name = "b", perm = array<i64: 1, 0, 2>} : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32>
  %c = synap.transpose %x {layer_name = "c", perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %d = synap.transpose %c {layer_name = "d", perm = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  func.return %a, %b, %d : tensor<3x4x2xf32>, tensor<4x3x2xf32>, tensor<4x2x3xf32>
}
