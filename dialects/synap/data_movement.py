"""Ops that move, copy or reinterpret elements without arithmetic."""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    result_def,
    var_operand_def,
    var_result_def,
)

from synapc.dialects.synap import shapes
from synapc.dialects.synap.attributes import (
    DepthToSpaceMode,
    DepthToSpaceModeAttr,
    PadMode,
    PadModeAttr,
)
from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    element_of,
    enum_prop,
    float_prop,
    int_array_prop,
    int_prop,
    shape_of,
)


class _ShapedByResult(SynapOp):
    """One input, one output whose shape the result type gives."""

    input = operand_def(TensorType)
    output = result_def(TensorType)


@irdl_op_definition
class ConcatOp(SynapOp):
    """Concatenation of the inputs along `axis`."""

    name = "synap.concat"

    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_prop()

    SAME_KIND_OPERANDS: ClassVar[bool] = True

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.concat(operand_shapes, props["axis"])]


@irdl_op_definition
class SplitOp(SynapOp):
    """Split along `axis` into consecutive pieces; the result types give their sizes."""

    name = "synap.split"

    input = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axis = int_prop()

    def verify_semantics(self) -> None:
        axis = shapes.normalize_axis(self.props()["axis"], len(shape_of(self.input)))
        sizes = [shape_of(r)[axis] if len(shape_of(r)) > axis else 0 for r in self.outputs]
        expected = shapes.split(shape_of(self.input), axis, sizes)
        for i, (want, result) in enumerate(zip(expected, self.outputs, strict=True)):
            if shape_of(result) != want:
                self.fail(
                    f"result #{i} shape {list(shape_of(result))} should be {list(want)}"
                )


@irdl_op_definition
class SliceOp(_ShapedByResult):
    """The window starting at `start` whose size is the result shape."""

    name = "synap.slice"

    start = int_array_prop()

    def verify_semantics(self) -> None:
        shapes.slice_(shape_of(self.input), self.props()["start"], shape_of(self.output))


@irdl_op_definition
class StridedSliceOp(SynapOp):
    """``input[begin0:end0:stride0, ...]`` with resolved indices (importers turn masks
    and negative indices into explicit values; `end` -1 with a negative stride runs to
    the front)."""

    name = "synap.strided_slice"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    begin = int_array_prop()
    end = int_array_prop()
    strides = int_array_prop()

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [
            shapes.strided_slice(
                operand_shapes[0], props["begin"], props["end"], props["strides"]
            )
        ]


@irdl_op_definition
class ReshapeOp(_ShapedByResult):
    """Same elements in row-major order, new shape (squeeze / expand_dims / flatten)."""

    name = "synap.reshape"

    def verify_semantics(self) -> None:
        before = shapes.element_count(shape_of(self.input))
        after = shapes.element_count(shape_of(self.output))
        if before != after:
            self.fail(f"cannot reshape {before} elements into {after}")


@irdl_op_definition
class TransposeOp(SynapOp):
    """Permute dimensions: ``output.shape[i] = input.shape[perm[i]]``."""

    name = "synap.transpose"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    perm = int_array_prop()

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.transpose(operand_shapes[0], props["perm"])]


@irdl_op_definition
class PadOp(SynapOp):
    """Pad each dimension by ``pads = [before0, after0, before1, after1, ...]``.

    `constant` fills with `value` (a real value; quantized tensors store it quantized
    with the result's parameters), `reflect` mirrors without repeating the edge,
    `edge` repeats the edge, `wrap` continues the dimension periodically (any width; a
    zero-size dimension cannot be wrap-, edge-, reflect- or symmetric-padded)."""

    name = "synap.pad"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    pads = int_array_prop()
    mode = enum_prop(PadModeAttr, PadMode.CONSTANT)
    value = float_prop(0.0)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.pad(operand_shapes[0], props["pads"])]

    def verify_semantics(self) -> None:
        props = self.props()
        if props["mode"] in (PadMode.REFLECT, PadMode.SYMMETRIC):
            limit_offset = 1 if props["mode"] == PadMode.REFLECT else 0
            for axis, size in enumerate(shape_of(self.input)):
                if max(props["pads"][2 * axis : 2 * axis + 2]) > size - limit_offset:
                    bound = "<" if limit_offset else "<="
                    self.fail(
                        f"{props['mode']} padding of dimension {axis} must be {bound} its "
                        f"size {size}"
                    )
        if props["mode"] != PadMode.CONSTANT:
            for axis, size in enumerate(shape_of(self.input)):
                if size == 0 and max(props["pads"][2 * axis : 2 * axis + 2]) > 0:
                    self.fail(f"{props['mode']} padding of empty dimension {axis}")


@irdl_op_definition
class TileOp(SynapOp):
    """Repeat the input `multiples[i]` times along dimension i."""

    name = "synap.tile"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    multiples = int_array_prop()

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.tile(operand_shapes[0], props["multiples"])]


@irdl_op_definition
class BroadcastToOp(_ShapedByResult):
    """Broadcast the input (NumPy rules) to the result shape."""

    name = "synap.broadcast_to"

    def verify_semantics(self) -> None:
        shapes.broadcast_to(shape_of(self.input), shape_of(self.output))


@irdl_op_definition
class GatherOp(SynapOp):
    """Take slices of `data` along `axis` at integer `indices` (negative counts from the
    end); the result shape is ``data[:axis] + indices + data[axis+1:]``."""

    name = "synap.gather"

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_prop(0)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.gather(operand_shapes[0], operand_shapes[1], props["axis"])]

    def verify_semantics(self) -> None:
        if not isinstance(element_of(self.indices), IntegerType):
            self.fail(f"indices must be integers, got {element_of(self.indices)}")


@irdl_op_definition
class DepthToSpaceOp(SynapOp):
    """Move channel blocks into ``block_size x block_size`` spatial blocks (NHWC)."""

    name = "synap.depth_to_space"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    block_size = int_prop()
    mode = enum_prop(DepthToSpaceModeAttr, DepthToSpaceMode.DCR)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.depth_to_space(operand_shapes[0], props["block_size"])]


@irdl_op_definition
class SpaceToDepthOp(SynapOp):
    """Move ``block_size x block_size`` spatial blocks into channels (NHWC)."""

    name = "synap.space_to_depth"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    block_size = int_prop()

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [shapes.space_to_depth(operand_shapes[0], props["block_size"])]


OPS = [
    ConcatOp,
    SplitOp,
    SliceOp,
    StridedSliceOp,
    ReshapeOp,
    TransposeOp,
    PadOp,
    TileOp,
    BroadcastToOp,
    GatherOp,
    DepthToSpaceOp,
    SpaceToDepthOp,
]
