"""Spatial resizing of NHWC tensors."""

from __future__ import annotations

from xdsl.irdl import irdl_op_definition

from synapc.dialects.synap.attributes import (
    CoordinateMode,
    CoordinateModeAttr,
    NearestRounding,
    NearestRoundingAttr,
    ResizeMode,
    ResizeModeAttr,
)
from synapc.dialects.synap.base import enum_prop, shape_of
from synapc.dialects.synap.data_movement import _ShapedByResult


@irdl_op_definition
class ResizeOp(_ShapedByResult):
    """Resize H and W of an NHWC tensor to the result's H and W.

    `coordinate_mode` maps output pixels to input coordinates (align-corners,
    half-pixel, ...); `nearest_rounding` picks the source pixel in nearest mode."""

    name = "synap.resize"

    mode = enum_prop(ResizeModeAttr, ResizeMode.NEAREST)
    coordinate_mode = enum_prop(CoordinateModeAttr, CoordinateMode.HALF_PIXEL)
    nearest_rounding = enum_prop(NearestRoundingAttr, NearestRounding.ROUND_PREFER_FLOOR)

    def verify_semantics(self) -> None:
        before, after = shape_of(self.input), shape_of(self.output)
        if len(before) != 4 or len(after) != 4:
            self.fail(
                f"input and result must be NHWC (rank 4), got {list(before)} -> "
                f"{list(after)}"
            )
        if (before[0], before[3]) != (after[0], after[3]):
            self.fail(
                f"batch and channels must not change: {list(before)} -> {list(after)}"
            )


OPS = [ResizeOp]
