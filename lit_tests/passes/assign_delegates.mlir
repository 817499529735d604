// RUN: synapc-opt %s -p assign-delegates | filecheck %s
// RUN: synapc-opt %s -p 'assign-delegates{default=gpu}' | filecheck %s --check-prefix=GPU

// The metafile's delegate map, kept in the module (synap.delegate_map), becomes
// synap.delegate on the layers it names: '*' first whatever its place, then in order
// (later entries win); 'name...' reaches the layers downstream of name (not name
// itself), '@id' and a bare index the layer with that operator index; `default` is the
// pass's. The map is consumed. (The pattern syntax, shared with the quantization maps:
// passes/layer_patterns.py.)
// CHECK:       builtin.module {
// CHECK:         %a = synap.tanh %x {layer_name = "a", layer_index = 0 : i64, synap.delegate = "cpu"}
// CHECK-NEXT:    %b = synap.sigmoid %a {layer_name = "b", layer_index = 1 : i64, synap.delegate = "npu"}
// CHECK-NEXT:    %c = synap.exp %b {layer_name = "c", layer_index = 2 : i64, synap.delegate = "cpu"}
// CHECK-NEXT:    %d = synap.abs %c {layer_name = "d", layer_index = 3 : i64, synap.delegate = "npu"}
// GPU:           %b = synap.sigmoid %a {layer_name = "b", layer_index = 1 : i64, synap.delegate = "gpu"}
builtin.module attributes {synap.delegate_map = [["b...", "cpu"], ["*", "default"], ["a", "cpu"], ["3", "npu"], ["@1", "default"]]} {
  func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %a = synap.tanh %x {layer_name = "a", layer_index = 0 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %b = synap.sigmoid %a {layer_name = "b", layer_index = 1 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %c = synap.exp %b {layer_name = "c", layer_index = 2 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %d = synap.abs %c {layer_name = "d", layer_index = 3 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
    func.return %d : tensor<1x4xf32>
  }
}
