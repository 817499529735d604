"""Real ONNX models against ONNX Runtime: float error on GENERIC, and for the int8
versions on VS680 synapc's distance (in quantization steps) to the nearer of two exact
references beside the references' distance to each other.

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
                    f"  {fmt:9s} per-channel={per_channel!s:5s} VS680, {r.elements} "
                    f"elements: synapc max {r.synapc.max_steps:.0f} steps, "
                    f"{r.synapc.beyond_one_step:.3%} beyond one; references max "
                    f"{r.references.max_steps:.0f}, {r.references.beyond_one_step:.3%}; "
                    f"within noise: {r.within_noise} "
                    f"[{time.perf_counter() - start:.1f} s]"
                )


if __name__ == "__main__":
    main()
