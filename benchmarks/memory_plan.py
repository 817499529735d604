"""Issue 21's memory-planning check: `plan-memory` on every real model of the test set.

Per model (compiled for the target, float; each function planned on its own, figures
summed over them): the planned arena against its lower bound (the largest sum of
buffers live at one step), the bytes without reuse, a naive linear allocator's arena
(`offsets.naive_linear`), the lower bound before aliasing (every tensor a buffer of its
own: what in-place layers and views save), and the planning time (the pass on the
compiled IR, verifier included). Goal: at the lower bound on most models, at most 1.02x
on every one. Then the proof: the arena executor (`backends/jax/arena.py`), every
intermediate written into and read from one numpy buffer at its planned offset, against
the same layers run without an arena (bit for bit: the plan's proof) and against the
compiled program, on the float model and on the model quantized to uint8 on random data
(`--no-proof` skips it). Writes the tables as Markdown.

    python -m benchmarks.memory_plan [--target VS680] [--out memory_plan.md] [--models ...]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
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
from synapc.testing.real_models import REAL_MODELS, load_real_model

ALIGNMENT = 64


def _unaliased(live: Liveness) -> list[Buffer]:
    """Every tensor a buffer of its own."""
    return [
        Buffer(k, align(t.size, ALIGNMENT), t.first, t.last)
        for k, t in live.tensors.items()
    ]


def proof(name: str, target: str, quantized: bool) -> str:
    """The arena run against the same layers run without an arena (the proof of the
    plan: ``equal`` or ``DIFFERENT``) and against the compiled program: ``equal``, or
    the largest difference (float32 layers: XLA contracts a multiply and the next
    layer's add into one rounding, which no layer-by-layer run does)."""
    from synapc.backends.jax.arena import ArenaExecutor
    from synapc.backends.targets import get_target
    from synapc.convert.pipeline import memory_step, run_pipeline

    model, inputs = load_real_model(name)
    try:
        if quantized:
            model = synapc.quantize(model, "random", data_type="uint8")
        executable = synapc.compile(model, target)
    except synapc.SynapcError as error:
        return f"not quantized: {str(error)[:60]}"
    planned = run_pipeline(executable.model, memory_step(target))
    program = executable.run(inputs)
    runs = [
        ArenaExecutor(
            planned.module, planned.weights, get_target(target),
            planned.integer_semantics, in_arena=in_arena,
        ).run(inputs)
        for in_arena in (True, False)
    ]  # fmt: skip
    arena, control = runs

    def same(xs: list[np.ndarray], ys: list[np.ndarray]) -> bool:  # bit for bit
        return all(x.tobytes() == y.tobytes() for x, y in zip(xs, ys, strict=True))

    if same(arena, program):
        versus = "equal"
    else:
        worst = max(
            float(np.nanmax(np.abs(a.astype(np.float64) - p.astype(np.float64)), initial=0))
            for a, p in zip(arena, program, strict=True)
        )
        versus = f"max |difference| {worst:.3g}"
    return f"{'equal' if same(arena, control) else 'DIFFERENT'} / {versus}"


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
    parser.add_argument("--no-proof", action="store_true")
    parser.add_argument("--models", nargs="*", default=list(REAL_MODELS), metavar="NAME")
    args = parser.parse_args(argv)
    lines = [
        f"Memory plans on {args.target} (float; alignment {ALIGNMENT} B; KiB)",
        "",
        "| model | arena | lower bound | arena / bound | no reuse | naive linear | "
        "bound without aliases | planning s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for name in args.models:
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
    if not args.no_proof:
        lines += [
            "",
            f"Arena executor on {args.target} (SRAM as the target assumes): against the "
            "same layers without an arena (bit for bit) / against the compiled program",
            "",
            "| model | float | uint8 |",
            "|---|---|---|",
        ]
        for name in args.models:
            results = [proof(name, args.target, q) for q in (False, True)]
            lines.append(f"| {name} | {results[0]} | {results[1]} |")
            print(lines[-1], flush=True)
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
