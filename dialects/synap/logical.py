"""Comparisons, boolean logic, selection and bitwise integer ops.

Booleans are ``i1`` tensors. Comparisons and the float tests (`synap.is_inf`,
`synap.is_nan`) turn numbers into booleans, the logical ops combine booleans,
`synap.select` picks values by a boolean condition, and the bitwise ops and shifts work
on the bits of integers. Binary and ternary ops broadcast their operands as NumPy does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self

from xdsl.dialects.builtin import IntegerType, TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from synapc.dialects.synap import shapes
from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    is_float,
    is_quantized,
)


def is_bool(element: Attribute) -> bool:
    """Whether an element type is the boolean ``i1``."""
    return isinstance(element, IntegerType) and element.width.data == 1


def is_plain_integer(element: Attribute) -> bool:
    """Whether an element type is an integer that is neither boolean nor quantized."""
    return isinstance(element, IntegerType) and element.width.data > 1


def same_kind(first: Attribute, second: Attribute) -> bool:
    """Whether two element types are of one kind: equal, or both quantized (with any
    parameters)."""
    return first == second or (is_quantized(first) and is_quantized(second))


class _BooleanResult(SynapOp):
    """An op whose one result is boolean (``i1``) whatever its operands are."""

    SAME_ELEMENT_KIND: ClassVar[bool] = False

    @classmethod
    def make(
        cls,
        *operands: SSAValue | Operation | Sequence[SSAValue | Operation] | None,
        element_type: Attribute | None = None,
        **kwargs: Any,
    ) -> Self:
        """`SynapOp.make` with an ``i1`` result unless `element_type` says otherwise."""
        return super().make(
            *operands, element_type=i1 if element_type is None else element_type, **kwargs
        )

    def verify_semantics(self) -> None:
        for i, result in enumerate(self.results):
            if not is_bool(element_of(result)):
                self.fail(f"result #{i} must be boolean (i1), got {element_of(result)}")


class _Comparison(_BooleanResult):
    """``output = lhs (relation) rhs`` elementwise, operands broadcast against each other.

    Both operands are of one kind: the same float or integer type, or both quantized.
    Quantized operands compare their real values ``scale * (q - zero_point)``: with equal
    quantization the stored integers compare exactly; otherwise both sides are first
    dequantized to float32, as ONNX's DequantizeLinear does."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)

    SAME_KIND_OPERANDS: ClassVar[bool] = True
    #: Whether the relation needs an order (booleans can only be compared for equality).
    ORDERED: ClassVar[bool] = True

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.broadcast(operand_shapes[0], operand_shapes[1])]

    def verify_semantics(self) -> None:
        super().verify_semantics()
        if self.ORDERED and is_bool(element_of(self.lhs)):
            self.fail("booleans have no order; only equality compares them")


@irdl_op_definition
class EqualOp(_Comparison):
    """``lhs == rhs`` (also for booleans)."""

    name = "synap.equal"

    ORDERED: ClassVar[bool] = False


@irdl_op_definition
class GreaterOp(_Comparison):
    """``lhs > rhs``."""

    name = "synap.greater"


@irdl_op_definition
class GreaterEqualOp(_Comparison):
    """``lhs >= rhs``."""

    name = "synap.greater_equal"


@irdl_op_definition
class LessOp(_Comparison):
    """``lhs < rhs``."""

    name = "synap.less"


@irdl_op_definition
class LessEqualOp(_Comparison):
    """``lhs <= rhs``."""

    name = "synap.less_equal"


class _FloatTest(_BooleanResult):
    """``output = test(input)`` elementwise on a float tensor."""

    input = operand_def(TensorType)
    output = result_def(TensorType)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [operand_shapes[0]]

    def verify_semantics(self) -> None:
        super().verify_semantics()
        if not is_float(element_of(self.input)):
            self.fail(f"input must be float, got {element_of(self.input)}")


@irdl_op_definition
class IsInfOp(_FloatTest):
    """Whether each value is infinite: ``+inf`` counts when `detect_positive` is set,
    ``-inf`` when `detect_negative` is (with neither, every result is false)."""

    name = "synap.is_inf"

    detect_negative = bool_prop(True)
    detect_positive = bool_prop(True)


@irdl_op_definition
class IsNaNOp(_FloatTest):
    """Whether each value is NaN."""

    name = "synap.is_nan"


