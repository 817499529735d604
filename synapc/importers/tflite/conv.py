"""Converters of TFLite convolutions, fully connected layers and batch matmul."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import tflite
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import conv, data_movement
from synapc.dialects.synap.attributes import (
    Activation,
)
from synapc.importers.tflite.helpers import (
    emit,
    fused_activation,
    output_type,
    padding,
)
from synapc.importers.tflite.reader import Importer, TfliteOp, converts
from synapc.limits import check_tensor

_INT32, _INT64 = np.dtype(np.int32), np.dtype(np.int64)


def _bias_dtype(
    imp: Importer, x: int, w: int, quantized_bias_type: int | None
) -> np.dtype | None:
    """The type LiteRT reads a quantized layer's bias as (None for float layers).

    int32, except for int16 inputs: 16x8 layers (int8 weights) read int64 unless the
    options' ``quantized_bias_type`` is INT32; 16x16 fully connected layers read int32
    unless it is INT64. LiteRT does not check the bias tensor against it (a mismatch reads
    the buffer as the other type)."""
    element = imp.element_type(x)
    if not isinstance(element, UniformQuantizedType):
        return None
    if element.is_per_axis:
        raise imp.fail(f"input {imp.label(x)} must be quantized per tensor, not per axis")
    if element.storage_dtype != np.int16:
        return _INT32
    if imp.numpy_dtype(w) == np.int16:
        return _INT64 if quantized_bias_type == tflite.TensorType.INT64 else _INT32
    return _INT32 if quantized_bias_type == tflite.TensorType.INT32 else _INT64


def _bias(
    imp: Importer,
    op: TfliteOp,
    x: int,
    w: int,
    bias: int | None,
    quantized_bias_type: int | None,
) -> SSAValue | None:
    """The bias operand of a layer with input `x`, weights `w` and optional `bias`.

    A quantized bias whose type is not the one LiteRT reads (`_bias_dtype`) is refused.
    A 16x8 layer without bias but with ``quantized_bias_type`` INT32 runs LiteRT's int32
    kernel (int32 accumulator and multiplier) rather than the int64 one: it gets an int32
    zero bias, which tells the backend so."""
    want = _bias_dtype(imp, x, w, quantized_bias_type)
    if bias is not None:
        got = imp.numpy_dtype(bias)
        if want is not None and got != want:
            raise op.fail(
                f"the bias is {got}, but LiteRT reads the bias of this layer as {want} "
                "(see the options' quantized_bias_type)"
            )
        return imp.value(bias)
    element, weights = imp.element_type(x), imp.element_type(w)
    if (
        want != _INT32
        or not isinstance(element, UniformQuantizedType)
        or element.storage_dtype != np.int16
    ):
        return None
    if not isinstance(weights, UniformQuantizedType):
        raise op.fail("a quantized layer needs quantized weights")
    out_shape = imp.shape(op.outputs[0])
    if not out_shape:
        raise op.fail(f"output {imp.label(op.outputs[0])} has no channel axis (rank 0)")
    channels = out_shape[-1]
    check_tensor([channels], 4, f"{imp.path}: {op.label}: zero bias")
    scales = element.scale * weights.scales
    bias_type = (
        UniformQuantizedType.per_axis("i32", 0, scales)
        if weights.is_per_axis
        else UniformQuantizedType.per_tensor("i32", float(scales[0]))
    )
    constant = imp.weights.constant(
        np.zeros(channels, np.int32),
        f"{imp.tensor_name(op.outputs[0])}_zero_bias",
        TensorType(bias_type, [channels]),
    )
    imp.ops.append(constant)
    return constant.results[0]


@converts("CONV_2D", inputs=(2, 3))
def _conv2d(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.Conv2DOptions, required=True)
    x, w = op.inputs[0], op.inputs[1]
    bias = op.input(2)
    in_shape, w_shape = op.rank(x, 4, "input"), op.rank(w, 4, "weights")
    strides, dilations = _strides_and_dilations(op, o)
    if w_shape[3] < 1 or in_shape[3] < 1 or in_shape[3] % w_shape[3]:
        raise op.fail(
            f"{in_shape[3]} input channels cannot be split into groups of "
            f"{w_shape[3]} (the weights' last dimension)"
        )
    pad = padding(op, o.Padding(), in_shape[1:3], w_shape[1:3], strides, dilations)
    emit(
        imp,
        op,
        conv.Conv2DOp,
        imp.value(x),
        imp.value(w),
        _bias(imp, op, x, w, bias, o.QuantizedBiasType()),
        strides=strides,
        dilations=dilations,
        pad=pad,
        groups=in_shape[3] // w_shape[3],
        activation=fused_activation(op, o.FusedActivationFunction()),
    )


def _strides_and_dilations(op: TfliteOp, o: Any) -> tuple[tuple[int, int], tuple[int, int]]:
    """(strides, dilations) of a convolution's options, both checked positive."""
    strides = (o.StrideH(), o.StrideW())
    dilations = (o.DilationHFactor(), o.DilationWFactor())
    op.positive("strides", strides)
    op.positive("dilations", dilations)
    return strides, dilations


