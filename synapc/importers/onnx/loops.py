"""ONNX `Scan` and `Loop` on run-time data, unrolled into one copy of the body per step.

A loop on constants is folded by the reader (`folding`). Otherwise an NPU graph has no
control flow, but a static-shape graph knows how often a loop runs: a `Scan` runs once
per element of its scan axis, and a `Loop` whose trip count and condition are constants
(and whose body computes its condition from constants, or passes it through) runs a
number of times known at import. Each iteration's body is converted in place like an
`If` branch (`control_flow.convert_subgraph`: its own scope, reading the outer scope),
with the loop-carried values of the previous iteration bound to its inputs, so body
nodes on constants (the iteration number, a constant state) still fold. Scan inputs are
split along their scan axes once; scan outputs are stacked along theirs at the end.

Unrolling multiplies the graph, so the body nodes unrolled in one import are bounded by
`max_unrolled_nodes`. A trip count or condition known only at run time, a condition the
body computes from run-time data, a loop with no trip count whose body passes its
condition through (it would run forever), and sequence or optional values are refused
naming the node and the input. A loop that runs no iteration gives empty scan outputs,
shaped by the body's declared (static) output shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from weakref import WeakKeyDictionary

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.base import element_of, shape_of
from synapc.dialects.synap.data_movement import ConcatOp, SplitOp
from synapc.dtypes import element_type_for
from synapc.importers.onnx.checks import limit_of, shown
from synapc.importers.onnx.control_flow import check_nesting, convert_subgraph
from synapc.importers.onnx.reader import Importer, Node, Tensor, converts

#: A name no ONNX tensor is given while a tensor is read through `Importer.get`.
_HELD = "\x00synapc.unrolled"

#: Body nodes unrolled so far, per import (bounded by `max_unrolled_nodes`).
_UNROLLED: WeakKeyDictionary[Importer, int] = WeakKeyDictionary()


# -- budget ----------------------------------------------------------------------------
def _refuse_over_budget(imp: Importer, node: Node, total: int) -> None:
    """Refuse unrolling when `total` body nodes exceed `max_unrolled_nodes`."""
    limit = limit_of("max_unrolled_nodes")
    if total > limit:
        raise node.fail(
            f"unrolling it converts {total:,} body nodes in all, more than the limit of "
            f"{limit:,} (SYNAPC_MAX_UNROLLED_NODES raises it)"
        )


def _charge(imp: Importer, node: Node, body: onnx.GraphProto) -> None:
    """Count one more copy of `body` (at least one node: the split and stack around
    it) against the import's budget, refused beyond it."""
    total = _UNROLLED.get(imp, 0) + max(1, len(body.node))
    _refuse_over_budget(imp, node, total)
    _UNROLLED[imp] = total


# -- tensors ---------------------------------------------------------------------------
def _shape(imp: Importer, t: Tensor) -> tuple[int, ...]:
    """The logical shape of tensor `t` (`Importer.shape`; `t` need not be bound)."""
    imp.tensors[_HELD] = t
    try:
        return imp.shape(_HELD)
    finally:
        del imp.tensors[_HELD]


def _held_constant(t: Tensor) -> np.ndarray | None:
    """The host array of `t` when it is a plain (not quantized) constant."""
    return t.array if t.array is not None and t.qtype is None else None


def _logical_value(imp: Importer, t: Tensor) -> SSAValue:
    """Tensor `t` as an IR value of real values in the logical layout (what
    `Importer.get` makes of a bound tensor; `t` need not be bound)."""
    with imp.subgraph_scope():
        imp.tensors[_HELD] = t
        return imp.get(_HELD)


def _value_tensor(value: SSAValue) -> Tensor:
    """A logical-layout tensor holding `value`."""
    element = element_of(value)
    qtype = element if isinstance(element, UniformQuantizedType) else None
    return Tensor(value=value, qtype=qtype)


