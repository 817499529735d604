"""Issue 21's memory-planning check: `plan-memory` on every real model of the test set.

Per model (compiled for the target, float; each function planned on its own, figures
summed over them): the planned arena against its lower bound (the largest sum of
buffers live at one step), the bytes without reuse, a naive linear allocator's arena
(`offsets.naive_linear`), the lower bound before aliasing (every tensor a buffer of its
own: what in-place layers and views save), and the planning time (the pass on the
compiled IR, verifier included). Goal: at the lower bound on most models, at most 1.02x
on every one. Writes the table as Markdown.

    python -m benchmarks.memory_plan [--target VS680] [--out memory_plan.md]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from xdsl.dialects.func import FuncOp

import synapc
from synapc.context import make_context
from synapc.passes.memory.liveness import Liveness, liveness
from synapc.passes.memory.offsets import (
    Buffer,
    align,
    arena_size,
    lower_bound,
    naive_linear,
)
from synapc.passes.memory.placement import plan_of
from synapc.passes.partition import float_bits
from synapc.passes.plan_memory import PlanMemoryPass
from synapc.testing.models import REAL_MODELS, load_real_model

ALIGNMENT = 64


def _unaliased(live: Liveness) -> list[Buffer]:
    """Every tensor a buffer of its own."""
    return [
        Buffer(k, align(t.size, ALIGNMENT), t.first, t.last)
        for k, t in live.tensors.items()
    ]


def measure(name: str, target: str) -> dict[str, float]:
    """The figures of one model (see the module docstring)."""
    model, _ = load_real_model(name)
    compiled = synapc.compile(model, target).model
    module = compiled.module.clone()
    npu_bytes = 4 if target == "GENERIC" else 2
    start = time.perf_counter()
    PlanMemoryPass(alignment=ALIGNMENT, npu_float_bytes=npu_bytes).apply(
        make_context(compiled.weights), module
    )
    seconds = time.perf_counter() - start
    totals = dict.fromkeys(("arena", "bound", "no_reuse", "naive", "unaliased"), 0)
    for func in (f for f in module.body.block.ops if isinstance(f, FuncOp)):
        figures = plan_of(func)
        if figures is None:
            continue
        live = liveness(func, float_bits(func, 8 * npu_bytes) // 8, ALIGNMENT)
        buffers = live.buffers(ALIGNMENT)
        totals["arena"] += figures["arena"]
        totals["bound"] += figures["lower_bound"]
        totals["no_reuse"] += figures["no_reuse"]
        totals["naive"] += arena_size(buffers, naive_linear(buffers, ALIGNMENT))
        totals["unaliased"] += lower_bound(_unaliased(live))
    return {**totals, "seconds": seconds}


def main(argv: list[str] | None = None) -> None:
    """Measure every real model, print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="VS680")
    parser.add_argument("--out", type=Path, default=Path("memory_plan.md"))
    args = parser.parse_args(argv)
    lines = [
        f"Memory plans on {args.target} (float; alignment {ALIGNMENT} B; KiB)",
        "",
        "| model | arena | lower bound | arena / bound | no reuse | naive linear | "
        "bound without aliases | planning s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for name in REAL_MODELS:
        f = measure(name, args.target)
        ratio = f["arena"] / f["bound"] if f["bound"] else 1.0
        ratios.append(ratio)
        lines.append(
            f"| {name} | {f['arena'] / 1024:.1f} | {f['bound'] / 1024:.1f} | "
            f"{ratio:.4f} | {f['no_reuse'] / 1024:.1f} | {f['naive'] / 1024:.1f} | "
            f"{f['unaliased'] / 1024:.1f} | {f['seconds']:.2f} |"
        )
        print(lines[-1], flush=True)
    at_bound = sum(r <= 1.0 for r in ratios)
    lines += [
        "",
        f"At the lower bound: {at_bound} of {len(ratios)} models; largest arena / bound "
        f"{max(ratios):.4f}; median {statistics.median(ratios):.4f}.",
    ]
    print(lines[-1])
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