@converts("DEPTHWISE_CONV_2D", inputs=(2, 3))
def _depthwise(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.DepthwiseConv2DOptions, required=True)
    x, w = op.inputs[0], op.inputs[1]
    bias = op.input(2)
    in_shape, w_shape = op.rank(x, 4, "input"), op.rank(w, 4, "weights")
    strides, dilations = _strides_and_dilations(op, o)
    pad = padding(op, o.Padding(), in_shape[1:3], w_shape[1:3], strides, dilations)
    emit(
        imp,
        op,
        conv.DepthwiseConv2DOp,
        imp.value(x),
        imp.value(w),
        _bias(imp, op, x, w, bias, None),
        strides=strides,
        dilations=dilations,
        pad=pad,
        activation=fused_activation(op, o.FusedActivationFunction()),
    )


@converts("TRANSPOSE_CONV", inputs=(3, 4))
def _transpose_conv(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.TransposeConvOptions, required=True)
    code = o.FusedActivationFunction()
    _emit_transpose_conv(
        imp,
        op,
        op.inputs[2],
        op.inputs[1],
        op.input(3),
        (o.StrideH(), o.StrideW()),
        o.Padding(),
        fused_activation(op, code),
        o.QuantizedBiasType(),
    )


@converts("Convolution2DTransposeBias", inputs=(2, 3))
def _mediapipe_transpose_conv(imp: Importer, op: TfliteOp) -> None:
    """MediaPipe's custom transposed convolution: inputs (input, weights, bias); custom
    options are TfLiteTransposeConvParams as raw int32s (padding, stride_w, stride_h),
    padding 1 = SAME, 2 = VALID (TfLitePadding)."""
    raw = op.custom_options
    if raw is None or len(raw) < 12:
        raise op.fail("custom options must hold padding, stride_width, stride_height")
    padding, stride_w, stride_h = (int(v) for v in np.frombuffer(raw, "<i4", 3))
    codes = {1: tflite.Padding.SAME, 2: tflite.Padding.VALID}
    if padding not in codes:
        raise op.fail(f"unknown padding {padding} in custom options")
    _emit_transpose_conv(
        imp,
        op,
        op.inputs[0],
        op.inputs[1],
        op.input(2),
        (stride_h, stride_w),
        codes[padding],
        Activation.NONE,
    )


def _emit_transpose_conv(
    imp: Importer,
    op: TfliteOp,
    x: int,
    w: int,
    bias: int | None,
    strides: tuple[int, int],
    padding: int,
    activation: Activation,
    quantized_bias_type: int | None = None,
) -> None:
    """A TFLite transposed convolution: the output shape is the output tensor's; SAME
    padding is computed on the output as for a convolution from output to input."""
    out_shape = op.rank(op.outputs[0], 4, "output")
    kernel = op.rank(w, 4, "weights")[1:3]
    in_hw = op.rank(x, 4, "input")[1:3]
    op.positive("strides", strides)
    pads: list[int] = []
    for axis in range(2):
        full = (in_hw[axis] - 1) * strides[axis] + kernel[axis]
        before = 0
        if padding == tflite.Padding.SAME:
            before = max(full - out_shape[1 + axis], 0) // 2
        pads += [before, full - out_shape[1 + axis] - before]
    emit(
        imp,
        op,
        conv.TransposeConv2DOp,
        imp.value(x),
        imp.value(w),
        _bias(imp, op, x, w, bias, quantized_bias_type),
        strides=strides,
        pad=pads,
        activation=activation,
    )


@converts("FULLY_CONNECTED", inputs=(2, 3))
def _fully_connected(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.FullyConnectedOptions)
    if (
        o is not None
        and o.WeightsFormat() != tflite.FullyConnectedOptionsWeightsFormat.DEFAULT
    ):
        raise op.fail("shuffled weights are not supported")
    x, w = op.inputs[0], op.inputs[1]
    bias = op.input(2)
    value = imp.value(x)
    features = op.rank(w, 2, "weights")[1]
    out_type = output_type(imp, op)
    in_shape = imp.shape(x)
    keep = o is not None and o.KeepNumDims()
    if not keep and len(in_shape) != 2:
        size = math.prod(in_shape)
        if features < 1 or size % features:
            raise op.fail(
                f"input {imp.label(x)} of shape {list(in_shape)} cannot be flattened "
                f"into rows of {features} features"
            )
        flat = TensorType(imp.element_type(x), [size // features, features])
        value = imp.emit(data_movement.ReshapeOp.make(value, result_types=[flat])).results[
            0
        ]
    activation = fused_activation(op, o.FusedActivationFunction() if o is not None else 0)
    imp.emit(
        conv.FullyConnectedOp.make(
            value,
            imp.value(w),
            _bias(imp, op, x, w, bias, None if o is None else o.QuantizedBiasType()),
            activation=activation,
            result_types=[out_type],
            **op.source,
        ),
        op.outputs[0],
    )


@converts("BATCH_MATMUL", inputs=(2, 2))
def _batch_matmul(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.BatchMatMulOptions)
    emit(
        imp,
        op,
        conv.MatMulOp,
        transpose_lhs=bool(o and o.AdjX()),
        transpose_rhs=bool(o and o.AdjY()),
    )
