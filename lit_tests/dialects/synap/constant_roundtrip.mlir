// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of synap.constant (dialects/synap/constant.py): a tensor whose values live in
// the WeightStore under a dense_resource handle. Syntax:
// `synap.constant {attrs} dense_resource<handle> : tensor<...>`; the value is a property.

// CHECK-LABEL: func.func @constant(
func.func @constant() {
  // A bare handle.
  // CHECK-NEXT: %0 = synap.constant dense_resource<w0> : tensor<8x3x3x3xf32>
  // GENERIC: %0 = "synap.constant"() <{value = dense_resource<w0> : tensor<8x3x3x3xf32>}> : () -> tensor<8x3x3x3xf32>
  %0 = synap.constant dense_resource<w0> : tensor<8x3x3x3xf32>
  // With layer attributes (printed before the value).
  // CHECK-NEXT: %1 = synap.constant {layer_name = "conv1/weights", layer_index = 3 : i64} dense_resource<conv1_w> : tensor<16xf32>
  // GENERIC: %1 = "synap.constant"() <{value = dense_resource<conv1_w> : tensor<16xf32>}> {layer_name = "conv1/weights", layer_index = 3 : i64} : () -> tensor<16xf32>
  %1 = synap.constant {layer_name = "conv1/weights", layer_index = 3 : i64} dense_resource<conv1_w> : tensor<16xf32>
  // Rank 0, integer and i1 elements.
  // CHECK-NEXT: %2 = synap.constant dense_resource<scalar> : tensor<f32>
  %2 = synap.constant dense_resource<scalar> : tensor<f32>
  // CHECK-NEXT: %3 = synap.constant dense_resource<idx> : tensor<4xi64>
  %3 = synap.constant dense_resource<idx> : tensor<4xi64>
  // CHECK-NEXT: %4 = synap.constant dense_resource<mask> : tensor<2x2xi1>
  %4 = synap.constant dense_resource<mask> : tensor<2x2xi1>
  // A zero-size tensor.
  // CHECK-NEXT: %5 = synap.constant dense_resource<empty> : tensor<0x3xf32>
  %5 = synap.constant dense_resource<empty> : tensor<0x3xf32>
  // Two constants may share a handle.
  // CHECK-NEXT: %6 = synap.constant dense_resource<w0> : tensor<8x3x3x3xf32>
  %6 = synap.constant dense_resource<w0> : tensor<8x3x3x3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @constant_quantized(
func.func @constant_quantized() {
  // Per-axis i8 weights and per-axis i32 bias.
  // CHECK-NEXT: %0 = synap.constant {layer_name = "qconv/w"} dense_resource<qw> : tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>
  %0 = synap.constant {layer_name = "qconv/w"} dense_resource<qw> : tensor<4x1x1x3x!quant.uniform<i8:f32:0, {0.5,0.25,0.125,3.0517578125e-05}>>
  // CHECK-NEXT: %1 = synap.constant dense_resource<qb> : tensor<4x!quant.uniform<i32:f32:0, {0.01175,0.005875,0.0029375,7.171630859375e-07}>>
  %1 = synap.constant dense_resource<qb> : tensor<4x!quant.uniform<i32:f32:0, {0.01175,0.005875,0.0029375,7.171630859375e-07}>>
  // A per-tensor u8 lookup table.
  // CHECK-NEXT: %2 = synap.constant {layer_index = 99 : i64} dense_resource<lut> : tensor<256x!quant.uniform<u8:f32, 0.0235:128>>
  %2 = synap.constant {layer_index = 99 : i64} dense_resource<lut> : tensor<256x!quant.uniform<u8:f32, 0.0235:128>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @constant_with_blobs(
func.func @constant_with_blobs() {
  // Handles whose values come with the file: the resource section is read into the
  // WeightStore and written back after the module (sorted by handle), unchanged.
  // CHECK-NEXT: %0 = synap.constant dense_resource<blob_f32> : tensor<2xf32>
  %0 = synap.constant dense_resource<blob_f32> : tensor<2xf32>
  // CHECK-NEXT: %1 = synap.constant dense_resource<blob_i8> : tensor<3x!quant.uniform<i8:f32, 0.5:-1>>
  %1 = synap.constant dense_resource<blob_i8> : tensor<3x!quant.uniform<i8:f32, 0.5:-1>>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK:      {-#
// CHECK-NEXT:   dialect_resources: {
// CHECK-NEXT:     builtin: {
// CHECK-NEXT:       blob_f32: "0x040000000000803F00000040",
// CHECK-NEXT:       blob_i8: "0x0100000001FF7F"
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: #-}
{-#
  dialect_resources: {
    builtin: {
      blob_i8: "0x0100000001FF7F",
      blob_f32: "0x040000000000803F00000040"
    }
  }
#-}
