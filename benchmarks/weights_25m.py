"""Weights at scale: a module holding 25 million float32 weights (ResNet-50 size).

Measures building the module, printing it with handles only, dumping it with its
`dialect_resources` blobs, and parsing the dump back (checked bit-exactly by SHA-256 of
every array), plus the peak resident memory against the weight bytes.
Targets (issue 2): build < 1 s, handle print < 1 s, peak RSS < 3x weight bytes.
Run: python benchmarks/weights_25m.py [--values 25000000]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp

from synapc.dialects.synap.attributes import Activation
from synapc.dialects.synap.conv import Conv2DOp, FullyConnectedOp
from synapc.dialects.synap.data_movement import ReshapeOp
from synapc.dialects.synap.reduce import ReduceMeanOp
from synapc.mlir_io import print_module, read_module, write_module
from synapc.weights import WeightStore


def rss_mb() -> float:
    """Current resident set size in MiB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def peak_mb() -> float:
    """Peak resident set size of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_weights(total: int, channels: int) -> list[np.ndarray]:
    """1x1 conv filters of channels x channels, then an FC: at least `total` values."""
    rng = np.random.default_rng(0)
    arrays, count = [], 0
    while count + 1000 * channels < total:
        arrays.append(rng.standard_normal((channels, 1, 1, channels), dtype=np.float32))
        count += channels * channels
    arrays.append(rng.standard_normal((1000, channels), dtype=np.float32))
    return arrays


def build(store: WeightStore, filters: list[np.ndarray], channels: int) -> ModuleOp:
    """A chain of 1x1 convolutions (+ bias, relu), a mean and a classifier."""
    x_type = TensorType(f32, [1, 7, 7, channels])
    func = FuncOp("main", ([x_type], []))
    ops = []
    x = func.body.block.args[0]
    for i, w in enumerate(filters[:-1]):
        wc = store.constant(w, f"conv{i}_w")
        bc = store.constant(np.zeros(channels, np.float32), f"conv{i}_b")
        x = Conv2DOp.make(
            x, wc, bc, activation=Activation.RELU, layer_name=f"conv{i}", layer_index=i
        )
        ops += [wc, bc, x]
    pooled = ReduceMeanOp.make(x, axes=(1, 2))
    flat = ReshapeOp.make(pooled, result_types=[TensorType(f32, [1, channels])])
    fc_w = store.constant(filters[-1], "fc_w")
    fc = FullyConnectedOp.make(flat, fc_w, None)
    ops += [pooled, flat, fc_w, fc]
    func.body.block.add_ops([*ops, ReturnOp(fc.results[0])])
    func.function_type = FunctionType.from_lists([x_type], [fc.results[0].type])
    return ModuleOp([func])


def main() -> None:
    """Print one table row per measurement."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--values", type=int, default=25_000_000)
    parser.add_argument("--channels", type=int, default=512)
    args = parser.parse_args()

    baseline = rss_mb()
    t = time.perf_counter()
    filters = make_weights(args.values, args.channels)
    t_generate = time.perf_counter() - t
    values = sum(a.size for a in filters) + args.channels * (len(filters) - 1)
    weight_mb = values * 4 / 2**20

    store = WeightStore()
    t = time.perf_counter()
    module = build(store, filters, args.channels)
    t_build = time.perf_counter() - t
    del filters
    t = time.perf_counter()
    module.verify()
    t_verify = time.perf_counter() - t
    t = time.perf_counter()
    text = print_module(module)
    t_print = time.perf_counter() - t
    digests = {h: hashlib.sha256(a.tobytes()).hexdigest() for h, a in store.items()}

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.mlir"
        t = time.perf_counter()
        write_module(module, path, store)
        t_dump = time.perf_counter() - t
        size_mb = path.stat().st_size / 2**20
        del module, store
        gc.collect()
        loaded = WeightStore()
        t = time.perf_counter()
        again = read_module(path, loaded)
        t_parse = time.perf_counter() - t
    exact = digests == {
        h: hashlib.sha256(a.tobytes()).hexdigest() for h, a in loaded.items()
    }
    same_text = print_module(again) == text

    peak = peak_mb()
    rows = [
        (
            "weights",
            f"{values:,} float32 values = {weight_mb:.1f} MiB in {len(digests)} arrays",
        ),
        ("generate arrays (numpy)", f"{t_generate:.3f} s"),
        ("build module", f"{t_build:.3f} s  (target < 1 s)"),
        ("verify module", f"{t_verify:.3f} s"),
        (
            "print, handles only",
            f"{t_print:.3f} s, {len(text) / 1024:.1f} KiB (target < 1 s)",
        ),
        ("dump with blobs", f"{t_dump:.3f} s, {size_mb:.1f} MiB file"),
        ("parse dump back", f"{t_parse:.3f} s, bit-exact: {exact}, same IR: {same_text}"),
        ("RSS after imports", f"{baseline:.1f} MiB"),
        (
            "peak RSS",
            f"{peak:.1f} MiB = {peak / weight_mb:.2f}x weight bytes (target < 3x)",
        ),
        (
            "peak RSS above imports",
            f"{peak - baseline:.1f} MiB = "
            f"{(peak - baseline) / weight_mb:.2f}x weight bytes",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    if not (exact and same_text):
        raise SystemExit("round trip was not exact")


if __name__ == "__main__":
    main()
