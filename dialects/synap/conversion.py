"""Element type conversions: cast, quantize, dequantize."""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.irdl import irdl_op_definition

from synapc.dialects.synap.attributes import ExponentRounding, ExponentRoundingAttr
from synapc.dialects.synap.base import (
    Shape,
    bool_prop,
    element_of,
    enum_prop,
    is_float,
    is_quantized,
)
from synapc.dialects.synap.data_movement import _ShapedByResult


class _Conversion(_ShapedByResult):
    """Same shape, another element type."""

    SAME_ELEMENT_KIND: ClassVar[bool] = False

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [operand_shapes[0]]


@irdl_op_definition
class CastOp(_Conversion):
    """Convert between float and integer element types (C semantics: float to integer
    truncates toward zero). Quantized types convert with quantize / dequantize.

    The one op that takes the storage-only types (float8, float4, 2- and 4-bit
    integers). To a float8 type, `saturate` clamps values beyond its range (and
    infinities) to its largest finite value, as ONNX's Cast does by default; without it
    they become infinity or NaN. To 2- and 4-bit integers, the truncated value wraps.
    `exponent_rounding` rounds to float8e8m0 (powers of two)."""

    name = "synap.cast"

    TAKES_LOW_PRECISION: ClassVar[bool] = True
    saturate = bool_prop(True)
    exponent_rounding = enum_prop(ExponentRoundingAttr, ExponentRounding.UP)

    def verify_semantics(self) -> None:
        if is_quantized(element_of(self.input)) or is_quantized(element_of(self.output)):
            self.fail("cast does not take quantized types; use quantize or dequantize")


@irdl_op_definition
class QuantizeOp(_Conversion):
    """Quantize float values to the result's quantized type, or requantize a quantized
    tensor to other parameters: ``q = clamp(round(x / scale) + zero_point)``."""

    name = "synap.quantize"

    def verify_semantics(self) -> None:
        source, target = element_of(self.input), element_of(self.output)
        if not is_quantized(target):
            self.fail(f"result must be quantized, got {target}")
        if not (is_float(source) or is_quantized(source)):
            self.fail(f"input must be float or quantized, got {source}")


@irdl_op_definition
class DequantizeOp(_Conversion):
    """Real values of a quantized tensor: ``scale * (q - zero_point)``."""

    name = "synap.dequantize"

    def verify_semantics(self) -> None:
        source, target = element_of(self.input), element_of(self.output)
        if not is_quantized(source):
            self.fail(f"input must be quantized, got {source}")
        if not is_float(target):
            self.fail(f"result must be float, got {target}")


OPS = [CastOp, QuantizeOp, DequantizeOp]
