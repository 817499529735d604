"""Converters of TFLite binary elementwise operators."""

from __future__ import annotations

import tflite

from synapc.dialects.synap import elementwise
from synapc.importers.tflite.helpers import (
    emit,
    fused_activation,
)
from synapc.importers.tflite.reader import Importer, TfliteOp, converts

_BINARY_WITH_ACTIVATION = {
    "ADD": (elementwise.AddOp, tflite.AddOptions),
    "SUB": (elementwise.SubOp, tflite.SubOptions),
    "MUL": (elementwise.MulOp, tflite.MulOptions),
    "DIV": (elementwise.DivOp, tflite.DivOptions),
}


@converts(*_BINARY_WITH_ACTIVATION)
def _binary_with_fused_activation(imp: Importer, op: TfliteOp) -> None:
    op_class, options_class = _BINARY_WITH_ACTIVATION[op.name]
    o = op.options(options_class)
    code = o.FusedActivationFunction() if o is not None else 0
    emit(imp, op, op_class, activation=fused_activation(op, code))


_SIMPLE = {
    "MAXIMUM": elementwise.MaximumOp,
    "MINIMUM": elementwise.MinimumOp,
    "SQUARED_DIFFERENCE": elementwise.SquaredDifferenceOp,
    "POW": elementwise.PowOp,
    "PRELU": elementwise.PReluOp,
}


@converts(*_SIMPLE)
def _simple(imp: Importer, op: TfliteOp) -> None:
    emit(imp, op, _SIMPLE[op.name])
