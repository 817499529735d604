// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of the ops of dialects/synap/activation.py: clamp's bounds, the axis
// of softmax / log_softmax / l2_normalize, a wrong result shape for every op, and the
// generic checks of SynapOp.verify_ in base.py.

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// A non-tensor operand is rejected by the IRDL operand constraint.
// CHECK: memref<2x8xf32> should be of base attribute tensor
func.func @f(%x: memref<2x8xf32>) {
  %0 = synap.sigmoid %x : (memref<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// A non-tensor result is rejected by the IRDL result constraint.
// CHECK: vector<2x8xf32> should be of base attribute tensor
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.sigmoid %x : (tensor<2x8xf32>) -> vector<2x8xf32>
  func.return
}

// -----

// A dynamic operand shape.
// CHECK: synap.sigmoid "act": operand #0 must have a static shape, got tensor<2x?xf32>
func.func @f(%x: tensor<2x?xf32>) {
  %0 = synap.sigmoid %x {layer_name = "act"} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  func.return
}

// -----

// A dynamic result shape.
// CHECK: synap.sigmoid "act": result #0 must have a static shape, got tensor<?x8xf32>
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.sigmoid %x {layer_name = "act"} : (tensor<2x8xf32>) -> tensor<?x8xf32>
  func.return
}

// -----

// A storage-only element type (an 8-bit float): only synap.cast takes it.
// CHECK: synap.sigmoid "act": operand #0 has element type f8E4M3FN, which only synap.cast takes (a storage-only type)
func.func @f(%x: tensor<2x8xf8E4M3FN>) {
  %0 = synap.sigmoid %x {layer_name = "act"} : (tensor<2x8xf8E4M3FN>) -> tensor<2x8xf8E4M3FN>
  func.return
}

// -----

// A float result of a quantized input.
// CHECK: synap.sigmoid "act": result #0 element type f32 does not match operand #0 element type !quant.uniform<i8:f32, 0.25:-1>
func.func @f(%x: tensor<2x8x!quant.uniform<i8:f32, 0.25:-1>>) {
  %0 = synap.sigmoid %x {layer_name = "act"} : (tensor<2x8x!quant.uniform<i8:f32, 0.25:-1>>) -> tensor<2x8xf32>
  func.return
}

// -----

// A result element type other than the input's.
// CHECK: synap.sigmoid "act": result #0 element type f64 does not match operand #0 element type f32
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.sigmoid %x {layer_name = "act"} : (tensor<2x8xf32>) -> tensor<2x8xf64>
  func.return
}

// -----

// clamp: neither bound given.
// CHECK: synap.clamp "clamp": needs at least one of min and max
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.clamp %x {layer_name = "clamp"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// clamp: min above max.
// CHECK: synap.clamp "clamp": min (2.0) is greater than max (1.0)
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.clamp %x {layer_name = "clamp", min = 2.0 : f32, max = 1.0 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// clamp: min above max, bounds printed as the shortest text of their f32 value.
// CHECK: synap.clamp @7: min (0.6) is greater than max (0.5)
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.clamp %x {layer_index = 7 : i64, min = 0.6 : f32, max = 0.5 : f32} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// softmax: an axis past the last dimension.
// CHECK: synap.softmax "softmax": axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.softmax %x {layer_name = "softmax", axis = 2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// softmax: a negative axis before the first dimension.
// CHECK: synap.softmax "softmax": axis -3 is out of range for rank 2
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.softmax %x {layer_name = "softmax", axis = -3 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// log_softmax: an axis past the last dimension.
// CHECK: synap.log_softmax "log_softmax": axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.log_softmax %x {layer_name = "log_softmax", axis = 2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// log_softmax: a negative axis before the first dimension.
// CHECK: synap.log_softmax "log_softmax": axis -3 is out of range for rank 2
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.log_softmax %x {layer_name = "log_softmax", axis = -3 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// l2_normalize: an axis past the last dimension.
// CHECK: synap.l2_normalize "l2_normalize": axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.l2_normalize %x {layer_name = "l2_normalize", axis = 2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// l2_normalize: a negative axis before the first dimension.
// CHECK: synap.l2_normalize "l2_normalize": axis -3 is out of range for rank 2
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.l2_normalize %x {layer_name = "l2_normalize", axis = -3 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// softmax: the default axis -1 of a rank-0 tensor.
// CHECK: synap.softmax: axis -1 is out of range for rank 0
func.func @f(%x: tensor<f32>) {
  %0 = synap.softmax %x : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// clamp: a result shape other than the input's.
// CHECK: synap.clamp "clamp": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.clamp %x {layer_name = "clamp", min = 0.0 : f32} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// leaky_relu: a result shape other than the input's.
// CHECK: synap.leaky_relu "leaky_relu": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.leaky_relu %x {layer_name = "leaky_relu", alpha = 0.1 : f32} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// sigmoid: a result shape other than the input's.
// CHECK: synap.sigmoid "sigmoid": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.sigmoid %x {layer_name = "sigmoid"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// tanh: a result shape other than the input's.
// CHECK: synap.tanh "tanh": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.tanh %x {layer_name = "tanh"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// hard_swish: a result shape other than the input's.
// CHECK: synap.hard_swish "hard_swish": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.hard_swish %x {layer_name = "hard_swish"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// hard_sigmoid: a result shape other than the input's.
// CHECK: synap.hard_sigmoid "hard_sigmoid": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.hard_sigmoid %x {layer_name = "hard_sigmoid"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// swish: a result shape other than the input's.
// CHECK: synap.swish "swish": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.swish %x {layer_name = "swish"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// gelu: a result shape other than the input's.
// CHECK: synap.gelu "gelu": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.gelu %x {layer_name = "gelu"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// elu: a result shape other than the input's.
// CHECK: synap.elu "elu": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.elu %x {layer_name = "elu"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// exp: a result shape other than the input's.
// CHECK: synap.exp "exp": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.exp %x {layer_name = "exp"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// log: a result shape other than the input's.
// CHECK: synap.log "log": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.log %x {layer_name = "log"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// sqrt: a result shape other than the input's.
// CHECK: synap.sqrt "sqrt": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.sqrt %x {layer_name = "sqrt"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// rsqrt: a result shape other than the input's.
// CHECK: synap.rsqrt "rsqrt": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.rsqrt %x {layer_name = "rsqrt"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// abs: a result shape other than the input's.
// CHECK: synap.abs "abs": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.abs %x {layer_name = "abs"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// neg: a result shape other than the input's.
// CHECK: synap.neg "neg": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.neg %x {layer_name = "neg"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// square: a result shape other than the input's.
// CHECK: synap.square "square": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.square %x {layer_name = "square"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// softmax: a result shape other than the input's.
// CHECK: synap.softmax "softmax": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.softmax %x {layer_name = "softmax"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// log_softmax: a result shape other than the input's.
// CHECK: synap.log_softmax "log_softmax": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.log_softmax %x {layer_name = "log_softmax"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// l2_normalize: a result shape other than the input's.
// CHECK: synap.l2_normalize "l2_normalize": result #0 shape [8, 2] should be [2, 8]
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.l2_normalize %x {layer_name = "l2_normalize"} : (tensor<2x8xf32>) -> tensor<8x2xf32>
  func.return
}

// -----

// leaky_relu: alpha has no default and must be given.
// CHECK: property 'alpha' expected in operation 'synap.leaky_relu'
func.func @f(%x: tensor<2x8xf32>) {
  %0 = synap.leaky_relu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return
}
