"""ConvInteger and MatMulInteger: integer products accumulated exactly in int32.

ONNX (Operators.md, *ConvInteger*, *MatMulInteger*, opset 10) computes
``sum((x - x_zero_point) * (w - w_zero_point))`` with int32 results; the products must
not overflow and only the 32-bit accumulation may. synapc subtracts the zero points in
int32 (a constant operand at import, a run-time one with synap.cast and synap.sub) and
runs the float converters (Conv, MatMul) on the int32 operands: the synap conv / matmul
kernels accumulate integer operands in their own type (`preferred_element_type=int32`,
`backends/jax/ops/conv.py`), which is exact up to the wrap-around the spec allows.
Convolution padding adds zeros of the zero-point-free domain, i.e. the input's zero
point, as the spec's reference computes it.

Zero points: ConvInteger's `x_zero_point` is one value, `w_zero_point` one value or one
per output channel (``[M]``); MatMulInteger's `a_zero_point` is one value, one per row
of A (``[M]``, or A's rank with a last dimension 1) and `b_zero_point` one value, one
per column of B (``[N]``, or B's rank with a second-to-last dimension 1).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from synapc.dialects.synap.elementwise import SubOp
from synapc.errors import SynapcError
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.quant_types import dtype_of
from synapc.importers.onnx.quantize_arith import stored_integers
from synapc.importers.onnx.reader import CONVERTERS, Importer, Node, converts

_I32 = np.dtype(np.int32)
_INPUT_TYPES = frozenset({"uint8", "int8"})


def _zero_point_shape(
    node: Node, k: int, shape: tuple[int, ...], zp_shape: tuple[int, ...], axis: int
) -> tuple[int, ...]:
    """The shape zero point input `k` broadcasts from against an operand of `shape`: one
    value, or one per index of `axis` (given as ``[n]`` or at the operand's rank)."""
    size = int(np.prod(zp_shape))
    rank = len(shape)
    per_axis = [1] * rank
    per_axis[axis] = shape[axis]
    if size == 1 and len(zp_shape) <= 1:
        return (1,) * rank
    if list(zp_shape) in ([shape[axis]], per_axis):
        return tuple(per_axis)
    if len(zp_shape) == rank and all(
        z in (s, 1) if i != axis % rank else z == s
        for i, (z, s) in enumerate(zip(zp_shape, shape, strict=True))
    ):
        return tuple(zp_shape)
    raise node.fail(
        f"zero point (input {k}) of shape {list(zp_shape)} does not fit the operand of "
        f"shape {list(shape)}: it must be one value or one per index of axis {axis}"
    )


def _centered(imp: Importer, node: Node, k: int, zp_k: int, axis: int) -> str:
    """The name of input `k` minus zero point input `zp_k` (absent: 0), in int32."""
    x = node.inputs[k]
    x_dtype = dtype_of(imp, x)
    if x_dtype.name not in _INPUT_TYPES:
        raise node.fail(f"input {k} ('{shown(x)}') must be uint8 or int8, got {x_dtype}")
    zp = node.input(zp_k)
    shape = imp.shape(x)
    name = f"{x}#centered{node.index}"
    zp_array = imp.const(zp) if zp is not None else None
    if zp is not None:
        if dtype_of(imp, zp) != x_dtype:
            raise node.fail(
                f"zero point (input {zp_k}) '{shown(zp)}' is {dtype_of(imp, zp)}, input "
                f"{k} {x_dtype}: they must have one type"
            )
        zp_shape = _zero_point_shape(node, zp_k, shape, imp.shape(zp), axis)
    x_array = imp.const(x)
    if x_array is not None and (zp is None or zp_array is not None):
        centered = x_array.astype(np.int32)
        if zp_array is not None:
            centered = centered - zp_array.astype(np.int32).reshape(zp_shape)
        imp.bind_const(name, centered)
        return name
    src = node.source
    value = stored_integers(imp, node, x, _I32)
    if zp is not None:
        zero = stored_integers(imp, node, zp, _I32)
        value = imp.append(SubOp.make(value, imp.reshape(zero, zp_shape), **src))
    imp.bind(name, value)
    return name


class _ConvertedAs(Node):
    """`original` recreated as another operator for its converter, whose refusals still
    name `original` (its op type, e.g. ConvInteger, not Conv)."""

    def __init__(self, imp: Importer, original: Node, proto: onnx.NodeProto) -> None:
        super().__init__(imp, original.index, proto)
        self.original = original

    def fail(self, message: str) -> SynapcError:
        """The error `original` raises for `message`."""
        return self.original.fail(message)


def _run_as(imp: Importer, node: Node, op_type: str, inputs: list[str]) -> None:
    """Convert `node` as the float operator `op_type` on the int32 `inputs`."""
    proto = helper.make_node(op_type, inputs, node.outputs[:1], name=node.name)
    proto.attribute.extend(node.proto.attribute)
    CONVERTERS[op_type](imp, _ConvertedAs(imp, node, proto))


def _check_ranks(node: Node, ranks: list[int], low: int, what: str) -> None:
    """Refuse operands whose rank is below `low` (before any axis is read)."""
    for k, rank in enumerate(ranks):
        if rank < low:
            raise node.fail(
                f"input {k} ('{shown(node.inputs[k])}') has rank {rank}: {what} needs "
                f"rank {low} or more"
            )


@converts("ConvInteger")
def conv_integer(imp: Importer, node: Node) -> None:
    """ConvInteger: Conv of the zero-point-free int32 input and filter (int32 result)."""
    ranks = [imp.rank(node.inputs[0]), imp.rank(node.inputs[1])]
    _check_ranks(node, ranks, 3, "ConvInteger (batch, channels, spatial dimensions)")
    if ranks[0] != ranks[1]:
        raise node.fail(
            f"input 1 ('{shown(node.inputs[1])}') has rank {ranks[1]}, input 0 "
            f"('{shown(node.inputs[0])}') rank {ranks[0]}: they must be equal"
        )
    x_zp = node.input(2)
    if x_zp is not None and int(np.prod(imp.shape(x_zp))) != 1:
        raise node.fail(
            f"x_zero_point '{shown(x_zp)}' must be one value (per-tensor), got shape "
            f"{list(imp.shape(x_zp))}"
        )
    x = _centered(imp, node, 0, 2, 1)
    w = _centered(imp, node, 1, 3, 0)
    _run_as(imp, node, "Conv", [x, w])


@converts("MatMulInteger")
def matmul_integer(imp: Importer, node: Node) -> None:
    """MatMulInteger: MatMul of the zero-point-free int32 operands (int32 result)."""
    a_rank, b_rank = imp.rank(node.inputs[0]), imp.rank(node.inputs[1])
    _check_ranks(node, [a_rank, b_rank], 1, "MatMulInteger")
    a = _centered(imp, node, 0, 2, -2 if a_rank > 1 else -1)
    b = _centered(imp, node, 1, 3, -1)
    _run_as(imp, node, "MatMul", [a, b])
