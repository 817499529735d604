"""Real ONNX models against ONNX Runtime: float error on GENERIC, and for the int8
versions on VS680 the share of output elements within one quantization step.

Run: python benchmarks/onnx_real_models.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from synapc.testing.models import ONNX_MODELS
from synapc.testing.onnx_models import (
    VARIANTS,
    float_error,
    quantized_model,
    quantized_result,
)


def main() -> None:
    """Print one line per model and variant."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, (_, _, shape) in ONNX_MODELS.items():
            print(f"{name} {shape}: float GENERIC error {float_error(name):.2e}")
            for fmt, per_channel in VARIANTS:
                start = time.perf_counter()
                path = quantized_model(name, fmt, per_channel, folder)
                r = quantized_result(path, shape, "VS680")
                print(
                    f"  {fmt:9s} per-channel={per_channel!s:5s} VS680: "
                    f"{r.within_one_step * 100:7.3f}% of {r.elements} within one step "
                    f"(max {r.max_steps:.1f} steps of {r.step:.3g}) "
                    f"[{time.perf_counter() - start:.1f} s]"
                )


if __name__ == "__main__":
    main()
