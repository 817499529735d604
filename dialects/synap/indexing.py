"""Indexing ops: gathers and scatters at integer indices, one-hot encoding, triangular
masks, top-k selection, sequence reversal and Einstein summation.

Index operands are integer tensors. A negative index counts from the end of its
dimension (it wraps once, as in ONNX); what an index outside ``[-size, size)`` does at
run time is left to the kernel (importers refuse such constant indices). The shape rules
of these ops live here, next to the ops, and raise `shapes.ShapeError` like the rules of
`shapes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import IntegerType, StringAttr, TensorType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.str_enum import StrEnum

from synapc.dialects.synap import shapes
from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    enum_prop,
    int_prop,
    is_float,
    shape_of,
)
from synapc.dialects.synap.shapes import ShapeError as ShapeError  # re-exported
from synapc.dialects.synap.shapes import require


class ScatterReduction(StrEnum):
    """How a scatter combines an update with the value already at its position: `none`
    replaces it, the others combine with ``+``, ``*``, ``max`` or ``min`` (repeated
    indices then combine every update, in any order)."""

    NONE = "none"
    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"


@irdl_attr_definition
class ScatterReductionAttr(EnumAttribute[ScatterReduction], SpacedOpaqueSyntaxAttribute):
    """The reduction of `synap.scatter_elements` and `synap.scatter_nd`."""

    name = "synap.scatter_reduction"


# -- shape rules -------------------------------------------------------------------------
def gather_elements(data: Shape, indices: Shape, axis: int) -> Shape:
    """``out[i...] = data[i... with indices[i...] at axis]``: the result has the indices'
    shape, which has the data's rank and is no larger than the data off the axis."""
    require(len(data) >= 1, "data must have rank >= 1")
    require(
        len(indices) == len(data),
        f"indices of shape {list(indices)} must have the data's rank {len(data)}",
    )
    axis = shapes.normalize_axis(axis, len(data))
    for d, (n, m) in enumerate(zip(indices, data, strict=True)):
        require(
            d == axis or n <= m,
            f"indices dimension {d} ({n}) exceeds the data's ({m})",
        )
    return tuple(indices)


def gather_nd(data: Shape, indices: Shape, batch_dims: int) -> Shape:
    """Index tuples of length ``k = indices[-1]`` into the data dimensions after the
    `batch_dims` leading ones (shared by data and indices): the result is
    ``indices[:-1] + data[batch_dims + k:]``."""
    require(len(data) >= 1 and len(indices) >= 1, "data and indices need rank >= 1")
    require(
        0 <= batch_dims < min(len(data), len(indices)),
        f"batch_dims {batch_dims} must be in [0, {min(len(data), len(indices))})",
    )
    require(
        tuple(data[:batch_dims]) == tuple(indices[:batch_dims]),
        f"the {batch_dims} batch dimensions of data {list(data)} and indices "
        f"{list(indices)} differ",
    )
    depth = indices[-1]
    require(
        1 <= depth <= len(data) - batch_dims,
        f"index tuples of length {depth} do not fit rank {len(data)} with "
        f"{batch_dims} batch dimensions",
    )
    return (*indices[:-1], *data[batch_dims + depth :])


def scatter_elements(data: Shape, indices: Shape, updates: Shape, axis: int) -> Shape:
    """The inverse of `gather_elements`: updates of the indices' shape; the result has
    the data's shape."""
    require(
        tuple(updates) == tuple(indices),
        f"updates of shape {list(updates)} must have the indices' shape {list(indices)}",
    )
    gather_elements(data, indices, axis)
    return tuple(data)


def scatter_nd(data: Shape, indices: Shape, updates: Shape) -> Shape:
    """The inverse of `gather_nd` without batch dimensions: updates of shape
    ``indices[:-1] + data[k:]``; the result has the data's shape."""
    expected = gather_nd(data, indices, 0)
    require(
        tuple(updates) == expected,
        f"updates of shape {list(updates)} must have shape {list(expected)}",
    )
    return tuple(data)


def one_hot(indices: Shape, depth: int, axis: int) -> Shape:
    """The indices' shape with a dimension of `depth` inserted at `axis` (an axis of
    the result)."""
    require(depth >= 1, f"depth must be >= 1, got {depth}")
    axis = shapes.normalize_axis(axis, len(indices) + 1)
    return (*indices[:axis], depth, *indices[axis:])


def trilu(input_shape: Shape) -> Shape:
    """Matrices in the last two dimensions; the result has the input's shape."""
    require(len(input_shape) >= 2, f"input must have rank >= 2, got {list(input_shape)}")
    return tuple(input_shape)


def top_k(input_shape: Shape, k: int, axis: int) -> list[Shape]:
    """Values and indices: the input's shape with `k` (at most the axis size) at axis."""
    require(len(input_shape) >= 1, "input must have rank >= 1")
    axis = shapes.normalize_axis(axis, len(input_shape))
    require(
        0 <= k <= input_shape[axis],
        f"k {k} must be in [0, {input_shape[axis]}] (the size of axis {axis})",
    )
    result = (*input_shape[:axis], k, *input_shape[axis + 1 :])
    return [result, result]


