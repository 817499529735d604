"""`synapc benchmark`: time a `model.synap` the way TFLite's `benchmark_model` does.

Loads the package (Init, which compiles, or loads the program from JAX's persistent
cache), runs one first inference, `--warmup-runs` warm-up inferences and `--num-runs` timed
ones, then prints the timings in microseconds, the count/first/curr/min/max/avg/std line
of the timed runs and the peak memory (the process's maximum resident set size).
`--profiling` adds a per-layer table (layer, type, time, share), which needs a package
converted with --profiling.

`--num_threads N` sizes XLA's CPU thread pools: XLA reads `PJRT_NPROC` once, when JAX
creates its CPU backend, so it is set before that and refused when JAX already runs in
the process. `--input FILE` (one per input, in input order) or `--input NAME=FILE` (any
subset; the others stay random) gives input values (see `synapc.tools.input_files`).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from synapc.errors import SynapcError
from synapc.tools.input_files import assign_inputs

if TYPE_CHECKING:
    from synapc.runtime import LayerTiming

#: The environment variable XLA's CPU client sizes its thread pools from (then `NPROC`,
#: then the CPUs the process may run on), read once when JAX creates the CPU backend.
THREADS_VARIABLE = "PJRT_NPROC"

#: The thread count this process asked XLA for (None: not set by synapc).
_requested_threads: int | None = None


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
        "--num_threads",
        "--num-threads",
        dest="num_threads",
        type=int,
        default=None,
        metavar="N",
        help="CPU threads XLA may use (default: one per CPU the process may run on)",
    )
    parser.add_argument(
        "--input",
        action="append",
        dest="inputs",
        default=None,
        metavar="[NAME=]FILE",
        help="values of an input: .npy, 8-bit .png / .bmp image or raw bytes; one per "
        "input in input order, or NAME=FILE (repeatable; default random)",
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


# -- threads -----------------------------------------------------------------------------


def _jax_backend_initialized() -> bool:
    """Whether JAX has created its backends in this process (then XLA's CPU thread pools
    are fixed). True when this JAX cannot tell: refusing beats ignoring the request."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge
    except ImportError:
        return True
    initialized = getattr(xla_bridge, "backends_are_initialized", None)
    return bool(initialized()) if callable(initialized) else True


def set_num_threads(count: int) -> None:
    """Make XLA's CPU client run computations on `count` threads: sets `PJRT_NPROC`,
    which XLA reads when JAX creates its CPU backend. A `SynapcError` when that backend
    already exists in this process (unless this function already asked for `count`)."""
    global _requested_threads
    if count < 1:
        raise SynapcError(f"--num_threads {count}: need at least one thread")
    if _requested_threads == count:
        return
    if _jax_backend_initialized():
        raise SynapcError(
            f"--num_threads {count}: JAX's CPU backend is already initialized in this "
            "process and XLA fixes its thread count then; run synapc benchmark in a "
            f"new process, or set {THREADS_VARIABLE}={count} before JAX first runs"
        )
    os.environ[THREADS_VARIABLE] = str(count)
    _requested_threads = count


def default_num_threads() -> int:
    """The thread count XLA's CPU client takes by itself: `PJRT_NPROC`, else `NPROC`,
    else the number of CPUs the process may run on."""
    for variable in (THREADS_VARIABLE, "NPROC"):
        try:
            return max(0, int(os.environ.get(variable, "")))
        except ValueError:
            continue
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no sched_getaffinity (macOS)
        return os.cpu_count() or 1


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
    out = out or sys.stdout
    if args.num_runs < 1:
        raise SynapcError(f"--num-runs {args.num_runs}: need at least one timed run")
    if args.warmup_runs < 0:
        raise SynapcError(f"--warmup-runs {args.warmup_runs}: cannot be negative")
    path = Path(args.model)
    if not path.is_file():
        raise SynapcError(f"{path}: no such file")
    threads = getattr(args, "num_threads", None)
    if threads is not None:
        set_num_threads(threads)
    else:
        threads = default_num_threads()
    from synapc.runtime import Network

    size = path.stat().st_size
    start = time.perf_counter_ns()
    network = Network(path)
    init_us = (time.perf_counter_ns() - start) / 1000.0
    init_peak = peak_memory_mb()
    if args.profiling and not network.package.has_layers:
        network.profile()  # raises the "built without --profiling" error
    sources = assign_inputs(network.inputs, getattr(args, "inputs", None))

    def last() -> float:
        return network.statistics.last_time_us

    print(f"Graph: [{path}]", file=out)
    print(f"The input model file size (MB): {size / 1e6:.6f}", file=out)
    print(f"Target: {network.package.target}", file=out)
    print(f"Num threads: [{threads}]", file=out)
    for tensor, source in zip(network.inputs, sources, strict=True):
        print(
            f"Input '{tensor.name}' {tensor.data_type.name} {list(tensor.shape)}: "
            f"{source.describe()}",
            file=out,
        )
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
