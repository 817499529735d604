// RUN: synapc-opt %s -p 'dequantize-outputs{outputs=1,2}' | filecheck %s
// RUN: synapc-opt %s -p dequantize-outputs | filecheck %s --check-prefix=ALL

// Listed quantized outputs get a synap.dequantize to float32 before func.return; a
// listed float output (2) and an unlisted quantized one (0) stay; the outputs keep their
// attributes. Without `outputs`, every quantized output is dequantized.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<1x4x!quant.uniform<i8:f32, 0.5:3>> {synap.name = "a"}, tensor<1x4xf32> {synap.name = "b", synap.format = "raw"}, tensor<1x4xf32> {synap.name = "c"})
// CHECK:         %[[D:.*]] = synap.dequantize %r : (tensor<1x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x4xf32>
// CHECK-NEXT:    func.return %q, %[[D]], %arg0 :
// ALL-LABEL: func.func @main
// ALL-SAME:    -> (tensor<1x4xf32> {synap.name = "a"}, tensor<1x4xf32> {synap.name = "b", synap.format = "raw"}, tensor<1x4xf32> {synap.name = "c"})
// ALL:         %[[A:.*]] = synap.dequantize %q
// ALL-NEXT:    %[[B:.*]] = synap.dequantize %r
// ALL-NEXT:    func.return %[[A]], %[[B]], %arg0 :
func.func @main(%arg0: tensor<1x4xf32>) -> (tensor<1x4x!quant.uniform<i8:f32, 0.5:3>> {synap.name = "a"}, tensor<1x4x!quant.uniform<i8:f32, 0.25>> {synap.name = "b", synap.format = "raw"}, tensor<1x4xf32> {synap.name = "c"}) {
  %q = synap.quantize %arg0 : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<i8:f32, 0.5:3>>
  %r = synap.quantize %arg0 : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<i8:f32, 0.25>>
  func.return %q, %r, %arg0 : tensor<1x4x!quant.uniform<i8:f32, 0.5:3>>, tensor<1x4x!quant.uniform<i8:f32, 0.25>>, tensor<1x4xf32>
}
