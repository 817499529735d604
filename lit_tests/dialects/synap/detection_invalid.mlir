// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: synapc-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NOPASS

// Every verifier error of the op of dialects/synap/detection.py (detection_postprocess):
// the detection_postprocess shape rule of shapes.py, the property and element type checks
// of DetectionPostProcessOp.verify_semantics, and xDSL's required-property check.

// NOPASS guards against a chunk that verifies by mistake: it would print its module in
// custom form, and its CHECK could then match a later chunk's text.
// NOPASS-NOT: builtin.module {

// Box encodings must be [1, N, >=4] (rank 3).
// CHECK: synap.detection_postprocess "det": box encodings must have rank 3, got shape [10, 4]
func.func @f(%b: tensor<10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// Batch 2 is not supported (TFLite's kBatchSize is 1).
// CHECK: synap.detection_postprocess "det": box encodings must have batch 1, got [2, 10, 4]
func.func @f(%b: tensor<2x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<2x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// Fewer than 4 values per box.
// CHECK: synap.detection_postprocess "det": box encodings need >= 4 values per box, got [1, 10, 3]
func.func @f(%b: tensor<1x10x3xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x3xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// Class predictions for another number of anchors.
// CHECK: synap.detection_postprocess "det": class predictions [1, 8, 4] must be [1, 10, classes]
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x8x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x8x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// Anchors must be [N, 4].
// CHECK: synap.detection_postprocess "det": anchors [10, 3] must be [10, 4]
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x3xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x3xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// Class predictions with two columns more than num_classes.
// CHECK: synap.detection_postprocess "det": class predictions have 5 classes, num_classes is 3 (one more for a background class is allowed)
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x5xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x5xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// Fewer class columns than num_classes.
// CHECK: synap.detection_postprocess "det": class predictions have 2 classes, num_classes is 3 (one more for a background class is allowed)
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x2xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x2xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// max_classes_per_detection must be positive.
// CHECK: synap.detection_postprocess "det": max_classes_per_detection must be >= 1, got 0
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 0 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// Result rows must be max_detections * max_classes_per_detection.
// CHECK: synap.detection_postprocess "det": result #0 shape [1, 5, 4] should be [1, 10, 4]
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 2 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// num_detections is a one-element tensor.
// CHECK: synap.detection_postprocess "det": result #3 shape [] should be [1]
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<f32>)
  func.return
}

// -----

// Negative max_detections.
// CHECK: synap.detection_postprocess "det": max_detections must be >= 0, got -1
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = -1 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x0x4xf32>, tensor<1x0xf32>, tensor<1x0xf32>, tensor<1xf32>)
  func.return
}

// -----

// Regular NMS needs at least one detection per class.
// CHECK: synap.detection_postprocess "det": detections_per_class must be >= 1, got 0
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32, detections_per_class = 0 : i64, use_regular_nms = true} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// An IoU threshold of 0 (TFLite requires (0, 1]).
// CHECK: synap.detection_postprocess "det": nms_iou_threshold must be in (0, 1], got 0.0
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.0 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// An IoU threshold above 1.
// CHECK: synap.detection_postprocess "det": nms_iou_threshold must be in (0, 1], got 1.5
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 1.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// A zero scale would divide by zero while decoding.
// CHECK: synap.detection_postprocess "det": h_scale must not be 0
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 0.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// Integer (not quantized) box encodings.
// CHECK: synap.detection_postprocess "det": box_encodings must be float or quantized, got i32
func.func @f(%b: tensor<1x10x4xi32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xi32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// Per-axis quantized anchors (TFLite dequantizes with one scale).
// CHECK: synap.detection_postprocess "det": anchors must be quantized per tensor, got !quant.uniform<u8:f32:1, {0.1,0.1,0.2,0.2}>
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4x!quant.uniform<u8:f32:1, {0.1,0.1,0.2,0.2}>>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4x!quant.uniform<u8:f32:1, {0.1,0.1,0.2,0.2}>>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// Classes are float32, as in TFLite.
// CHECK: synap.detection_postprocess @4: result classes must be f32, got i32
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_index = 4 : i64, max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xi32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}

// -----

// A quantized result.
// CHECK: synap.detection_postprocess: result scores must be f32, got !quant.uniform<u8:f32, 0.00390625>
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, num_classes = 3 : i64, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5x!quant.uniform<u8:f32, 0.00390625>>, tensor<1xf32>)
  func.return
}

// -----

// num_classes is required (xDSL's own message).
// CHECK: property 'num_classes' expected in operation 'synap.detection_postprocess'
func.func @f(%b: tensor<1x10x4xf32>, %s: tensor<1x10x4xf32>, %a: tensor<10x4xf32>) {
  %0, %1, %2, %3 = synap.detection_postprocess %b, %s, %a {layer_name = "det", max_detections = 5 : i64, max_classes_per_detection = 1 : i64, nms_score_threshold = 0.5 : f32, nms_iou_threshold = 0.5 : f32, y_scale = 10.0 : f32, x_scale = 10.0 : f32, h_scale = 5.0 : f32, w_scale = 5.0 : f32} : (tensor<1x10x4xf32>, tensor<1x10x4xf32>, tensor<10x4xf32>) -> (tensor<1x5x4xf32>, tensor<1x5xf32>, tensor<1x5xf32>, tensor<1xf32>)
  func.return
}
