"""`assign-delegates`: the metafile's per-layer ``delegate`` map, applied to the layers of
`@main` as ``synap.delegate`` attributes for ``partition``.

The map travels in the IR, as the module attribute ``synap.delegate_map`` (an array of
``[pattern, delegate]`` pairs in the metafile's order; `record_delegate_map` writes it),
so that ``synapc-opt`` replays the step from the IR alone. Patterns are the metafile's
(`passes.layer_patterns`: a name, ``'name...'``, ``'@id'``) plus ``'*'`` (every layer,
applied first) and an operator index written as digits (``'63'``, as the vendor's maps
allow); later entries win. ``default`` assigns the pass's `default` delegate. The map is
resolved after fusion and quantization, so a name reaches the layer that computes it,
fused or not. A pattern that matches nothing is an error naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass

from synapc.errors import SynapcError
from synapc.passes.apply_layout import main_function
from synapc.passes.layer_patterns import dataflow_graph, match_layers
from synapc.passes.partition import DELEGATE, DELEGATES

#: The module attribute holding the metafile's delegate map.
DELEGATE_MAP = "synap.delegate_map"
#: What errors call the map.
FIELD = "delegate"


def record_delegate_map(module: ModuleOp, entries: Sequence[tuple[str, str]]) -> None:
    """Keep the metafile's delegate map (``(pattern, delegate)`` pairs) in `module`."""
    module.attributes[DELEGATE_MAP] = ArrayAttr(
        [ArrayAttr([StringAttr(p), StringAttr(d)]) for p, d in entries]
    )


def delegate_map(module: ModuleOp) -> list[tuple[str, str]]:
    """The delegate map kept in `module` (empty when none)."""
    attr = module.attributes.get(DELEGATE_MAP)
    if not isinstance(attr, ArrayAttr):
        return []
    return [(pair.data[0].data, pair.data[1].data) for pair in attr.data]  # type: ignore[union-attr]


@dataclass(frozen=True)
class AssignDelegatesPass(ModulePass):
    """Set ``synap.delegate`` on the layers the module's delegate map names (see the
    module docstring)."""

    name = "assign-delegates"

    #: The delegate ``default`` in the map stands for (the target's first).
    default: str = "npu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        entries = delegate_map(op)
        ops = list(main_function(op).body.block.ops)
        graph = dataflow_graph(ops)
        layers = set(graph.nodes)
        ordered = [e for e in entries if e[0] == "*"] + [e for e in entries if e[0] != "*"]
        for pattern, delegate in ordered:
            chosen = self.default if delegate == "default" else delegate
            if chosen not in DELEGATES:
                raise SynapcError(
                    f"{FIELD}: '{pattern}': unknown delegate '{delegate}' (expected "
                    f"default, {', '.join(DELEGATES)})"
                )
            if pattern == "*":
                found = layers
            else:
                written = f"@{pattern}" if pattern.isdigit() else pattern
                found = match_layers(written, ops, graph, FIELD)
            for k in found:
                ops[k].attributes[DELEGATE] = StringAttr(chosen)
        if DELEGATE_MAP in op.attributes:
            del op.attributes[DELEGATE_MAP]
