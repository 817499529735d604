// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the ops of dialects/synap/preprocess.py: yuv_to_rgb (format nv12,
// color_range limited, color_matrix bt601 and bgr false are elided at their defaults)
// and crop_resize (mode bilinear elided; size always printed), without and with the four
// run-time crop scalars.

// CHECK-LABEL: func.func @yuv_to_rgb(
func.func @yuv_to_rgb(%y: tensor<1x4x6x1xui8>, %uv: tensor<1x2x3x2xui8>, %u: tensor<1x2x3x1xui8>, %v: tensor<1x2x3x1xui8>, %u4: tensor<2x4x6x1xui8>, %v4: tensor<2x4x6x1xui8>, %y4: tensor<2x4x6x1xui8>) {
  // All defaults: NV12, limited range, BT.601, RGB order.
  // CHECK-NEXT: %0 = synap.yuv_to_rgb %y, %uv : (tensor<1x4x6x1xui8>, tensor<1x2x3x2xui8>) -> tensor<1x4x6x3xui8>
  // GENERIC: %0 = "synap.yuv_to_rgb"(%y, %uv) <{format = #synap<yuv_format nv12>, color_range = #synap<color_range limited>, color_matrix = #synap<color_matrix bt601>, bgr = false}> : (tensor<1x4x6x1xui8>, tensor<1x2x3x2xui8>) -> tensor<1x4x6x3xui8>
  %0 = synap.yuv_to_rgb %y, %uv : (tensor<1x4x6x1xui8>, tensor<1x2x3x2xui8>) -> tensor<1x4x6x3xui8>
  // Explicit defaults are elided.
  // CHECK-NEXT: %1 = synap.yuv_to_rgb %y, %uv : (tensor<1x4x6x1xui8>, tensor<1x2x3x2xui8>) -> tensor<1x4x6x3xui8>
  %1 = synap.yuv_to_rgb %y, %uv {format = #synap<yuv_format nv12>, color_range = #synap<color_range limited>, color_matrix = #synap<color_matrix bt601>, bgr = false} : (tensor<1x4x6x1xui8>, tensor<1x2x3x2xui8>) -> tensor<1x4x6x3xui8>
  // NV21: the same planes with V first.
  // CHECK-NEXT: %2 = synap.yuv_to_rgb %y, %uv {format = #synap<yuv_format nv21>} : (tensor<1x4x6x1xui8>, tensor<1x2x3x2xui8>) -> tensor<1x4x6x3xui8>
  %2 = synap.yuv_to_rgb %y, %uv {format = #synap<yuv_format nv21>} : (tensor<1x4x6x1xui8>, tensor<1x2x3x2xui8>) -> tensor<1x4x6x3xui8>
  // I420 with every property set, and layer attributes.
  // CHECK-NEXT: %3 = synap.yuv_to_rgb %y, %u, %v {layer_name = "pre", layer_index = 0 : i64, format = #synap<yuv_format yuv420>, color_range = #synap<color_range full>, color_matrix = #synap<color_matrix bt709>, bgr = true} : (tensor<1x4x6x1xui8>, tensor<1x2x3x1xui8>, tensor<1x2x3x1xui8>) -> tensor<1x4x6x3xui8>
  // GENERIC: %3 = "synap.yuv_to_rgb"(%y, %u, %v) <{format = #synap<yuv_format yuv420>, color_range = #synap<color_range full>, color_matrix = #synap<color_matrix bt709>, bgr = true}> {layer_name = "pre", layer_index = 0 : i64} : (tensor<1x4x6x1xui8>, tensor<1x2x3x1xui8>, tensor<1x2x3x1xui8>) -> tensor<1x4x6x3xui8>
  %3 = synap.yuv_to_rgb %y, %u, %v {layer_name = "pre", layer_index = 0 : i64, format = #synap<yuv_format yuv420>, color_range = #synap<color_range full>, color_matrix = #synap<color_matrix bt709>, bgr = true} : (tensor<1x4x6x1xui8>, tensor<1x2x3x1xui8>, tensor<1x2x3x1xui8>) -> tensor<1x4x6x3xui8>
  // 4:4:4 planes of full size, batch 2.
  // CHECK-NEXT: %4 = synap.yuv_to_rgb %y4, %u4, %v4 {format = #synap<yuv_format yuv444>} : (tensor<2x4x6x1xui8>, tensor<2x4x6x1xui8>, tensor<2x4x6x1xui8>) -> tensor<2x4x6x3xui8>
  %4 = synap.yuv_to_rgb %y4, %u4, %v4 {format = #synap<yuv_format yuv444>} : (tensor<2x4x6x1xui8>, tensor<2x4x6x1xui8>, tensor<2x4x6x1xui8>) -> tensor<2x4x6x3xui8>
  func.return
}

// CHECK-LABEL: func.func @crop_resize(
func.func @crop_resize(%img: tensor<1x6x8x3xui8>, %f: tensor<2x5x5x1xf32>, %w: tensor<i32>, %h: tensor<i32>, %left: tensor<i32>, %top: tensor<i32>) {
  // The whole image, bilinear (default).
  // CHECK-NEXT: %0 = synap.crop_resize %img {size = array<i64: 3, 4>} : (tensor<1x6x8x3xui8>) -> tensor<1x3x4x3xui8>
  // GENERIC: %0 = "synap.crop_resize"(%img) <{size = array<i64: 3, 4>, mode = #synap<crop_resize_mode bilinear>}> : (tensor<1x6x8x3xui8>) -> tensor<1x3x4x3xui8>
  %0 = synap.crop_resize %img {size = array<i64: 3, 4>, mode = #synap<crop_resize_mode bilinear>} : (tensor<1x6x8x3xui8>) -> tensor<1x3x4x3xui8>
  // A run-time crop rectangle (width, height, left, top), upscaled, nearest.
  // CHECK-NEXT: %1 = synap.crop_resize %img, %w, %h, %left, %top {layer_name = "crop", size = array<i64: 12, 16>, mode = #synap<crop_resize_mode nearest>} : (tensor<1x6x8x3xui8>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x12x16x3xui8>
  // GENERIC: %1 = "synap.crop_resize"(%img, %w, %h, %left, %top) <{size = array<i64: 12, 16>, mode = #synap<crop_resize_mode nearest>}> {layer_name = "crop"} : (tensor<1x6x8x3xui8>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x12x16x3xui8>
  %1 = synap.crop_resize %img, %w, %h, %left, %top {layer_name = "crop", size = array<i64: 12, 16>, mode = #synap<crop_resize_mode nearest>} : (tensor<1x6x8x3xui8>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x12x16x3xui8>
  // A float image, batch 2.
  // CHECK-NEXT: %2 = synap.crop_resize %f {size = array<i64: 2, 7>} : (tensor<2x5x5x1xf32>) -> tensor<2x2x7x1xf32>
  %2 = synap.crop_resize %f {size = array<i64: 2, 7>} : (tensor<2x5x5x1xf32>) -> tensor<2x2x7x1xf32>
  func.return
}
