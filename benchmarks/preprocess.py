"""Preprocessing model vs OpenCV: NV12 1920x1080 -> 224x224 RGB.

Builds the model `synapc preprocess --type nv12 --size 1080 1920 --to rgb --shape 1 224
224 3` makes (like the vendor's ``convert_nv12@1920x1080_rgb@224x224``), loads it with
`synapc.runtime.Network` and times `predict` on assigned NV12 planes; OpenCV times
``cv2.cvtColor(COLOR_YUV2RGB_NV12)`` + ``cv2.resize(INTER_LINEAR)`` on the same frames
(its default thread count). Both give the same pixels (checked). Prints both steady-state
times, the ratio (goal, issue 18: <= 2x OpenCV on CPU), the CPU model and its flags.
Timing: the two are measured in alternating rounds (median of `--runs` calls each), each
reporting its fastest round, so that load from other processes on a shared machine falls
on both alike instead of skewing the ratio.
Run: python benchmarks/preprocess.py [--runs 50] [--rounds 5] [--frames 4] [--crop]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from synapc.interrupts import import_jax

HEIGHT, WIDTH = 1080, 1920
OUT = 224


def median_time(function: Callable[[], object], runs: int) -> float:
    """Median wall time of `function()` over `runs` calls, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def cpu_description() -> tuple[str, str]:
    """The CPU model name and its flags (from /proc/cpuinfo where there is one)."""
    model, flags = platform.processor() or platform.machine(), ""
    info = Path("/proc/cpuinfo")
    if info.exists():
        for line in info.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            if key.strip() == "flags" and not flags:
                flags = value.strip()
    return model, flags


def build_model(out_dir: Path, crop: bool) -> Path:
    """The preprocessing model, built as `synapc preprocess` builds it."""
    from synapc.tools.preprocess_model import build

    args = argparse.Namespace(
        type="nv12",
        size=[HEIGHT, WIDTH],
        to="rgb",
        shape=[1, OUT, OUT, 3],
        layout="nhwc",
        crop=crop,
        color_range="limited",
        color_matrix="bt601",
        resize="bilinear",
        out_dir=str(out_dir),
        target="VS680",
    )
    return build(args)


def main() -> None:
    """Print both times, their ratio, the CPU and its flags."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--frames", type=int, default=4, help="distinct random frames")
    parser.add_argument("--crop", action="store_true", help="model with crop inputs")
    args = parser.parse_args()
    import_jax()
    from synapc.runtime import Network

    rng = np.random.default_rng(0)
    frames = [
        (
            rng.integers(0, 256, (1, HEIGHT, WIDTH, 1), dtype=np.uint8),
            rng.integers(0, 256, (1, HEIGHT // 2, WIDTH // 2, 2), dtype=np.uint8),
        )
        for _ in range(args.frames)
    ]
    packed = [
        np.concatenate([y[0, :, :, 0], uv[0].reshape(HEIGHT // 2, WIDTH)])
        for y, uv in frames
    ]
    with tempfile.TemporaryDirectory() as folder:
        network = Network(build_model(Path(folder), args.crop))
    counter = {"ours": 0, "opencv": 0}

    def ours() -> np.ndarray:
        y, uv = frames[counter["ours"] % len(frames)]
        counter["ours"] += 1
        network.inputs[0].assign(y)
        network.inputs[1].assign(uv)
        return network.predict()[0].to_numpy()

    def opencv() -> np.ndarray:
        frame = packed[counter["opencv"] % len(frames)]
        counter["opencv"] += 1
        rgb = cv2.cvtColor(frame, cv2.COLOR_YUV2RGB_NV12)
        return cv2.resize(rgb, (OUT, OUT), interpolation=cv2.INTER_LINEAR)

    for _ in range(len(frames)):  # compile, and check the pixels agree
        got, want = ours()[0], opencv()
        diff = np.abs(got.astype(int) - want.astype(int))
        if diff.max() > 1:
            raise SystemExit(f"pixels differ from OpenCV by up to {diff.max()}")
    best_ours, best_opencv = float("inf"), float("inf")
    for _ in range(args.rounds):
        best_ours = min(best_ours, median_time(ours, args.runs))
        best_opencv = min(best_opencv, median_time(opencv, args.runs))
    model, flags = cpu_description()
    exact = float(np.mean(diff == 0))
    print(
        f"nv12 {WIDTH}x{HEIGHT} -> {OUT}x{OUT} rgb{' (crop inputs)' if args.crop else ''}"
    )
    print(f"synapc model (Network.predict, assign included): {best_ours:.3f} ms")
    print(f"OpenCV {cv2.__version__} cvtColor + resize ({cv2.getNumThreads()} threads): "
          f"{best_opencv:.3f} ms")  # fmt: skip
    print(f"ratio: {best_ours / best_opencv:.2f}x (goal <= 2x); pixels exact: {exact:.4%}")
    print(f"CPU: {model}")
    print(f"flags: {flags}")


if __name__ == "__main__":
    main()
