"""Pooling windows over NHWC tensors."""

from __future__ import annotations

import math
from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from synapc.dialects.synap import shapes
from synapc.dialects.synap.attributes import Activation, ActivationAttr
from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    enum_prop,
    float_prop,
    int_array_prop,
)


class _Pool2D(SynapOp):
    """A [KH, KW] window sliding with `strides` over explicitly padded input."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    kernel = int_array_prop()
    strides = int_array_prop((1, 1))
    pad = int_array_prop((0, 0, 0, 0))
    activation = enum_prop(ActivationAttr, Activation.NONE)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [
            shapes.pool2d(
                operand_shapes[0], props["kernel"], props["strides"], props["pad"]
            )
        ]


@irdl_op_definition
class MaxPool2DOp(_Pool2D):
    """Maximum over each window; padded cells never win."""

    name = "synap.max_pool2d"


@irdl_op_definition
class AvgPool2DOp(_Pool2D):
    """Mean over each window. With `count_include_pad` the divisor is the full window
    (padding counts as zeros); without, only the cells inside the input count."""

    name = "synap.avg_pool2d"

    count_include_pad = bool_prop(False)


@irdl_op_definition
class LpPool2DOp(_Pool2D):
    """Lp norm of each window: ``(sum |x|**p) ** (1 / p)`` over its cells, padded cells
    counting as zeros (`p` = 2 is the L2 pooling of TFLite and NNAPI). `dilations`
    ``[DH, DW]`` spread the window's cells apart, so that it spans ``D * (K - 1) + 1``
    rows or columns."""

    name = "synap.lp_pool2d"

    p = float_prop(2.0)
    dilations = int_array_prop((1, 1))

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        kernel, dilations = props["kernel"], props["dilations"]
        shapes.pool2d(operand_shapes[0], kernel, props["strides"], props["pad"])
        if len(dilations) != 2 or min(dilations) < 1:
            raise shapes.ShapeError(
                f"dilations must be two values >= 1, got {list(dilations)}"
            )
        spread = [d * (k - 1) + 1 for k, d in zip(kernel, dilations, strict=True)]
        return [shapes.pool2d(operand_shapes[0], spread, props["strides"], props["pad"])]

    def verify_semantics(self) -> None:
        order = self.props()["p"]
        if not (math.isfinite(order) and order > 0):
            self.fail(f"p must be a positive number, got {order:g}")


OPS = [MaxPool2DOp, AvgPool2DOp, LpPool2DOp]
