"""`synapc benchmark`: time a `model.synap` the way TFLite's `benchmark_model` does.

Loads the package (Init), runs one first inference (which compiles, or loads the program
from JAX's persistent cache), `--warmup-runs` warm-up inferences and `--num-runs` timed
ones on random inputs (fixed seed), then prints the timings in microseconds, the
count/first/curr/min/max/avg/std line of the timed runs and the peak memory (the
process's maximum resident set size). `--profiling` adds a per-layer table (layer, type,
time, share), which needs a package converted with --profiling.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from synapc.errors import SynapcError

if TYPE_CHECKING:
    from synapc.runtime import LayerTiming

SEED = 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `synapc benchmark` options."""
    parser.add_argument("--model", required=True, metavar="PATH", help="model.synap to run")
    parser.add_argument(
        "--num-runs",
        type=int,
        default=50,
        metavar="N",
        help="timed inferences (default 50)",
    )
    parser.add_argument(
        "--warmup-runs",
        type=int,
        default=1,
        metavar="N",
        help="untimed inferences after the first one (default 1)",
    )
    parser.add_argument(
        "--profiling",
        action="store_true",
        help="also time each layer (package converted with --profiling)",
    )


def peak_memory_mb() -> float:
    """The process's peak resident set size in MB (ru_maxrss: KiB on Linux, bytes on
    macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def random_input(
    shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator
) -> np.ndarray:
    """Random values of a tensor: the whole range of 8- and 16-bit integers, small
    integers for wider ones, N(0, 1) for floats."""
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = (info.min, info.max) if dtype.itemsize <= 2 else (0, 8)
        return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def timing_line(times: Sequence[float]) -> str:
    """TFLite's statistics line: ``count= first= curr= min= max= avg= std=``."""
    values = np.asarray(times, np.float64)
    return (
        f"count={len(values)} first={values[0]:.0f} curr={values[-1]:.0f} "
        f"min={values.min():.0f} max={values.max():.0f} avg={values.mean():.1f} "
        f"std={values.std():.0f}"
    )


def _times(predict: Callable[[], object], last: Callable[[], float], n: int) -> list[float]:
    times = []
    for _ in range(n):
        predict()
        times.append(last())
    return times


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the benchmark described by `args` and print the report to `out` (stdout)."""
    from synapc.runtime import Network

    out = out or sys.stdout
    if args.num_runs < 1:
        raise SynapcError(f"--num-runs {args.num_runs}: need at least one timed run")
    if args.warmup_runs < 0:
        raise SynapcError(f"--warmup-runs {args.warmup_runs}: cannot be negative")
    path = Path(args.model)
    if not path.is_file():
        raise SynapcError(f"{path}: no such file")
    size = path.stat().st_size
    start = time.perf_counter_ns()
    network = Network(path)
    init_us = (time.perf_counter_ns() - start) / 1000.0
    init_peak = peak_memory_mb()
    if args.profiling and not network.package.has_layers:
        network.profile()  # raises the "built without --profiling" error
    rng = np.random.default_rng(SEED)
    for tensor in network.inputs:
        tensor.assign(random_input(tensor.shape, tensor.data_type, rng))

    def last() -> float:
        return network.statistics.last_time_us

    print(f"Graph: [{path}]", file=out)
    print(f"The input model file size (MB): {size / 1e6:.6f}", file=out)
    print(f"Target: {network.package.target}", file=out)
    print(f"Init: {init_us:.0f} us", file=out)
    first = _times(network.predict, last, 1)[0]
    warmup = _times(network.predict, last, args.warmup_runs)
    print(
        f"Running {args.warmup_runs} warm-up and {args.num_runs} timed inference runs.",
        file=out,
    )
    runs = _times(network.predict, last, args.num_runs)
    print(timing_line(runs), file=out)
    warmup_avg = f"{np.mean(warmup):.1f}" if warmup else "n/a"
    print(
        f"Inference timings in us: Init: {init_us:.0f}, First inference: {first:.0f}, "
        f"Warmup (avg): {warmup_avg}, Inference (avg): {np.mean(runs):.1f}",
        file=out,
    )
    print(
        f"Peak memory footprint (MB): init={init_peak:.2f} overall={peak_memory_mb():.2f}",
        file=out,
    )
    if args.profiling:
        print_profile(network.profile(), out)
    return 0


def print_profile(timings: Sequence[LayerTiming], out: TextIO) -> None:
    """The per-layer table: layer, type, time (us), share (%), in graph order, and a
    total line."""
    total = sum(t.time_us for t in timings)
    rows = [
        (
            t.name,
            t.type,
            f"{t.time_us:.1f}",
            f"{100.0 * t.time_us / total if total else 0.0:.1f}",
        )
        for t in timings
    ]
    rows.append(("total", "", f"{total:.1f}", "100.0"))
    header = ("layer", "type", "time (us)", "share (%)")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    print("Per-layer profile (one run each, graph order):", file=out)
    for i, row in enumerate([header, *rows]):
        if i == len(rows):
            print("-" * (sum(widths) + 6), file=out)
        print(
            f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}  "
            f"{row[3]:>{widths[3]}}",
            file=out,
        )
