"""Lifetimes of a function's tensors on the schedule the backend runs, and the tensors
that may share their bytes.

The schedule is the function's layers in block order (the backend runs them so; fused
layers are one op by then); step k is the k-th layer. A tensor is an intermediate when
a layer computes it and the function does not return it: arguments, results and
weights are placed by rule (`Placement` of `passes/plan_memory.py`), not in the arena.
A tensor lives from its producer's step to its last reader's (an op inside a nested
region reads for the layer that holds it).

Aliases (a tensor kept inside another's bytes, `Liveness.alias`):

* the reshape family: a reshape's result is its input's bytes in the same order (of
  one element type and quantization);
* in-place elementwise: a unary or binary elementwise layer writes over an input of
  its result's size that it is the last reader of;
* concatenation in place: a concatenation along its outermost non-unit axis is its
  operands one after another, so each operand's producer writes into the
  concatenation's bytes at the operand's offset (when every operand is an intermediate
  of its own, not already placed inside another tensor, of the result's element type
  and quantization: a quantized concatenation that rescales computes).

`min_peak_schedule` chooses, among valid topological orders of the layers (networkx),
one whose peak of live bytes is least.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import networkx as nx
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import activation as act
from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap.base import element_of, is_float
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.common import op_label
from synapc.passes.layer_patterns import dataflow_graph
from synapc.passes.memory.offsets import Buffer, align, lower_bound

#: Orders of a function with at most this many layers are all tried by
#: `min_peak_schedule` (up to `EXHAUSTIVE_ORDERS` of them); larger ones get heuristics.
EXHAUSTIVE_LAYERS = 12
EXHAUSTIVE_ORDERS = 5000


def tensor_bytes(value: SSAValue, float_bytes: int) -> int:
    """Bytes of `value` as the backend holds it: quantized values in their storage
    type, float ones in `float_bytes`, integers in their device width (64-bit ones
    as 32-bit), booleans one byte each."""
    t = value.type
    if not isinstance(t, TensorType):
        return 0
    element = t.element_type
    if isinstance(element, UniformQuantizedType):
        width = element.bitwidth
    elif is_float(element):
        width = 8 * float_bytes
    elif isinstance(element, IntegerType):
        width = min(element.width.data, 32)
    else:
        width = 32
    return math.prod(t.get_shape()) * max(-(-width // 8), 1)


def layers_of(func: FuncOp) -> list[Operation]:
    """The layers of `func` in block order: what the backend runs, one step each."""
    return [o for o in func.body.block.ops if not isinstance(o, ConstantOp | ReturnOp)]


def value_key(value: SSAValue) -> str:
    """A tensor's name in a plan: ``op{p}.{j}`` for result j of the op at position p of
    its block (as calibration names tensors), ``arg{i}`` for argument i."""
    owner = value.owner
    if isinstance(owner, Operation):
        block = owner.parent_block()
        assert block is not None
        return f"op{block.get_operation_index(owner)}.{value.index}"  # type: ignore[attr-defined]
    return f"arg{value.index}"  # type: ignore[attr-defined]


def layer_label(op: Operation) -> str:
    """How messages name a layer (`common.op_label`) at its place in its block."""
    block = op.parent_block()
    return op_label(op, block.get_operation_index(op) if block is not None else -1)


@dataclass(frozen=True)
class Tensor:
    """One intermediate: `size` bytes written at step `first`, read last at `last`."""

    key: str
    value: SSAValue
    size: int
    first: int
    last: int


@dataclass
class Liveness:
    """A function's schedule, its intermediates and their aliases (`alias`: key of a
    tensor -> key of the tensor holding its bytes and the byte offset inside it)."""

    schedule: list[Operation]
    tensors: dict[str, Tensor]
    alias: dict[str, tuple[str, int]] = field(default_factory=dict)

    def root(self, key: str) -> tuple[str, int]:
        """The tensor whose buffer holds `key`'s bytes, and the offset inside it."""
        offset = 0
        while key in self.alias:
            key, delta = self.alias[key]
            offset += delta
        return key, offset

    def buffers(self, alignment: int = 1) -> list[Buffer]:
        """One buffer per tensor holding others (or itself): its size aligned, its
        lifetime the union of every tensor inside it."""
        spans: dict[str, tuple[int, int]] = {}
        for key, tensor in self.tensors.items():
            root, _ = self.root(key)
            first, last = spans.get(root, (tensor.first, tensor.last))
            spans[root] = (min(first, tensor.first), max(last, tensor.last))
        return [
            Buffer(root, align(self.tensors[root].size, alignment), first, last)
            for root, (first, last) in spans.items()
        ]


def _readers(value: SSAValue, step_of: dict[Operation, int]) -> list[int]:
    """Steps of the layers reading `value` (an op in a nested region reads for the
    layer holding it); the return is no layer."""
    steps = []
    for use in value.uses:
        op: Operation | None = use.operation
        while op is not None and op not in step_of:
            op = op.parent_op()
        if op is not None:
            steps.append(step_of[op])
    return steps


