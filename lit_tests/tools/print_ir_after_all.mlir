// RUN: synapc-opt %s -p 'canonicalize,cse' --print-ir-after-all 2>&1 >/dev/null | filecheck %s

// Each pass's result is dumped to stderr, in pipeline order.
// CHECK:       IR Dump After canonicalize
// CHECK:         synap.sigmoid
// CHECK:         synap.sigmoid
// CHECK:       IR Dump After cse
// CHECK:         synap.sigmoid
// CHECK-NOT:     synap.sigmoid
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = synap.reshape %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = synap.sigmoid %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = synap.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b, %c : tensor<4xf32>, tensor<4xf32>
}
