"""ONNX DFT, STFT and MelWeightMatrix beyond the conformance cases (complex input with
zero padding and truncation, IRFFT of odd length, float16, a complex windowed STFT,
other mel parameters) against ONNX's reference implementation, and the refusals of
run-time lengths and impossible attributes, each one line naming node and operator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto

from synapc.testing.onnx_cases import (
    assert_refused,
    check_against_reference,
    save_node_model,
)

_RNG = np.random.default_rng(0)


def _scalar(value: int) -> np.ndarray:
    return np.array(value, np.int64)


@pytest.mark.parametrize(
    ("shape", "length", "axis", "inverse", "onesided"),
    [
        ((2, 6, 2), 9, 1, 0, 0),  # complex, zero-padded
        ((3, 7, 4, 2), 5, -3, 1, 0),  # complex inverse, truncated, negative axis
        ((2, 5, 2), 7, 1, 1, 1),  # IRFFT of odd length from 5 bins (4 used)
        ((2, 3, 2), 8, 1, 1, 1),  # IRFFT zero-padding the spectrum
        ((1, 4, 10, 1), 10, 2, 0, 1),  # RFFT of a real signal along axis 2
        ((2, 6, 1), 6, 0, 0, 0),  # real input, the first axis
    ],
)
def test_dft_configurations(
    tmp_path: Path,
    shape: tuple[int, ...],
    length: int,
    axis: int,
    inverse: int,
    onesided: int,
) -> None:
    """The DFT matrix covers padding, truncation, the inverse and IRFFT, any axis."""
    x = _RNG.standard_normal(shape).astype(np.float32)
    constants = {"n": _scalar(length), "axis": _scalar(axis)}
    path = save_node_model(
        tmp_path,
        "DFT",
        {"x": x, "n": constants["n"], "axis": constants["axis"]},
        constants,
        opset=20,
        inverse=inverse,
        onesided=onesided,
    )
    check_against_reference(path, {"x": x})


def test_dft_opset17_attribute_axis_and_float16(tmp_path: Path) -> None:
    """Before opset 20 the axis is an attribute; float16 computes in float32."""
    x = _RNG.standard_normal((2, 8, 3, 2)).astype(np.float16)
    path = save_node_model(tmp_path, "DFT", {"x": x}, {}, opset=17, axis=1)
    check_against_reference(path, {"x": x}, rtol=1e-2)


def test_stft_complex_signal_with_window_two_sided(tmp_path: Path) -> None:
    """A complex signal, a run-time window, frames of 6 every 3 samples, two-sided."""
    signal = _RNG.standard_normal((2, 20, 2)).astype(np.float32)
    window = np.hanning(6).astype(np.float32)
    constants = {"step": _scalar(3), "length": _scalar(6)}
    inputs = {"signal": signal, "step": constants["step"], "window": window}
    inputs["length"] = constants["length"]
    path = save_node_model(tmp_path, "STFT", inputs, constants, opset=17, onesided=0)
    check_against_reference(path, {"signal": signal, "window": window})


def test_mel_weight_matrix_other_parameters(tmp_path: Path) -> None:
    """A 20-band filterbank of a 64-point DFT at 16 kHz, 50 to 7600 Hz, as doubles."""
    constants = {
        "bins": np.array(20, np.int64),
        "size": np.array(64, np.int64),
        "rate": np.array(16000, np.int64),
        "low": np.array(50.0, np.float32),
        "high": np.array(7600.0, np.float32),
    }
    path = save_node_model(
        tmp_path,
        "MelWeightMatrix",
        dict(constants),
        constants,
        opset=17,
        output_datatype=TensorProto.DOUBLE,
    )
    check_against_reference(path, {})


def test_refusals(tmp_path: Path) -> None:
    """Lengths known at run time only, an axis on the complex dimension, a window of
    another length and a run-time mel parameter are refused by name."""
    x = np.zeros((1, 8, 2), np.float32)
    n = _scalar(8)
    assert_refused(
        save_node_model(tmp_path, "DFT", {"x": x, "n": n}, {}, opset=20),
        "dft_length",
        "constant",
    )
    axis = {"axis": _scalar(-1)}
    assert_refused(
        save_node_model(
            tmp_path, "DFT", {"x": x, "n": None, "axis": axis["axis"]}, axis, opset=20
        ),
        "axis -1",
    )
    signal = np.zeros((1, 16, 1), np.float32)
    constants = {"step": _scalar(2), "length": _scalar(4)}
    inputs = {"signal": signal, "step": constants["step"]}
    inputs.update(window=np.ones(5, np.float32), length=constants["length"])
    assert_refused(
        save_node_model(tmp_path, "STFT", inputs, constants, opset=17), "window", "length"
    )
    mel = {
        "bins": np.array(4, np.int64),
        "size": np.array(16, np.int64),
        "rate": np.array(8000, np.int64),
        "low": np.array(0.0, np.float32),
        "high": np.array(4000.0, np.float32),
    }
    runtime = {k: v for k, v in mel.items() if k != "high"}
    assert_refused(
        save_node_model(tmp_path, "MelWeightMatrix", dict(mel), runtime, opset=17),
        "upper_edge_hertz",
        "constant",
    )
