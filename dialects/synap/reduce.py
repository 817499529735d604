"""Reductions over axes, arg-reductions along one axis and the running sum and product
along one axis."""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from synapc.dialects.synap import shapes
from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    int_array_prop,
    int_prop,
    shape_of,
)


class _Reduce(SynapOp):
    """Reduce `input` over `axes`; `keep_dims` keeps them with size 1."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    axes = int_array_prop()
    keep_dims = bool_prop(False)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.reduce(operand_shapes[0], props["axes"], props["keep_dims"])]


@irdl_op_definition
class ReduceMeanOp(_Reduce):
    """Mean over `axes` (global average pooling is a mean over H and W)."""

    name = "synap.reduce_mean"


@irdl_op_definition
class ReduceSumOp(_Reduce):
    """Sum over `axes`."""

    name = "synap.reduce_sum"


@irdl_op_definition
class ReduceMaxOp(_Reduce):
    """Maximum over `axes`."""

    name = "synap.reduce_max"


@irdl_op_definition
class ReduceMinOp(_Reduce):
    """Minimum over `axes`."""

    name = "synap.reduce_min"


@irdl_op_definition
class ReduceProdOp(_Reduce):
    """Product over `axes` (1 over an empty axis; integers wrap around)."""

    name = "synap.reduce_prod"


class _ArgReduce(SynapOp):
    """Index of the extreme value along `axis` (first one on ties), as i32 or i64."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_prop()
    keep_dims = bool_prop(False)

    SAME_ELEMENT_KIND: ClassVar[bool] = False

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.arg_reduce(operand_shapes[0], props["axis"], props["keep_dims"])]

    def verify_semantics(self) -> None:
        element = element_of(self.output)
        if not (isinstance(element, IntegerType) and element.width.data in (32, 64)):
            self.fail(f"result element type must be i32 or i64, got {element}")


@irdl_op_definition
class ArgMaxOp(_ArgReduce):
    """Index of the maximum along `axis`."""

    name = "synap.argmax"


@irdl_op_definition
class ArgMinOp(_ArgReduce):
    """Index of the minimum along `axis`."""

    name = "synap.argmin"


class _Cumulative(SynapOp):
    """A running reduction along `axis`: element ``i`` combines elements ``0..i`` (with
    `exclusive`, ``0..i-1``, the first being the identity); with `reverse` it runs from
    the end of the axis instead. Integers wrap around."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_prop()
    exclusive = bool_prop(False)
    reverse = bool_prop(False)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [operand_shapes[0]]

    def verify_semantics(self) -> None:
        shapes.normalize_axis(self.props()["axis"], len(shape_of(self.input)))


@irdl_op_definition
class CumSumOp(_Cumulative):
    """Running sum along `axis` (an exclusive sum starts with 0)."""

    name = "synap.cumsum"


@irdl_op_definition
class CumProdOp(_Cumulative):
    """Running product along `axis` (an exclusive product starts with 1)."""

    name = "synap.cumprod"


OPS = [
    ReduceMeanOp,
    ReduceSumOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReduceProdOp,
    ArgMaxOp,
    ArgMinOp,
    CumSumOp,
    CumProdOp,
]
