// RUN: synapc-opt %s -p 'insert-preprocess{input="image" type="nv12" size=8,12 crop=true means=1.0,2.0,3.0 scale=2.0}' | filecheck %s
// RUN: synapc-opt %s -p 'insert-preprocess{input=0 type="bgra" bgr=false}' | filecheck %s --check-prefix=BGRA
// RUN: synapc-opt %s -p 'insert-preprocess{input=0 type="rgb888p3" size=6,10}' | filecheck %s --check-prefix=P3
// RUN: synapc-opt %s -p 'insert-preprocess{input=0 type="float32" means=0.5}' | filecheck %s --check-prefix=F32

// nv12 with crop into an NCHW float tensor whose format says bgr: the Y and UV planes and
// the four crop scalars replace the input (names, formats, synap.preprocess on the
// first), then colour conversion (BGR), crop + resize to the tensor's 4x6, normalization
// in float32 and the transpose to NCHW.
// CHECK-LABEL: func.func @main
// CHECK-SAME: tensor<1x8x12x1xui8> {synap.name = "image_y", synap.format = "nv12 plane=y", synap.layout = "nhwc", synap.preprocess = {input = "image", type = "nv12", crop = true, color_range = "limited", color_matrix = "bt601", resize = "bilinear", layout = "nchw", size = [8 : i64, 12 : i64]}}
// CHECK-SAME: tensor<1x4x6x2xui8> {synap.name = "image_uv", synap.format = "nv12 plane=uv", synap.layout = "nhwc"}
// CHECK-SAME: tensor<i32> {synap.name = "image_crop_width", synap.format = "crop field=width", synap.layout = "none"}
// CHECK-SAME: tensor<i32> {synap.name = "image_crop_height", synap.format = "crop field=height", synap.layout = "none"}
// CHECK-SAME: tensor<i32> {synap.name = "image_crop_left", synap.format = "crop field=left", synap.layout = "none"}
// CHECK-SAME: tensor<i32> {synap.name = "image_crop_top", synap.format = "crop field=top", synap.layout = "none"}
// CHECK-NEXT: %[[RGB:.*]] = synap.yuv_to_rgb %0, %1 {bgr = true} : (tensor<1x8x12x1xui8>, tensor<1x4x6x2xui8>) -> tensor<1x8x12x3xui8>
// CHECK-NEXT: %[[RS:.*]] = synap.crop_resize %[[RGB]], %2, %3, %4, %5 {size = array<i64: 4, 6>} : {{.*}} -> tensor<1x4x6x3xui8>
// CHECK-NEXT: %[[F:.*]] = synap.cast %[[RS]] : (tensor<1x4x6x3xui8>) -> tensor<1x4x6x3xf32>
// CHECK-NEXT: %[[M:.*]] = synap.constant dense_resource<preprocess_means> : tensor<3xf32>
// CHECK-NEXT: %[[S:.*]] = synap.constant dense_resource<preprocess_scale> : tensor<f32>
// CHECK-NEXT: %[[SUB:.*]] = synap.sub %[[F]], %[[M]]
// CHECK-NEXT: %[[DIV:.*]] = synap.div %[[SUB]], %[[S]]
// CHECK-NEXT: %[[T:.*]] = synap.transpose %[[DIV]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x6x3xf32>) -> tensor<1x3x4x6xf32>
// CHECK-NEXT: synap.abs %[[T]]
// CHECK: preprocess_means: "0x040000000000803F0000004000004040"

// bgra into the RGB tensor: channels 2, 1, 0 of the plane.
// BGRA-LABEL: func.func @main
// BGRA-SAME: tensor<1x4x6x4xui8> {synap.name = "image", synap.format = "bgra plane=bgra", synap.layout = "nhwc", synap.preprocess = {input = "image", type = "bgra", crop = false
// BGRA-NEXT: synap.strided_slice %0 {begin = array<i64: 0, 0, 0, 2>, end = array<i64: 1, 4, 6, -1>, strides = array<i64: 1, 1, 1, -1>} : (tensor<1x4x6x4xui8>) -> tensor<1x4x6x3xui8>
// BGRA-NEXT: synap.cast
// BGRA-NOT: synap.sub
// BGRA: synap.transpose

// rgb888p3 into a bgr tensor: the planes concatenated as b, g, r, then resized.
// P3-LABEL: func.func @main
// P3-SAME: %0: tensor<1x6x10x1xui8> {synap.name = "image_r", synap.format = "rgb888p3 plane=r"
// P3-SAME: %1: tensor<1x6x10x1xui8> {synap.name = "image_g"
// P3-SAME: %2: tensor<1x6x10x1xui8> {synap.name = "image_b"
// P3-NEXT: %[[C:.*]] = synap.concat %2, %1, %0 {axis = 3 : i64}
// P3-NEXT: synap.crop_resize %[[C]] {size = array<i64: 4, 6>}

// float32: raw values of the tensor's own shape, normalized, no resize.
// F32-LABEL: func.func @main
// F32-SAME: %0: tensor<1x3x4x6xf32> {synap.name = "image", synap.format = "float32 plane=float32", synap.layout = "nchw"
// F32-NEXT: synap.constant dense_resource<preprocess_means> : tensor<f32>
// F32-NEXT: synap.constant dense_resource<preprocess_scale> : tensor<f32>
// F32-NEXT: synap.sub %0
// F32-NEXT: synap.div
// F32-NEXT: synap.abs
// F32-NOT: synap.transpose
func.func @main(%arg0: tensor<1x3x4x6xf32> {synap.name = "image", synap.layout = "nchw", synap.format = "bgr"}) -> (tensor<1x3x4x6xf32> {synap.name = "out"}) {
  %0 = synap.abs %arg0 : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32>
  func.return %0 : tensor<1x3x4x6xf32>
}