class _Logical(SynapOp):
    """``output = lhs (op) rhs`` on booleans, operands broadcast against each other."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)

    SAME_KIND_OPERANDS: ClassVar[bool] = True

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.broadcast(operand_shapes[0], operand_shapes[1])]

    def verify_semantics(self) -> None:
        if not is_bool(element_of(self.lhs)):
            self.fail(f"operands must be boolean (i1), got {element_of(self.lhs)}")


@irdl_op_definition
class LogicalAndOp(_Logical):
    """Boolean ``lhs and rhs``."""

    name = "synap.logical_and"


@irdl_op_definition
class LogicalOrOp(_Logical):
    """Boolean ``lhs or rhs``."""

    name = "synap.logical_or"


@irdl_op_definition
class LogicalXorOp(_Logical):
    """Boolean ``lhs != rhs``."""

    name = "synap.logical_xor"


@irdl_op_definition
class LogicalNotOp(SynapOp):
    """Boolean ``not input``."""

    name = "synap.logical_not"

    input = operand_def(TensorType)
    output = result_def(TensorType)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [operand_shapes[0]]

    def verify_semantics(self) -> None:
        if not is_bool(element_of(self.input)):
            self.fail(f"input must be boolean (i1), got {element_of(self.input)}")


class _Bitwise(SynapOp):
    """``output = lhs (op) rhs`` on the two's complement bits of one integer type,
    operands broadcast against each other (not booleans: see the logical ops)."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)

    SAME_KIND_OPERANDS: ClassVar[bool] = True

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.broadcast(operand_shapes[0], operand_shapes[1])]

    def verify_semantics(self) -> None:
        if not is_plain_integer(element_of(self.lhs)):
            self.fail(f"operands must be integers, got {element_of(self.lhs)}")


@irdl_op_definition
class BitwiseAndOp(_Bitwise):
    """Bitwise ``lhs & rhs``."""

    name = "synap.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(_Bitwise):
    """Bitwise ``lhs | rhs``."""

    name = "synap.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(_Bitwise):
    """Bitwise ``lhs ^ rhs``."""

    name = "synap.bitwise_xor"


@irdl_op_definition
class ShiftLeftOp(_Bitwise):
    """``lhs << rhs``: bits shifted past the top (and the sign bit) are dropped. A shift
    amount below 0 or of at least the type's width gives 0."""

    name = "synap.shift_left"


@irdl_op_definition
class ShiftRightOp(_Bitwise):
    """``lhs >> rhs``: logical for unsigned types, arithmetic (sign-extending) for
    signed and signless ones. A shift amount below 0 or of at least the type's width
    gives the sign fill alone: -1 for a negative signed `lhs`, 0 otherwise."""

    name = "synap.shift_right"


@irdl_op_definition
class BitwiseNotOp(SynapOp):
    """Bitwise ``~input`` of an integer tensor."""

    name = "synap.bitwise_not"

    input = operand_def(TensorType)
    output = result_def(TensorType)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [operand_shapes[0]]

    def verify_semantics(self) -> None:
        if not is_plain_integer(element_of(self.input)):
            self.fail(f"input must be integers, got {element_of(self.input)}")


@irdl_op_definition
class SelectOp(SynapOp):
    """``output = condition ? true_value : false_value`` elementwise, the three operands
    broadcast against each other.

    `condition` is boolean; the values are of one kind (the same float, integer or
    boolean type, or both quantized) and the result is of their kind. Quantized values
    whose quantization differs from the result's are requantized to it (dequantized to
    float32 and quantized again, rounding half to even)."""

    name = "synap.select"

    condition = operand_def(TensorType)
    true_value = operand_def(TensorType)
    false_value = operand_def(TensorType)
    output = result_def(TensorType)

    SAME_ELEMENT_KIND: ClassVar[bool] = False

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.broadcast(*operand_shapes)]

    def verify_semantics(self) -> None:
        condition = element_of(self.condition)
        if not is_bool(condition):
            self.fail(f"condition must be boolean (i1), got {condition}")
        first, second = element_of(self.true_value), element_of(self.false_value)
        if not same_kind(first, second):
            self.fail(f"value element types {first} and {second} differ")
        result = element_of(self.output)
        if not same_kind(result, first):
            self.fail(
                f"result element type {result} does not match the values' element type "
                f"{first}"
            )


OPS = [
    EqualOp,
    GreaterOp,
    GreaterEqualOp,
    LessOp,
    LessEqualOp,
    IsInfOp,
    IsNaNOp,
    LogicalAndOp,
    LogicalOrOp,
    LogicalXorOp,
    LogicalNotOp,
    BitwiseAndOp,
    BitwiseOrOp,
    BitwiseXorOp,
    BitwiseNotOp,
    ShiftLeftOp,
    ShiftRightOp,
    SelectOp,
]
