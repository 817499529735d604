// RUN: synapc-opt %s -p 'plan-memory' | filecheck %s
// RUN: synapc-opt %s -p 'plan-memory{print-plan=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=TABLE
// RUN: synapc-opt %s -p 'plan-memory{sram-bytes=131072}' | filecheck %s --check-prefix=SRAM

// Every intermediate gets a place in the arena (64-byte aligned); the returned tensor is
// placed by rule. %c is computed in place over %b (its only reader); %y and %y2 are
// written straight into the concatenation %z (along the outermost axis), and the
// reshape %r is %z's bytes: four tensors, one 115,200-byte buffer. The arena is at the
// lower bound.
// CHECK:      func.func @main
// CHECK-SAME: synap.memory_plan = {arena = 246272 : i64, lower_bound = 246272 : i64, no_reuse = 246272 : i64, sram = 0 : i64, sram_resident = 0 : i64, weights = 0 : i64, inputs = 102400 : i64, outputs = 115200 : i64, alignment = 64 : i64, peak_step = 3 : i64}
// CHECK:      %a = synap.exp %x {layer_name = "a", synap.placement = ["ddr@115200"]}
// CHECK-NEXT: %b = synap.tanh %a {layer_name = "b", synap.placement = ["ddr@180736"]}
// CHECK-NEXT: %c = synap.exp %b {layer_name = "c", synap.placement = ["ddr@180736"]}
// CHECK-NEXT: %y = synap.conv2d %c, %w {layer_name = "y", synap.placement = ["ddr@0"]}
// CHECK-NEXT: %y2 = synap.conv2d %a, %w {layer_name = "y2", synap.placement = ["ddr@57600"]}
// CHECK-NEXT: %z = synap.concat %y, %y2 {layer_name = "z", synap.placement = ["ddr@0"], axis = 0 : i64}
// CHECK-NEXT: %r = synap.reshape %z {layer_name = "r", synap.placement = ["ddr@0"]}
// CHECK-NEXT: %e = synap.exp %r {layer_name = "e", synap.placement = ["output"]}

// TABLE:      // memory plan of @main
// TABLE-NEXT: // memory    offset      size  steps      tensors (first layer)
// TABLE-NEXT: // ddr            0    115200     3-7     op3.0 op4.0 op5.0 op6.0 (layer "y" (op #3, synap.conv2d))
// TABLE-NEXT: // ddr       115200     65536     0-4     op0.0 (layer "a" (op #0, synap.exp))
// TABLE-NEXT: // ddr       180736     65536     1-3     op1.0 op2.0 (layer "b" (op #1, synap.tanh))
// TABLE-NEXT: // arena 246272, lower_bound 246272
// With 128 KiB of SRAM, the buffer of the most accesses per byte (the concatenation's:
// %y, %y2, %z and %r, written and read eight times) moves on chip; %a's and %b's buffers
// would not fit beside it while it lives, and stay in the DDR arena, now 128 KiB.
// SRAM:      synap.memory_plan = {arena = 131072 : i64, lower_bound = 131072 : i64, no_reuse = 131072 : i64, sram = 115200 : i64, sram_resident = 115200 : i64
// SRAM:      %a = synap.exp %x {layer_name = "a", synap.placement = ["ddr@0"]}
// SRAM:      %y = synap.conv2d %c, %w {layer_name = "y", synap.placement = ["sram@0"]}
// SRAM-NEXT: %y2 = synap.conv2d %a, %w {layer_name = "y2", synap.placement = ["sram@57600"]}
// SRAM-NEXT: %z = synap.concat %y, %y2 {layer_name = "z", synap.placement = ["sram@0"], axis = 0 : i64}

func.func @main(%x: tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>, %w: tensor<64x3x3x64x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<2x30x30x64x!quant.uniform<u8:f32, 0.1:128>> {
  %a = synap.exp %x {layer_name = "a"} : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>
  %b = synap.tanh %a {layer_name = "b"} : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>) -> tensor<1x32x32x64x!quant.uniform<u8:f32, 0.0078125:128>>
  %c = synap.exp %b {layer_name = "c"} : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.0078125:128>>) -> tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>
  %y = synap.conv2d %c, %w {layer_name = "y"} : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>, tensor<64x3x3x64x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
  %y2 = synap.conv2d %a, %w {layer_name = "y2"} : (tensor<1x32x32x64x!quant.uniform<u8:f32, 0.05:128>>, tensor<64x3x3x64x!quant.uniform<u8:f32, 0.02:120>>) -> tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
  %z = synap.concat %y, %y2 {layer_name = "z", axis = 0 : i64} : (tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>, tensor<1x30x30x64x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<2x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
  %r = synap.reshape %z {layer_name = "r"} : (tensor<2x30x30x64x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<2x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
  %e = synap.exp %r {layer_name = "e"} : (tensor<2x30x30x64x!quant.uniform<u8:f32, 0.1:128>>) -> tensor<2x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
  func.return %e : tensor<2x30x30x64x!quant.uniform<u8:f32, 0.1:128>>
}
