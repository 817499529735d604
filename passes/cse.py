"""`cse`: merge ops that compute the same value (same op, operands, properties, result
types and attributes other than the source-layer ones).

Synap ops are pure, so two identical computations become one even when they come from
different source layers (two branches transposing the same tensor alike, a layer
duplicated by the exporter): the first op survives, and the source layers of each
duplicate (`layer_name` and `fused_layers`) go into the survivor's `fused_layers`, so
`model_info.txt` still finds them. Other ops (outside the synap dialect) go through
xDSL's CSE, which compares every attribute.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import cse

from synapc.dialects.synap.base import SynapOp
from synapc.passes.common import PROVENANCE_ATTRIBUTES, absorb_into


def computation_key(op: Operation) -> Hashable:
    """What determines the values `op` computes: its name, operands, properties, result
    types and the attributes that are not source-layer names."""
    attributes = sorted(
        (k, v) for k, v in op.attributes.items() if k not in PROVENANCE_ATTRIBUTES
    )
    return (
        op.name,
        tuple(op.operands),
        tuple(sorted(op.properties.items())),
        tuple(attributes),
        tuple(op.result_types),
    )


def merge_duplicates(block: Block) -> int:
    """Replace every synap op of `block` that computes what an earlier one computes by
    that op (recording its source layers there); return how many were merged."""
    seen: dict[Hashable, Operation] = {}
    merged = 0
    for op in list(block.ops):
        if not isinstance(op, SynapOp) or op.regions:
            continue
        key = computation_key(op)
        survivor = seen.get(key)
        if survivor is None:
            seen[key] = op
            continue
        absorb_into(survivor, op)
        for old, new in zip(op.results, survivor.results, strict=True):
            old.replace_all_uses_with(new)
        block.erase_op(op)
        merged += 1
    return merged


@dataclass(frozen=True)
class CSEPass(ModulePass):
    """Common subexpression elimination over every region of the module."""

    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = [b for o in op.walk() for r in o.regions for b in r.blocks]
        for block in blocks:
            merge_duplicates(block)
        cse(op)
