builtin.module {
  func.func @main(%x: tensor<1x4x4x3xf32>, %q: tensor<3x!quant.uniform<u8:f32, 0.5:10>>) -> (tensor<1x6x6x3xf32>, tensor<1x6x6x3xf32>, tensor<1x6x7x3xf32>, tensor<1x10x7x3xf32>, tensor<1x14x14x3xf32>, tensor<1x8x8x3xf32>, tensor<6x!quant.uniform<u8:f32, 0.5:10>>, tensor<1x10x65540x3xf32>) {
    %0 = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x4x4x3xf32>) -> tensor<1x6x6x3xf32>
    %1 = synap.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x4x4x3xf32>) -> tensor<1x6x6x3xf32>
    %2 = synap.pad %x {layer_name = "pad", layer_index = 32 : i64, pads = array<i64: 0, 0, 2, 0, 0, 3, 0, 0>, value = -1.000000e+00 : f32} : (tensor<1x4x4x3xf32>) -> tensor<1x6x7x3xf32>
    %3 = synap.pad %x {pads = array<i64: 0, 0, 3, 3, 1, 2, 0, 0>, mode = #synap<pad_mode reflect>} : (tensor<1x4x4x3xf32>) -> tensor<1x10x7x3xf32>
    %4 = synap.pad %x {pads = array<i64: 0, 0, 5, 5, 5, 5, 0, 0>, mode = #synap<pad_mode edge>} : (tensor<1x4x4x3xf32>) -> tensor<1x14x14x3xf32>
    %5 = synap.pad %x {pads = array<i64: 0, 0, 4, 0, 0, 4, 0, 0>, mode = #synap<pad_mode symmetric>} : (tensor<1x4x4x3xf32>) -> tensor<1x8x8x3xf32>
    %6 = synap.pad %q {pads = array<i64: 1, 2>, value = 2.500000e+00 : f32} : (tensor<3x!quant.uniform<u8:f32, 0.5:10>>) -> tensor<6x!quant.uniform<u8:f32, 0.5:10>>
    %7 = synap.pad %x {pads = array<i64: 0, 0, 5, 1, 0, 65536, 0, 0>, mode = #synap<pad_mode wrap>} : (tensor<1x4x4x3xf32>) -> tensor<1x10x65540x3xf32>
    func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<1x6x6x3xf32>, tensor<1x6x6x3xf32>, tensor<1x6x7x3xf32>, tensor<1x10x7x3xf32>, tensor<1x14x14x3xf32>, tensor<1x8x8x3xf32>, tensor<6x!quant.uniform<u8:f32, 0.5:10>>, tensor<1x10x65540x3xf32>
  }
}