def _unstack(imp: Importer, node: Node, t: Tensor, axis: int) -> list[Tensor]:
    """The slices of `t` along `axis`, that axis removed (one split for a run-time
    value, views for a constant)."""
    array = _held_constant(t)
    if array is not None:
        return [Tensor(array=np.ascontiguousarray(a)) for a in np.moveaxis(array, axis, 0)]
    value = _logical_value(imp, t)
    shape = tuple(shape_of(value))
    inner = shape[:axis] + shape[axis + 1 :]
    if shape[axis] == 1:
        return [_value_tensor(imp.reshape(value, inner, **node.source))]
    piece = TensorType(element_of(value), (*shape[:axis], 1, *shape[axis + 1 :]))
    split = imp.emit(
        node, SplitOp, value, axis=axis, result_types=[piece] * shape[axis], output=None
    )
    return [_value_tensor(imp.reshape(r, inner, **node.source)) for r in split.results]


def _empty(
    node: Node, axis: int, what: str, declared: onnx.ValueInfoProto | None
) -> Tensor:
    """The output of a loop that runs no iteration: an empty constant, shaped by the
    body's `declared` output (its static shape with a zero-size axis `axis`);
    refused when the body does not declare a static shape and element type."""
    kind = declared.type.WhichOneof("value") if declared is not None else None
    tensor_type = declared.type.tensor_type if declared is not None else None
    dims = list(tensor_type.shape.dim) if tensor_type is not None else []
    static = (
        kind == "tensor_type"
        and tensor_type.HasField("shape")
        and all(d.HasField("dim_value") for d in dims)
        and tensor_type.elem_type != onnx.TensorProto.UNDEFINED
    )
    if not static:
        raise node.fail(
            f"{what}: it runs no iteration and the body does not declare that output's "
            "static shape and element type, so the shape of the empty result is unknown"
        )
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor_type.elem_type))
        element_type_for(dtype)
    except (KeyError, TypeError, ValueError):
        raise node.fail(
            f"{what}: element type {onnx.TensorProto.DataType.Name(tensor_type.elem_type)} "
            "is not supported"
        ) from None
    shape = [d.dim_value for d in dims]
    axis = node.axis(axis, len(shape) + 1, what)
    return Tensor(array=np.zeros((*shape[:axis], 0, *shape[axis:]), dtype))


def _stack(
    imp: Importer,
    node: Node,
    parts: Sequence[Tensor],
    axis: int,
    what: str,
    declared: onnx.ValueInfoProto | None = None,
) -> Tensor:
    """`parts` (one per iteration) stacked along a new axis `axis` of the result (an
    empty constant shaped by the body's `declared` output when there are none);
    refused when they differ in shape or element type."""
    if not parts:
        return _empty(node, axis, what, declared)
    arrays = [_held_constant(p) for p in parts]
    if all(a is not None for a in arrays):
        shapes = {a.shape for a in arrays if a is not None}
        if len(shapes) != 1:
            raise node.fail(f"{what} changes shape between iterations: {sorted(shapes)}")
        rank = len(shapes.pop())
        return Tensor(array=np.stack(arrays, axis=node.axis(axis, rank + 1, what)))
    values = [_logical_value(imp, p) for p in parts]
    first = values[0]
    shape = tuple(shape_of(first))
    for value in values[1:]:
        if tuple(shape_of(value)) != shape or element_of(value) != element_of(first):
            raise node.fail(
                f"{what} changes between iterations: {list(shape)} {element_of(first)} "
                f"and {list(shape_of(value))} {element_of(value)}"
            )
    axis = node.axis(axis, len(shape) + 1, what)
    grown = (*shape[:axis], 1, *shape[axis:])
    values = [imp.reshape(v, grown, **node.source) for v in values]
    if len(values) == 1:
        return _value_tensor(values[0])
    op = imp.emit(node, ConcatOp, values, axis=axis, output=None)
    return _value_tensor(op.results[0])


def _bind(imp: Importer, name: str, t: Tensor) -> None:
    """Output `name` of the loop is `t` (a new host constant counted as one)."""
    array = _held_constant(t)
    if array is not None:
        imp.bind_const(name, array)
    else:
        imp.tensors[name] = t


