"""Real ONNX models whose inputs are not images (a file-type classifier on raw bytes, a
pitch tracker and a note transcriber on audio, a voice-activity detector with its LSTM
state) against ONNX Runtime on GENERIC: within 1e-4 x max(1, max|ref|)."""

from __future__ import annotations

import pytest

from synapc.testing.models import ONNX_SIGNAL_MODELS
from synapc.testing.signal_models import signal_model_error


@pytest.mark.parametrize("name", sorted(ONNX_SIGNAL_MODELS))
def test_signal_model_matches_onnxruntime(name: str) -> None:
    assert signal_model_error(name) <= 1e-4
