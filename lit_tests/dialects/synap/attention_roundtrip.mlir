// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics --print-op-generic | filecheck %s --check-prefix=GENERIC

// synap.attention (dialects/synap/attention.py): the first chunk round-trips (its text
// is the printed form, so CHECK-NEXT proves print(parse(text)) == text), with the mask /
// past_key / past_value / kv_lengths groups each optional and the properties elided at
// their defaults (not causal, no softcap, scores_mode 0, unbounded windows); the other
// chunks are the verifier's errors. The generic form carries the operand segment sizes.

// CHECK-LABEL: func.func @attention(
func.func @attention(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x6xf32>, %m: tensor<3x7xi1>, %pk: tensor<2x2x2x8xf32>, %pv: tensor<2x2x2x6xf32>, %fm: tensor<2x1x3x5xf32>, %n: tensor<2xi32>) {
  // Grouped-query attention (4 query heads on 2 key/value heads), a value size of its
  // own, no optional operand.
  // CHECK-NEXT: %0, %1, %2, %3 = synap.attention %q, %k, %v {scale = 0.353553414 : f32} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>, tensor<2x4x3x5xf32>
  // GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>
  %0, %1, %2, %3 = synap.attention %q, %k, %v {scale = 0.353553414 : f32} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>, tensor<2x4x3x5xf32>
  // A boolean mask and a cache of 2 entries (present: 7 keys), causal with a window,
  // soft-capped, the biased scores as the scores result, with the layer attributes.
  // CHECK-NEXT: %4, %5, %6, %7 = synap.attention %q, %k, %v mask %m : tensor<3x7xi1> past_key %pk : tensor<2x2x2x8xf32> past_value %pv : tensor<2x2x2x6xf32> {layer_name = "attn", layer_index = 3 : i64, scale = 1.250000e-01 : f32, is_causal = true, softcap = 2.000000e+00 : f32, scores_mode = 2 : i64, left_window = 2 : i64} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x6xf32>, tensor<2x4x3x7xf32>
  // GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0>
  %4, %5, %6, %7 = synap.attention %q, %k, %v mask %m : tensor<3x7xi1> past_key %pk : tensor<2x2x2x8xf32> past_value %pv : tensor<2x2x2x6xf32> {layer_name = "attn", layer_index = 3 : i64, scale = 1.250000e-01 : f32, is_causal = true, softcap = 2.000000e+00 : f32, scores_mode = 2 : i64, left_window = 2 : i64} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x6xf32>, tensor<2x4x3x7xf32>
  // An additive float mask per batch entry and valid key lengths, the probabilities as
  // the scores result.
  // CHECK-NEXT: %8, %9, %10, %11 = synap.attention %q, %k, %v mask %fm : tensor<2x1x3x5xf32> kv_lengths %n : tensor<2xi32> {scale = 1.000000e+00 : f32, right_window = 1 : i64, scores_mode = 3 : i64} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>, tensor<2x4x3x5xf32>
  // GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 1>
  %8, %9, %10, %11 = synap.attention %q, %k, %v mask %fm : tensor<2x1x3x5xf32> kv_lengths %n : tensor<2xi32> {scale = 1.000000e+00 : f32, right_window = 1 : i64, scores_mode = 3 : i64} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>, tensor<2x4x3x5xf32>
  func.return
}

// -----

// Key/value heads must divide the query heads.
// CHECK: synap.attention: 2 key/value heads do not divide 3 query heads
func.func @f(%q: tensor<1x3x2x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) {
  %0, %1, %2, %3 = synap.attention %q, %k, %v {scale = 1.000000e+00 : f32} : tensor<1x3x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x3x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x3x2x5xf32>
  func.return
}

// -----

// The mask covers at most the keys (here 5).
// CHECK: synap.attention: mask of shape [2, 6] does not fit scores [1, 2, 2, 5]
func.func @f(%q: tensor<1x2x2x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>, %m: tensor<2x6xf32>) {
  %0, %1, %2, %3 = synap.attention %q, %k, %v mask %m : tensor<2x6xf32> {scale = 1.000000e+00 : f32} : tensor<1x2x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x2x5xf32>
  func.return
}

// -----

// A cache grows the present key and value: 3 + 5 entries.
// CHECK: synap.attention: result #1 shape [1, 2, 5, 4] should be [1, 2, 8, 4]
func.func @f(%q: tensor<1x2x2x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>, %pk: tensor<1x2x3x4xf32>, %pv: tensor<1x2x3x4xf32>) {
  %0, %1, %2, %3 = synap.attention %q, %k, %v past_key %pk : tensor<1x2x3x4xf32> past_value %pv : tensor<1x2x3x4xf32> {scale = 1.000000e+00 : f32} : tensor<1x2x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x2x8xf32>
  func.return
}

// -----

// CHECK: synap.attention: scores_mode must be 0 to 3, got 4
func.func @f(%q: tensor<1x2x2x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) {
  %0, %1, %2, %3 = synap.attention %q, %k, %v {scale = 1.000000e+00 : f32, scores_mode = 4 : i64} : tensor<1x2x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x2x5xf32>
  func.return
}
