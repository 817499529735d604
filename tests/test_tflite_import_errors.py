"""Bad TFLite input gives one clear line naming the file (or layer), never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import synapc
from synapc.testing.tflite_builder import ModelBuilder

BIN = Path(sys.executable).parent


def small_model() -> bytes:
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 2], np.float32)
    w = b.constant("w", np.ones((3, 1, 1, 2), np.float32))
    bias = b.constant("b", np.zeros(3, np.float32))
    y = b.tensor("y", [1, 4, 4, 3], np.float32)
    b.op("CONV_2D", [x, w, bias], [y], padding="SAME", stride_w=1, stride_h=1)
    b.output(y)
    return b.build()


def run_import(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "synapc"), "import", str(path), "--no-weights"],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (lambda: small_model()[: len(small_model()) // 2], "corrupt TFLite model"),
        (lambda: np.random.default_rng(1).bytes(4096), "not a TFLite model"),
        (
            lambda: b"\x00\x00\x00\x00TFL3" + np.random.default_rng(2).bytes(500),
            "corrupt TFLite model|the model has no subgraph",
        ),
        (lambda: b"", "not a TFLite model"),
    ],
    ids=["truncated", "random-bytes", "random-with-identifier", "empty"],
)
def test_corrupt_files_are_one_line_errors(tmp_path, content, message: str) -> None:
    path = tmp_path / "bad.tflite"
    path.write_bytes(content())
    with pytest.raises(synapc.SynapcError, match=message) as error:
        synapc.import_model(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)
    result = run_import(path)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and str(path) in result.stderr
    assert "Traceback" not in result.stderr


def test_unsupported_operator_names_operator_index_and_output(tmp_path) -> None:
    b = ModelBuilder()
    x = b.input("x", [4], np.float32)
    y = b.tensor("y", [4], np.float32)
    z = b.tensor("sine_out", [4], np.float32)
    b.op("ABS", [x], [y])
    b.op("SIN", [y], [z])
    b.output(z)
    path = tmp_path / "sin.tflite"
    path.write_bytes(b.build())
    with pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path)
    assert "operator 1 (SIN, output 'sine_out'): operator is not supported" in str(
        error.value
    )


def test_missing_file_and_unknown_extension(tmp_path) -> None:
    with pytest.raises(synapc.SynapcError, match="no such model file"):
        synapc.import_model(tmp_path / "none.tflite")
    other = tmp_path / "model.caffemodel"
    other.write_bytes(b"x")
    with pytest.raises(synapc.SynapcError, match=r"unknown model format '\.caffemodel'"):
        synapc.import_model(other)


def test_import_command_writes_ir_with_weights(tmp_path) -> None:
    path = tmp_path / "conv.tflite"
    path.write_bytes(small_model())
    out = tmp_path / "conv.mlir"
    result = subprocess.run(
        [str(BIN / "synapc"), "import", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "synap.conv2d" in text and "dialect_resources" in text
    store = synapc.WeightStore()
    synapc.parse_module(text, store)
    np.testing.assert_array_equal(store["w"], np.ones((3, 1, 1, 2), np.float32))
    opt = subprocess.run(
        [str(BIN / "synapc-opt"), str(out), "-p", "canonicalize"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert opt.returncode == 0 and "synap.conv2d" in opt.stdout
