"""`synap.yuv_to_rgb_resize`: colour conversion and crop + resize of a YUV frame as one op.

A camera frame (1920 x 1080) resized to a network's input (224 x 224) is mostly never
read: bilinear resizing reads two rows and two columns of the source per output row and
column. Converting the whole frame to RGB first (`synap.yuv_to_rgb`, then
`synap.crop_resize`) does ten times the work that is needed. The fused op, which the
`fuse-yuv-resize` pass makes of that pair, converts only the pixels the resize reads,
and gives exactly the pixels of the pair: each RGB pixel depends only on its own luma
sample and the chroma sample covering it, so converting a gathered grid of them is
converting the frame and gathering afterwards.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, result_def, var_operand_def

from synapc.dialects.synap.base import (
    Shape,
    bool_prop,
    element_of,
    enum_prop,
    int_array_prop,
    shape_of,
)
from synapc.dialects.synap.preprocess import (
    I32,
    UI8,
    ColorMatrix,
    ColorMatrixAttr,
    ColorRange,
    ColorRangeAttr,
    CropResizeMode,
    CropResizeModeAttr,
    CropResizeOp,
    PreprocessOp,
    YuvFormat,
    YuvFormatAttr,
    yuv_planes,
)
from synapc.dialects.synap.shapes import ShapeError


@irdl_op_definition
class YuvToRgbResizeOp(PreprocessOp):
    """``crop_resize(yuv_to_rgb(planes), crop)``: the planes of a YUV frame (as
    `synap.yuv_to_rgb` takes them, per `format`), then optionally four i32 crop scalars
    (width, height, left, top), all in `inputs`; the result is the N x size[0] x size[1]
    x 3 ui8 image `synap.crop_resize` (`size`, `mode`) makes of the frame's RGB (or BGR,
    `bgr`) image, converted with `color_range` and `color_matrix`. Only the pixels the
    resize reads are converted (see the module docstring)."""

    name = "synap.yuv_to_rgb_resize"

    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)

    format = enum_prop(YuvFormatAttr, YuvFormat.NV12)
    color_range = enum_prop(ColorRangeAttr, ColorRange.LIMITED)
    color_matrix = enum_prop(ColorMatrixAttr, ColorMatrix.BT601)
    bgr = bool_prop(False)
    size = int_array_prop()
    mode = enum_prop(CropResizeModeAttr, CropResizeMode.BILINEAR)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        count = YuvFormat(props["format"]).plane_count
        image = yuv_planes(operand_shapes[:count], YuvFormat(props["format"]))
        crop = operand_shapes[count:]
        if len(crop) not in (0, 4):
            raise ShapeError(
                f"takes {count} planes, then no crop operands or four (width, height, "
                f"left, top); got {len(operand_shapes)} operands"
            )
        return CropResizeOp.infer_shapes([image, *crop], props)

    @property
    def planes(self) -> list[Any]:
        """The plane operands."""
        return list(self.inputs)[: YuvFormat(self.props()["format"]).plane_count]

    @property
    def crop(self) -> list[Any]:
        """The crop operands (none or four)."""
        return list(self.inputs)[YuvFormat(self.props()["format"]).plane_count :]

    def verify_semantics(self) -> None:
        for i, plane in enumerate(self.planes):
            if element_of(plane) != UI8:
                self.fail(f"plane #{i} must be ui8, got {element_of(plane)}")
        if element_of(self.output) != UI8:
            self.fail(f"the result must be ui8, got {element_of(self.output)}")
        for name, value in zip(("width", "height", "left", "top"), self.crop, strict=False):
            if element_of(value) != I32:
                self.fail(f"crop {name} must be i32, got {element_of(value)}")

    def out_size(self) -> tuple[int, int]:
        """The result's (h, w)."""
        h, w = shape_of(self.output)[1:3]
        return h, w


OPS = [YuvToRgbResizeOp]
