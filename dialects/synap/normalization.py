"""Normalizations computed from statistics of the data itself: layer normalization.

(Softmax-like ops that normalize along an axis live in `activation`; batch normalization
is folded into convolutions or becomes a per-channel multiply-add at import.)
"""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
)

from synapc.dialects.synap import shapes
from synapc.dialects.synap.base import Shape, SynapOp, float_prop, int_prop, shape_of


@irdl_op_definition
class LayerNormOp(SynapOp):
    """Layer normalization along one axis:
    ``(x - mean(x)) / sqrt(var(x) + epsilon) * gamma + beta``, with the mean and the
    (biased) variance taken along `axis` (the last one by default). `gamma` (scale) and
    `beta` (bias) are optional and broadcast to the input's shape (typically one value per
    element of `axis`).

    Syntax: ``synap.layer_norm %x scale %g : type bias %b : type {epsilon = ...} :
    type(x) -> type(y)``, the ``scale`` and ``bias`` groups each optional."""

    name = "synap.layer_norm"

    input = operand_def(TensorType)
    gamma = opt_operand_def(TensorType)
    beta = opt_operand_def(TensorType)
    output = result_def(TensorType)

    axis = int_prop(-1)
    epsilon = float_prop(1e-5)

    irdl_options = (AttrSizedOperandSegments(), ParsePropInAttrDict())
    assembly_format = (
        "$input (`scale` $gamma^ `:` type($gamma))? (`bias` $beta^ `:` type($beta))? "
        "attr-dict `:` type($input) `->` type($output)"
    )

    SAME_KIND_OPERANDS: ClassVar[bool] = True

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [operand_shapes[0]]

    def verify_semantics(self) -> None:
        shape = shape_of(self.input)
        shapes.normalize_axis(self.props()["axis"], len(shape))
        for what, value in (("scale", self.gamma), ("bias", self.beta)):
            if value is None:
                continue
            try:
                fits = shapes.broadcast(shape_of(value), shape) == shape
            except shapes.ShapeError:
                fits = False
            if not fits:
                self.fail(
                    f"{what} shape {list(shape_of(value))} does not broadcast to the "
                    f"input shape {list(shape)}"
                )
        epsilon = self.props()["epsilon"]
        if not epsilon >= 0:
            self.fail(f"epsilon must be >= 0, got {epsilon:g}")


OPS = [LayerNormOp]
