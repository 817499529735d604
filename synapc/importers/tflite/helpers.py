"""Helpers shared by the TFLite operator converters: fused activations, SAME
padding, and emitting a synap op bound to the operator's output."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tflite
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from synapc.dialects.synap import activation as act
from synapc.dialects.synap.attributes import (
    Activation,
)
from synapc.dialects.synap.base import SynapOp
from synapc.importers.tflite.reader import Importer, TfliteOp

_ACTIVATIONS = {
    tflite.ActivationFunctionType.NONE: Activation.NONE,
    tflite.ActivationFunctionType.RELU: Activation.RELU,
    tflite.ActivationFunctionType.RELU6: Activation.RELU6,
    tflite.ActivationFunctionType.RELU_N1_TO_1: Activation.RELU_N1_TO_1,
}


def fused_activation(op: TfliteOp, code: int) -> Activation:
    if code not in _ACTIVATIONS:
        raise op.fail(f"fused activation {code} is not supported")
    return _ACTIVATIONS[code]


def _same_padding(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """TensorFlow's SAME padding: output ceil(size / stride), extra padding at the end."""
    effective = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def padding(
    op: TfliteOp,
    code: int,
    hw: tuple[int, int],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
) -> tuple[int, ...]:
    if code == tflite.Padding.VALID:
        return (0, 0, 0, 0)
    if code != tflite.Padding.SAME:
        raise op.fail(f"padding {code} is not supported")
    top, bottom = _same_padding(hw[0], kernel[0], strides[0], dilations[0])
    left, right = _same_padding(hw[1], kernel[1], strides[1], dilations[1])
    return (top, bottom, left, right)


def output_type(imp: Importer, op: TfliteOp, i: int = 0) -> TensorType[Attribute]:
    return imp.tensor_type(op.outputs[i])


def emit(
    imp: Importer, op: TfliteOp, op_class: type[SynapOp], *operands: Any, **props: Any
) -> SynapOp:
    """Emit `op_class` of `operands` (all of `op`'s inputs when none are given), typed
    like `op`'s first output, carrying its source layer, and bound to that output."""
    if not operands:
        operands = tuple(imp.value(t) for t in op.inputs)
    result_type = output_type(imp, op)
    return imp.emit(
        op_class.make(*operands, result_types=[result_type], **props, **op.source),
        op.outputs[0],
    )


def emit_with_activation(
    imp: Importer, op: TfliteOp, build: Callable[[TensorType[Any]], SynapOp], code: int
) -> None:
    """Emit `build(result type)`, then a clamp for a fused activation the op cannot hold."""
    activation = fused_activation(op, code)
    if activation == Activation.NONE:
        imp.emit(build(output_type(imp, op)), op.outputs[0])
        return
    inner = imp.emit(build(output_type(imp, op)))
    low, high = activation.bounds
    bounds = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
    emit(imp, op, act.ClampOp, inner, **bounds)
