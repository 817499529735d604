"""Real TFLite models: synapc against LiteRT's default (XNNPACK) interpreter.

For each packaged model (see synapc/testing/models.py) prints the file size, import +
compile + first-run time, steady-state `exe.run` time, LiteRT's steady-state time and the
ratio, on GENERIC (float32) and VS680 (float16 like the NPU). A model with unknown (-1)
input dimensions (`TFLITE_DYNAMIC_MODELS`) runs at its listed input shapes (given as
`input_shapes`; LiteRT's inputs resized to them), shown as `name@shape`.
Targets (issue 3): import + compile + first run of a ~2 MB model < 10 s; steady state
within 3x of LiteRT.
Timing: synapc and LiteRT are measured in alternating rounds (median of `--runs` calls
each), and each reports its fastest round, so that load from other processes on a shared
machine falls on both alike instead of skewing the ratio.
Run: python benchmarks/tflite_real_models.py [--runs 30] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter

import synapc
from synapc.testing.models import TFLITE_DYNAMIC_MODELS, TFLITE_MODELS, model_path


def median_time(function, runs: int) -> float:
    """Median wall time of `function()` over `runs` calls, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    """Print one row per model and target."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--targets", default="GENERIC,VS680")
    args = parser.parse_args()
    header = (
        f"{'model':<28} {'target':<8} {'MB':>5} {'first (s)':>9} "
        f"{'synapc ms':>9} {'litert ms':>9} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    runs = [(name, None) for name in sorted(TFLITE_MODELS)]
    runs += [
        (name, TFLITE_DYNAMIC_MODELS[name][2]) for name in sorted(TFLITE_DYNAMIC_MODELS)
    ]
    for model_name, shapes in runs:
        path = model_path(model_name)
        name = model_name
        interpreter = Interpreter(model_path=str(path))
        details = interpreter.get_input_details()
        if shapes is not None:
            name = f"{model_name}@{'x'.join(map(str, shapes[0]))}"
            for detail, shape in zip(details, shapes, strict=True):
                interpreter.resize_tensor_input(detail["index"], list(shape), strict=True)
        interpreter.allocate_tensors()
        rng = np.random.default_rng(0)
        details = interpreter.get_input_details()
        inputs = [rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]) for d in details]
        given = None if shapes is None else [list(s) for s in shapes]

        def litert(interpreter=interpreter, details=details, inputs=inputs) -> None:
            for d, x in zip(details, inputs, strict=True):
                interpreter.set_tensor(d["index"], x)
            interpreter.invoke()

        litert()
        for target in args.targets.split(","):
            start = time.perf_counter()
            try:
                exe = synapc.compile(synapc.import_model(path, given), target=target)
                exe.run(inputs)
            except synapc.SynapcError as error:
                print(f"{name:<28} {target:<8} failed: {error}")
                continue
            first = time.perf_counter() - start
            ours, reference = float("inf"), float("inf")
            for _ in range(args.rounds):
                run = lambda exe=exe, inputs=inputs: exe.run(inputs)  # noqa: E731
                ours = min(ours, median_time(run, args.runs))
                reference = min(reference, median_time(litert, args.runs))
            print(
                f"{name:<28} {target:<8} {path.stat().st_size / 2**20:>5.1f} {first:>9.2f} "
                f"{ours:>9.2f} {reference:>9.2f} {ours / reference:>6.2f}"
            )


if __name__ == "__main__":
    main()
