"""Converters of TFLite resize operators."""

from __future__ import annotations

import tflite

from synapc.dialects.synap import resize as resize_ops
from synapc.dialects.synap.attributes import (
    CoordinateMode,
    NearestRounding,
    ResizeMode,
)
from synapc.importers.tflite.data_movement import require_same_quantization
from synapc.importers.tflite.helpers import (
    emit,
)
from synapc.importers.tflite.reader import Importer, TfliteOp, converts


@converts("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", inputs=(2, 2))
def _resize(imp: Importer, op: TfliteOp) -> None:
    bilinear = op.name == "RESIZE_BILINEAR"
    require_same_quantization(imp, op, op.inputs[:1], op.outputs)
    o = op.options(
        tflite.ResizeBilinearOptions if bilinear else tflite.ResizeNearestNeighborOptions
    )
    align = bool(o and o.AlignCorners())
    half = bool(o and o.HalfPixelCenters())
    if align and half:
        # TensorFlow refuses the pair and LiteRT's bilinear kernel too; its nearest kernel
        # takes round((x + 0.5) * (in - 1) / (out - 1)), which no CoordinateMode spells.
        raise op.fail("align_corners together with half_pixel_centers is not supported")
    coords = (
        CoordinateMode.ALIGN_CORNERS
        if align
        else CoordinateMode.HALF_PIXEL
        if half
        else CoordinateMode.ASYMMETRIC
    )
    rounding = NearestRounding.FLOOR
    if not bilinear and (align or half):
        rounding = NearestRounding.ROUND_PREFER_CEIL
    emit(
        imp,
        op,
        resize_ops.ResizeOp,
        imp.value(op.inputs[0]),
        mode=ResizeMode.BILINEAR if bilinear else ResizeMode.NEAREST,
        coordinate_mode=coords,
        nearest_rounding=rounding,
    )