def _inputs(imp: Importer, node: Node, names: Sequence[str], what: str) -> list[Tensor]:
    """The tensors `names` (inputs of `node` called `what`), which must all be given."""
    if not all(names):
        raise node.fail(f"a {what} input is missing")
    return [imp.tensor(name) for name in names]


# -- the body --------------------------------------------------------------------------
def _body(imp: Importer, node: Node) -> onnx.GraphProto:
    """The `body` graph of `node`, whose inputs and outputs must be tensors."""
    check_nesting(imp, node)
    refusal = imp.fold_refusals.get(id(node.proto))
    if refusal is not None:
        # a loop on constants too large to fold: unrolling would fold the same work
        raise node.fail(refusal)
    body = node.attrs.get("body")
    if not isinstance(body, onnx.GraphProto):
        raise node.fail("attribute 'body' must be a graph")
    if body.sparse_initializer:
        raise node.fail("body: sparse initializers are not supported")
    for role, infos in (("input", body.input), ("output", body.output)):
        for info in infos:
            kind = info.type.WhichOneof("value")
            if kind not in (None, "tensor_type"):
                raise node.fail(
                    f"body {role} '{shown(info.name)}' is a {kind.removesuffix('_type')}: "
                    "sequence and optional types are not supported (synapc converts "
                    "tensors only)"
                )
    return body


def _iterate(
    imp: Importer,
    node: Node,
    body: onnx.GraphProto,
    step: int,
    values: Sequence[Tensor],
) -> list[Tensor]:
    """The body's outputs in iteration `step`, its inputs bound to `values`."""
    _charge(imp, node, body)
    bindings = {
        info.name: t for info, t in zip(body.input, values, strict=True) if info.name
    }
    return convert_subgraph(imp, node, f"body (iteration {step})", body, bindings)


# -- Scan ------------------------------------------------------------------------------
def _axes(node: Node, name: str, count: int) -> list[int]:
    """Attribute `name`: one integer per scan input or output (default all 0)."""
    values = node.ints_attr(name, [0] * count) or []
    if len(values) != count:
        raise node.fail(f"attribute '{name}' has {len(values)} entries for {count}")
    return values


def _directions(node: Node, name: str, count: int) -> list[bool]:
    """Attribute `name`: one direction flag (0 forward, 1 reverse) per scan tensor."""
    flags = _axes(node, name, count)
    if any(f not in (0, 1) for f in flags):
        raise node.fail(f"attribute '{name}' must hold 0 (forward) or 1 (reverse) flags")
    return [bool(f) for f in flags]


def _scan(
    imp: Importer,
    node: Node,
    body: onnx.GraphProto,
    states: list[Tensor],
    sequences: list[Tensor],
    in_axes: list[int],
    in_reverse: list[bool],
    out_axes: list[int],
    out_reverse: list[bool],
) -> list[Tensor]:
    """The final states and the stacked scan outputs of one scan over `sequences`
    (split along the normalized `in_axes`), the body unrolled per step."""
    n = len(states)
    lengths = {int(_shape(imp, t)[a]) for t, a in zip(sequences, in_axes, strict=True)}
    if len(lengths) != 1:
        raise node.fail(f"the scan inputs have different lengths {sorted(lengths)}")
    steps = lengths.pop()
    total = _UNROLLED.get(imp, 0) + steps * max(1, len(body.node))
    _refuse_over_budget(imp, node, total)
    slices = []
    for t, axis, reverse in zip(sequences, in_axes, in_reverse, strict=True):
        parts = _unstack(imp, node, t, axis)
        slices.append(parts[::-1] if reverse else parts)
    scans: list[list[Tensor]] = [[] for _ in range(len(body.output) - n)]
    declared = body.output[n:]
    for step in range(steps):
        outputs = _iterate(imp, node, body, step, [*states, *(s[step] for s in slices)])
        states = outputs[:n]
        for k, t in enumerate(outputs[n:]):
            scans[k].append(t)
    return [
        *states,
        *(
            _stack(imp, node, s[::-1] if reverse else s, axis, f"scan output {k}", info)
            for k, (s, axis, reverse, info) in enumerate(
                zip(scans, out_axes, out_reverse, declared, strict=True)
            )
        ),
    ]


