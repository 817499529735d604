"""Issue 20's concurrency check: a model of two independent branches whose branches land
in two subgraphs (the metafile's delegate map puts branch B on the CPU, branch A stays on
the NPU) runs them at the same time; the wall time of `predict` must be at most 0.7x
that of running the subgraphs one after the other (``Network(concurrent=False)``).

The model (ONNX, built here): one input 1x32x56x56, each branch `--depth` 3x3
convolutions of 32 channels with ReLU (A) / Tanh (B), two outputs. Steady-state median
of `--runs` predictions each way, after warm-up, in one process; ``--mode concurrent``
or ``--mode sequential`` times one way only (for `farm-bench` A/B runs of the command).

    python -m benchmarks.two_branch_subgraphs [--runs 200] [--depth 6] [--mode both]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[1]


def two_branch_model(path: Path, depth: int, seed: int = 0) -> None:
    """The two-branch ONNX model (branch layers named ``a<k>`` and ``b<k>``)."""
    rng = np.random.default_rng(seed)
    nodes, weights = [], []
    outputs = []
    for branch, activation in (("a", "Relu"), ("b", "Tanh")):
        x = "input"
        for k in range(depth):
            w = f"{branch}{k}_w"
            weights.append(
                numpy_helper.from_array(
                    (rng.normal(size=(32, 32, 3, 3)) * 0.06).astype(np.float32), w
                )
            )
            nodes.append(
                helper.make_node(
                    "Conv",
                    [x, w],
                    [f"{branch}{k}_c"],
                    name=f"{branch}{k}",
                    pads=[1, 1, 1, 1],
                )
            )
            nodes.append(
                helper.make_node(
                    activation,
                    [f"{branch}{k}_c"],
                    [f"{branch}{k}_y"],
                    name=f"{branch}{k}_act",
                )
            )
            x = f"{branch}{k}_y"
        outputs.append(x)
    graph = helper.make_graph(
        nodes,
        "two_branch",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 32, 56, 56])],
        [
            helper.make_tensor_value_info(o, TensorProto.FLOAT, [1, 32, 56, 56])
            for o in outputs
        ],
        initializer=weights,
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def convert(folder: Path, depth: int) -> Path:
    """The model converted for VS680 with branch B on the CPU; the package's path."""
    model = folder / "two_branch.onnx"
    two_branch_model(model, depth)
    meta = folder / "meta.yaml"
    meta.write_text("data_layout: nhwc\ndelegate:\n  b0: cpu\n  'b0...': cpu\n")
    subprocess.run(
        [sys.executable, "-m", "synapc.cli", "convert", "--model", str(model), "--meta",
         str(meta), "--target", "VS680", "--out-dir", str(folder / "out"), "--silent"],
        check=True, cwd=REPO,
    )  # fmt: skip
    return folder / "out" / "model.synap"


def median_ms(package: Path, concurrent: bool, runs: int) -> float:
    """Steady-state median wall time of one `predict`, in ms."""
    import synapc

    net = synapc.Network(package, concurrent=concurrent)
    net.inputs[0].assign(
        np.random.default_rng(1).normal(size=tuple(net.inputs[0].shape)).astype("f4")
    )
    for _ in range(10):
        net.predict()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        net.predict()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    """Convert, check the split, time both ways, print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument(
        "--mode", choices=("both", "concurrent", "sequential"), default="both"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        package = convert(Path(tmp), args.depth)
        info = (package.parent / "model_info.txt").read_text()
        subgraphs = info.split("\nSubgraphs", 1)[1].split("\n\n", 1)[0]
        print(subgraphs)
        if args.mode != "both":
            ms = median_ms(package, args.mode == "concurrent", args.runs)
            print(f"{args.mode}: {ms:.2f} ms")
            return
        sequential = median_ms(package, False, args.runs)
        concurrent = median_ms(package, True, args.runs)
    print("| mode | predict ms (median) |\n|---|---|")
    print(f"| one after the other | {sequential:.2f} |\n| concurrent | {concurrent:.2f} |")
    print(f"ratio concurrent / sequential: {concurrent / sequential:.2f} (goal <= 0.70)")


if __name__ == "__main__":
    main()
