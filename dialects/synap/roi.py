"""Region-of-interest pooling: `synap.roi_align` (Mask R-CNN's RoiAlign).

Each box is cut into ``output_height x output_width`` bins, each bin is sampled on a
``grid_h x grid_w`` grid by bilinear interpolation, and the samples are averaged or
(`use_max`) reduced by their largest weighted corner, as ONNX defines it. Which image
a box reads is a run-time index, so the op gathers per box: not a composition of the
window layers."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    float_prop,
    int_prop,
    is_float,
    shape_of,
)


@irdl_op_definition
class RoiAlignOp(SynapOp):
    """RoiAlign of NHWC `input` ``[N, H, W, C]`` at `rois` ``[R, 4]`` (x1, y1, x2, y2
    in input-image coordinates, times `spatial_scale`) of images `batch_indices`
    ``[R]``: result ``[R, output_height, output_width, C]``. `half_pixel` shifts the
    scaled boxes by -0.5 (ONNX's ``half_pixel``; without it boxes are at least 1x1)."""

    name = "synap.roi_align"

    input = operand_def(TensorType)
    rois = operand_def(TensorType)
    batch_indices = operand_def(TensorType)
    output = result_def(TensorType)

    output_height = int_prop(1)
    output_width = int_prop(1)
    grid_h = int_prop(1)
    grid_w = int_prop(1)
    spatial_scale = float_prop(1.0)
    use_max = bool_prop(False)
    half_pixel = bool_prop(True)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        channels = operand_shapes[0][-1]
        boxes = operand_shapes[1][0]
        return [(boxes, props["output_height"], props["output_width"], channels)]

    def verify_semantics(self) -> None:
        data, rois, indices = (
            shape_of(v) for v in (self.input, self.rois, self.batch_indices)
        )
        if len(data) != 4 or not is_float(element_of(self.input)):
            self.fail(f"input must be a float NHWC tensor, got {self.input.type}")
        if (
            len(rois) != 2
            or rois[1] != 4
            or element_of(self.rois) != element_of(self.input)
        ):
            self.fail(f"rois must be [R, 4] of the input's type, got {self.rois.type}")
        if indices != rois[:1] or not isinstance(
            element_of(self.batch_indices), IntegerType
        ):
            self.fail(f"batch_indices must be [{rois[0]}] integers, got {list(indices)}")
        props = self.props()
        for key in ("output_height", "output_width", "grid_h", "grid_w"):
            if props[key] < 1:
                self.fail(f"{key} must be positive, got {props[key]}")


OPS = [RoiAlignOp]
