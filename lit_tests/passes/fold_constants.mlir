// RUN: synapc-opt %s --split-input-file -p fold-constants | filecheck %s
// RUN: synapc-opt %s --split-input-file -p 'fold-constants{max-elements=4}' | filecheck %s --check-prefix=LIMIT

// A transposed weight becomes a constant of the transposed values (1..6 as 2x3 -> 3x2:
// 1 4 2 5 3 6), named after the transpose; the weight it read is erased.
// CHECK-LABEL: func.func @transpose_weight
// CHECK-NEXT:    %[[W:.*]] = synap.constant {layer_name = "wt", layer_index = 7 : i64} dense_resource<[[H:.*]]> : tensor<3x2xf32>
// CHECK-NEXT:    synap.add %{{.*}}, %[[W]]
// CHECK-NEXT:    func.return
// CHECK-NOT:     synap.transpose
// CHECK:         [[H]]: "0x040000000000803F00008040000000400000A040000040400000C040"
// LIMIT-LABEL: func.func @transpose_weight
// LIMIT-NEXT:    synap.constant
// LIMIT-NEXT:    synap.transpose
func.func @transpose_weight(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = synap.constant dense_resource<tw> : tensor<2x3xf32>
  %t = synap.transpose %w {layer_name = "wt", layer_index = 7 : i64, perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = synap.add %x, %t : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      tw: "0x040000000000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}

// -----

// Chains fold completely: reshape, then add of two constants, then mul by the result.
// ([1 2 3 4] + [1 1 1 1]) * [1 2 3 4] = [2 6 12 20]; nothing but the constant is left.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[C:.*]] = synap.constant dense_resource<[[H:.*]]> : tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[C]]
// CHECK:         [[H]]: "0x04000000000000400000C040000040410000A041"
func.func @chain() -> tensor<2x2xf32> {
  %a = synap.constant dense_resource<ca> : tensor<4xf32>
  %r = synap.reshape %a : (tensor<4xf32>) -> tensor<2x2xf32>
  %o = synap.constant dense_resource<co> : tensor<2x2xf32>
  %s = synap.add %r, %o : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = synap.mul %s, %r : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %m : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      ca: "0x040000000000803F000000400000404000008040",
      co: "0x040000000000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// Shape arithmetic of ONNX exports (i64): [2 3] * [4 5] concatenated with [-1].
// CHECK-LABEL: func.func @shape_arithmetic
// CHECK-NEXT:    %[[C:.*]] = synap.constant dense_resource<[[H:.*]]> : tensor<3xi64>
// CHECK-NEXT:    func.return %[[C]]
// CHECK:         [[H]]: "0x0800000008000000000000000F00000000000000FFFFFFFFFFFFFFFF"
func.func @shape_arithmetic() -> tensor<3xi64> {
  %a = synap.constant dense_resource<sa> : tensor<2xi64>
  %b = synap.constant dense_resource<sb> : tensor<2xi64>
  %m = synap.mul %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %n = synap.constant dense_resource<sn> : tensor<1xi64>
  %c = synap.concat %m, %n {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  func.return %c : tensor<3xi64>
}

{-#
  dialect_resources: {
    builtin: {
      sa: "0x0800000002000000000000000300000000000000",
      sb: "0x0800000004000000000000000500000000000000",
      sn: "0x08000000FFFFFFFFFFFFFFFF"
    }
  }
#-}

// -----

// A split folds into one constant per result.
// CHECK-LABEL: func.func @split
// CHECK-NEXT:    %[[A:.*]] = synap.constant dense_resource<[[HA:.*]]> : tensor<1xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.constant dense_resource<[[HB:.*]]> : tensor<3xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]]
// CHECK:         [[HA]]: "0x040000000000803F"
// CHECK:         [[HB]]: "0x04000000000000400000404000008040"
// Within the limit of 4 elements in all (1 + 3), it still folds.
// LIMIT-LABEL: func.func @split
// LIMIT-NEXT:    synap.constant
// LIMIT-NEXT:    synap.constant
// LIMIT-NEXT:    func.return
func.func @split() -> (tensor<1xf32>, tensor<3xf32>) {
  %a = synap.constant dense_resource<pa> : tensor<4xf32>
  %b:2 = synap.split %a {axis = 0 : i64} : (tensor<4xf32>) -> (tensor<1xf32>, tensor<3xf32>)
  func.return %b#0, %b#1 : tensor<1xf32>, tensor<3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      pa: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// Quantizing a float weight (TFLite semantics): round(x / 0.5) + 10 for x = 1 2 3 4.
// CHECK-LABEL: func.func @quantize_weight
// CHECK-NEXT:    %[[C:.*]] = synap.constant dense_resource<[[H:.*]]> : tensor<4x!quant.uniform<u8:f32, 0.5:10>>
// CHECK-NEXT:    func.return %[[C]]
// CHECK:         [[H]]: "0x010000000C0E1012"
func.func @quantize_weight() -> tensor<4x!quant.uniform<u8:f32, 0.5:10>> {
  %w = synap.constant dense_resource<qw> : tensor<4xf32>
  %q = synap.quantize %w : (tensor<4xf32>) -> tensor<4x!quant.uniform<u8:f32, 0.5:10>>
  func.return %q : tensor<4x!quant.uniform<u8:f32, 0.5:10>>
}

{-#
  dialect_resources: {
    builtin: {
      qw: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// A quantized add of constants under TFLite's integer arithmetic: 0.5 + 0 and 1.5 + 0
// requantized to scale 1 round half away from zero (1, 2).
// CHECK-LABEL: func.func @quantized_add_tflite
// CHECK-NEXT:    %[[C:.*]] = synap.constant dense_resource<[[H:.*]]> : tensor<2x!quant.uniform<u8:f32, 1.0>>
// CHECK-NEXT:    func.return %[[C]]
// CHECK:         [[H]]: "0x010000000102"
func.func @quantized_add_tflite() -> tensor<2x!quant.uniform<u8:f32, 1.0>> {
  %a = synap.constant dense_resource<ta> : tensor<2x!quant.uniform<u8:f32, 0.5>>
  %b = synap.constant dense_resource<tb> : tensor<2x!quant.uniform<u8:f32, 0.5>>
  %s = synap.add %a, %b : (tensor<2x!quant.uniform<u8:f32, 0.5>>, tensor<2x!quant.uniform<u8:f32, 0.5>>) -> tensor<2x!quant.uniform<u8:f32, 1.0>>
  func.return %s : tensor<2x!quant.uniform<u8:f32, 1.0>>
}

{-#
  dialect_resources: {
    builtin: {
      ta: "0x010000000103",
      tb: "0x010000000000"
    }
  }
#-}

// -----

// The same add under ONNX semantics rounds half to even (0, 2): the folded integers
// follow the module's semantics.
// CHECK-LABEL: func.func @quantized_add_onnx
// CHECK-NEXT:    %[[C:.*]] = synap.constant dense_resource<[[H:.*]]> : tensor<2x!quant.uniform<u8:f32, 1.0>>
// CHECK-NEXT:    func.return %[[C]]
// CHECK:         [[H]]: "0x010000000002"
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @quantized_add_onnx() -> tensor<2x!quant.uniform<u8:f32, 1.0>> {
    %a = synap.constant dense_resource<oa> : tensor<2x!quant.uniform<u8:f32, 0.5>>
    %b = synap.constant dense_resource<ob> : tensor<2x!quant.uniform<u8:f32, 0.5>>
    %s = synap.add %a, %b : (tensor<2x!quant.uniform<u8:f32, 0.5>>, tensor<2x!quant.uniform<u8:f32, 0.5>>) -> tensor<2x!quant.uniform<u8:f32, 1.0>>
    func.return %s : tensor<2x!quant.uniform<u8:f32, 1.0>>
  }
}

{-#
  dialect_resources: {
    builtin: {
      oa: "0x010000000103",
      ob: "0x010000000000"
    }
  }
#-}

// -----

// Not folded: an operand is a function argument.
// CHECK-LABEL: func.func @argument_operand
// CHECK-NEXT:    %[[W:.*]] = synap.constant dense_resource<aw> : tensor<4xf32>
// CHECK-NEXT:    synap.add %{{.*}}, %[[W]]
// CHECK-NEXT:    func.return
func.func @argument_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = synap.constant dense_resource<aw> : tensor<4xf32>
  %y = synap.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      aw: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// A constant that another op still reads stays; the op that only read constants folds.
// CHECK-LABEL: func.func @shared_constant
// CHECK-NEXT:    %[[W:.*]] = synap.constant dense_resource<hw> : tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = synap.constant dense_resource<[[H:.*]]> : tensor<4xf32>
// CHECK-NEXT:    synap.add %{{.*}}, %[[W]]
// CHECK-NEXT:    func.return %{{.*}}, %[[N]]
// CHECK:         [[H]]: "0x04000000000080BF000000C0000040C0000080C0"
// CHECK-NEXT:    hw: "0x040000000000803F000000400000404000008040"
func.func @shared_constant(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %w = synap.constant dense_resource<hw> : tensor<4xf32>
  %n = synap.neg %w : (tensor<4xf32>) -> tensor<4xf32>
  %y = synap.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y, %n : tensor<4xf32>, tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      hw: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// Not folded: a constant without values in the WeightStore (no resource blob).
// CHECK-LABEL: func.func @no_values
// CHECK-NEXT:    synap.constant
// CHECK-NEXT:    synap.neg
// CHECK-NEXT:    func.return
func.func @no_values() -> tensor<4xf32> {
  %w = synap.constant dense_resource<missing> : tensor<4xf32>
  %n = synap.neg %w : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}

// -----

// Not folded under TFLite semantics: the backend refuses a transpose whose result is
// quantized unlike its operand (TFLite defines no requantization for it).
// CHECK-LABEL: func.func @refused_by_backend
// CHECK-NEXT:    synap.constant
// CHECK-NEXT:    synap.transpose
// CHECK-NEXT:    func.return
func.func @refused_by_backend() -> tensor<2x1x!quant.uniform<u8:f32, 1.0>> {
  %w = synap.constant dense_resource<rw> : tensor<1x2x!quant.uniform<u8:f32, 0.5>>
  %t = synap.transpose %w {perm = array<i64: 1, 0>} : (tensor<1x2x!quant.uniform<u8:f32, 0.5>>) -> tensor<2x1x!quant.uniform<u8:f32, 1.0>>
  func.return %t : tensor<2x1x!quant.uniform<u8:f32, 1.0>>
}

{-#
  dialect_resources: {
    builtin: {
      rw: "0x010000000103"
    }
  }
#-}

// -----

// Under ONNX semantics the same transpose runs dequantize -> transpose -> quantize (half
// to even): 0.5 and 1.5 at scale 1 become 0 and 2, and it folds.
// CHECK-LABEL: func.func @requantizing_transpose_onnx
// CHECK-NEXT:    %[[C:.*]] = synap.constant dense_resource<[[H:.*]]> : tensor<2x1x!quant.uniform<u8:f32, 1.0>>
// CHECK-NEXT:    func.return %[[C]]
// CHECK:         [[H]]: "0x010000000002"
builtin.module attributes {"synap.integer_semantics" = "onnx"} {
  func.func @requantizing_transpose_onnx() -> tensor<2x1x!quant.uniform<u8:f32, 1.0>> {
    %w = synap.constant dense_resource<ow> : tensor<1x2x!quant.uniform<u8:f32, 0.5>>
    %t = synap.transpose %w {perm = array<i64: 1, 0>} : (tensor<1x2x!quant.uniform<u8:f32, 0.5>>) -> tensor<2x1x!quant.uniform<u8:f32, 1.0>>
    func.return %t : tensor<2x1x!quant.uniform<u8:f32, 1.0>>
  }
}

{-#
  dialect_resources: {
    builtin: {
      ow: "0x010000000103"
    }
  }
#-}

// -----

// A convolution of constants: the filter (OHWI rows [1 10] and [100 1000]) gets the
// layout the kernel wants, as in the lowering: [1 2] -> [21 2100].
// CHECK-LABEL: func.func @conv_of_constants
// CHECK-NEXT:    %[[C:.*]] = synap.constant dense_resource<[[H:.*]]> : tensor<1x1x1x2xf32>
// CHECK-NEXT:    func.return %[[C]]
// CHECK:         [[H]]: "0x040000000000A84100400345"
func.func @conv_of_constants() -> tensor<1x1x1x2xf32> {
  %x = synap.constant dense_resource<cx> : tensor<1x1x1x2xf32>
  %w = synap.constant dense_resource<cw> : tensor<2x1x1x2xf32>
  %y = synap.conv2d %x, %w : (tensor<1x1x1x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x1x1x2xf32>
  func.return %y : tensor<1x1x1x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      cx: "0x040000000000803F00000040",
      cw: "0x040000000000803F000020410000C84200007A44"
    }
  }
#-}
