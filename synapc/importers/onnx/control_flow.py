"""ONNX `If` whose condition is known only at run time, as both branches and selects.

An `If` on a constant condition (and constant outer-scope tensors) is folded by the
reader (`folding`). Otherwise an NPU graph has no control flow: both branches are
converted in place, each branch's nodes like graph nodes reading the outer scope's
tensors, and every output is `synap.select(condition, then, else)` with the rank-0
boolean condition broadcast. A branch is a subgraph: its names are forgotten after it
(`Importer.subgraph_scope`), and branches nest at most `max_graph_nesting` deep. Each
pair of outputs must have one static shape and one element type, since the graph cannot
choose a shape at run time. A constant condition whose branches read run-time tensors
converts the chosen branch only. `convert_subgraph` converts any subgraph in place: the
`Loop` / `Scan` bodies that `loops` unrolls too.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
from xdsl.ir import SSAValue

from synapc.dialects.synap.base import element_of, shape_of
from synapc.dialects.synap.logical import SelectOp, is_bool
from synapc.errors import SynapcError
from synapc.importers.onnx import layout
from synapc.importers.onnx.checks import limit_of, one_line, shown, tensor_to_array
from synapc.importers.onnx.layout import Perm
from synapc.importers.onnx.reader import Importer, Node, Tensor, converts

_BRANCHES = ("then_branch", "else_branch")


def _branch_graph(node: Node, key: str) -> onnx.GraphProto:
    """Attribute `key` of `node`, which must be a graph without inputs."""
    graph = node.attrs.get(key)
    if not isinstance(graph, onnx.GraphProto):
        raise node.fail(f"attribute '{key}' must be a graph")
    if graph.input:
        raise node.fail(f"{key}: a branch takes no inputs, it has {len(graph.input)}")
    if graph.sparse_initializer:
        raise node.fail(f"{key}: sparse initializers are not supported")
    if len(graph.output) != len(node.outputs):
        raise node.fail(
            f"{key} gives {len(graph.output)} outputs for the node's {len(node.outputs)}"
        )
    return graph


def check_nesting(imp: Importer, node: Node) -> None:
    """Refuse a subgraph (If branch, Loop / Scan body) of `node` nested deeper than
    `max_graph_nesting`."""
    limit = limit_of("max_graph_nesting")
    if imp.nesting >= limit:
        raise node.fail(
            f"subgraphs are nested more than {limit} levels deep "
            "(SYNAPC_MAX_GRAPH_NESTING raises it)"
        )


def convert_subgraph(
    imp: Importer,
    node: Node,
    key: str,
    graph: onnx.GraphProto,
    bindings: Mapping[str, Tensor],
    as_values: bool = False,
) -> list[Tensor]:
    """The outputs of subgraph `graph` of `node` (`key` names it in errors), its inputs
    bound to `bindings` and its nodes converted in place, reading the outer scope; its
    names are forgotten after it. Errors are `node`'s, prefixed with `key`. The outputs
    are as they are bound, or (`as_values`) IR values of real (not quantized-view)
    values in their layout."""
    outputs: list[Tensor] = []
    try:
        with imp.subgraph_scope():
            for name, tensor in bindings.items():
                imp.tensors[name] = tensor
            for init in graph.initializer:
                what = f"{imp.path}: {key}: initializer '{shown(init.name)}'"
                imp.bind_const(init.name, tensor_to_array(init, what))
            for inner in graph.node:
                imp.convert_inline(Node(imp, node.index, inner))
            for info in graph.output:
                t = imp.tensor(info.name)
                if as_values:
                    perm = t.perm if t.array is None else None
                    t = Tensor(value=imp.get(info.name, perm), perm=perm)
                outputs.append(t)
    except SynapcError as error:
        text = one_line(str(error))
        prefix = f"{imp.path}: "
        if text.startswith(prefix):
            text = text[len(prefix) :]
        suffix = f" (graph node {node.index})"  # the inner nodes' index is the node's
        if text.endswith(suffix):
            text = text[: -len(suffix)]
        raise node.fail(f"{key}: {text}") from error
    return outputs


def _convert_branch(imp: Importer, node: Node, key: str, as_values: bool) -> list[Tensor]:
    """The outputs of branch `key` of `node`, converted in place (`convert_subgraph`)."""
    return convert_subgraph(imp, node, key, _branch_graph(node, key), {}, as_values)


def _condition(imp: Importer, node: Node) -> SSAValue | bool:
    """The condition as a rank-0 boolean IR value, or its value when it is constant."""
    name = node.input(0)
    if name is None:
        raise node.fail("the condition (input 0) is missing")
    shape = imp.shape(name)
    if int(np.prod(shape)) != 1:
        raise node.fail(f"the condition must hold one value, it has shape {list(shape)}")
    element = imp.element_type(name)
    if not is_bool(element):
        raise node.fail(f"the condition must be boolean, got {element}")
    array = imp.const(name)
    if array is not None:
        return bool(np.asarray(array).reshape(-1)[0])
    return imp.reshape(imp.get(name), ())


def _operands(
    imp: Importer, node: Node, k: int, then: Tensor, other: Tensor
) -> tuple[SSAValue, SSAValue, Perm]:
    """The two values of output `k` in one layout; refused unless they have one shape
    and one element type."""
    perm = then.perm if then.perm == other.perm else None
    values = []
    for t in (then, other):
        value = t.value
        if t.perm != perm:
            value = imp.transpose(value, layout.between(t.perm, None, len(shape_of(value))))
        values.append(value)
    first, second = values
    name = shown(node.outputs[k])
    if shape_of(first) != shape_of(second):
        shapes = [list(layout.logical_shape(shape_of(v), perm)) for v in values]
        raise node.fail(
            f"output '{name}': the branches give {shapes[0]} and {shapes[1]}: an NPU "
            "graph cannot choose a shape at run time"
        )
    if element_of(first) != element_of(second):
        raise node.fail(
            f"output '{name}': the branches give element types {element_of(first)} and "
            f"{element_of(second)}"
        )
    return first, second, perm


@converts("If")
def convert_if(imp: Importer, node: Node) -> None:
    """`If`: both branches converted and each output selected by the condition at run
    time (the chosen branch only, when the condition is a constant)."""
    check_nesting(imp, node)
    condition = _condition(imp, node)
    if isinstance(condition, bool):
        key = _BRANCHES[0] if condition else _BRANCHES[1]
        try:
            outputs = _convert_branch(imp, node, key, False)
        except SynapcError:
            # an If on constants that was too large to fold, and cannot run on the
            # target either: why it was not folded says more
            refusal = imp.fold_refusals.get(id(node.proto))
            if refusal is None:
                raise
            raise node.fail(refusal) from None
        for name, t in zip(node.outputs, outputs, strict=True):
            if name:
                imp.tensors[name] = t
        return
    then_outputs = _convert_branch(imp, node, _BRANCHES[0], True)
    else_outputs = _convert_branch(imp, node, _BRANCHES[1], True)
    for k, (then, other) in enumerate(zip(then_outputs, else_outputs, strict=True)):
        if not node.outputs[k]:
            continue
        first, second, perm = _operands(imp, node, k, then, other)
        if first is second:
            imp.bind(node.outputs[k], first, perm)
            continue
        op = imp.emit(
            node,
            SelectOp,
            condition,
            first,
            second,
            perm=perm,
            element_type=element_of(first),
            output=None,
        )
        imp.bind(node.outputs[k], op.results[0], perm)
