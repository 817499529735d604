"""Converters of TFLite activations, unary math, softmax and L2 normalization."""

from __future__ import annotations

import tflite

from synapc.dialects.synap import activation as act
from synapc.importers.tflite.helpers import (
    emit,
    emit_with_activation,
)
from synapc.importers.tflite.reader import Importer, TfliteOp, converts

_UNARY = {
    "LOGISTIC": act.SigmoidOp,
    "TANH": act.TanhOp,
    "HARD_SWISH": act.HardSwishOp,
    "ELU": act.EluOp,
    "EXP": act.ExpOp,
    "LOG": act.LogOp,
    "SQRT": act.SqrtOp,
    "RSQRT": act.RsqrtOp,
    "ABS": act.AbsOp,
    "NEG": act.NegOp,
    "SQUARE": act.SquareOp,
    "LOG_SOFTMAX": act.LogSoftmaxOp,
}


@converts(*_UNARY, inputs=(1, 1))
def _unary(imp: Importer, op: TfliteOp) -> None:
    emit(imp, op, _UNARY[op.name])


_CLAMPS = {
    "RELU": (0.0, None),
    "RELU6": (0.0, 6.0),
    "RELU_N1_TO_1": (-1.0, 1.0),
    "RELU_0_TO_1": (0.0, 1.0),
}


@converts(*_CLAMPS, inputs=(1, 1))
def _clamp(imp: Importer, op: TfliteOp) -> None:
    low, high = _CLAMPS[op.name]
    bounds = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
    emit(imp, op, act.ClampOp, **bounds)


@converts("LEAKY_RELU", inputs=(1, 1))
def _leaky_relu(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.LeakyReluOptions, required=True)
    emit(imp, op, act.LeakyReluOp, alpha=o.Alpha())


@converts("GELU", inputs=(1, 1))
def _gelu(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.GeluOptions)
    emit(imp, op, act.GeluOp, approximate=bool(o and o.Approximate()))


@converts("SOFTMAX", inputs=(1, 1))
def _softmax(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.SoftmaxOptions)
    emit(imp, op, act.SoftmaxOp, beta=o.Beta() if o else 1.0)


@converts("L2_NORMALIZATION", inputs=(1, 1))
def _l2_normalize(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.L2NormOptions)
    code = o.FusedActivationFunction() if o is not None else 0
    # TFLite divides by max(sqrt(sum(x^2)), 1e-6); synap.l2_normalize clamps the sum of
    # squares, so the same floor is epsilon = (1e-6)^2.
    emit_with_activation(
        imp,
        op,
        lambda t: act.L2NormalizeOp.make(
            imp.value(op.inputs[0]), axis=-1, epsilon=1e-12, result_types=[t], **op.source
        ),
        code,
    )
