// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4

// Round trip of dialects/synap/roi.py: synap.roi_align pools each box of an NHWC
// feature map into output_height x output_width bins of grid_h x grid_w samples.

// CHECK-LABEL: func.func @roi_align(
func.func @roi_align(%x: tensor<2x10x12x3xf32>, %r: tensor<4x4xf32>, %b: tensor<4xi64>) {
  // CHECK-NEXT: %0 = synap.roi_align %x, %r, %b : (tensor<2x10x12x3xf32>, tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x1x1x3xf32>
  // GENERIC: %0 = "synap.roi_align"(%x, %r, %b) <{output_height = 1 : i64, output_width = 1 : i64, grid_h = 1 : i64, grid_w = 1 : i64, spatial_scale = 1.000000e+00 : f32, use_max = false, half_pixel = true}> : (tensor<2x10x12x3xf32>, tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x1x1x3xf32>
  %0 = synap.roi_align %x, %r, %b : (tensor<2x10x12x3xf32>, tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x1x1x3xf32>
  // CHECK-NEXT: %1 = synap.roi_align %x, %r, %b {output_height = 5 : i64, output_width = 4 : i64, grid_h = 2 : i64, grid_w = 3 : i64, spatial_scale = 5.000000e-01 : f32, use_max = true, half_pixel = false} : (tensor<2x10x12x3xf32>, tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x5x4x3xf32>
  %1 = synap.roi_align %x, %r, %b {output_height = 5 : i64, output_width = 4 : i64, grid_h = 2 : i64, grid_w = 3 : i64, spatial_scale = 5.000000e-01 : f32, use_max = true, half_pixel = false} : (tensor<2x10x12x3xf32>, tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x5x4x3xf32>
  func.return
}
