"""`optimize`: the default optimization pipeline, run to a fixed point.

Turns an imported graph into the graph the NPU would run: constants folded, decomposed
activations recognised, batch-norm folded into convolutions, layout transposes sunk and
cancelled, pads folded into layers, activations and max pools fused into the layers that
produce them, then common subexpressions and dead ops removed. One rewrite can enable
another (a folded batch-norm exposes a ReLU to fuse, a sunk transpose meets its inverse),
so the sequence repeats until a round changes nothing; then the `fused_layers` of every
op are put in the source order of the layers (see `passes/common.py`). This is the one
place the pipeline is defined: `synapc.optimize` / `synapc.compile` run it, and
``synapc-opt -p optimize`` shows it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from synapc.passes.common import layer_order, sort_fused_layers

#: The passes of one round, in order.
ROUND: tuple[str, ...] = (
    "canonicalize",
    "fold-constants",
    "match-activations",
    "fold-affine-into-conv",
    "canonicalize-layout",
    "fold-pad",
    "fuse-activation",
    "fuse-conv-pool",
    "fuse-yuv-resize",
    "cse",
    "dce",
)


def fingerprint(module: ModuleOp) -> Hashable:
    """What a round can change, cheaply comparable: every op's name, operand sources,
    properties, attributes and result types, in order."""
    index: dict[object, int] = {}
    items = []
    for op in module.walk():
        for result in op.results:
            index[result] = len(index)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    index[arg] = len(index)
        items.append(
            (
                op.name,
                tuple(index.get(v, -1) for v in op.operands),
                tuple(sorted(op.properties.items())),
                tuple(sorted(op.attributes.items())),
                tuple(r.type for r in op.results),
            )
        )
    return tuple(items)


@dataclass(frozen=True)
class OptimizePass(ModulePass):
    """Run `ROUND` until the module stops changing (at most `max_rounds` times)."""

    name = "optimize"

    max_rounds: int = 8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from synapc.passes.registry import get_pass

        passes = [get_pass(name)() for name in ROUND]
        order = layer_order(op)
        before = fingerprint(op)
        for _ in range(self.max_rounds):
            for p in passes:
                p.apply(ctx, op)
            after = fingerprint(op)
            if after == before:
                break
            before = after
        sort_fused_layers(op, order)
