// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4

// Round trip of the ops of dialects/synap/sampling.py: grid_sample (2-D and 3-D, with
// #synap<sample_mode ...> and #synap<sample_padding ...>) and deform_conv2d (with and
// without its optional bias); defaults are elided, layer attributes kept.

// CHECK-LABEL: func.func @grid_sample(
func.func @grid_sample(%x: tensor<1x4x4x3xf32>, %g: tensor<1x6x5x2xf32>, %v: tensor<2x3x4x4x2xf16>, %gv: tensor<2x2x2x2x3xf16>) {
  // All defaults: linear, zeros, align_corners false.
  // CHECK-NEXT: %0 = synap.grid_sample %x, %g : (tensor<1x4x4x3xf32>, tensor<1x6x5x2xf32>) -> tensor<1x6x5x3xf32>
  // GENERIC: %0 = "synap.grid_sample"(%x, %g) <{mode = #synap<sample_mode linear>, padding = #synap<sample_padding zeros>, align_corners = false}> : (tensor<1x4x4x3xf32>, tensor<1x6x5x2xf32>) -> tensor<1x6x5x3xf32>
  %0 = synap.grid_sample %x, %g {mode = #synap<sample_mode linear>} : (tensor<1x4x4x3xf32>, tensor<1x6x5x2xf32>) -> tensor<1x6x5x3xf32>
  // Cubic with reflection at the pixel centres.
  // CHECK-NEXT: %1 = synap.grid_sample %x, %g {mode = #synap<sample_mode cubic>, padding = #synap<sample_padding reflection>, align_corners = true} : (tensor<1x4x4x3xf32>, tensor<1x6x5x2xf32>) -> tensor<1x6x5x3xf32>
  %1 = synap.grid_sample %x, %g {mode = #synap<sample_mode cubic>, padding = #synap<sample_padding reflection>, align_corners = true} : (tensor<1x4x4x3xf32>, tensor<1x6x5x2xf32>) -> tensor<1x6x5x3xf32>
  // A volume (N, D, H, W, C) read at a (N, D', H', W', 3) grid, nearest with border.
  // CHECK-NEXT: %2 = synap.grid_sample %v, %gv {layer_name = "gs", layer_index = 2 : i64, mode = #synap<sample_mode nearest>, padding = #synap<sample_padding border>} : (tensor<2x3x4x4x2xf16>, tensor<2x2x2x2x3xf16>) -> tensor<2x2x2x2x2xf16>
  %2 = synap.grid_sample %v, %gv {layer_name = "gs", layer_index = 2 : i64, mode = #synap<sample_mode nearest>, padding = #synap<sample_padding border>} : (tensor<2x3x4x4x2xf16>, tensor<2x2x2x2x3xf16>) -> tensor<2x2x2x2x2xf16>
  func.return
}

// CHECK-LABEL: func.func @deform_conv2d(
func.func @deform_conv2d(%x: tensor<1x5x5x4xf32>, %w: tensor<6x3x3x2xf32>, %off: tensor<1x3x3x36xf32>, %m: tensor<1x3x3x18xf32>, %b: tensor<6xf32>) {
  // Grouped, two offset groups, strided and padded, with a bias.
  // CHECK-NEXT: %0 = synap.deform_conv2d %x, %w, %off, %m, %b {pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, groups = 2 : i64, offset_groups = 2 : i64} : (tensor<1x5x5x4xf32>, tensor<6x3x3x2xf32>, tensor<1x3x3x36xf32>, tensor<1x3x3x18xf32>, tensor<6xf32>) -> tensor<1x3x3x6xf32>
  // GENERIC: %0 = "synap.deform_conv2d"(%x, %w, %off, %m, %b) <{pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, groups = 2 : i64, offset_groups = 2 : i64, dilations = array<i64: 1, 1>}> : (tensor<1x5x5x4xf32>, tensor<6x3x3x2xf32>, tensor<1x3x3x36xf32>, tensor<1x3x3x18xf32>, tensor<6xf32>) -> tensor<1x3x3x6xf32>
  %0 = synap.deform_conv2d %x, %w, %off, %m, %b {pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, groups = 2 : i64, offset_groups = 2 : i64} : (tensor<1x5x5x4xf32>, tensor<6x3x3x2xf32>, tensor<1x3x3x36xf32>, tensor<1x3x3x18xf32>, tensor<6xf32>) -> tensor<1x3x3x6xf32>
  // Without a bias; the default dilations are elided.
  // CHECK-NEXT: %1 = synap.deform_conv2d %x, %w, %off, %m {pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, groups = 2 : i64, offset_groups = 2 : i64} : (tensor<1x5x5x4xf32>, tensor<6x3x3x2xf32>, tensor<1x3x3x36xf32>, tensor<1x3x3x18xf32>) -> tensor<1x3x3x6xf32>
  %1 = synap.deform_conv2d %x, %w, %off, %m {pad = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, groups = 2 : i64, offset_groups = 2 : i64} : (tensor<1x5x5x4xf32>, tensor<6x3x3x2xf32>, tensor<1x3x3x36xf32>, tensor<1x3x3x18xf32>) -> tensor<1x3x3x6xf32>
  func.return
}