def reverse_sequence(
    input_shape: Shape, lengths: Shape, batch_axis: int, time_axis: int
) -> Shape:
    """One sequence length per batch entry; the result has the input's shape."""
    rank = len(input_shape)
    require(rank >= 2, f"input must have rank >= 2, got {list(input_shape)}")
    batch = shapes.normalize_axis(batch_axis, rank)
    time = shapes.normalize_axis(time_axis, rank)
    require(batch != time, f"batch_axis {batch_axis} and time_axis {time_axis} coincide")
    require(
        tuple(lengths) == (input_shape[batch],),
        f"sequence lengths of shape {list(lengths)} must be [{input_shape[batch]}]",
    )
    return tuple(input_shape)


def parse_einsum(equation: str) -> tuple[list[str], str]:
    """The operand terms and the output term of an explicit einsum equation
    ``"ab,bc->ac"`` (letters only: importers resolve ellipses and implicit outputs)."""
    require(equation.count("->") == 1, f"equation '{equation}' must have one '->' output")
    inputs, output = equation.split("->")
    terms = inputs.split(",")
    for term in (*terms, output):
        require(
            all(c.isascii() and c.isalpha() for c in term),
            f"equation '{equation}' may only hold letters, ',' and '->'",
        )
    require(
        len(set(output)) == len(output), f"output '{output}' repeats a subscript letter"
    )
    missing = set(output) - set("".join(terms))
    require(not missing, f"output letters {sorted(missing)} are not in any operand")
    return terms, output


def einsum(operands: Sequence[Shape], equation: str) -> Shape:
    """The result shape of an explicit einsum: a letter's dimensions agree (a dimension
    of 1 broadcasts, as NumPy's ellipsis dimensions do); repeated letters within one
    operand take its diagonal."""
    terms, output = parse_einsum(equation)
    require(
        len(terms) == len(operands),
        f"equation '{equation}' has {len(terms)} operand terms for {len(operands)} "
        "operands",
    )
    sizes: dict[str, int] = {}
    for k, (term, shape) in enumerate(zip(terms, operands, strict=True)):
        require(
            len(term) == len(shape),
            f"term '{term}' names {len(term)} dimensions of operand #{k} of shape "
            f"{list(shape)}",
        )
        own: dict[str, int] = {}
        for letter, size in zip(term, shape, strict=True):
            require(
                own.setdefault(letter, size) == size,
                f"operand #{k} takes the diagonal of '{letter}' over dimensions of "
                f"different sizes {own[letter]} and {size}",
            )
            known = sizes.setdefault(letter, size)
            require(
                known == size or 1 in (known, size),
                f"'{letter}' has sizes {known} and {size}",
            )
            sizes[letter] = max(known, size)
    return tuple(sizes[letter] for letter in output)


# -- ops ---------------------------------------------------------------------------------
def _integer_indices(op: SynapOp, value: Any, what: str = "indices") -> None:
    """`value` holds integers (not booleans)."""
    element = element_of(value)
    if not isinstance(element, IntegerType) or element.width.data == 1:
        op.fail(f"{what} must be integers, got {element}")


def _same_element(op: SynapOp, value: Any, what: str) -> None:
    """`value` has the element type of operand #0."""
    if element_of(value) != element_of(op.operands[0]):
        op.fail(
            f"{what} element type {element_of(value)} does not match operand #0 "
            f"element type {element_of(op.operands[0])}"
        )


@irdl_op_definition
class GatherElementsOp(SynapOp):
    """``output[i...] = data[i...]`` with position ``indices[i...]`` along `axis`; the
    result has the shape of `indices`, which has the rank of `data`."""

    name = "synap.gather_elements"

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_prop(0)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [gather_elements(operand_shapes[0], operand_shapes[1], props["axis"])]

    def verify_semantics(self) -> None:
        _integer_indices(self, self.indices)


@irdl_op_definition
class GatherNDOp(SynapOp):
    """Slices of `data` at index tuples: the last dimension of `indices` (size k) holds
    positions in data dimensions ``batch_dims .. batch_dims + k``; the leading
    `batch_dims` dimensions of data and indices are batches gathered in step."""

    name = "synap.gather_nd"

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    batch_dims = int_prop(0)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [gather_nd(operand_shapes[0], operand_shapes[1], props["batch_dims"])]

    def verify_semantics(self) -> None:
        _integer_indices(self, self.indices)


@irdl_op_definition
class ScatterElementsOp(SynapOp):
    """A copy of `data` where ``updates[i...]`` goes to position ``indices[i...]`` along
    `axis` (the other positions are i's), combined by `reduction`."""

    name = "synap.scatter_elements"

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_prop(0)
    reduction = enum_prop(ScatterReductionAttr, ScatterReduction.NONE)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        data, indices, updates = operand_shapes
        return [scatter_elements(data, indices, updates, props["axis"])]

    def verify_semantics(self) -> None:
        _integer_indices(self, self.indices)
        _same_element(self, self.updates, "updates")


