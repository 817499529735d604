// RUN: synapc-opt %s -p equalize-layers | filecheck %s

// equalize-layers: cross-layer equalization of a fully connected pair joined by a ReLU.
// r1 = max |w1| per output channel = [4, 1], r2 = max |w2| per input channel = [1, 4],
// s = sqrt(r1 * r2) / r2 = [2, 0.5]: w1 / s = [2, 2], b1 / s = [1, 2], w2 * s = [2, 2];
// the next sweep finds equal ranges and stops. The pair computes the same function.
// CHECK-LABEL: func.func @fc_relu_fc(
// CHECK-NEXT:    %[[W1:.*]] = synap.constant dense_resource<w1_eq> : tensor<2x1xf32>
// CHECK-NEXT:    %[[B1:.*]] = synap.constant dense_resource<b1_eq> : tensor<2xf32>
// CHECK-NEXT:    %[[H:.*]] = synap.fully_connected %x, %[[W1]], %[[B1]] {layer_name = "fc1", activation = #synap<activation relu>}
// CHECK-NEXT:    %[[W2:.*]] = synap.constant dense_resource<w2_eq> : tensor<1x2xf32>
// CHECK-NEXT:    synap.fully_connected %[[H]], %[[W2]] {layer_name = "fc2"}
// CHECK-NOT:     dense_resource<w1>
// CHECK-DAG:     b1_eq: "0x040000000000803F00000040"
// CHECK-DAG:     w1_eq: "0x040000000000004000000040"
// CHECK-DAG:     w2_eq: "0x040000000000004000000040"
func.func @fc_relu_fc(%x: tensor<1x1xf32>) -> tensor<1x1xf32> {
  %w1 = synap.constant dense_resource<w1> : tensor<2x1xf32>
  %b1 = synap.constant dense_resource<b1> : tensor<2xf32>
  %w2 = synap.constant dense_resource<w2> : tensor<1x2xf32>
  %h = synap.fully_connected %x, %w1, %b1 {layer_name = "fc1", activation = #synap<activation relu>} : (tensor<1x1xf32>, tensor<2x1xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %y = synap.fully_connected %h, %w2 {layer_name = "fc2"} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x1xf32>
  func.return %y : tensor<1x1xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w1: "0x04000000000080400000803F",
      b1: "0x04000000000000400000803F",
      w2: "0x040000000000803F00008040"
    }
  }
#-}
