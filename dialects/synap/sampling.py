"""Sampling of a tensor at coordinates given by another tensor: `synap.grid_sample`,
and the deformable convolution `synap.deform_conv2d`, which samples its input at learned
offsets from the convolution's taps.

The sampled tensor is channels-last (``N, H, W, C`` or ``N, D, H, W, C``); the grid holds,
for each output position, normalized coordinates in ``[-1, 1]`` in reverse spatial order
(``x`` along W first, as ONNX GridSample and PyTorch's ``grid_sample`` give them).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
)
from xdsl.utils.str_enum import StrEnum

from synapc.dialects.synap import shapes
from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    enum_prop,
    int_array_prop,
    int_prop,
    is_float,
    shape_of,
)
from synapc.dialects.synap.shapes import ShapeError


class SampleMode(StrEnum):
    """How a value is read between pixels: the nearest pixel (ties to even), linear
    interpolation of the 2 neighbours per axis, or cubic (Keys, ``a = -0.75``) of 4."""

    LINEAR = "linear"
    NEAREST = "nearest"
    CUBIC = "cubic"


@irdl_attr_definition
class SampleModeAttr(EnumAttribute[SampleMode], SpacedOpaqueSyntaxAttribute):
    """The interpolation of `synap.grid_sample`."""

    name = "synap.sample_mode"


class SamplePadding(StrEnum):
    """What a coordinate outside the input reads: zero, the nearest border pixel, or
    the input reflected at its borders."""

    ZEROS = "zeros"
    BORDER = "border"
    REFLECTION = "reflection"


@irdl_attr_definition
class SamplePaddingAttr(EnumAttribute[SamplePadding], SpacedOpaqueSyntaxAttribute):
    """The padding of `synap.grid_sample`."""

    name = "synap.sample_padding"


def grid_sample(data: Shape, grid: Shape) -> Shape:
    """``(N, *S, C)`` sampled at a ``(N, *O, len(S))`` grid gives ``(N, *O, C)``, for 2 or
    3 spatial axes."""
    if len(data) not in (4, 5):
        raise ShapeError(f"input must have rank 4 or 5, got {list(data)}")
    spatial = len(data) - 2
    if len(grid) != len(data) or grid[-1] != spatial:
        raise ShapeError(
            f"grid of shape {list(grid)} must have rank {len(data)} and {spatial} "
            "coordinates in its last axis"
        )
    if grid[0] != data[0]:
        raise ShapeError(f"grid batch {grid[0]} differs from input batch {data[0]}")
    return (data[0], *grid[1:-1], data[-1])


@irdl_op_definition
class GridSampleOp(SynapOp):
    """`input` (channels-last) read at the normalized coordinates of `grid`.

    A grid value ``-1`` is the centre of the first pixel with `align_corners`, else its
    outer edge (``1``: the last pixel alike). Out-of-range coordinates follow `padding`."""

    name = "synap.grid_sample"

    input = operand_def(TensorType)
    grid = operand_def(TensorType)
    output = result_def(TensorType)

    mode = enum_prop(SampleModeAttr, SampleMode.LINEAR)
    padding = enum_prop(SamplePaddingAttr, SamplePadding.ZEROS)
    align_corners = bool_prop(False)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [grid_sample(operand_shapes[0], operand_shapes[1])]

    def verify_semantics(self) -> None:
        if not is_float(element_of(self.grid)):
            self.fail(f"grid must be floating-point, got {element_of(self.grid)}")
        if self.props()["mode"] == SampleMode.CUBIC and len(shape_of(self.input)) != 4:
            self.fail("cubic sampling is defined for 2 spatial axes only")


@irdl_op_definition
class DeformConv2DOp(SynapOp):
    """Deformable 2-D convolution: a `synap.conv2d` (NHWC input, OHWI filter, `pad`
    ``[top, bottom, left, right]``, `groups`) whose taps read the input bilinearly at
    their position plus a learned offset, scaled by a mask.

    `offset` is ``[N, OH, OW, offset_groups * KH * KW * 2]`` (per group and tap, the row
    then the column offset in pixels) and `mask` ``[N, OH, OW, offset_groups * KH * KW]``;
    offset group ``g`` moves the taps of input channels ``[g * C / G, (g + 1) * C / G)``.
    A position outside the input reads zero."""

    name = "synap.deform_conv2d"

    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    offset = operand_def(TensorType)
    mask = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)

    strides = int_array_prop((1, 1))
    dilations = int_array_prop((1, 1))
    pad = int_array_prop((0, 0, 0, 0))
    groups = int_prop(1)
    offset_groups = int_prop(1)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        data, weights = operand_shapes[0], operand_shapes[1]
        result = shapes.conv2d(
            data, weights, props["strides"], props["dilations"], props["pad"],
            props["groups"],
        )  # fmt: skip
        groups = props["offset_groups"]
        if groups < 1 or data[3] % groups:
            raise ShapeError(
                f"offset_groups {groups} must divide the {data[3]} input channels"
            )
        taps = groups * weights[1] * weights[2]
        for what, shape, depth in (
            ("offset", operand_shapes[2], 2 * taps),
            ("mask", operand_shapes[3], taps),
        ):
            if tuple(shape) != (*result[:3], depth):
                raise ShapeError(
                    f"{what} of shape {list(shape)} should be {[*result[:3], depth]}"
                )
        if len(operand_shapes) > 4 and tuple(operand_shapes[4]) != (weights[0],):
            raise ShapeError(
                f"bias of shape {list(operand_shapes[4])} should be [{weights[0]}]"
            )
        return [result]

    def verify_semantics(self) -> None:
        for value in self.operands:
            if element_of(value) != element_of(self.input) or not is_float(
                element_of(value)
            ):
                self.fail("operands must all be of one floating-point type")


ATTRIBUTES = [SampleModeAttr, SamplePaddingAttr]
OPS = [GridSampleOp, DeformConv2DOp]
