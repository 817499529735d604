"""Linear algebra on the last two dimensions: `synap.det`.

A determinant is not a composition of the other layers that stays exact (elimination
needs a pivot chosen from the data at every step), so it is one op whose kernel
factorizes each matrix (LU with partial pivoting)."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from synapc.dialects.synap.base import Shape, SynapOp, element_of, is_float, shape_of


@irdl_op_definition
class DetOp(SynapOp):
    """The determinant of each square float matrix ``[..., M, M]``; the result has the
    batch shape ``[...]`` (rank 0 for one matrix)."""

    name = "synap.det"

    input = operand_def(TensorType)
    output = result_def(TensorType)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [tuple(operand_shapes[0][:-2])]

    def verify_semantics(self) -> None:
        shape = shape_of(self.input)
        if len(shape) < 2 or shape[-1] != shape[-2]:
            self.fail(f"input must be square matrices [..., M, M], got {list(shape)}")
        if not is_float(element_of(self.input)):
            self.fail(f"input must hold floats, got {element_of(self.input)}")


OPS = [DetOp]
