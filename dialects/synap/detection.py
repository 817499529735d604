"""Object-detection post-processing: box decoding and non-maximum suppression (a CPU op).

`synap.detection_postprocess` is TFLite's `TFLite_Detection_PostProcess` custom operator
(the tail of SSD-style detectors). It never runs on the NPU: it is a CPU op and computes in
float32 whatever the target's NPU float type is.
"""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import Float32Type, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import shapes
from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    float_prop,
    int_prop,
    is_float,
)


@irdl_op_definition
class DetectionPostProcessOp(SynapOp):
    """Decode SSD box encodings against anchors and select detections with NMS.

    Operands: `box_encodings` [1, N, >=4] (y, x, h, w of each anchor's encoding; extra
    values such as keypoints are ignored), `class_predictions` [1, N, C or C+1] (with a
    leading background class when it has ``num_classes + 1`` columns) and `anchors`
    [N, 4] (y, x, h, w centre-size anchors). Each may be float or uniformly quantized
    (per tensor); quantized values are dequantized first.

    A box decodes to ``yc = y / y_scale * ah + ay``, ``xc = x / x_scale * aw + ax``,
    ``half_h = 0.5 * exp(h / h_scale) * ah``, ``half_w = 0.5 * exp(w / w_scale) * aw``
    and is returned as [ymin, xmin, ymax, xmax]. Candidates need a score of at least
    `nms_score_threshold`; a kept box suppresses later ones whose IoU with it exceeds
    `nms_iou_threshold` (IoU is 0 when either box has no area).

    With ``use_regular_nms = false`` (fast NMS) each anchor takes its top
    `max_classes_per_detection` classes and one class-agnostic NMS on each anchor's best
    score keeps up to `max_detections` anchors; every kept anchor fills
    `max_classes_per_detection` consecutive result rows. With ``use_regular_nms = true``
    NMS runs per class (up to `detections_per_class` boxes each) and the best
    `max_detections` of all classes are returned in the first rows.

    Results (all f32, M = max_detections * max_classes_per_detection): `boxes` [1, M, 4],
    `classes` [1, M] (class index without the background class), `scores` [1, M] and
    `num_detections` [1]. Rows past the detections are zero.
    """

    name = "synap.detection_postprocess"

    box_encodings = operand_def(TensorType)
    class_predictions = operand_def(TensorType)
    anchors = operand_def(TensorType)
    boxes = result_def(TensorType)
    classes = result_def(TensorType)
    scores = result_def(TensorType)
    num_detections = result_def(TensorType)

    max_detections = int_prop()
    max_classes_per_detection = int_prop()
    detections_per_class = int_prop(100)
    use_regular_nms = bool_prop(False)
    nms_score_threshold = float_prop()
    nms_iou_threshold = float_prop()
    num_classes = int_prop()
    y_scale = float_prop()
    x_scale = float_prop()
    h_scale = float_prop()
    w_scale = float_prop()

    SAME_ELEMENT_KIND: ClassVar[bool] = False

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return shapes.detection_postprocess(
            operand_shapes[0],
            operand_shapes[1],
            operand_shapes[2],
            props["max_detections"],
            props["max_classes_per_detection"],
            props["num_classes"],
        )

    def verify_semantics(self) -> None:
        p = self.props()
        if p["max_detections"] < 0:
            self.fail(f"max_detections must be >= 0, got {p['max_detections']}")
        if p["use_regular_nms"] and p["detections_per_class"] < 1:
            self.fail(f"detections_per_class must be >= 1, got {p['detections_per_class']}")
        if not 0.0 < p["nms_iou_threshold"] <= 1.0:
            self.fail(f"nms_iou_threshold must be in (0, 1], got {p['nms_iou_threshold']}")
        for key in ("y_scale", "x_scale", "h_scale", "w_scale"):
            if p[key] == 0.0:
                self.fail(f"{key} must not be 0")
        names = ("box_encodings", "class_predictions", "anchors")
        for name, operand in zip(names, self.operands, strict=True):
            element = element_of(operand)
            if isinstance(element, UniformQuantizedType):
                if element.is_per_axis:
                    self.fail(f"{name} must be quantized per tensor, got {element}")
            elif not is_float(element):
                self.fail(f"{name} must be float or quantized, got {element}")
        results = ("boxes", "classes", "scores", "num_detections")
        for name, result in zip(results, self.results, strict=True):
            element = element_of(result)
            if not isinstance(element, Float32Type):
                self.fail(f"result {name} must be f32, got {element}")


OPS = [DetectionPostProcessOp]
