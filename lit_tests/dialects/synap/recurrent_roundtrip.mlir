// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics --print-op-generic | filecheck %s --check-prefix=GENERIC

// synap.rnn, synap.gru and synap.lstm (dialects/synap/recurrent.py): the first chunk
// round-trips (its text is the printed form, so CHECK-NEXT proves print(parse(text)) ==
// text), with the bias / initial_h / initial_c / peepholes groups each optional and the
// properties elided at their defaults (forward, the standard gate functions, no clip,
// full-length sequences); the other chunks are the verifier's errors. The generic form
// carries the operand segment sizes.

// CHECK-LABEL: func.func @recurrent(
func.func @recurrent(%x: tensor<5x2x4xf32>, %w1: tensor<1x3x4xf32>, %r1: tensor<1x3x3xf32>, %b1: tensor<1x6xf32>, %h1: tensor<1x2x3xf32>, %w3: tensor<2x9x4xf32>, %r3: tensor<2x9x3xf32>, %b3: tensor<2x18xf32>, %h2: tensor<2x2x3xf32>, %w4: tensor<1x12x4xf32>, %r4: tensor<1x12x3xf32>, %b4: tensor<1x24xf32>, %p4: tensor<1x9xf32>) {
  // Everything at its default: no optional operand.
  // CHECK-NEXT: %0, %1 = synap.rnn %x, %w1, %r1 : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  // GENERIC: "synap.rnn"(%x, %w1, %r1) <{direction = #synap<recurrent_direction forward>, activations = [], activation_alpha = [], activation_beta = [], sequence_lens = array<i64>}> {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}
  %0, %1 = synap.rnn %x, %w1, %r1 : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  // Bias and initial state, a reverse direction, clip, a parameterised function and
  // sequence lengths, with the layer attributes.
  // CHECK-NEXT: %2, %3 = synap.rnn %x, %w1, %r1 bias %b1 : tensor<1x6xf32> initial_h %h1 : tensor<1x2x3xf32> {layer_name = "rnn", layer_index = 4 : i64, direction = #synap<recurrent_direction reverse>, activations = [#synap<gate_activation leaky_relu>], activation_alpha = [1.000000e-01 : f32], clip = 2.500000e+00 : f32, sequence_lens = array<i64: 5, 0>} : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  // GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>
  %2, %3 = synap.rnn %x, %w1, %r1 bias %b1 : tensor<1x6xf32> initial_h %h1 : tensor<1x2x3xf32> {layer_name = "rnn", layer_index = 4 : i64, direction = #synap<recurrent_direction reverse>, activations = [#synap<gate_activation leaky_relu>], activation_alpha = [1.000000e-01 : f32], clip = 2.500000e+00 : f32, sequence_lens = array<i64: 5, 0>} : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  // A bidirectional GRU with functions per direction and linear_before_reset; initial
  // state without bias.
  // CHECK-NEXT: %4, %5 = synap.gru %x, %w3, %r3 initial_h %h2 : tensor<2x2x3xf32> {direction = #synap<recurrent_direction bidirectional>, activations = [#synap<gate_activation hard_sigmoid>, #synap<gate_activation tanh>, #synap<gate_activation sigmoid>, #synap<gate_activation softsign>], activation_alpha = [2.000000e-01 : f32, 0.000000e+00 : f32, 0.000000e+00 : f32, 0.000000e+00 : f32], activation_beta = [5.000000e-01 : f32, 0.000000e+00 : f32, 0.000000e+00 : f32, 0.000000e+00 : f32], linear_before_reset = true} : tensor<5x2x4xf32>, tensor<2x9x4xf32>, tensor<2x9x3xf32> -> tensor<5x2x2x3xf32>, tensor<2x2x3xf32>
  // GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>
  %4, %5 = synap.gru %x, %w3, %r3 initial_h %h2 : tensor<2x2x3xf32> {direction = #synap<recurrent_direction bidirectional>, activations = [#synap<gate_activation hard_sigmoid>, #synap<gate_activation tanh>, #synap<gate_activation sigmoid>, #synap<gate_activation softsign>], activation_alpha = [2.000000e-01 : f32, 0.000000e+00 : f32, 0.000000e+00 : f32, 0.000000e+00 : f32], activation_beta = [5.000000e-01 : f32, 0.000000e+00 : f32, 0.000000e+00 : f32, 0.000000e+00 : f32], linear_before_reset = true} : tensor<5x2x4xf32>, tensor<2x9x4xf32>, tensor<2x9x3xf32> -> tensor<5x2x2x3xf32>, tensor<2x2x3xf32>
  // An LSTM with every optional operand and input_forget.
  // CHECK-NEXT: %6, %7, %8 = synap.lstm %x, %w4, %r4 bias %b4 : tensor<1x24xf32> initial_h %h1 : tensor<1x2x3xf32> initial_c %h1 : tensor<1x2x3xf32> peepholes %p4 : tensor<1x9xf32> {input_forget = true} : tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>
  // GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1>
  %6, %7, %8 = synap.lstm %x, %w4, %r4 bias %b4 : tensor<1x24xf32> initial_h %h1 : tensor<1x2x3xf32> initial_c %h1 : tensor<1x2x3xf32> peepholes %p4 : tensor<1x9xf32> {input_forget = true} : tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// Peepholes only, in float16.
// CHECK-LABEL: func.func @lstm_f16(
// CHECK-NEXT: %0, %1, %2 = synap.lstm %x, %w, %r peepholes %p : tensor<1x9xf16> : tensor<5x2x4xf16>, tensor<1x12x4xf16>, tensor<1x12x3xf16> -> tensor<5x1x2x3xf16>, tensor<1x2x3xf16>, tensor<1x2x3xf16>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1>
func.func @lstm_f16(%x: tensor<5x2x4xf16>, %w: tensor<1x12x4xf16>, %r: tensor<1x12x3xf16>, %p: tensor<1x9xf16>) {
  %0, %1, %2 = synap.lstm %x, %w, %r peepholes %p : tensor<1x9xf16> : tensor<5x2x4xf16>, tensor<1x12x4xf16>, tensor<1x12x3xf16> -> tensor<5x1x2x3xf16>, tensor<1x2x3xf16>, tensor<1x2x3xf16>
  // CHECK-NEXT: func.return
  func.return
}

// -----

// CHECK: synap.gru: weights of shape [1, 12, 4] should be [1, 9, 4] (direction forward, gates x hidden size = 3 x 3, input size 4)
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x12x4xf32>, %r: tensor<1x12x3xf32>) {
  %0, %1 = synap.gru %x, %w, %r : tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// A bidirectional layer needs two sets of weights.
// CHECK: synap.rnn: weights of shape [1, 3, 4] should be [2, 3, 4]
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>) {
  %0, %1 = synap.rnn %x, %w, %r {direction = #synap<recurrent_direction bidirectional>} : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.rnn: recurrence of shape [1, 4, 3] should be [1, 3, 3]
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x4x3xf32>) {
  %0, %1 = synap.rnn %x, %w, %r : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x4x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.lstm: peepholes of shape [1, 12] should be [1, 9]
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x12x4xf32>, %r: tensor<1x12x3xf32>, %p: tensor<1x12xf32>) {
  %0, %1, %2 = synap.lstm %x, %w, %r peepholes %p : tensor<1x12xf32> : tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.lstm: initial_c of shape [1, 1, 3] should be [1, 2, 3]
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x12x4xf32>, %r: tensor<1x12x3xf32>, %c: tensor<1x1x3xf32>) {
  %0, %1, %2 = synap.lstm %x, %w, %r initial_c %c : tensor<1x1x3xf32> : tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.rnn "r": result #1 shape [1, 3, 3] should be [1, 2, 3]
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>) {
  %0, %1 = synap.rnn %x, %w, %r {layer_name = "r"} : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x3x3xf32>
  func.return
}

// -----

// CHECK: synap.gru: activations lists 1 functions; 2 needed (2 per direction)
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x9x4xf32>, %r: tensor<1x9x3xf32>) {
  %0, %1 = synap.gru %x, %w, %r {activations = [#synap<gate_activation tanh>]} : tensor<5x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.rnn: hard_sigmoid needs its beta in activation_beta
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>) {
  %0, %1 = synap.rnn %x, %w, %r {activations = [#synap<gate_activation hard_sigmoid>], activation_alpha = [2.000000e-01 : f32]} : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.rnn: activation_alpha has 2 values for 1 functions
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>) {
  %0, %1 = synap.rnn %x, %w, %r {activations = [#synap<gate_activation elu>], activation_alpha = [1.000000e+00 : f32, 1.000000e+00 : f32]} : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.rnn: clip must be a positive finite number, got 0
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>) {
  %0, %1 = synap.rnn %x, %w, %r {clip = 0.000000e+00 : f32} : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.rnn: sequence_lens [5, 6] must be within [0, 5]
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>) {
  %0, %1 = synap.rnn %x, %w, %r {sequence_lens = array<i64: 5, 6>} : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.rnn: sequence_lens has 1 values for a batch of 2
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x3x4xf32>, %r: tensor<1x3x3xf32>) {
  %0, %1 = synap.rnn %x, %w, %r {sequence_lens = array<i64: 5>} : tensor<5x2x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.lstm: operand element types f32 and f16 differ
func.func @f(%x: tensor<5x2x4xf32>, %w: tensor<1x12x4xf16>, %r: tensor<1x12x3xf32>) {
  %0, %1, %2 = synap.lstm %x, %w, %r : tensor<5x2x4xf32>, tensor<1x12x4xf16>, tensor<1x12x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}

// -----

// CHECK: synap.lstm: input must have rank 3, got shape [5, 8]
func.func @f(%x: tensor<5x8xf32>, %w: tensor<1x12x4xf32>, %r: tensor<1x12x3xf32>) {
  %0, %1, %2 = synap.lstm %x, %w, %r : tensor<5x8xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32> -> tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>
  func.return
}
