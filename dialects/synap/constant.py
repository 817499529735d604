"""`synap.constant`: a tensor whose values live in the WeightStore."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import DenseResourceAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure

from synapc.dialects.synap.base import SynapOp


@irdl_op_definition
class ConstantOp(SynapOp):
    """A constant tensor (weights, biases, lookup tables) referenced by handle.

    The values are a numpy array in the `synapc.WeightStore` under the
    `dense_resource<handle>` key; the IR never holds them. For quantized tensors the
    store holds the stored integers. Syntax: ``%w = synap.constant dense_resource<w0> :
    tensor<8x3x3x3xf32>``.
    """

    name = "synap.constant"

    value = prop_def(DenseResourceAttr)
    result = result_def(TensorType)

    traits = traits_def(Pure(), ConstantLike())
    assembly_format: ClassVar[str | None] = None  # type: ignore[misc]
    SAME_ELEMENT_KIND: ClassVar[bool] = False

    def __init__(
        self,
        handle: str,
        result_type: TensorType[Attribute],
        layer_name: str | None = None,
    ):
        attributes = {} if layer_name is None else {"layer_name": StringAttr(layer_name)}
        super().__init__(
            properties={"value": DenseResourceAttr.from_params(handle, result_type)},
            result_types=[result_type],
            attributes=attributes,
        )

    @property
    def handle(self) -> str:
        """The WeightStore key of the values."""
        return self.value.resource_handle.data

    def verify_semantics(self) -> None:
        if self.value.type != self.result.type:
            self.fail(
                f"value type {self.value.type} does not match result type "
                f"{self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        pos = parser.pos
        attributes = parser.parse_optional_attr_dict()
        if "value" in attributes:
            parser.raise_error(
                "synap.constant takes its value after the attributes, not as 'value'",
                pos,
                parser.pos,
            )
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseResourceAttr):
            parser.raise_error(
                "synap.constant takes a dense_resource<handle> : tensor<...> value",
                pos,
                parser.pos,
            )
        op = cls.create(
            properties={"value": value},
            result_types=[value.type],
            attributes=attributes,
        )
        return op

    def print(self, printer: Printer) -> None:
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        printer.print_string(" ")
        printer.print_attribute(self.value)