@converts("Scan")
def convert_scan(imp: Importer, node: Node) -> None:
    """`Scan`: the body unrolled once per element of the scan axis (per batch entry as
    well before opset 9, whose inputs have a batch axis 0 and a scan axis 1)."""
    body = _body(imp, node)
    m = node.int_attr("num_scan_inputs", 0)
    legacy = node.opset < 9
    first = 1 if legacy else 0
    n = len(node.inputs) - first - m
    k = len(body.output) - n
    if m < 1 or n < 0 or len(body.input) != n + m or k < 0:
        raise node.fail(
            f"num_scan_inputs {m}, {len(node.inputs)} inputs and a body of "
            f"{len(body.input)} inputs and {len(body.output)} outputs do not fit"
        )
    if len(node.outputs) != n + k:
        raise node.fail(f"it has {len(node.outputs)} outputs for the body's {n + k}")
    states = _inputs(imp, node, node.inputs[first : first + n], "state")
    sequences = _inputs(imp, node, node.inputs[first + n :], "scan")
    if legacy:
        results = _legacy_scan(imp, node, body, states, sequences, k)
    else:
        ranks = [len(_shape(imp, t)) for t in sequences]
        in_axes = [
            node.axis(a, r, "scan_input_axes entry")
            for a, r in zip(_axes(node, "scan_input_axes", m), ranks, strict=True)
        ]
        results = _scan(
            imp,
            node,
            body,
            states,
            sequences,
            in_axes,
            _directions(node, "scan_input_directions", m),
            _axes(node, "scan_output_axes", k),
            _directions(node, "scan_output_directions", k),
        )
    for name, t in zip(node.outputs, results, strict=True):
        if name:
            _bind(imp, name, t)


def _legacy_scan(
    imp: Importer,
    node: Node,
    body: onnx.GraphProto,
    states: list[Tensor],
    sequences: list[Tensor],
    k: int,
) -> list[Tensor]:
    """Opset-8 `Scan`: every tensor has a batch axis 0, scanned one entry at a time
    (scan axis 1, `directions` per scan input); `sequence_lens` must be the full
    length for every entry."""
    shapes = [_shape(imp, t) for t in [*states, *sequences]]
    batches = {shape[0] for shape in shapes if shape}
    if any(not shape for shape in shapes[: len(states)]) or any(
        len(shape) < 2 for shape in shapes[len(states) :]
    ):
        raise node.fail("before opset 9, states need a batch axis and scan inputs two axes")
    if len(batches) != 1:
        raise node.fail(f"the inputs have different batch sizes {sorted(batches)}")
    length = shapes[len(states)][1]
    name = node.input(0)
    if name is not None:
        lens = imp.const(name)
        if lens is None or lens.dtype.kind not in "iu" or np.any(lens != length):
            raise node.fail(
                f"sequence_lens (input 0) '{shown(name)}' must be a constant equal to "
                f"the sequence length {length} for every batch entry (shorter sequences "
                "are not supported)"
            )
    count = batches.pop()
    nodes = count * length * max(1, len(body.node))
    _refuse_over_budget(imp, node, _UNROLLED.get(imp, 0) + nodes)
    m = len(sequences)
    reverse = _directions(node, "directions", m)
    per_state = [_unstack(imp, node, t, 0) for t in states]
    per_sequence = [_unstack(imp, node, t, 0) for t in sequences]
    runs = [
        _scan(
            imp,
            node,
            body,
            [s[b] for s in per_state],
            [s[b] for s in per_sequence],
            [0] * m,
            reverse,
            [0] * k,
            [False] * k,
        )
        for b in range(count)
    ]
    return [
        _stack(imp, node, [run[j] for run in runs], 0, f"output {j}")
        for j in range(len(states) + k)
    ]


