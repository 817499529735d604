"""`place-layers{target=VS680}`: mark where each layer of `@main` can run on a target's
NPU, before ``partition`` splits the model by delegate.

Every layer gets ``synap.engine`` (``NN``, ``TP`` or ``PPU``) when the target's NPU runs
it, or ``synap.fallback`` with the reason when it cannot (`support.layer_support`): the
``partition`` pass then keeps it on the CPU whatever delegate it asks for. Layers that
already ask for the CPU or the GPU (``synap.delegate``) are left as they are: the NPU's
rules do not concern them. The pass lives with the targets because the rules do; the
IR it leaves carries everything ``partition`` needs.

With `auto` (the metafile's ``delegate: auto``) the latency model (`latency`) also
weighs an NPU layer caught between CPU layers against the cost of crossing to the NPU
and back, and moves it to the CPU when that is faster (`auto_placement`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from synapc.backends.targets.descriptions import Target, get_target
from synapc.backends.targets.latency import activation_bytes, host_time, layer_time
from synapc.backends.targets.support import layer_support
from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.apply_layout import main_function
from synapc.passes.layer_patterns import dataflow_graph
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


def auto_placement(func: FuncOp, target: Target) -> None:
    """Move to the CPU each NPU layer whose producers and consumers all run on the CPU
    when the latency model says the CPU computes it faster than the NPU plus the two
    crossings its staying costs (`CROSSING_S` each, and its input and output bytes
    over the bandwidth); repeated until nothing moves. The moved layers say why
    (``synap.auto``)."""
    ops = [o for o in func.body.block.ops if not isinstance(o, ConstantOp | ReturnOp)]
    graph = dataflow_graph(ops)
    assert target.ddr_bandwidth is not None
    bandwidth = target.ddr_bandwidth.value

    def crossing(layer: Operation) -> float:
        return 2 * CROSSING_S + activation_bytes(layer) / bandwidth

    changed = True
    while changed:
        changed = False
        for k, layer in enumerate(ops):
            if _on_cpu(layer) or ENGINE not in layer.attributes:
                continue
            neighbours = [*graph.predecessors(k), *graph.successors(k)]
            if not neighbours or not all(_on_cpu(ops[n]) for n in neighbours):
                continue
            npu = layer_time(layer, target, "npu")
            cpu = host_time(layer, target, "cpu")
            if cpu < npu + crossing(layer):
                layer.attributes[DELEGATE] = StringAttr("cpu")
                layer.attributes[AUTO] = StringAttr(
                    f"CPU {1e6 * cpu:.0f} us < NPU {1e6 * npu:.0f} us + crossing "
                    f"{1e6 * crossing(layer):.0f} us (estimated)"
                )
                changed = True
