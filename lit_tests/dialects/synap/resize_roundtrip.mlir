// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the op of dialects/synap/resize.py: resize, whose result type gives the
// new height and width; mode (nearest), coordinate_mode (half_pixel) and nearest_rounding
// (round_prefer_floor) are elided at their defaults, as are ONNX's further parameters
// (cubic_coeff_a -0.75, exclude_outside, antialias, extrapolation_value 0; scales and roi
// are absent unless given).

// CHECK-LABEL: func.func @resize(
func.func @resize(%x: tensor<1x4x4x3xf32>) {
  // All defaults: nearest, half-pixel, round-prefer-floor.
  // CHECK-NEXT: %0 = synap.resize %x : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  // GENERIC: %0 = "synap.resize"(%x) <{mode = #synap<resize_mode nearest>, coordinate_mode = #synap<coordinate_mode half_pixel>, nearest_rounding = #synap<nearest_rounding round_prefer_floor>, cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = false, antialias = false, extrapolation_value = 0.000000e+00 : f32}> : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  %0 = synap.resize %x : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  // Explicit defaults are elided.
  // CHECK-NEXT: %1 = synap.resize %x : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  %1 = synap.resize %x {mode = #synap<resize_mode nearest>, coordinate_mode = #synap<coordinate_mode half_pixel>, nearest_rounding = #synap<nearest_rounding round_prefer_floor>} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  // Every property set, with layer attributes; downscaling.
  // CHECK-NEXT: %2 = synap.resize %x {layer_name = "up", layer_index = 38 : i64, mode = #synap<resize_mode bilinear>, coordinate_mode = #synap<coordinate_mode align_corners>, nearest_rounding = #synap<nearest_rounding ceil>} : (tensor<1x4x4x3xf32>) -> tensor<1x2x3x3xf32>
  // GENERIC: %2 = "synap.resize"(%x) <{mode = #synap<resize_mode bilinear>, coordinate_mode = #synap<coordinate_mode align_corners>, nearest_rounding = #synap<nearest_rounding ceil>, cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = false, antialias = false, extrapolation_value = 0.000000e+00 : f32}> {layer_name = "up", layer_index = 38 : i64} : (tensor<1x4x4x3xf32>) -> tensor<1x2x3x3xf32>
  %2 = synap.resize %x {layer_name = "up", layer_index = 38 : i64, mode = #synap<resize_mode bilinear>, coordinate_mode = #synap<coordinate_mode align_corners>, nearest_rounding = #synap<nearest_rounding ceil>} : (tensor<1x4x4x3xf32>) -> tensor<1x2x3x3xf32>
  // The remaining coordinate modes and roundings.
  // CHECK-NEXT: %3 = synap.resize %x {coordinate_mode = #synap<coordinate_mode asymmetric>, nearest_rounding = #synap<nearest_rounding floor>} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  %3 = synap.resize %x {coordinate_mode = #synap<coordinate_mode asymmetric>, nearest_rounding = #synap<nearest_rounding floor>} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
  // CHECK-NEXT: %4 = synap.resize %x {mode = #synap<resize_mode bilinear>, coordinate_mode = #synap<coordinate_mode pytorch_half_pixel>} : (tensor<1x4x4x3xf32>) -> tensor<1x1x1x3xf32>
  %4 = synap.resize %x {mode = #synap<resize_mode bilinear>, coordinate_mode = #synap<coordinate_mode pytorch_half_pixel>} : (tensor<1x4x4x3xf32>) -> tensor<1x1x1x3xf32>
  // CHECK-NEXT: %5 = synap.resize %x {nearest_rounding = #synap<nearest_rounding round_prefer_ceil>} : (tensor<1x4x4x3xf32>) -> tensor<1x12x5x3xf32>
  %5 = synap.resize %x {nearest_rounding = #synap<nearest_rounding round_prefer_ceil>} : (tensor<1x4x4x3xf32>) -> tensor<1x12x5x3xf32>
  // Same size.
  // CHECK-NEXT: %6 = synap.resize %x : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  %6 = synap.resize %x : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  // Cubic, antialiased, with a given scale that does not give a whole output size.
  // CHECK-NEXT: %7 = synap.resize %x {mode = #synap<resize_mode cubic>, coordinate_mode = #synap<coordinate_mode half_pixel_symmetric>, scales = [6.000000e-01 : f32, 8.000000e-01 : f32], cubic_coeff_a = -5.000000e-01 : f32, exclude_outside = true, antialias = true} : (tensor<1x4x4x3xf32>) -> tensor<1x2x3x3xf32>
  // GENERIC: %7 = "synap.resize"(%x) <{mode = #synap<resize_mode cubic>, coordinate_mode = #synap<coordinate_mode half_pixel_symmetric>, scales = [6.000000e-01 : f32, 8.000000e-01 : f32], cubic_coeff_a = -5.000000e-01 : f32, exclude_outside = true, antialias = true, nearest_rounding = #synap<nearest_rounding round_prefer_floor>, extrapolation_value = 0.000000e+00 : f32}> : (tensor<1x4x4x3xf32>) -> tensor<1x2x3x3xf32>
  %7 = synap.resize %x {mode = #synap<resize_mode cubic>, coordinate_mode = #synap<coordinate_mode half_pixel_symmetric>, scales = [0.6 : f32, 0.8 : f32], cubic_coeff_a = -0.5 : f32, exclude_outside = true, antialias = true} : (tensor<1x4x4x3xf32>) -> tensor<1x2x3x3xf32>
  // A crop of a region of interest, extrapolating outside the input.
  // CHECK-NEXT: %8 = synap.resize %x {mode = #synap<resize_mode bilinear>, coordinate_mode = #synap<coordinate_mode tf_crop_and_resize>, roi = [-2.500000e-01 : f32, 0.000000e+00 : f32, 1.250000e+00 : f32, 5.000000e-01 : f32], extrapolation_value = 1.000000e+01 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x3x3x3xf32>
  %8 = synap.resize %x {mode = #synap<resize_mode bilinear>, coordinate_mode = #synap<coordinate_mode tf_crop_and_resize>, roi = [-0.25 : f32, 0.0 : f32, 1.25 : f32, 0.5 : f32], extrapolation_value = 10.0 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x3x3x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @resize_quantized(
func.func @resize_quantized(%x: tensor<2x3x3x2x!quant.uniform<u8:f32, 0.0235:128>>) {
  // Quantized, batch 2.
  // CHECK-NEXT: %0 = synap.resize %x {mode = #synap<resize_mode bilinear>} : (tensor<2x3x3x2x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<2x6x6x2x!quant.uniform<u8:f32, 0.0235:128>>
  %0 = synap.resize %x {mode = #synap<resize_mode bilinear>} : (tensor<2x3x3x2x!quant.uniform<u8:f32, 0.0235:128>>) -> tensor<2x6x6x2x!quant.uniform<u8:f32, 0.0235:128>>
  // CHECK-NEXT: func.return
  func.return
}
