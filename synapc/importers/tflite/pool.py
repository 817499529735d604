"""Converters of TFLite pooling operators."""

from __future__ import annotations

import tflite

from synapc.dialects.synap import pool
from synapc.importers.tflite.helpers import (
    emit,
    fused_activation,
    padding,
)
from synapc.importers.tflite.reader import Importer, TfliteOp, converts


@converts("AVERAGE_POOL_2D", "MAX_POOL_2D", inputs=(1, 1))
def _pool(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.Pool2DOptions, required=True)
    x = op.inputs[0]
    kernel, strides = (o.FilterHeight(), o.FilterWidth()), (o.StrideH(), o.StrideW())
    op.positive("filter size", kernel)
    op.positive("strides", strides)
    in_shape = op.rank(x, 4, "input")
    pad = padding(op, o.Padding(), in_shape[1:3], kernel, strides, (1, 1))
    op_class = pool.AvgPool2DOp if op.name == "AVERAGE_POOL_2D" else pool.MaxPool2DOp
    emit(
        imp,
        op,
        op_class,
        imp.value(x),
        kernel=kernel,
        strides=strides,
        pad=pad,
        activation=fused_activation(op, o.FusedActivationFunction()),
    )
