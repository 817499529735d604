"""`plan-memory`: give every intermediate tensor of every function a place in memory.

Per function (each subgraph of a partitioned model has its own arena; ``@main`` of one
holds the tensors passed between them): the tensors' lifetimes on the schedule and the
tensors that may share bytes (`memory.liveness`: reshapes, in-place elementwise layers,
concatenations written in place), one buffer per group; the buffers the on-chip SRAM
holds (`memory.sram`, when ``sram-bytes`` is given); offsets in the DDR arena for the
others (`memory.offsets`: greedy by size, then a climb while above the lower bound). The
plan is written in the IR (`memory.placement`) and checked (`memory.verify`) every time;
arguments, results and weights are placed by rule, in buffers of their own, and counted
in the plan's figures.

Options: ``alignment`` (bytes; the target's, 64 on VS680 / VS640), ``sram-bytes`` (0:
everything in DDR), ``npu-float-bytes`` (what the NPU computes float tensors in: 2 on
VS680 / VS640, 4 on GENERIC; the CPU's are 4, the GPU's 2), ``reorder`` (run the layers
in the valid order of least peak, `memory.liveness.min_peak_schedule`) and
``print-plan`` (the plan as a table on standard error, for ``synapc-opt``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from synapc.dialects.synap.constant import ConstantOp
from synapc.passes.apply_layout import return_of
from synapc.passes.memory.liveness import (
    Liveness,
    layer_label,
    liveness,
    min_peak_schedule,
    tensor_bytes,
    value_key,
)
from synapc.passes.memory.offsets import (
    arena_size,
    lower_bound,
    peak_step,
    plan_offsets,
)
from synapc.passes.memory.placement import set_placement, set_plan
from synapc.passes.memory.sram import choose_sram
from synapc.passes.memory.verify import verify_plan
from synapc.passes.partition import float_bits


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Plan every function's memory (see the module docstring)."""

    name = "plan-memory"

    alignment: int = 64
    sram_bytes: int = 0
    npu_float_bytes: int = 2
    reorder: bool = False
    print_plan: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.alignment < 1 or self.sram_bytes < 0 or self.npu_float_bytes not in (2, 4):
            raise ValueError(
                "plan-memory: alignment must be >= 1, sram-bytes >= 0 and "
                "npu-float-bytes 2 or 4"
            )
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            if func.body.blocks:
                self.plan_function(func)

    def plan_function(self, func: FuncOp) -> None:
        """Plan, write and check `func`'s memory."""
        float_bytes = float_bits(func, 8 * self.npu_float_bytes) // 8
        if self.reorder:
            _reorder(func, min_peak_schedule(func, float_bytes))
        live = liveness(func, float_bytes, self.alignment)
        buffers = live.buffers(self.alignment)
        sram = choose_sram(buffers, _accesses(live), self.sram_bytes, self.alignment)
        ddr = [b for b in buffers if b.name not in sram]
        offsets = plan_offsets(ddr, self.alignment)
        _write_placement(live, {**{k: ("ddr", o) for k, o in offsets.items()},
                                **{k: ("sram", o) for k, o in sram.items()}})  # fmt: skip
        in_sram = [b for b in buffers if b.name in sram]
        figures = {
            "arena": arena_size(ddr, offsets),
            "lower_bound": lower_bound(ddr),
            "no_reuse": sum(b.size for b in ddr),
            "sram": arena_size(in_sram, sram),
            "sram_resident": sum(b.size for b in in_sram),
            "weights": _weights(func, float_bytes),
            "inputs": sum(tensor_bytes(a, float_bytes) for a in func.body.block.args),
            "outputs": sum(tensor_bytes(v, float_bytes) for v in return_of(func).operands),
            "alignment": self.alignment,
            "peak_step": peak_step(buffers),
        }
        set_plan(func, figures)
        verify_plan(func, float_bytes)
        if self.print_plan:
            print(plan_table(func, live, offsets, sram, figures), file=sys.stderr)


def _reorder(func: FuncOp, order: Sequence[Operation]) -> None:
    """Move `func`'s layers into `order`, constants first (they read nothing)."""
    block = func.body.block
    ret = block.last_op
    assert isinstance(ret, ReturnOp)
    constants = [o for o in block.ops if isinstance(o, ConstantOp)]
    for op in [*constants, *order]:
        op.detach()
        block.insert_op_before(op, ret)


def _accesses(live: Liveness) -> dict[str, int]:
    """Per buffer (by its root tensor), the writes and reads of the tensors in it."""
    step_of = {op: k for k, op in enumerate(live.schedule)}
    counts: dict[str, int] = {}
    for key, tensor in live.tensors.items():
        root, _ = live.root(key)
        readers = {step_of.get(u.operation) for u in tensor.value.uses} - {None}
        counts[root] = counts.get(root, 0) + 1 + len(readers)
    return counts


def _write_placement(live: Liveness, roots: dict[str, tuple[str, int]]) -> None:
    """``synap.placement`` on every layer from its buffers' places."""
    for op in live.schedule:
        places: list[tuple[str, int] | None] = []
        for value in op.results:
            key = value_key(value)
            if key not in live.tensors:
                places.append(None)
                continue
            root, delta = live.root(key)
            memory, offset = roots[root]
            places.append((memory, offset + delta))
        set_placement(op, places)


def _weights(func: FuncOp, float_bytes: int) -> int:
    """Bytes of the function's constants as the backend holds them."""
    return sum(
        tensor_bytes(o.results[0], float_bytes)
        for o in func.body.block.ops
        if isinstance(o, ConstantOp)
    )


def plan_table(
    func: FuncOp,
    live: Liveness,
    offsets: dict[str, int],
    sram: dict[str, int],
    figures: dict[str, int],
) -> str:
    """The plan of `func` as a text table: one row per buffer (memory, offset, size,
    lifetime, the layer writing it first, the tensors inside it), then the figures."""
    rows = [f"// memory plan of @{func.sym_name.data}",
            "// memory    offset      size  steps      tensors (first layer)"]  # fmt: skip
    inside: dict[str, list[str]] = {}
    for key in live.tensors:
        inside.setdefault(live.root(key)[0], []).append(key)
    buffers = {b.name: b for b in live.buffers(figures["alignment"])}
    placed = sorted(
        [("ddr", o, k) for k, o in offsets.items()]
        + [("sram", o, k) for k, o in sram.items()]
    )
    for memory, offset, key in placed:
        b = buffers[key]
        first = live.schedule[b.first]
        rows.append(
            f"// {memory:6} {offset:9} {b.size:9}  {b.first:4}-{b.last:<4}  "
            f"{' '.join(inside[key])} ({layer_label(first)})"
        )
    rows.append("// " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    return "\n".join(rows)
