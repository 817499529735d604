"""`partition{default=npu max-partitions=0 min-nodes-per-partition=1}`: split `@main`
into subgraphs by delegate and outline each into a function that `@main` calls.

Every layer of `@main` runs on the delegate its ``synap.delegate`` attribute names
(``npu``, ``gpu`` or ``cpu``; `default` for layers without one). A layer that carries a
``synap.fallback`` reason cannot run on an accelerator (its support rule said why), so
the knobs below never move it onto one. Layers are grouped into as few subgraphs as
possible with every subgraph convex: the graph of subgraphs stays acyclic (a subgraph
never depends on itself through another), so the subgraphs run one after another in a
topological order. Then, as TFLite's delegate options do:

- `min_nodes_per_partition`: an accelerator subgraph with fewer layers moves to the CPU;
- `max_partitions` (0: no limit): while there are more subgraphs, the smallest
  accelerator subgraph moves to the CPU (a CPU can run any layer).

A model that stays whole on the `default` delegate is left whole, `@main` carrying
``synap.delegate``. Otherwise each
subgraph becomes ``func.func private @subgraph<k>`` with the attribute
``synap.delegate``, taking the values it reads from outside (model inputs or other
subgraphs' results) and returning those read outside it; the constants it reads are
copied into it (weights belong to their subgraph). `@main` keeps its signature and calls
the subgraphs in order. The graph algorithms (topological orders, the acyclicity of the
quotient graph) are networkx's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from synapc.dialects.synap.base import is_quantized
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.apply_layout import main_function, return_of
from synapc.passes.layer_patterns import dataflow_graph

#: The delegates a layer may run on.
DELEGATES = ("npu", "gpu", "cpu")
#: The attribute naming a layer's delegate (on layers) or a subgraph's (on functions).
DELEGATE = "synap.delegate"
#: The attribute giving why a layer cannot run on an accelerator.
FALLBACK = "synap.fallback"


def _quantized(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and is_quantized(t.element_type)


def float_bits(func: FuncOp, npu_float_bits: int) -> int:
    """The width of the float type `func`'s float tensors compute in on its delegate
    (``synap.delegate``, the NPU when it names none): the CPU 32, the GPU 16, the NPU
    `npu_float_bits` (16 on VS680 / VS640) but 32 in a function with quantized tensors
    (its float tensors are the host's quantize / dequantize edges or CPU islands). The
    backend computes in it and the memory planner sizes tensors by it."""
    delegate = func.attributes.get(DELEGATE)
    name = delegate.data if isinstance(delegate, StringAttr) else "npu"
    if name == "cpu":
        return 32
    if name == "gpu":
        return 16
    block = func.body.block
    values = [*block.args, *(r for op in block.ops for r in op.results)]
    return 32 if any(_quantized(v) for v in values) else npu_float_bits


def delegate_of(op: Operation, default: str) -> str:
    """The delegate a layer asks for (`default` when it names none)."""
    attr = op.attributes.get(DELEGATE)
    return attr.data if isinstance(attr, StringAttr) else default


def convex_groups(
    graph: nx.DiGraph,
    delegates: Sequence[str],
    max_partitions: int = 0,
    min_nodes: int = 1,
) -> list[tuple[str, list[int]]]:
    """Nodes of the DAG `graph` grouped into subgraphs of one delegate each
    (`delegates[n]`), the quotient graph acyclic: ``(delegate, nodes)`` in a topological
    order of the groups, with the knobs of the module docstring. Knobs only ever move
    nodes to the CPU, which runs any layer."""
    delegates = list(delegates)
    while True:
        groups = _merged_groups(graph, delegates)
        small = [
            g for g in groups if delegates[g[0]] != "cpu" and len(g) < max(min_nodes, 1)
        ]
        accelerated = [g for g in groups if delegates[g[0]] != "cpu"]
        if not accelerated or (
            not small and (max_partitions <= 0 or len(groups) <= max_partitions)
        ):
            # (only CPU subgraphs left: as few as convexity allows)
            return [(delegates[g[0]], g) for g in groups]
        for n in min(small or accelerated, key=len):
            delegates[n] = "cpu"


def _merged_groups(graph: nx.DiGraph, delegates: Sequence[str]) -> list[list[int]]:
    """Convex grouping, linear in the graph for the usual models. In topological order
    a node joins the group of one of its same-delegate predecessors (the latest first)
    unless another group it reads from is reachable from that group (the groups would
    then depend on each other); else it starts a group. Then groups of one delegate
    merge wherever no path leads from one to the other through a third
    (`_merge_groups`). Returns the groups in a topological order of the group graph."""
    groups = nx.DiGraph()  # the quotient graph, built as nodes join groups
    group_of: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    for node in nx.lexicographical_topological_sort(graph):
        predecessors = list(graph.predecessors(node))
        sources = {group_of[p] for p in predecessors}
        same = sorted(
            {group_of[p] for p in predecessors if delegates[p] == delegates[node]},
            reverse=True,
        )
        chosen = next(
            (g for g in same if not any(nx.has_path(groups, g, h) for h in sources - {g})),
            None,
        )
        if chosen is None:
            chosen = len(members)
            groups.add_node(chosen, delegate=delegates[node])
            members[chosen] = []
        group_of[node] = chosen
        members[chosen].append(node)
        groups.add_edges_from((g, chosen) for g in sources if g != chosen)
    _merge_groups(groups, members)
    order = nx.lexicographical_topological_sort(groups, key=lambda g: min(members[g]))
    return [sorted(members[g]) for g in order]


def _merge_groups(groups: nx.DiGraph, members: dict[int, list[int]]) -> None:
    """Merge same-delegate groups of the quotient graph `groups` in place while the
    graph stays acyclic: b merges into an earlier a when no path leads from a to b but
    (possibly) the direct edge. Reachability (networkx's descendants) is recomputed
    after each merge."""
    while True:
        order = list(nx.lexicographical_topological_sort(groups))
        below = {g: nx.descendants(groups, g) for g in order}
        merged = None
        for i, a in enumerate(order):
            for b in order[i + 1 :]:
                if groups.nodes[a]["delegate"] != groups.nodes[b]["delegate"]:
                    continue
                # a path a -> s -> ... -> b (the direct edge a -> b is harmless)
                if not any(b in below[s] for s in groups.successors(a)):
                    merged = (a, b)
                    break
            if merged is not None:
                break
        if merged is None:
            return
        a, b = merged
        groups.add_edges_from((p, a) for p in groups.predecessors(b) if p != a)
        groups.add_edges_from((a, s) for s in groups.successors(b) if s != a)
        groups.remove_node(b)
        members[a] += members.pop(b)


@dataclass(frozen=True)
class PartitionPass(ModulePass):
    """Split `@main` into convex subgraphs by delegate and outline each (see the
    module docstring)."""

    name = "partition"

    #: The delegate of layers without a ``synap.delegate`` attribute.
    default: str = "npu"
    #: At most this many subgraphs (0: no limit); the smallest accelerator ones move to
    #: the CPU.
    max_partitions: int = 0
    #: Accelerator subgraphs with fewer layers move to the CPU.
    min_nodes_per_partition: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.default not in DELEGATES:
            raise ValueError(
                f"partition: default={self.default}: expected one of {', '.join(DELEGATES)}"
            )
        if self.max_partitions < 0 or self.min_nodes_per_partition < 0:
            raise ValueError("partition: max-partitions and min-nodes-per-partition >= 0")
        main = main_function(op)
        if DELEGATE in main.attributes or any(
            isinstance(o, CallOp) for o in main.body.block.ops
        ):
            raise ValueError("partition: @main is already partitioned")
        ret = return_of(main)
        layers = [
            o for o in main.body.block.ops if not isinstance(o, ConstantOp | ReturnOp)
        ]
        delegates = [delegate_of(o, self.default) for o in layers]
        for n, (layer, delegate) in enumerate(zip(layers, delegates, strict=True)):
            if delegate not in DELEGATES:
                raise ValueError(
                    f"partition: a layer asks for delegate '{delegate}' (expected one "
                    f"of {', '.join(DELEGATES)})"
                )
            if FALLBACK in layer.attributes:
                delegates[n] = "cpu"
        groups = convex_groups(
            dataflow_graph(layers),
            delegates,
            self.max_partitions,
            self.min_nodes_per_partition,
        )
        if len(groups) == 1 and groups[0][0] == self.default:
            # the whole model on one delegate: nothing to split, @main says where
            main.attributes[DELEGATE] = StringAttr(self.default)
            return
        for k, (delegate, group) in enumerate(groups):
            _outline(op, main, ret, [layers[n] for n in group], delegate, k)


def _outline(
    module: ModuleOp,
    main: FuncOp,
    ret: ReturnOp,
    ops: list[Operation],
    delegate: str,
    index: int,
) -> None:
    """Move `ops` (in order) into a new function ``@subgraph<index>`` on `delegate`,
    called from `@main` just before its return (so calls follow the groups' order)."""
    inside = set(ops)
    inputs: list[SSAValue] = []
    constants: list[ConstantOp] = []
    for o in ops:
        for value in o.operands:
            owner = value.owner
            if isinstance(owner, ConstantOp):
                if owner not in constants:
                    constants.append(owner)
            elif owner not in inside and value not in inputs:
                inputs.append(value)
    outputs = [
        r for o in ops for r in o.results if any(u.operation not in inside for u in r.uses)
    ]
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args, strict=True))
    for constant in constants:
        copy = constant.clone()
        block.add_op(copy)
        mapping[constant.results[0]] = copy.results[0]
    call = CallOp(f"subgraph{index}", inputs, [v.type for v in outputs])
    main.body.block.insert_op_before(call, ret)
    for o in ops:
        o.detach()
        block.add_op(o)
        for i, value in enumerate(o.operands):
            if value in mapping:
                o.operands[i] = mapping[value]
    block.add_op(ReturnOp(*outputs))
    for value, result in zip(outputs, call.results, strict=True):
        for use in list(value.uses):
            if use.operation.parent_block() is not block:
                use.operation.operands[use.index] = result
    for constant in constants:
        if not constant.results[0].uses:
            Rewriter.erase_op(constant)
    function = FuncOp(
        f"subgraph{index}",
        FunctionType.from_lists([v.type for v in inputs], [v.type for v in outputs]),
        Region(block),
        visibility="private",
    )
    function.attributes[DELEGATE] = StringAttr(delegate)
    module.body.block.add_op(function)
