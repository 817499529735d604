// RUN: synapc-opt %s | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | synapc-opt | filecheck %s
// RUN: synapc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: synapc-opt %s > %t.1 && synapc-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: synapc-opt %s --print-op-generic > %t.3 && synapc-opt %t.3 --print-op-generic > %t.4 && diff %t.3 %t.4
// RUN: synapc-opt %s > %t.5 && synapc-opt %s --print-op-generic | synapc-opt > %t.6 && diff %t.5 %t.6

// RUN lines: the custom form and the generic form both re-print as the CHECKed custom
// text; printing is a fixed point (print -> parse -> print is byte-identical) in both
// forms, and going through the generic form gives the same custom text.

// Round trip of the op of dialects/synap/detection.py: detection_postprocess (TFLite's
// TFLite_Detection_PostProcess). detections_per_class (default 100) and use_regular_nms
// (default false) are elided at their defaults; every other property is required. The
// results have M = max_detections * max_classes_per_detection rows.

// CHECK-LABEL: func.func @fast_nms(
func.func @fast_nms(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  // Fast NMS, a background class (4 columns for 3 classes), defaults elided.
  // CHECK-NEXT: %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", layer_index = 7 : i64, max_detections = 5 : i64, max_classes_per_detection = 2 : i64, nms_score_threshold = 3.000000e-01 : f32, nms_iou_threshold = 6.000000e-01 : f32, num_classes = 3 : i64, y_scale = 1.000000e+01 : f32, x_scale = 1.000000e+01 : f32, h_scale = 5.000000e+00 : f32, w_scale = 5.000000e+00 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x10x4xf32>, tensor<1x10xf32>, tensor<1x10xf32>, tensor<1xf32>)
  // GENERIC: %0, %1, %2, %3 = "synap.detection_postprocess"(%b, %s, %a) <{max_detections = 5 : i64, max_classes_per_detection = 2 : i64, detections_per_class = 100 : i64, use_regular_nms = false, nms_score_threshold = 3.000000e-01 : f32, nms_iou_threshold = 6.000000e-01 : f32, num_classes = 3 : i64, y_scale = 1.000000e+01 : f32, x_scale = 1.000000e+01 : f32, h_scale = 5.000000e+00 : f32, w_scale = 5.000000e+00 : f32}> {layer_name = "det", layer_index = 7 : i64} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x10x4xf32>, tensor<1x10xf32>, tensor<1x10xf32>, tensor<1xf32>)
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", layer_index = 7 : i64, max_detections = 5 : i64, max_classes_per_detection = 2 : i64, detections_per_class = 100 : i64, use_regular_nms = false, nms_score_threshold = 0.3 : f32, nms_iou_threshold = 0.6 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x10x4xf32>, tensor<1x10xf32>, tensor<1x10xf32>, tensor<1xf32>)
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @regular_nms(
func.func @regular_nms(%b: tensor<1x6x8xf32>, %s: tensor<1x6x90xf32>, %a: tensor<6x4xf32>) {
  // Regular NMS without a background class; box encodings with keypoints (8 values per
  // box, only the first 4 are used).
  // CHECK-NEXT: %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {max_detections = 10 : i64, max_classes_per_detection = 1 : i64, detections_per_class = 3 : i64, use_regular_nms = true, nms_score_threshold = 1.000000e-08 : f32, nms_iou_threshold = 1.000000e+00 : f32, num_classes = 90 : i64, y_scale = 1.000000e+00 : f32, x_scale = 1.000000e+00 : f32, h_scale = 1.000000e+00 : f32, w_scale = 1.000000e+00 : f32} : (tensor<1x6x8xf32>, tensor<1x6x90xf32>, tensor<6x4xf32>) -> (tensor<1x10x4xf32>, tensor<1x10xf32>, tensor<1x10xf32>, tensor<1xf32>)
  // GENERIC: %0, %1, %2, %3 = "synap.detection_postprocess"(%b, %s, %a) <{max_detections = 10 : i64, max_classes_per_detection = 1 : i64, detections_per_class = 3 : i64, use_regular_nms = true,
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {max_detections = 10 : i64, max_classes_per_detection = 1 : i64, detections_per_class = 3 : i64, use_regular_nms = true, nms_score_threshold = 1.0e-8 : f32, nms_iou_threshold = 1.0 : f32, num_classes = 90 : i64, y_scale = 1.0 : f32, x_scale = 1.0 : f32, h_scale = 1.0 : f32, w_scale = 1.0 : f32} : (tensor<1x6x8xf32>, tensor<1x6x90xf32>, tensor<6x4xf32>) -> (tensor<1x10x4xf32>, tensor<1x10xf32>, tensor<1x10xf32>, tensor<1xf32>)
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @quantized(
func.func @quantized(%b: tensor<1x3x4x!quant.uniform<u8:f32, 0.05:128>>, %s: tensor<1x3x2x!quant.uniform<u8:f32, 0.00390625>>, %a: tensor<3x4x!quant.uniform<u8:f32, 0.0078125>>) {
  // uint8 inputs (dequantized by the op), float32 results; max_detections = 0 gives
  // empty results.
  // CHECK-NEXT: %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {max_detections = 2 : i64, max_classes_per_detection = 3 : i64, nms_score_threshold = 5.000000e-01 : f32, nms_iou_threshold = 5.000000e-01 : f32, num_classes = 2 : i64, y_scale = 1.000000e+01 : f32, x_scale = 1.000000e+01 : f32, h_scale = 5.000000e+00 : f32, w_scale = 5.000000e+00 : f32} : (tensor<1x3x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<1x3x2x!quant.uniform<u8:f32, 0.00390625>>, tensor<3x4x!quant.uniform<u8:f32, 0.0078125>>) -> (tensor<1x6x4xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1xf32>)
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {max_detections = 2 : i64, max_classes_per_detection = 3 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 2 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x3x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<1x3x2x!quant.uniform<u8:f32, 0.00390625>>, tensor<3x4x!quant.uniform<u8:f32, 0.0078125>>) -> (tensor<1x6x4xf32>, tensor<1x6xf32>, tensor<1x6xf32>, tensor<1xf32>)
  // CHECK-NEXT: %4, %5, %6, %7 = synap.detection_postprocess %b, %s, %a {max_detections = 0 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 5.000000e-01 : f32, nms_iou_threshold = 5.000000e-01 : f32, num_classes = 2 : i64, y_scale = 1.000000e+01 : f32, x_scale = 1.000000e+01 : f32, h_scale = 5.000000e+00 : f32, w_scale = 5.000000e+00 : f32} : (tensor<1x3x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<1x3x2x!quant.uniform<u8:f32, 0.00390625>>, tensor<3x4x!quant.uniform<u8:f32, 0.0078125>>) -> (tensor<1x0x4xf32>, tensor<1x0xf32>, tensor<1x0xf32>, tensor<1xf32>)
  %4, %5, %6, %7 = synap.detection_postprocess %b, %s, %a {max_detections = 0 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 2 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x3x4x!quant.uniform<u8:f32, 0.05:128>>, tensor<1x3x2x!quant.uniform<u8:f32, 0.00390625>>, tensor<3x4x!quant.uniform<u8:f32, 0.0078125>>) -> (tensor<1x0x4xf32>, tensor<1x0xf32>, tensor<1x0xf32>, tensor<1xf32>)
  // CHECK-NEXT: func.return
  func.return
}
