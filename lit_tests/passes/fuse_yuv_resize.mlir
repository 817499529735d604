// RUN: synapc-opt %s -p fuse-yuv-resize | filecheck %s
// RUN: synapc-opt %s -p fuse-yuv-resize | synapc-opt | filecheck %s

// A crop_resize of a yuv_to_rgb used only there becomes one synap.yuv_to_rgb_resize
// (planes, then the crop scalars; the properties of both ops); a conversion whose image
// is also used elsewhere stays, with its resize.
// CHECK-LABEL: func.func @main
// CHECK-NEXT: %a = synap.yuv_to_rgb_resize %y, %uv, %w, %h, %l, %t {color_range = #synap<color_range full>, bgr = true, size = array<i64: 4, 6>} : (tensor<1x8x12x1xui8>, tensor<1x4x6x2xui8>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x6x3xui8>
// CHECK-NEXT: %rgb2 = synap.yuv_to_rgb %y, %uv : (tensor<1x8x12x1xui8>, tensor<1x4x6x2xui8>) -> tensor<1x8x12x3xui8>
// CHECK-NEXT: %b = synap.crop_resize %rgb2 {size = array<i64: 4, 6>, mode = #synap<crop_resize_mode nearest>}
// CHECK-NEXT: func.return %a, %b, %rgb2
func.func @main(%y: tensor<1x8x12x1xui8>, %uv: tensor<1x4x6x2xui8>, %w: tensor<i32>, %h: tensor<i32>, %l: tensor<i32>, %t: tensor<i32>) -> (tensor<1x4x6x3xui8>, tensor<1x4x6x3xui8>, tensor<1x8x12x3xui8>) {
  %rgb = synap.yuv_to_rgb %y, %uv {bgr = true, color_range = #synap<color_range full>} : (tensor<1x8x12x1xui8>, tensor<1x4x6x2xui8>) -> tensor<1x8x12x3xui8>
  %a = synap.crop_resize %rgb, %w, %h, %l, %t {size = array<i64: 4, 6>} : (tensor<1x8x12x3xui8>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x6x3xui8>
  %rgb2 = synap.yuv_to_rgb %y, %uv : (tensor<1x8x12x1xui8>, tensor<1x4x6x2xui8>) -> tensor<1x8x12x3xui8>
  %b = synap.crop_resize %rgb2 {size = array<i64: 4, 6>, mode = #synap<crop_resize_mode nearest>} : (tensor<1x8x12x3xui8>) -> tensor<1x4x6x3xui8>
  func.return %a, %b, %rgb2 : tensor<1x4x6x3xui8>, tensor<1x4x6x3xui8>, tensor<1x8x12x3xui8>
}