# -- Loop ------------------------------------------------------------------------------
def _constant_scalar(imp: Importer, node: Node, i: int, what: str) -> np.generic | None:
    """Input `i` (`what`) of `node` as one constant value; None when absent; refused
    when it is computed at run time."""
    name = node.input(i)
    if name is None:
        return None
    array = imp.const(name)
    if array is None:
        raise node.fail(
            f"{what} (input {i}) '{shown(name)}' is a run-time value: unrolling the "
            "loop needs it at compile time (a graph with static shapes)"
        )
    array = np.asarray(array)
    if array.size != 1:
        raise node.fail(f"{what} (input {i}) must hold one value, it has {array.size}")
    return array.reshape(-1)[0]


def _condition_of(node: Node, t: Tensor, step: int) -> bool:
    """The body's condition output of iteration `step`, which must have folded."""
    array = _held_constant(t)
    if array is None:
        raise node.fail(
            f"body (iteration {step}): the condition output is computed from run-time "
            "data: an NPU graph cannot decide at run time how often a loop runs"
        )
    if array.size != 1:
        raise node.fail(
            f"body: the condition output must hold one value, it has {array.size}"
        )
    return bool(array.reshape(-1)[0])


def _passes_condition_through(body: onnx.GraphProto) -> bool:
    """Whether the body's condition output is its condition input (directly or through
    an Identity), so that only the trip count stops the loop."""
    cond_in, cond_out = body.input[1].name, body.output[0].name
    return cond_out == cond_in or any(
        n.op_type == "Identity" and list(n.input) == [cond_in] and cond_out in n.output
        for n in body.node
    )


@converts("Loop")
def convert_loop(imp: Importer, node: Node) -> None:
    """`Loop` with a constant trip count and condition: the body unrolled once per
    iteration, which stops when the trip count is reached or the (folded) condition
    output is false; scan outputs are stacked along a new axis 0."""
    body = _body(imp, node)
    n = len(node.inputs) - 2
    k = len(body.output) - 1 - n
    if n < 0 or len(body.input) != 2 + n or k < 0:
        raise node.fail(
            f"the body's {len(body.input)} inputs and {len(body.output)} outputs do not "
            f"fit {max(n, 0)} loop-carried values"
        )
    if len(node.outputs) != n + k:
        raise node.fail(f"it has {len(node.outputs)} outputs for the body's {n + k}")
    most = _constant_scalar(imp, node, 0, "the trip count M")
    if most is not None and np.asarray(most).dtype.kind not in "iu":
        raise node.fail(f"the trip count M (input 0) must be an integer, got {most!r}")
    given = _constant_scalar(imp, node, 1, "the condition")
    cond = True if given is None else bool(given)
    carried = _inputs(imp, node, node.inputs[2:], "loop-carried")
    if cond and most is None and _passes_condition_through(body):
        raise node.fail(
            "it runs forever: no trip count M (input 0) is given and the body passes "
            "the condition through unchanged, so nothing stops the loop"
        )
    if cond and most is not None and _passes_condition_through(body):
        nodes = max(int(most), 0) * max(1, len(body.node))
        _refuse_over_budget(imp, node, _UNROLLED.get(imp, 0) + nodes)
    scans: list[list[Tensor]] = [[] for _ in range(k)]
    step = 0
    while cond and (most is None or step < int(most)):
        inputs = [Tensor(array=np.array(step, np.int64)), Tensor(array=np.array(cond))]
        outputs = _iterate(imp, node, body, step, [*inputs, *carried])
        cond = _condition_of(node, outputs[0], step)
        carried = outputs[1 : 1 + n]
        for j, t in enumerate(outputs[1 + n :]):
            scans[j].append(t)
        step += 1
    for name, t in zip(node.outputs, carried, strict=False):
        if name:
            _bind(imp, name, t)
    for j, (name, parts) in enumerate(zip(node.outputs[n:], scans, strict=True)):
        if name:
            declared = body.output[1 + n + j]
            _bind(imp, name, _stack(imp, node, parts, 0, f"scan output {j}", declared))