@irdl_op_definition
class ScatterNDOp(SynapOp):
    """A copy of `data` where each slice of `updates` goes to the data slice its index
    tuple (the last dimension of `indices`) names, combined by `reduction`."""

    name = "synap.scatter_nd"

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    output = result_def(TensorType)
    reduction = enum_prop(ScatterReductionAttr, ScatterReduction.NONE)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [scatter_nd(*operand_shapes)]

    def verify_semantics(self) -> None:
        _integer_indices(self, self.indices)
        _same_element(self, self.updates, "updates")


@irdl_op_definition
class OneHotOp(SynapOp):
    """``values[1]`` where the position along the new dimension `axis` (of size `depth`)
    equals the index, ``values[0]`` elsewhere; `values` is ``[off, on]`` and gives the
    result's element type. Float indices are truncated toward zero; indices outside
    ``[-depth, depth)`` give an all-off row."""

    name = "synap.one_hot"

    indices = operand_def(TensorType)
    values = operand_def(TensorType)
    output = result_def(TensorType)
    depth = int_prop()
    axis = int_prop(-1)

    SAME_ELEMENT_KIND: ClassVar[bool] = False

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [one_hot(operand_shapes[0], props["depth"], props["axis"])]

    def verify_semantics(self) -> None:
        index = element_of(self.indices)
        if not (is_float(index) or isinstance(index, IntegerType)) or (
            isinstance(index, IntegerType) and index.width.data == 1
        ):
            self.fail(f"indices must be integers or floats, got {index}")
        if shape_of(self.values) != (2,):
            self.fail(f"values must be [off, on] of shape [2], got {shape_of(self.values)}")
        if element_of(self.output) != element_of(self.values):
            self.fail(
                f"result element type {element_of(self.output)} does not match the "
                f"values' {element_of(self.values)}"
            )


@irdl_op_definition
class TriluOp(SynapOp):
    """The upper (`upper`) or lower triangle of the matrices in the last two dimensions,
    zeros elsewhere: the upper one keeps ``col - row >= k``, the lower ``col - row <=
    k``."""

    name = "synap.trilu"

    input = operand_def(TensorType)
    output = result_def(TensorType)
    k = int_prop(0)
    upper = bool_prop(True)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [trilu(operand_shapes[0])]


@irdl_op_definition
class TopKOp(SynapOp):
    """The `k` largest (`largest`) or smallest values along `axis`, sorted (largest or
    smallest first), and their positions along it (i32 or i64); equal values keep their
    order (the lower position first)."""

    name = "synap.top_k"

    input = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    k = int_prop()
    axis = int_prop(-1)
    largest = bool_prop(True)

    SAME_ELEMENT_KIND: ClassVar[bool] = False

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return top_k(operand_shapes[0], props["k"], props["axis"])

    def verify_semantics(self) -> None:
        _same_element(self, self.values, "result #0")
        element = element_of(self.indices)
        if not (isinstance(element, IntegerType) and element.width.data in (32, 64)):
            self.fail(f"result #1 element type must be i32 or i64, got {element}")


@irdl_op_definition
class ReverseSequenceOp(SynapOp):
    """For each entry b along `batch_axis`, the first ``sequence_lens[b]`` elements
    along `time_axis` reversed and the rest copied."""

    name = "synap.reverse_sequence"

    input = operand_def(TensorType)
    sequence_lens = operand_def(TensorType)
    output = result_def(TensorType)
    batch_axis = int_prop()
    time_axis = int_prop()

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [
            reverse_sequence(
                operand_shapes[0],
                operand_shapes[1],
                props["batch_axis"],
                props["time_axis"],
            )
        ]

    def verify_semantics(self) -> None:
        _integer_indices(self, self.sequence_lens, "sequence lengths")


@irdl_op_definition
class EinsumOp(SynapOp):
    """Einstein summation over the operands with an explicit `equation` of letters
    (``"bij,bjk->bik"``): products of the operands' elements summed over the letters
    the output does not name; a letter repeated within one operand takes its diagonal."""

    name = "synap.einsum"

    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    equation = prop_def(StringAttr)

    SAME_KIND_OPERANDS: ClassVar[bool] = True

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        return [einsum(operand_shapes, props["equation"])]

    def verify_semantics(self) -> None:
        if not self.inputs:
            self.fail("needs at least one operand")


ATTRIBUTES = [ScatterReductionAttr]

OPS = [
    GatherElementsOp,
    GatherNDOp,
    ScatterElementsOp,
    ScatterNDOp,
    OneHotOp,
    TriluOp,
    TopKOp,
    ReverseSequenceOp,
    EinsumOp,
]
