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
class ThresholdedReluOp(_Unary):
    """``x if x > alpha else 0`` (ONNX ThresholdedRelu; ReLU when alpha is 0)."""

    name = "synap.thresholded_relu"

    alpha = float_prop(1.0)


@irdl_op_definition
class ShrinkOp(_Unary):
    """``x + bias if x < -lambd``, ``x - bias if x > lambd``, else 0 (ONNX Shrink: soft
    shrinkage when bias equals lambd, hard shrinkage when bias is 0). On integer tensors
    the thresholds and the shifted value are those of the real numbers, the result
    truncated toward zero."""

    name = "synap.shrink"

    lambd = float_prop(0.5)
    bias = float_prop(0.0)


@irdl_op_definition
class SoftplusOp(_Unary):
    """``log(1 + exp(x))``, a smooth ReLU."""

    name = "synap.softplus"


@irdl_op_definition
class SoftsignOp(_Unary):
    """``x / (1 + |x|)``."""

    name = "synap.softsign"


@irdl_op_definition
class MishOp(_Unary):
    """``x * tanh(softplus(x))`` (YOLOv4's activation)."""

    name = "synap.mish"


@irdl_op_definition
class SignOp(_Unary):
    """-1, 0 or 1 by the sign of ``x``, in the input's type (integers too)."""

    name = "synap.sign"


@irdl_op_definition
class FloorOp(_Unary):
    """The largest integral value not greater than ``x`` (float tensors)."""

    name = "synap.floor"


@irdl_op_definition
class CeilOp(_Unary):
    """The smallest integral value not less than ``x`` (float tensors)."""

    name = "synap.ceil"


@irdl_op_definition
class RoundOp(_Unary):
    """``x`` rounded to the nearest integral value, halves to even (float tensors)."""

    name = "synap.round"


@irdl_op_definition
class SinOp(_Unary):
    """Sine (radians)."""

    name = "synap.sin"


@irdl_op_definition
class CosOp(_Unary):
    """Cosine (radians)."""

    name = "synap.cos"


@irdl_op_definition
class TanOp(_Unary):
    """Tangent (radians)."""

    name = "synap.tan"


@irdl_op_definition
class AsinOp(_Unary):
    """Arcsine, in [-pi/2, pi/2] (NaN outside [-1, 1])."""

    name = "synap.asin"


@irdl_op_definition
class AcosOp(_Unary):
    """Arccosine, in [0, pi] (NaN outside [-1, 1])."""

    name = "synap.acos"


@irdl_op_definition
class AtanOp(_Unary):
    """Arctangent, in (-pi/2, pi/2)."""

    name = "synap.atan"


@irdl_op_definition
class SinhOp(_Unary):
    """Hyperbolic sine."""

    name = "synap.sinh"


@irdl_op_definition
class CoshOp(_Unary):
    """Hyperbolic cosine."""

    name = "synap.cosh"


@irdl_op_definition
class AsinhOp(_Unary):
    """Inverse hyperbolic sine."""

    name = "synap.asinh"


@irdl_op_definition
class AcoshOp(_Unary):
    """Inverse hyperbolic cosine (NaN below 1)."""

    name = "synap.acosh"


@irdl_op_definition
class AtanhOp(_Unary):
    """Inverse hyperbolic tangent (NaN outside [-1, 1])."""

    name = "synap.atanh"


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
    ThresholdedReluOp,
    ShrinkOp,
    SoftplusOp,
    SoftsignOp,
    MishOp,
    SignOp,
    FloorOp,
    CeilOp,
    RoundOp,
    SinOp,
    CosOp,
    TanOp,
    AsinOp,
    AcosOp,
    AtanOp,
    SinhOp,
    CoshOp,
    AsinhOp,
    AcoshOp,
    AtanhOp,
    SoftmaxOp,
    LogSoftmaxOp,
    L2NormalizeOp,
]
