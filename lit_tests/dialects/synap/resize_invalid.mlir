// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of synap.resize (dialects/synap/resize.py): NHWC rank, unchanged
// batch and channels, the ONNX parameters (scales, roi, antialias), and the generic
// checks of SynapOp.verify_ in base.py. The result
// type gives the new height and width, so there is no inferred result shape to differ from.

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// A non-tensor operand is rejected by the IRDL operand constraint.
// CHECK: memref<1x4x4x3xf32> should be of base attribute tensor
func.func @f(%x: memref<1x4x4x3xf32>) {
  %0 = synap.resize %x : (memref<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// A dynamic operand shape.
// CHECK: synap.resize "up": operand #0 must have a static shape, got tensor<1x?x?x3xf32>
func.func @f(%x: tensor<1x?x?x3xf32>) {
  %0 = synap.resize %x {layer_name = "up"} : (tensor<1x?x?x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// A dynamic result shape.
// CHECK: synap.resize "up": result #0 must have a static shape, got tensor<1x?x8x3xf32>
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.resize %x {layer_name = "up"} : (tensor<1x4x4x3xf32>) -> tensor<1x?x8x3xf32>
  func.return
}

// -----

// An unsupported element type (index).
// CHECK: synap.resize "up": operand #0 has unsupported element type index
func.func @f(%x: tensor<1x4x4x3xindex>) {
  %0 = synap.resize %x {layer_name = "up"} : (tensor<1x4x4x3xindex>) -> tensor<1x8x8x3xindex>
  func.return
}

// -----

// A result element type other than the input's.
// CHECK: synap.resize "up": result #0 element type f16 does not match operand #0 element type f32
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.resize %x {layer_name = "up"} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf16>
  func.return
}

// -----

// A quantized result of a float input.
// CHECK: synap.resize @2: result #0 element type !quant.uniform<u8:f32, 0.5> does not match operand #0 element type f32
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.resize %x {layer_index = 2 : i64} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3x!quant.uniform<u8:f32, 0.5>>
  func.return
}

// -----

// An input that is not rank 4.
// CHECK: synap.resize "up": input and result must be NHWC (rank 4), got [4, 4, 3] -> [8, 8, 3]
func.func @f(%x: tensor<4x4x3xf32>) {
  %0 = synap.resize %x {layer_name = "up"} : (tensor<4x4x3xf32>) -> tensor<8x8x3xf32>
  func.return
}

// -----

// A result that is not rank 4.
// CHECK: synap.resize "up": input and result must be NHWC (rank 4), got [1, 4, 4, 3] -> [1, 8, 8, 3, 1]
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.resize %x {layer_name = "up", mode = #synap<resize_mode bilinear>} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3x1xf32>
  func.return
}

// -----

// A result with another batch size.
// CHECK: synap.resize "up": batch and channels must not change: [1, 4, 4, 3] -> [2, 8, 8, 3]
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.resize %x {layer_name = "up"} : (tensor<1x4x4x3xf32>) -> tensor<2x8x8x3xf32>
  func.return
}

// -----

// A result with other channels.
// CHECK: synap.resize: batch and channels must not change: [1, 4, 4, 3] -> [1, 8, 8, 1]
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.resize %x {coordinate_mode = #synap<coordinate_mode align_corners>} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x1xf32>
  func.return
}

// -----

// A scale that is not positive.
// CHECK: synap.resize "up": scales must be two positive finite numbers (H, W), got (0.0, 2.0)
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.resize %x {layer_name = "up", scales = [0.0 : f32, 2.0 : f32]} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// Scales that do not give the result's height and width.
// CHECK: synap.resize "up": scales [2.5, 2.0] do not give the result's height and width [8, 8] from [4, 4]
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.resize %x {layer_name = "up", scales = [2.5 : f32, 2.0 : f32]} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// A region of interest without tf_crop_and_resize coordinates.
// CHECK: synap.resize "up": a roi is only used by tf_crop_and_resize, not half_pixel
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.resize %x {layer_name = "up", roi = [0.0 : f32, 0.0 : f32, 1.0 : f32, 1.0 : f32]} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  func.return
}

// -----

// Antialiased nearest neighbour.
// CHECK: synap.resize "up": antialias applies to bilinear and cubic resizing, not nearest
func.func @f(%x: tensor<1x4x4x3xf32>) {
  %0 = synap.resize %x {layer_name = "up", antialias = true} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
  func.return
}
