"""Bit reinterpretation: the bits of each element read as another type of the same
width."""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.irdl import irdl_op_definition

from synapc.dialects.synap.base import Shape, element_of, is_quantized
from synapc.dialects.synap.data_movement import _ShapedByResult
from synapc.dtypes import numpy_dtype


@irdl_op_definition
class BitcastOp(_ShapedByResult):
    """Each element's bits read as the result's element type, which has the input's
    width (ONNX BitCast). Booleans are one byte holding 0 or 1; a byte read as a boolean
    is true when it is not 0."""

    name = "synap.bitcast"

    SAME_ELEMENT_KIND: ClassVar[bool] = False

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [operand_shapes[0]]

    def verify_semantics(self) -> None:
        source, target = element_of(self.input), element_of(self.output)
        if is_quantized(source) or is_quantized(target):
            self.fail("bitcast does not take quantized types")
        try:
            widths = numpy_dtype(source).itemsize, numpy_dtype(target).itemsize
        except TypeError:
            self.fail(f"bitcast needs numeric types, got {source} and {target}")
        if widths[0] != widths[1]:
            self.fail(f"{source} and {target} have different widths")


OPS = [BitcastOp]
