// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of synap.yuv_to_rgb and synap.crop_resize
// (dialects/synap/preprocess.py): plane count and shapes per format (4:2:0 needs an even
// height and width and chroma of half size), ui8 planes, the crop_resize size, the
// number, shape and type of the crop scalars, and the image element types.

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// Too few planes for I420.
// CHECK: synap.yuv_to_rgb: yuv420 takes 3 planes, got 2
func.func @f(%y: tensor<1x4x6x1xui8>, %uv: tensor<1x2x3x2xui8>) {
  %0 = synap.yuv_to_rgb %y, %uv {format = #synap<yuv_format yuv420>} : (tensor<1x4x6x1xui8>, tensor<1x2x3x2xui8>) -> tensor<1x4x6x3xui8>
  func.return
}

// -----

// 4:2:0 needs an even height and width.
// CHECK: synap.yuv_to_rgb "pre": nv12 needs an even height and width, got 5 x 6
func.func @f(%y: tensor<1x5x6x1xui8>, %uv: tensor<1x2x3x2xui8>) {
  %0 = synap.yuv_to_rgb %y, %uv {layer_name = "pre"} : (tensor<1x5x6x1xui8>, tensor<1x2x3x2xui8>) -> tensor<1x5x6x3xui8>
  func.return
}

// -----

// Chroma of the wrong size for 4:2:0.
// CHECK: synap.yuv_to_rgb: the uv plane of nv12 with a Y plane of [1, 4, 6, 1] must be [1, 2, 3, 2], got [1, 4, 6, 2]
func.func @f(%y: tensor<1x4x6x1xui8>, %uv: tensor<1x4x6x2xui8>) {
  %0 = synap.yuv_to_rgb %y, %uv : (tensor<1x4x6x1xui8>, tensor<1x4x6x2xui8>) -> tensor<1x4x6x3xui8>
  func.return
}

// -----

// Chroma of half size for 4:4:4.
// CHECK: synap.yuv_to_rgb: the u plane of yuv444 with a Y plane of [1, 4, 6, 1] must be [1, 4, 6, 1], got [1, 2, 3, 1]
func.func @f(%y: tensor<1x4x6x1xui8>, %u: tensor<1x2x3x1xui8>) {
  %0 = synap.yuv_to_rgb %y, %u, %u {format = #synap<yuv_format yuv444>} : (tensor<1x4x6x1xui8>, tensor<1x2x3x1xui8>, tensor<1x2x3x1xui8>) -> tensor<1x4x6x3xui8>
  func.return
}

// -----

// A Y plane with more than one channel.
// CHECK: synap.yuv_to_rgb: the Y plane must have 1 channel, got [1, 4, 6, 3]
func.func @f(%y: tensor<1x4x6x3xui8>, %uv: tensor<1x2x3x2xui8>) {
  %0 = synap.yuv_to_rgb %y, %uv : (tensor<1x4x6x3xui8>, tensor<1x2x3x2xui8>) -> tensor<1x4x6x3xui8>
  func.return
}

// -----

// A result shape other than N x H x W x 3.
// CHECK: synap.yuv_to_rgb: result #0 shape [1, 4, 6, 4] should be [1, 4, 6, 3]
func.func @f(%y: tensor<1x4x6x1xui8>, %uv: tensor<1x2x3x2xui8>) {
  %0 = synap.yuv_to_rgb %y, %uv : (tensor<1x4x6x1xui8>, tensor<1x2x3x2xui8>) -> tensor<1x4x6x4xui8>
  func.return
}

// -----

// Planes must be ui8.
// CHECK: synap.yuv_to_rgb: plane #0 must be ui8, got f32
func.func @f(%y: tensor<1x4x6x1xf32>, %uv: tensor<1x2x3x2xf32>) {
  %0 = synap.yuv_to_rgb %y, %uv : (tensor<1x4x6x1xf32>, tensor<1x2x3x2xf32>) -> tensor<1x4x6x3xf32>
  func.return
}

// -----

// Signless i8 planes are not ui8.
// CHECK: synap.yuv_to_rgb: plane #1 must be ui8, got i8
func.func @f(%y: tensor<1x4x6x1xui8>, %uv: tensor<1x2x3x2xi8>) {
  %0 = synap.yuv_to_rgb %y, %uv : (tensor<1x4x6x1xui8>, tensor<1x2x3x2xi8>) -> tensor<1x4x6x3xui8>
  func.return
}

// -----

// crop_resize needs NHWC.
// CHECK: synap.crop_resize: image must be NHWC (rank 4), got [6, 8, 3]
func.func @f(%x: tensor<6x8x3xui8>) {
  %0 = synap.crop_resize %x {size = array<i64: 3, 4>} : (tensor<6x8x3xui8>) -> tensor<1x3x4x3xui8>
  func.return
}

// -----

// A size of three values.
// CHECK: synap.crop_resize: size must be two positive integers [h, w], got [3, 4, 1]
func.func @f(%x: tensor<1x6x8x3xui8>) {
  %0 = synap.crop_resize %x {size = array<i64: 3, 4, 1>} : (tensor<1x6x8x3xui8>) -> tensor<1x3x4x3xui8>
  func.return
}

// -----

// A zero size.
// CHECK: synap.crop_resize: size must be two positive integers [h, w], got [0, 4]
func.func @f(%x: tensor<1x6x8x3xui8>) {
  %0 = synap.crop_resize %x {size = array<i64: 0, 4>} : (tensor<1x6x8x3xui8>) -> tensor<1x0x4x3xui8>
  func.return
}

// -----

// The result's height and width are the size.
// CHECK: synap.crop_resize: result #0 shape [1, 4, 3, 3] should be [1, 3, 4, 3]
func.func @f(%x: tensor<1x6x8x3xui8>) {
  %0 = synap.crop_resize %x {size = array<i64: 3, 4>} : (tensor<1x6x8x3xui8>) -> tensor<1x4x3x3xui8>
  func.return
}

// -----

// Two crop operands instead of four.
// CHECK: synap.crop_resize: takes no crop operands or four (width, height, left, top), got 2
func.func @f(%x: tensor<1x6x8x3xui8>, %c: tensor<i32>) {
  %0 = synap.crop_resize %x, %c, %c {size = array<i64: 3, 4>} : (tensor<1x6x8x3xui8>, tensor<i32>, tensor<i32>) -> tensor<1x3x4x3xui8>
  func.return
}

// -----

// A crop operand that is not a scalar.
// CHECK: synap.crop_resize: crop left must be a scalar, got shape [1]
func.func @f(%x: tensor<1x6x8x3xui8>, %c: tensor<i32>, %d: tensor<1xi32>) {
  %0 = synap.crop_resize %x, %c, %c, %d, %c {size = array<i64: 3, 4>} : (tensor<1x6x8x3xui8>, tensor<i32>, tensor<i32>, tensor<1xi32>, tensor<i32>) -> tensor<1x3x4x3xui8>
  func.return
}

// -----

// Crop operands must be i32.
// CHECK: synap.crop_resize: crop width must be i32, got i64
func.func @f(%x: tensor<1x6x8x3xui8>, %c: tensor<i64>) {
  %0 = synap.crop_resize %x, %c, %c, %c, %c {size = array<i64: 3, 4>} : (tensor<1x6x8x3xui8>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<1x3x4x3xui8>
  func.return
}

// -----

// Images are ui8 or f32.
// CHECK: synap.crop_resize: image must be ui8 or f32, got i8
func.func @f(%x: tensor<1x6x8x3xi8>) {
  %0 = synap.crop_resize %x {size = array<i64: 3, 4>} : (tensor<1x6x8x3xi8>) -> tensor<1x3x4x3xi8>
  func.return
}

// -----

// The result keeps the image's element type (SynapOp's generic check).
// CHECK: synap.crop_resize: result #0 element type f16 does not match operand #0 element type f32
func.func @f(%x: tensor<1x6x8x3xf32>) {
  %0 = synap.crop_resize %x {size = array<i64: 3, 4>} : (tensor<1x6x8x3xf32>) -> tensor<1x3x4x3xf16>
  func.return
}
