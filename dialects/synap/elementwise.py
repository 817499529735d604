"""Binary elementwise ops with NumPy broadcasting."""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from synapc.dialects.synap import shapes
from synapc.dialects.synap.attributes import Activation, ActivationAttr
from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    enum_prop,
    is_float,
)


class _Binary(SynapOp):
    """``output = lhs (op) rhs`` elementwise, operands broadcast against each other.

    Both operands are of one kind: the same float type, both quantized (scales may
    differ) or the same integer type."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)

    SAME_KIND_OPERANDS: ClassVar[bool] = True

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.broadcast(operand_shapes[0], operand_shapes[1])]


class _BinaryWithActivation(_Binary):
    """A binary op that can fuse an activation into its result."""

    activation = enum_prop(ActivationAttr, Activation.NONE)


@irdl_op_definition
class AddOp(_BinaryWithActivation):
    """Elementwise sum.

    `pot_scale_int16` is TFLite's flag for int16 operands: when set and every scale is a
    power of two, the integer kernel rescales by shifts alone (TFLite's schema default)."""

    name = "synap.add"

    pot_scale_int16 = bool_prop(True)


@irdl_op_definition
class SubOp(_BinaryWithActivation):
    """Elementwise difference ``lhs - rhs`` (`pot_scale_int16` as for `synap.add`)."""

    name = "synap.sub"

    pot_scale_int16 = bool_prop(True)


@irdl_op_definition
class MulOp(_BinaryWithActivation):
    """Elementwise product."""

    name = "synap.mul"


@irdl_op_definition
class DivOp(_BinaryWithActivation):
    """Elementwise quotient ``lhs / rhs``."""

    name = "synap.div"


@irdl_op_definition
class MaximumOp(_Binary):
    """Elementwise maximum."""

    name = "synap.maximum"


@irdl_op_definition
class MinimumOp(_Binary):
    """Elementwise minimum."""

    name = "synap.minimum"


@irdl_op_definition
class PowOp(_Binary):
    """Elementwise power ``lhs ** rhs`` of float tensors (one type) or of integer tensors;
    the result has `lhs`'s type.

    An integer exponent may be of another integer type than the base (ONNX Pow mixes
    them): it keeps its own values, so an int64 exponent of 256 on an int8 base is 256,
    not 256 wrapped to int8 (0); 64-bit exponents run as 32-bit ones on the target (as
    all 64-bit integers do). Integers are exact: a non-negative exponent multiplies by
    repeated squaring in the base's integer type, wrapping on overflow as the type does
    (as ONNX's reference, numpy, does; onnxruntime computes ``std::pow`` in double and
    converts, giving INT_MIN on x86 for a result out of range). A negative exponent
    gives ``1 / lhs ** -rhs`` with C's truncating integer division: 1 for a base of 1,
    +-1 for a base of -1 (the exponent's parity), 0 for any other base (onnxruntime
    agrees) -- and 0 for a base of 0, where the quotient is undefined (numpy refuses it;
    onnxruntime converts an infinite ``std::pow``, an undefined conversion giving
    INT_MIN on x86). A run-time value cannot be refused at compile time, so synapc fixes
    it to 0, as synap.mod does for a divisor of 0."""

    name = "synap.pow"

    SAME_KIND_OPERANDS: ClassVar[bool] = False

    def verify_semantics(self) -> None:
        element, exponent = element_of(self.lhs), element_of(self.rhs)
        if not (is_float(element) or _is_integer(element)):
            self.fail(f"pow needs float or integer operands, got {element}")
        if exponent != element and not (_is_integer(element) and _is_integer(exponent)):
            self.fail(f"operand element types {element} and {exponent} differ")


def _is_integer(element: Attribute) -> bool:
    """Whether `element` is an integer type (not a boolean)."""
    return isinstance(element, IntegerType) and element.width.data > 1


@irdl_op_definition
class SquaredDifferenceOp(_Binary):
    """Elementwise ``(lhs - rhs) ** 2``."""

    name = "synap.squared_difference"


@irdl_op_definition
class ModOp(_Binary):
    """Elementwise remainder of ``lhs / rhs``: with `fmod` false the quotient is floored
    (``lhs - floor(lhs / rhs) * rhs``, the sign of the divisor, Python's ``%``); with
    `fmod` true it is truncated (``lhs - trunc(lhs / rhs) * rhs``, the sign of the
    dividend, C's ``fmod``). Integers or floats; an integer divisor of 0 gives 0."""

    name = "synap.mod"

    fmod = bool_prop(False)


@irdl_op_definition
class PReluOp(SynapOp):
    """Parametric ReLU: ``x if x >= 0 else slope * x``; `slope` broadcasts to `input`
    (typically one value per channel)."""

    name = "synap.prelu"

    input = operand_def(TensorType)
    slope = operand_def(TensorType)
    output = result_def(TensorType)

    SAME_KIND_OPERANDS: ClassVar[bool] = True

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.broadcast_to(operand_shapes[1], operand_shapes[0])]


OPS = [
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    MaximumOp,
    MinimumOp,
    PowOp,
    SquaredDifferenceOp,
    ModOp,
    PReluOp,
]
