// RUN: synapc-opt %s -p 'place-layers{target=VS680 auto=true}' | filecheck %s
// RUN: synapc-opt %s -p 'place-layers{target=VS680}' | filecheck %s --check-prefix=NPU

// With auto, an NPU layer whose producers and consumers all run on the CPU moves there
// when the latency model finds the CPU faster than the NPU plus the crossings its
// staying would cost (synap.auto says by how much): the small tanh between two CPU
// layers moves; the uint8 3x3 convolution between CPU layers stays on the NPU's cores.
// CHECK:       %a = synap.exp %x {synap.delegate = "cpu"}
// CHECK-NEXT:  %b = synap.tanh %a {synap.engine = "TP", synap.delegate = "cpu", synap.auto = "CPU {{[0-9]+}} us < NPU {{[0-9]+}} us + crossing {{[0-9]+}} us (estimated)"}
// CHECK-NEXT:  %c = synap.exp %b {synap.delegate = "cpu"}
// CHECK-NEXT:  %y = synap.conv2d %c, %w {synap.engine = "NN"} :
// NPU:         %b = synap.tanh %a {synap.engine = "TP"} :
func.func @main(%x: tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<64x3x3x64x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>> {
  %a = synap.exp %x {synap.delegate = "cpu"} : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>
  %b = synap.tanh %a : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x32x32x64x!quant.uniform<u8:f32, 0.0078125:128>>
  %c = synap.exp %b {synap.delegate = "cpu"} : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.0078125:128>>) -> tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.conv2d %c, %w : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>, tensor<64x3x3x64x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
  %z = synap.exp %y {synap.delegate = "cpu"} : (tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
  func.return %z : tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
}
