"""Layers the NPU runs on its convolution cores: convolutions, fully connected, matmul."""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def

from synapc.dialects.synap import shapes
from synapc.dialects.synap.attributes import Activation, ActivationAttr
from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    enum_prop,
    int_array_prop,
    int_prop,
    is_quantized,
    shape_of,
)


class BiasedLayer(SynapOp):
    """A layer with a weight operand, an optional bias and a fused activation."""

    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    activation = enum_prop(ActivationAttr, Activation.NONE)

    def _bias_size(self) -> int:
        """The number of output channels the bias must have."""
        return shape_of(self.filter)[0]

    def verify_semantics(self) -> None:
        data, weights = element_of(self.input), element_of(self.filter)
        # Float layers may carry quantized weights (weight-only quantization); quantized
        # layers need quantized weights.
        if not (is_quantized(weights) or (weights == data and not is_quantized(data))):
            self.fail(
                f"filter element type {weights} does not fit input element type {data}"
            )
        if self.bias is not None:
            bias = element_of(self.bias)
            if is_quantized(data) != is_quantized(bias) or (
                not is_quantized(data) and bias != data
            ):
                self.fail(
                    f"bias element type {bias} does not fit input element type {data}"
                )
            want = self._bias_size()
            if shape_of(self.bias) != (want,):
                self.fail(f"bias shape {list(shape_of(self.bias))} should be [{want}]")


@irdl_op_definition
class Conv2DOp(BiasedLayer):
    """2-D convolution: NHWC input, OHWI filter ``[Cout, KH, KW, Cin/groups]``, bias
    ``[Cout]``. `pad` is explicit ``[top, bottom, left, right]``; `groups` > 1 gives a
    grouped convolution."""

    name = "synap.conv2d"

    strides = int_array_prop((1, 1))
    dilations = int_array_prop((1, 1))
    pad = int_array_prop((0, 0, 0, 0))
    groups = int_prop(1)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [
            shapes.conv2d(
                operand_shapes[0],
                operand_shapes[1],
                props["strides"],
                props["dilations"],
                props["pad"],
                props["groups"],
            )
        ]


@irdl_op_definition
class DepthwiseConv2DOp(BiasedLayer):
    """Depthwise convolution: filter ``[1, KH, KW, Cin x multiplier]`` (TFLite layout);
    output channel ``c`` reads input channel ``c // multiplier``."""

    name = "synap.depthwise_conv2d"

    strides = int_array_prop((1, 1))
    dilations = int_array_prop((1, 1))
    pad = int_array_prop((0, 0, 0, 0))

    def _bias_size(self) -> int:
        return shape_of(self.filter)[3]

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [
            shapes.depthwise_conv2d(
                operand_shapes[0],
                operand_shapes[1],
                props["strides"],
                props["dilations"],
                props["pad"],
            )
        ]


@irdl_op_definition
class TransposeConv2DOp(BiasedLayer):
    """Transposed (fractionally strided) convolution: filter ``[Cout, KH, KW, Cin]``.

    `pad` crops ``[top, bottom, left, right]`` from the full output
    ``(in - 1) * stride + dilation * (k - 1) + 1``; a negative bottom/right crop extends
    it (ONNX output_padding)."""

    name = "synap.transpose_conv2d"

    strides = int_array_prop((1, 1))
    dilations = int_array_prop((1, 1))
    pad = int_array_prop((0, 0, 0, 0))

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [
            shapes.transpose_conv2d(
                operand_shapes[0],
                operand_shapes[1],
                props["strides"],
                props["dilations"],
                props["pad"],
            )
        ]


@irdl_op_definition
class FullyConnectedOp(BiasedLayer):
    """Fully connected layer: ``[..., K]`` input, weight ``[N, K]`` (TFLite layout),
    bias ``[N]`` -> ``[..., N]``."""

    name = "synap.fully_connected"

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.fully_connected(operand_shapes[0], operand_shapes[1])]


@irdl_op_definition
class MatMulOp(SynapOp):
    """Batched matrix product of two tensors: ``[..., M, K] x [..., K, N]`` with
    broadcast batch dimensions; `transpose_lhs` / `transpose_rhs` swap the last two
    dimensions of an operand first. Serves both MatMul and BatchMatMul."""

    name = "synap.matmul"

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)

    SAME_KIND_OPERANDS: ClassVar[bool] = True

    transpose_lhs = bool_prop(False)
    transpose_rhs = bool_prop(False)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [
            shapes.matmul(
                operand_shapes[0],
                operand_shapes[1],
                props["transpose_lhs"],
                props["transpose_rhs"],
            )
        ]


OPS = [Conv2DOp, DepthwiseConv2DOp, TransposeConv2DOp, FullyConnectedOp, MatMulOp]
