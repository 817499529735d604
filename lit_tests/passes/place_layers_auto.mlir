// RUN: synapc-opt %s -p 'place-layers{target=VS680 auto=true}' | filecheck %s
// RUN: synapc-opt %s -p 'place-layers{target=VS680}' | filecheck %s --check-prefix=NPU

// With auto, NPU layers move to the CPU when the latency model finds the CPU cheaper
// once the crossings between subgraphs are counted (synap.auto says why): the small
// tanh and the sigmoid after it, between CPU layers, move together as one region; the
// uint8 3x3 convolution between CPU layers stays on the NPU's cores.
// CHECK:       %a = synap.exp %x {synap.delegate = "cpu"}
// CHECK-NEXT:  %b = synap.tanh %a {synap.engine = "TP", synap.delegate = "cpu", synap.auto = "CPU {{[0-9]+}} us against NPU {{[0-9]+}} us: with the crossings its region saves, cheaper on the CPU (estimated)"}
// CHECK-NEXT:  %s = synap.sigmoid %b {synap.engine = "TP", synap.delegate = "cpu", synap.auto =
// CHECK-NEXT:  %c = synap.exp %s {synap.delegate = "cpu"}
// CHECK-NEXT:  %y = synap.conv2d %c, %w {synap.engine = "NN"} :
// NPU:         %b = synap.tanh %a {synap.engine = "TP"} :
// NPU-NEXT:    %s = synap.sigmoid %b {synap.engine = "TP"} :
func.func @main(%x: tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<64x3x3x64x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>> {
  %a = synap.exp %x {synap.delegate = "cpu"} : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>
  %b = synap.tanh %a : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x32x32x64x!quant.uniform<u8:f32, 0.0078125:128>>
  %s = synap.sigmoid %b : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.0078125:128>>) -> tensor<1x32x32x64x!quant.uniform<u8:f32, 0.00390625>>
  %c = synap.exp %s {synap.delegate = "cpu"} : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.00390625>>) -> tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.conv2d %c, %w : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>, tensor<64x3x3x64x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
  %z = synap.exp %y {synap.delegate = "cpu"} : (tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
  func.return %z : tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
}
