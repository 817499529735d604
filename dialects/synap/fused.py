"""Fused layers: several source layers that the NPU runs as one hardware layer.

`synap.conv2d_pool` is a convolution with its bias and fused activation followed by a
max pooling, which the NPU's convolution core runs as one layer (the vendor's profiles
call it ``ConvolutionReluPoolingLayer2``): the convolution result never goes to memory.
Passes create these ops (`passes/fuse_conv_pool.py`); importers do not.
"""

from __future__ import annotations

from typing import Any

from xdsl.irdl import irdl_op_definition

from synapc.dialects.synap import shapes
from synapc.dialects.synap.base import Shape, int_array_prop, int_prop
from synapc.dialects.synap.conv import BiasedLayer, Conv2DOp


@irdl_op_definition
class Conv2DPoolOp(BiasedLayer):
    """`synap.conv2d` then `synap.max_pool2d` as one layer.

    Operands and the convolution's properties (`strides`, `dilations`, `pad`, `groups`,
    `activation`) are those of `synap.conv2d`: NHWC input, OHWI filter
    ``[Cout, KH, KW, Cin/groups]``, optional bias ``[Cout]``, and the fused activation
    applied to the convolution result. The convolution result (never materialized) has
    the output's element type; a max pooling of window `pool_kernel` ``[KH, KW]``, with
    `pool_strides` and explicit `pool_pad` ``[top, bottom, left, right]`` (padded cells
    never win), gives the output. It is verified as `synap.conv2d` is, and its result
    shape is the pool shape rule applied to the convolution shape rule.
    """

    name = "synap.conv2d_pool"

    strides = int_array_prop((1, 1))
    dilations = int_array_prop((1, 1))
    pad = int_array_prop((0, 0, 0, 0))
    groups = int_prop(1)
    pool_kernel = int_array_prop()
    pool_strides = int_array_prop((1, 1))
    pool_pad = int_array_prop((0, 0, 0, 0))

    @classmethod
    def conv_shape(cls, operand_shapes: list[Shape], props: dict[str, Any]) -> Shape:
        """The shape of the (internal) convolution result."""
        return Conv2DOp.infer_shapes(operand_shapes, props)[0]

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        conv_shape = cls.conv_shape(operand_shapes, props)
        try:
            pooled = shapes.pool2d(
                conv_shape, props["pool_kernel"], props["pool_strides"], props["pool_pad"]
            )
        except shapes.ShapeError as error:
            raise shapes.ShapeError(
                f"pooling of the convolution result {list(conv_shape)}: {error}"
            ) from None
        return [pooled]


OPS = [Conv2DPoolOp]
