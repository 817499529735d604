// RUN: synapc-opt %s --split-input-file -p cse | filecheck %s

// Identical sigmoids of the same value become one, whatever their source layers: the
// first survives and the others' layers go into its fused_layers, in graph order.
// CHECK-LABEL: func.func @duplicates
// CHECK-NEXT:    %[[A:.*]] = synap.sigmoid %{{.*}} {fused_layers = ["other", "third"]} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[C:.*]] = synap.add %[[A]], %[[A]]
// CHECK-NEXT:    %[[E:.*]] = synap.add %[[C]], %[[A]]
// CHECK-NEXT:    %{{.*}} = synap.add %[[E]], %[[A]]
// CHECK-NEXT:    func.return
func.func @duplicates(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = synap.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = synap.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  %c = synap.sigmoid %x {layer_name = "other"} : (tensor<4xf32>) -> tensor<4xf32>
  %t = synap.sigmoid %x {layer_name = "third"} : (tensor<4xf32>) -> tensor<4xf32>
  %d = synap.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = synap.add %d, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %f = synap.add %e, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %f : tensor<4xf32>
}

// -----

// A named survivor keeps its layer_name and index; a duplicate's own fused_layers follow
// its name. Chains merge too (the adds become one once their operands are one), and ops
// that differ in a property stay apart.
// CHECK-LABEL: func.func @named
// CHECK-NEXT:    %[[T:.*]] = synap.transpose %{{.*}} {layer_name = "t1", layer_index = 1 : i64, fused_layers = ["t2", "t2_fused"], perm = array<i64: 1, 0>}
// CHECK-NEXT:    %[[A:.*]] = synap.add %[[T]], %[[T]] {layer_name = "a1", fused_layers = ["a2"]}
// CHECK-NEXT:    %[[B:.*]] = synap.add %[[A]], %[[A]] {layer_name = "a3", activation = #synap<activation relu>}
// CHECK-NEXT:    func.return %[[A]], %[[A]], %[[B]]
func.func @named(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %t1 = synap.transpose %x {layer_name = "t1", layer_index = 1 : i64, perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t2 = synap.transpose %x {layer_name = "t2", layer_index = 2 : i64, fused_layers = ["t2_fused"], perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %a1 = synap.add %t1, %t1 {layer_name = "a1"} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %a2 = synap.add %t2, %t2 {layer_name = "a2"} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %a3 = synap.add %a1, %a2 {layer_name = "a3", activation = #synap<activation relu>} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %a1, %a2, %a3 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}
