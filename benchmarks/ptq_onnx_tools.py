"""The ONNX post-training quantizers `benchmarks/ptq.py` compares synapc with:
onnxruntime's `quantize_static` (QDQ, int8 activations and weights) and NNCF's
`nncf.quantize`, each calibrated on the same arrays and evaluated by onnxruntime's CPU
execution provider (or, with `exact`, by the unfused reference of
`synapc.testing.onnx_reference.exact_outputs`, which does not depend on the CPU's
fused int8 kernels).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import onnx

#: onnxruntime calibration methods benchmarked.
ORT_METHODS = ("MinMax", "Percentile", "Entropy")


def ort_outputs(path: Path, batch: np.ndarray, exact: bool = False) -> list[np.ndarray]:
    """Outputs of the single-input ONNX model `path` on every sample of `batch` (one run
    per sample, the model's batch dimension being 1), concatenated per output."""
    import onnxruntime as ort

    from synapc.testing.onnx_reference import exact_outputs

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    runs = [
        exact_outputs(path, {name: x[None]})
        if exact
        else session.run(None, {name: x[None]})
        for x in batch
    ]
    return [np.concatenate(outs) for outs in zip(*runs, strict=True)]


class _Reader:
    """An onnxruntime `CalibrationDataReader` over a sequence of feeds."""

    def __init__(self, feeds: Sequence[dict[str, np.ndarray]]) -> None:
        self._feeds: Iterator[dict[str, np.ndarray]] = iter(feeds)

    def get_next(self) -> dict[str, np.ndarray] | None:
        """The next feed, None at the end."""
        return next(self._feeds, None)


def ort_quantize(
    fixed: Path, calibration: np.ndarray, method: str, per_channel: bool, out: Path
) -> float:
    """`fixed` (pre-processed, static shape, one input) quantized by `quantize_static`
    into `out`, calibrated on the samples of `calibration` (`ort_quantize_feeds`)."""
    name = onnx.load(str(fixed), load_external_data=False).graph.input[0].name
    feeds = [{name: x[None]} for x in calibration]
    return ort_quantize_feeds(fixed, feeds, method, per_channel, out)


def ort_quantize_feeds(
    fixed: Path,
    feeds: Sequence[dict[str, np.ndarray]],
    method: str,
    per_channel: bool,
    out: Path,
) -> float:
    """`fixed` (pre-processed, static shapes) quantized by `quantize_static` into `out`
    (QDQ, int8 activations and weights) with calibration `method` on `feeds` (every
    input by name); returns the seconds it took (calibration included)."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    reader = type("Reader", (_Reader, CalibrationDataReader), {})(feeds)
    start = time.perf_counter()
    quantize_static(
        str(fixed),
        str(out),
        reader,
        quant_format=QuantFormat.QDQ,
        per_channel=per_channel,
        activation_type=QuantType.QInt8,
        weight_type=QuantType.QInt8,
        calibrate_method=getattr(CalibrationMethod, method),
    )
    return time.perf_counter() - start


def nncf_quantize(fixed: Path, calibration: np.ndarray, out: Path) -> float:
    """`fixed` quantized by `nncf.quantize` (its defaults: the performance preset,
    symmetric int8, per-channel weights) into `out`; returns the seconds it took."""
    import nncf

    model = onnx.load(str(fixed))
    name = model.graph.input[0].name
    samples: Sequence[dict[str, np.ndarray]] = [{name: x[None]} for x in calibration]
    start = time.perf_counter()
    quantized = nncf.quantize(model, nncf.Dataset(samples), subset_size=len(samples))
    seconds = time.perf_counter() - start
    onnx.save(quantized, str(out))
    return seconds


def nncf_unavailable() -> str | None:
    """Why NNCF cannot run here (not installed, or a version other than the pinned
    3.4.0), or None."""
    try:
        import nncf
    except ImportError as error:
        return (
            f"nncf not installed ({error}); pip install -c tests/constraints.txt .[bench]"
        )
    if nncf.__version__ != "3.4.0":
        return f"nncf {nncf.__version__} installed, 3.4.0 pinned"
    return None
