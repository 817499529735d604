"""First inference of a converted MobileNetV2-sized model in a fresh process, with a cold
and with a warm JAX persistent compilation cache (``SYNAPC_JAX_CACHE_DIR``).

Converts MobileNetV2 (1.0, 224; random weights, `synapc.testing.mobilenet_v2`) for a
target, then starts fresh processes that load `model.synap` with `synapc.Network` and time
the load and the first `predict()`: cold = an empty cache folder, warm = the folder a
previous process filled. Prints conversion time, package size and a table.

    python benchmarks/first_inference.py [--target VS680] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

import synapc
from synapc.testing.mobilenet_v2 import build_mobilenet_v2

CHILD = """
import json, sys, time
start = time.perf_counter()
import numpy as np
import synapc
network = synapc.Network(sys.argv[1])
loaded = time.perf_counter()
for tensor in network.inputs:
    tensor.assign(np.zeros(tensor.shape, tensor.data_type))
network.predict()
first = time.perf_counter()
network.predict()
second = time.perf_counter()
print(json.dumps({"load_s": loaded - start, "first_s": first - loaded,
                  "second_s": second - first}))
"""


def _child(package: Path, cache: Path) -> dict[str, float]:
    env = dict(os.environ, SYNAPC_JAX_CACHE_DIR=str(cache))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(package)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Convert, then time cold and warm first inferences."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="VS680")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        model = root / "mobilenet_v2.onnx"
        onnx.save(build_mobilenet_v2(), model)
        tick = time.perf_counter()
        result = synapc.convert(model, args.target, root / "out")
        convert_s = time.perf_counter() - tick
        package = result.package
        print(
            f"MobileNetV2 1.0/224 ({model.stat().st_size / 1e6:.1f} MB ONNX) converted "
            f"for {args.target} in {convert_s:.1f} s; model.synap "
            f"{package.stat().st_size / 1e6:.1f} MB"
        )
        cold, warm = [], []
        for k in range(args.repeats):
            cache = root / f"cache{k}"
            cold.append(_child(package, cache))
            warm.append(_child(package, cache))
        rows = [("cold cache", cold), ("warm cache", warm)]
        print("| process | load (ms) | first inference (ms) | second inference (ms) |")
        print("|---|---:|---:|---:|")
        for name, runs in rows:
            cells = [
                statistics.median(r[key] for r in runs) * 1e3
                for key in ("load_s", "first_s", "second_s")
            ]
            print(f"| {name} | {cells[0]:.0f} | {cells[1]:.0f} | {cells[2]:.1f} |")
        ratio = statistics.median(r["first_s"] for r in warm) / statistics.median(
            r["first_s"] for r in cold
        )
        print(f"warm / cold first inference: {ratio:.0%} (median of {args.repeats})")


if __name__ == "__main__":
    main()
