"""`place-layers{target=VS680}`: mark where each layer of `@main` can run on a target's
NPU, before ``partition`` splits the model by delegate.

Every layer gets ``synap.engine`` (``NN``, ``TP`` or ``PPU``) when the target's NPU runs
it, or ``synap.fallback`` with the reason when it cannot (`support.layer_support`): the
``partition`` pass then keeps it on the CPU whatever delegate it asks for. Layers that
already ask for the CPU or the GPU (``synap.delegate``) are left as they are: the NPU's
rules do not concern them. The pass lives with the targets because the rules do; the
IR it leaves carries everything ``partition`` needs.

With `auto` (the metafile's ``delegate: auto``) the latency model (`latency`) also
weighs running NPU layers on the CPU against the crossings between subgraphs they
cause or save, and moves the set of layers that makes the total least
(`auto_placement`).
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from synapc.backends.targets.descriptions import Target, get_target
from synapc.backends.targets.latency import host_time, layer_time
from synapc.backends.targets.support import layer_support
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.apply_layout import main_function
from synapc.passes.layer_patterns import dataflow_graph
from synapc.passes.memory.liveness import tensor_bytes
from synapc.passes.partition import DELEGATE, FALLBACK

#: The attribute naming the NPU engine that runs a layer.
ENGINE = "synap.engine"
#: The attribute saying why `auto` placed a layer on the CPU.
AUTO = "synap.auto"


@dataclass(frozen=True)
class PlaceLayersPass(ModulePass):
    """Mark each layer of `@main` with its NPU engine or its fallback reason (see the
    module docstring)."""

    name = "place-layers"

    #: The target whose NPU rules apply (VS680, VS640, GENERIC or an alias).
    target: str = "VS680"
    #: Also move NPU layers to the CPU where the latency model finds that cheaper than
    #: crossing between the subgraphs (`auto_placement`).
    auto: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = get_target(self.target)
        for layer in main_function(op).body.block.ops:
            if isinstance(layer, ConstantOp | ReturnOp):
                continue
            asked = layer.attributes.get(DELEGATE)
            if isinstance(asked, StringAttr) and asked.data in ("cpu", "gpu"):
                continue
            support = layer_support(layer, target)
            if support.engine is None:
                layer.attributes[FALLBACK] = StringAttr(support.reason)
            else:
                layer.attributes[ENGINE] = StringAttr(support.engine)
        if self.auto and target.has_npu:
            auto_placement(main_function(op), target)


#: What a tensor costs to cross between an NPU and a CPU subgraph besides its bytes:
#: the hand-over of one subgraph's result to another (ASSUMED: the vendor publishes no
#: figure; a runtime's dispatch and cache maintenance are tens of microseconds).
CROSSING_S = 5e-5


def _on_cpu(layer: Operation) -> bool:
    asked = layer.attributes.get(DELEGATE)
    return FALLBACK in layer.attributes or (
        isinstance(asked, StringAttr) and asked.data == "cpu"
    )


def cheapest_placement(
    graph: nx.DiGraph,
    npu_s: dict[int, float],
    cpu_s: dict[int, float],
    crossing_s: dict[tuple[int, int], float],
    on_cpu: set[int],
) -> set[int]:
    """The layers of `graph` to run on the CPU so that the sum of every layer's time on
    its side (`npu_s` / `cpu_s`) and of every edge's `crossing_s` whose ends are on
    different sides is least; layers in `on_cpu` stay on the CPU. Nodes without times
    (neither side's) take no part. Exact: two sides make it a minimum s-t cut."""
    cut = nx.DiGraph()

    # networkx's flows are exact on integers only: capacities in picoseconds
    def ps(seconds: float) -> int:
        return round(seconds * 1e12)

    pinned = ps(sum(npu_s.values()) + sum(cpu_s.values()) + sum(crossing_s.values())) + 1
    for node in graph.nodes:
        if node in on_cpu:
            cut.add_edge(node, "cpu", capacity=pinned)
        elif node in npu_s:
            # cut when the layer is on the NPU side: it pays its NPU time, and the other
            # way round
            cut.add_edge(node, "cpu", capacity=ps(npu_s[node]))
            cut.add_edge("npu", node, capacity=ps(cpu_s[node]))
    for (u, v), cost in crossing_s.items():
        if u in cut and v in cut:
            cut.add_edge(u, v, capacity=ps(cost))
            cut.add_edge(v, u, capacity=ps(cost))
    if "npu" not in cut or "cpu" not in cut:
        return set(on_cpu)
    _, (_, cpu_side) = nx.minimum_cut(cut, "npu", "cpu")
    return {n for n in cpu_side if n != "cpu"}


def auto_placement(func: FuncOp, target: Target) -> None:
    """Move to the CPU the NPU layers that the latency model finds cheaper there once
    the crossings between subgraphs are counted (`CROSSING_S` and the tensor's bytes
    over the bandwidth per producer-consumer pair on different delegates): the least
    total over every NPU / CPU split (`cheapest_placement`). The moved layers say why
    (``synap.auto``). The GPU is left to the metafile's map: its published times are
    slower than the CPU's on every buildable row (MobileNetV2 float on VS680: 35.4 ms
    against 20.8 ms)."""
    ops = [o for o in func.body.block.ops if not isinstance(o, ConstantOp | ReturnOp)]
    graph = dataflow_graph(ops)
    assert target.ddr_bandwidth is not None
    bandwidth = target.ddr_bandwidth.value
    on_cpu = {k for k, layer in enumerate(ops) if _on_cpu(layer)}
    movable = [k for k in graph.nodes if k not in on_cpu and ENGINE in ops[k].attributes]
    npu_s = {k: layer_time(ops[k], target, "npu") for k in movable}
    cpu_s = {k: host_time(ops[k], target, "cpu") for k in movable}
    crossing_s = {
        (u, v): CROSSING_S + _bytes_between(ops[u], ops[v]) / bandwidth
        for u, v in graph.edges
    }
    for k in sorted(cheapest_placement(graph, npu_s, cpu_s, crossing_s, on_cpu) - on_cpu):
        ops[k].attributes[DELEGATE] = StringAttr("cpu")
        ops[k].attributes[AUTO] = StringAttr(
            f"CPU {1e6 * cpu_s[k]:.0f} us against NPU {1e6 * npu_s[k]:.0f} us: with "
            "the crossings its region saves, cheaper on the CPU (estimated)"
        )


def _bytes_between(producer: Operation, consumer: Operation) -> int:
    """Bytes of `producer`'s results that `consumer` reads (as the NPU holds them)."""
    read = {id(v) for v in consumer.operands}
    return sum(tensor_bytes(r, 2) for r in producer.results if id(r) in read)