def liveness(func: FuncOp, float_bytes: int, alignment: int = 1) -> Liveness:
    """Lifetimes and aliases of `func`'s intermediates on its block order (a
    concatenation in place keeps each operand at a multiple of `alignment`)."""
    schedule = layers_of(func)
    step_of = {op: k for k, op in enumerate(schedule)}
    returned = {id(v) for op in func.body.block.ops if isinstance(op, ReturnOp)
                for v in op.operands}  # fmt: skip
    tensors: dict[str, Tensor] = {}
    for k, op in enumerate(schedule):
        for value in op.results:
            if id(value) in returned or not isinstance(value.type, TensorType):
                continue
            reads = _readers(value, step_of)
            key = value_key(value)
            tensors[key] = Tensor(
                key, value, tensor_bytes(value, float_bytes), k, max(reads, default=k)
            )
    result = Liveness(schedule, tensors)
    _find_aliases(result, alignment)
    return result


_ELEMENTWISE = (act._Unary, ew._Binary)


def _find_aliases(live: Liveness, alignment: int) -> None:
    """Fill `live.alias` by the rules of the module docstring, in schedule order."""
    tensors = live.tensors
    held = set(tensors)  # buffers that may still be taken into a concatenation
    last = {k: t.last for k, t in tensors.items()}  # per buffer: its last reader's step

    def key_of(value: SSAValue) -> str | None:
        key = value_key(value) if isinstance(value.owner, Operation) else None
        return key if key in tensors else None

    def join(key: str, into: str, offset: int) -> None:
        root = live.root(into)[0]
        live.alias[key] = (into, offset)
        last[root] = max(last[root], last.pop(key))

    for step, op in enumerate(live.schedule):
        out = key_of(op.results[0]) if len(op.results) == 1 else None
        if out is None:
            continue
        if isinstance(op, dm.ReshapeOp):
            source = key_of(op.operands[0])
            if source is not None and _same_element(op.operands[0], op.results[0]):
                join(out, source, 0)
        elif isinstance(op, _ELEMENTWISE):
            for operand in op.operands:
                source = key_of(operand)
                if (
                    source is not None
                    and tensors[source].size == tensors[out].size
                    and last[live.root(source)[0]] == step
                ):
                    join(out, source, 0)
                    break
        elif isinstance(op, dm.ConcatOp) and _concat_in_place(
            live, op, out, held, alignment
        ):
            offset = 0
            for operand in op.operands:
                source = key_of(operand)
                assert source is not None
                root, inner = live.root(source)
                join(root, out, offset - inner)
                held.discard(root)
                offset += tensors[source].size


def _same_element(a: SSAValue, b: SSAValue) -> bool:
    """Whether two tensors hold their elements alike (type and quantization): then
    one's bytes are the other's, moved."""
    return element_of(a) == element_of(b)


def _concat_in_place(
    live: Liveness, op: dm.ConcatOp, out: str, held: set[str], alignment: int
) -> bool:
    """Whether every operand of `op` can be written inside its result: the axis is the
    outermost non-unit one, the operands are distinct intermediates each filling a
    buffer of its own that no other concatenation holds, of the result's element type
    and quantization (no rescaling), and each but the last a multiple of `alignment`
    long (so that every operand starts aligned)."""
    shape = op.output.type.get_shape()  # type: ignore[attr-defined]
    axis = op.axis.value.data  # type: ignore[union-attr]
    axis %= len(shape)
    if math.prod(shape[:axis]) != 1:
        return False
    keys = []
    for operand in op.operands:
        if not isinstance(operand.owner, Operation):
            return False
        key = value_key(operand)
        if key not in live.tensors:
            return False
        keys.append(key)
    if len(set(keys)) != len(keys):
        return False
    # a quantized concatenation with other scales than its operands' rescales them
    if not all(_same_element(v, op.results[0]) for v in op.operands):
        return False
    if any(live.tensors[k].size % alignment for k in keys[:-1]):
        return False
    roots = [live.root(k) for k in keys]
    if len({r for r, _ in roots}) != len(roots):
        return False
    return all(
        r in held and r != out and live.tensors[r].size == live.tensors[k].size
        for (r, _), k in zip(roots, keys, strict=True)
    )


def min_peak_schedule(func: FuncOp, float_bytes: int) -> list[Operation]:
    """A valid order of `func`'s layers whose peak of live bytes (aliases aside: they
    depend on the order) is least among those tried: every topological order of the
    dataflow graph (networkx) for small functions, else the block order and networkx's
    lexicographical topological order preferring the layers that write the fewest
    bytes. The block order wins ties."""
    layers = layers_of(func)
    graph = dataflow_graph(layers)
    live = liveness(func, float_bytes)
    position = {op: k for k, op in enumerate(layers)}
    tensors = [
        (key, t.size, position[t.value.owner], _readers(t.value, position))  # type: ignore[index]
        for key, t in live.tensors.items()
    ]

    def peak(order: Sequence[int]) -> int:
        step = {k: i for i, k in enumerate(order)}
        return lower_bound(
            [
                Buffer(key, size, step[p], max([step[r] for r in readers] + [step[p]]))
                for key, size, p, readers in tensors
            ]
        )

    written = {
        k: sum(tensor_bytes(v, float_bytes) for v in op.results)
        for k, op in enumerate(layers)
    }
    if len(layers) <= EXHAUSTIVE_LAYERS:
        orders: Iterable[list[int]] = itertools.islice(
            nx.all_topological_sorts(graph), EXHAUSTIVE_ORDERS
        )
    else:
        orders = [
            list(nx.lexicographical_topological_sort(graph, key=lambda k: written[k]))
        ]
    best = list(range(len(layers)))
    best_peak = peak(best)
    for order in orders:
        candidate = peak(order)
        if candidate < best_peak:
            best, best_peak = list(order), candidate
    return [layers[k] for k in best]
