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


@converts(*_BINARY_WITH_ACTIVATION, inputs=(2, 2))
def _binary_with_fused_activation(imp: Importer, op: TfliteOp) -> None:
    op_class, options_class = _BINARY_WITH_ACTIVATION[op.name]
    o = op.options(options_class)
    code = o.FusedActivationFunction() if o is not None else 0
    props = {"activation": fused_activation(op, code)}
    # ADD/SUB: int16 with power-of-two scales takes TFLite's "POT" path only while
    # `pot_scale_int16` is set (the schema default; the converter clears it in 16x8
    # models; without an options table LiteRT's zero-initialised params clear it).
    # Carried when the synap op has the property.
    if op.name in ("ADD", "SUB") and _has_property(op_class, "pot_scale_int16"):
        props["pot_scale_int16"] = bool(o.PotScaleInt16()) if o is not None else False
    emit(imp, op, op_class, **props)


def _has_property(op_class: type, name: str) -> bool:
    return name in op_class.get_irdl_definition().properties


_SIMPLE = {
    "MAXIMUM": elementwise.MaximumOp,
    "MINIMUM": elementwise.MinimumOp,
    "SQUARED_DIFFERENCE": elementwise.SquaredDifferenceOp,
    "POW": elementwise.PowOp,
    "PRELU": elementwise.PReluOp,
}


@converts(*_SIMPLE, inputs=(2, 2))
def _simple(imp: Importer, op: TfliteOp) -> None:
    emit(imp, op, _SIMPLE[op.name])
