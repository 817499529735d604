// RUN: synapc-opt %s | filecheck %s
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --elide-weights | filecheck %s --check-prefix=ELIDED

// Blobs of the input are kept through the tool, with their alignment prefix, in hex.
// CHECK:       synap.constant dense_resource<bias> : tensor<2xf32>
// CHECK:       {-#
// CHECK-NEXT:    dialect_resources: {
// CHECK-NEXT:      builtin: {
// CHECK-NEXT:        bias: "0x040000000000803F00000040",
// CHECK-NEXT:        qw: "0x0100000001FF"
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  #-}

// ELIDED:      synap.constant dense_resource<bias>
// ELIDED-NOT:  {-#
func.func @f() -> (tensor<2xf32>, tensor<2x!quant.uniform<i8:f32, 0.5>>) {
  %b = synap.constant dense_resource<bias> : tensor<2xf32>
  %q = synap.constant dense_resource<qw> : tensor<2x!quant.uniform<i8:f32, 0.5>>
  func.return %b, %q : tensor<2xf32>, tensor<2x!quant.uniform<i8:f32, 0.5>>
}

{-#
  dialect_resources: {
    builtin: {
      bias: "0x040000000000803f00000040",
      qw: "0x0100000001ff"
    }
  }
#-}
