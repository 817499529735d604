// RUN: synapc-opt %s -p dce | filecheck %s

// Layers whose results reach no output are removed, with the constants only they used.
// CHECK-LABEL: func.func @dead
// CHECK-NEXT:    %[[S:.*]] = synap.sigmoid
// CHECK-NEXT:    func.return %[[S]]
// CHECK-NOT:     synap
func.func @dead(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = synap.constant dense_resource<unused> : tensor<4xf32>
  %a = synap.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = synap.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
  %s = synap.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
