"""Converter of TFLite's `TFLite_Detection_PostProcess` custom operator (SSD box decoding
and non-maximum suppression) to `synap.detection_postprocess`."""

from __future__ import annotations

from typing import Any

import flatbuffers.flexbuffers as flexbuffers
from xdsl.dialects.builtin import f32

from synapc.dialects.synap.detection import DetectionPostProcessOp
from synapc.importers.tflite.reader import Importer, TfliteOp, converts

# Custom option keys as TFLite's detection_postprocess.cc reads them: (key, kind, default);
# a key without a default is required.
_OPTIONS: tuple[tuple[str, str, Any], ...] = (
    ("max_detections", "int", None),
    ("max_classes_per_detection", "int", None),
    ("detections_per_class", "int", 100),
    ("use_regular_nms", "bool", False),
    ("nms_score_threshold", "float", None),
    ("nms_iou_threshold", "float", None),
    ("num_classes", "int", None),
    ("y_scale", "float", None),
    ("x_scale", "float", None),
    ("h_scale", "float", None),
    ("w_scale", "float", None),
)


def _value(ref: Any, kind: str) -> Any:
    """A FlexBuffer value converted like flexbuffers' C++ AsInt32 / AsBool / AsFloat."""
    if kind == "bool":
        return bool(ref.AsFloat if ref.IsFloat else ref.AsBool)
    number = ref.AsFloat if ref.IsFloat else ref.AsInt
    return int(number) if kind == "int" else float(number)


def custom_options(op: TfliteOp) -> dict[str, Any]:
    """The operator's FlexBuffer custom options as property values; a missing required
    key or an undecodable buffer raises a `SynapcError` naming it."""
    raw = op.custom_options
    if not raw:
        raise op.fail("custom options are missing (expected a FlexBuffer map)")
    try:
        options = flexbuffers.GetRoot(raw).AsMap
        keys = {key.AsKey for key in options.Keys}
    except Exception:  # not a FlexBuffer map
        raise op.fail("custom options are not a FlexBuffer map") from None
    values: dict[str, Any] = {}
    for key, kind, default in _OPTIONS:
        ref = options[key] if key in keys else None
        if ref is None or ref.IsNull:
            if default is None:
                raise op.fail(f"custom option '{key}' is missing")
            values[key] = default
            continue
        try:
            values[key] = _value(ref, kind)
        except Exception:
            raise op.fail(f"custom option '{key}' is not a number") from None
    return values


@converts("TFLite_Detection_PostProcess", inputs=(3, 3), outputs=(4, 4))
def _detection_postprocess(imp: Importer, op: TfliteOp) -> None:
    """Inputs (box encodings, class predictions, anchors), four float32 outputs (boxes,
    classes, scores, num_detections); shapes follow from the options, as LiteRT's
    Prepare sets them."""
    detection = DetectionPostProcessOp.make(
        *(imp.value(t) for t in op.inputs),
        element_type=f32,
        **custom_options(op),
        **op.source,
    )
    detection.verify()  # option errors name this operator, not the whole model
    imp.emit(detection, *op.outputs)
