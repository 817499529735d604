// RUN: synapc-opt %s -p partition | filecheck %s
// RUN: synapc-opt %s -p 'partition{min-nodes-per-partition=2}' | filecheck %s --check-prefix=MIN
// RUN: synapc-opt %s -p 'partition{max-partitions=1}' | filecheck %s --check-prefix=MAX
// RUN: synapc-opt %s -p 'partition{default=gpu}' | filecheck %s --check-prefix=GPU

// Layers run on their synap.delegate (the pass's `default` where they name none); a
// synap.fallback reason sends a layer to the CPU whatever it asks. Subgraphs are convex:
// tanh and exp share the first NPU subgraph, the add after the CPU's sigmoid cannot join
// it (the subgraphs would depend on each other), so it opens a third one. @main keeps its
// signature and calls them in order; each subgraph gets the constants it reads.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %0, %1 = func.call @subgraph0(%x) : (tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
// CHECK-NEXT:    %2 = func.call @subgraph1(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %3 = func.call @subgraph2(%0, %2) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    func.return %3, %1
// CHECK:       func.func private @subgraph0(%0: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) attributes {synap.delegate = "npu"}
// CHECK-NEXT:    %a = synap.tanh %0
// CHECK-NEXT:    %d = synap.exp %0
// CHECK-NEXT:    func.return %a, %d
// CHECK:       func.func private @subgraph1(%0: tensor<1x4xf32>) -> tensor<1x4xf32> attributes {synap.delegate = "cpu"}
// CHECK-NEXT:    %w = synap.constant dense_resource<w>
// CHECK-NEXT:    %b = synap.sigmoid %0
// CHECK-NEXT:    %e = synap.mul %b, %w
// CHECK-NEXT:    func.return %e
// CHECK:       func.func private @subgraph2(%0: tensor<1x4xf32>, %1: tensor<1x4xf32>) -> tensor<1x4xf32> attributes {synap.delegate = "npu"}
// CHECK-NEXT:    %c = synap.add %0, %1
// CHECK-NEXT:    func.return %c

// A one-layer NPU subgraph is below min-nodes-per-partition=2: the add joins the CPU.
// MIN-LABEL: func.func @main
// MIN-NEXT:    func.call @subgraph0
// MIN-NEXT:    func.call @subgraph1
// MIN-NEXT:    func.return
// MIN:         @subgraph1({{.*}} attributes {synap.delegate = "cpu"}
// MIN-NEXT:      synap.constant
// MIN-NEXT:      synap.sigmoid
// MIN-NEXT:      synap.mul
// MIN-NEXT:      synap.add

// At most one subgraph: every accelerator subgraph moves to the CPU.
// MAX-LABEL: func.func @main
// MAX-NEXT:    func.call @subgraph0
// MAX-NEXT:    func.return
// MAX:         @subgraph0({{.*}} attributes {synap.delegate = "cpu"}

// GPU-LABEL: func.func @main
// GPU:         @subgraph0({{.*}} attributes {synap.delegate = "gpu"}
// GPU:         @subgraph1({{.*}} attributes {synap.delegate = "cpu"}
// GPU:         @subgraph2({{.*}} attributes {synap.delegate = "gpu"}
func.func @main(%x: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %a = synap.tanh %x : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = synap.sigmoid %a {synap.delegate = "cpu"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %w = synap.constant dense_resource<w> : tensor<1x4xf32>
  %e = synap.mul %b, %w {synap.fallback = "MULTIPLY: forced"} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = synap.add %a, %e : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %d = synap.exp %x : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %c, %d : tensor<1x4xf32>, tensor<1x4xf32>
}
