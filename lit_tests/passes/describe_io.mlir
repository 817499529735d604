// RUN: synapc-opt %s -p 'describe-io{input=0 format="nv12 plane=y" means=128,127.5,0.5 scale=58.4},describe-io{output=0 format="confidence_array class_index_base=0"}' | filecheck %s
// RUN: synapc-opt %s | synapc-opt | filecheck %s --check-prefix=ROUNDTRIP

// The metafile's format / means / scale become attributes of @main's argument or
// result; the names and layouts already there stay and no op changes.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%x: tensor<1x2x2x3xf32> {synap.name = "image", synap.layout = "nhwc", synap.format = "nv12 plane=y", synap.means = [1.280000e+02 : f64, 1.275000e+02 : f64, 5.000000e-01 : f64], synap.scale = 5.840000e+01 : f64}, %n: tensor<3xf32> {synap.name = "noise"})
// CHECK-SAME:    -> (tensor<1x2x2x3xf32> {synap.name = "scores", synap.format = "confidence_array class_index_base=0"})
// CHECK-NEXT:    %y = synap.add %x, %n
// CHECK-NEXT:    func.return %y

// The I/O attributes print and parse back unchanged (func.func arg_attrs / res_attrs).
// ROUNDTRIP-LABEL: func.func @main
// ROUNDTRIP-SAME:    (%x: tensor<1x2x2x3xf32> {synap.name = "image", synap.layout = "nhwc"}, %n: tensor<3xf32> {synap.name = "noise"})
// ROUNDTRIP-SAME:    -> (tensor<1x2x2x3xf32> {synap.name = "scores"})
func.func @main(%x: tensor<1x2x2x3xf32> {synap.name = "image", synap.layout = "nhwc"}, %n: tensor<3xf32> {synap.name = "noise"}) -> (tensor<1x2x2x3xf32> {synap.name = "scores"}) {
  %y = synap.add %x, %n : (tensor<1x2x2x3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  func.return %y : tensor<1x2x2x3xf32>
}
