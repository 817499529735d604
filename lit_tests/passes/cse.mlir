// RUN: synapc-opt %s -p cse | filecheck %s

// Two identical sigmoids of the same value become one; a sigmoid of another source layer
// (different layer_name) stays.
// CHECK-LABEL: func.func @duplicates
// CHECK-NEXT:    %[[A:.*]] = synap.sigmoid %{{.*}} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = synap.sigmoid %{{.*}} {layer_name = "other"}
// CHECK-NEXT:    %[[C:.*]] = synap.add %[[A]], %[[A]]
// CHECK-NEXT:    %{{.*}} = synap.add %[[C]], %[[B]]
func.func @duplicates(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = synap.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = synap.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  %c = synap.sigmoid %x {layer_name = "other"} : (tensor<4xf32>) -> tensor<4xf32>
  %d = synap.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = synap.add %d, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %e : tensor<4xf32>
}
