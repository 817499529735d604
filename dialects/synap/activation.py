"""Unary elementwise ops: activations and math functions, plus softmax-like ops."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import FloatAttr, TensorType, f32
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def

from synapc.dialects.synap import shapes
from synapc.dialects.synap.base import Shape, SynapOp, bool_prop, float_prop, int_prop


class _Unary(SynapOp):
    """``output = f(input)`` elementwise; the result has the input's shape."""

    input = operand_def(TensorType)
    output = result_def(TensorType)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [operand_shapes[0]]


class _AlongAxis(_Unary):
    """A unary op normalizing along one axis."""

    axis = int_prop(-1)

    def verify_semantics(self) -> None:
        shapes.normalize_axis(self.props()["axis"], len(self.output.type.get_shape()))


@irdl_op_definition
class ClampOp(_Unary):
    """``min(max(x, min), max)``; an absent bound is unbounded. ReLU is ``min = 0``,
    ReLU6 ``min = 0, max = 6``, ReLU_N1_TO_1 ``min = -1, max = 1``."""

    name = "synap.clamp"

    min = opt_prop_def(FloatAttr.constr(f32))
    max = opt_prop_def(FloatAttr.constr(f32))

    def verify_semantics(self) -> None:
        low, high = self.min, self.max
        if low is None and high is None:
            self.fail("needs at least one of min and max")
        if low is not None and high is not None and low.value.data > high.value.data:
            self.fail(
                f"min ({np.float32(low.value.data)!s}) is greater than max "
                f"({np.float32(high.value.data)!s})"
            )


@irdl_op_definition
class LeakyReluOp(_Unary):
    """``x if x >= 0 else alpha * x``."""

    name = "synap.leaky_relu"

    alpha = float_prop()


@irdl_op_definition
class SigmoidOp(_Unary):
    """Logistic function ``1 / (1 + exp(-x))``."""

    name = "synap.sigmoid"


@irdl_op_definition
class TanhOp(_Unary):
    """Hyperbolic tangent."""

    name = "synap.tanh"


@irdl_op_definition
class HardSwishOp(_Unary):
    """``x * relu6(x + 3) / 6`` (MobileNetV3)."""

    name = "synap.hard_swish"


@irdl_op_definition
class HardSigmoidOp(_Unary):
    """``clamp(alpha * x + beta, 0, 1)``; ONNX defaults alpha 0.2, beta 0.5 (PyTorch's
    hardsigmoid is alpha 1/6)."""

    name = "synap.hard_sigmoid"

    alpha = float_prop(0.2)
    beta = float_prop(0.5)


@irdl_op_definition
class SwishOp(_Unary):
    """``x * sigmoid(beta * x)`` (SiLU when beta is 1)."""

    name = "synap.swish"

    beta = float_prop(1.0)


@irdl_op_definition
class GeluOp(_Unary):
    """Gaussian error linear unit: exact (erf) or, with `approximate`, the tanh form."""

    name = "synap.gelu"

    approximate = bool_prop(False)


@irdl_op_definition
class ErfOp(_Unary):
    """Gauss error function; exporters spell the exact GELU with it, which
    `match-activations` fuses back into `synap.gelu`."""

    name = "synap.erf"


@irdl_op_definition
class EluOp(_Unary):
    """``x if x > 0 else alpha * (exp(x) - 1)``."""

    name = "synap.elu"

    alpha = float_prop(1.0)


@irdl_op_definition
class ExpOp(_Unary):
    """Natural exponential."""

    name = "synap.exp"


@irdl_op_definition
class LogOp(_Unary):
    """Natural logarithm."""

    name = "synap.log"


@irdl_op_definition
class SqrtOp(_Unary):
    """Square root."""

    name = "synap.sqrt"


@irdl_op_definition
class RsqrtOp(_Unary):
    """Reciprocal square root ``1 / sqrt(x)``."""

    name = "synap.rsqrt"


@irdl_op_definition
class AbsOp(_Unary):
    """Absolute value."""

    name = "synap.abs"


@irdl_op_definition
class NegOp(_Unary):
    """Negation ``-x``."""

    name = "synap.neg"


@irdl_op_definition
class SquareOp(_Unary):
    """Elementwise square ``x * x``."""

    name = "synap.square"


@irdl_op_definition
class SoftmaxOp(_AlongAxis):
    """``exp(beta * x) / sum(exp(beta * x))`` along `axis`."""

    name = "synap.softmax"

    beta = float_prop(1.0)


@irdl_op_definition
class LogSoftmaxOp(_AlongAxis):
    """``log(softmax(x))`` along `axis`."""

    name = "synap.log_softmax"


@irdl_op_definition
class L2NormalizeOp(_AlongAxis):
    """``x / sqrt(max(sum(x^2), epsilon))`` along `axis`."""

    name = "synap.l2_normalize"

    epsilon = float_prop(1e-12)


OPS = [
    ClampOp,
    LeakyReluOp,
    SigmoidOp,
    TanhOp,
    HardSwishOp,
    HardSigmoidOp,
    SwishOp,
    GeluOp,
    ErfOp,
    EluOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
    AbsOp,
    NegOp,
    SquareOp,
    SoftmaxOp,
    LogSoftmaxOp,
    L2NormalizeOp,
]
