"""`synap.pad` in every mode equals `np.pad`, also when an edge or wrap pad is many times
wider than its axis, and such a pad compiles in about a second (the compile fuzzer's
case 00373, a wrap pad of 65,536 on 4 columns, hung in XLA)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import synapc
from synapc.mlir_io import parse_module
from synapc.model import Model
from synapc.weights import WeightStore

FINDING = Path(__file__).resolve().parent / "data" / "fuzz" / "hang-00373-pad-wrap.mlir"


def _compile(text: str) -> synapc.Executable:
    weights = WeightStore()
    return synapc.compile(
        Model.from_module(parse_module(text, weights), weights), "GENERIC"
    )


#: Reflect pads stay below the axis size and symmetric ones at most at it (the verifier's
#: rule, ONNX's and TFLite's); edge and wrap pads may be any width.
CASES = [
    *[(m, b, a) for m in ("reflect", "symmetric") for b, a in ((0, 3), (2, 1), (3, 3))],
    ("symmetric", 4, 4),
    *[(m, b, a) for m in ("edge", "wrap") for b, a in ((0, 3), (2, 1), (7, 11), (30, 0))],
]


@pytest.mark.parametrize(("mode", "before", "after"), CASES)
def test_pad_mode_equals_numpy(mode: str, before: int, after: int) -> None:
    width = 4 + before + after
    text = (
        "func.func @main(%x: tensor<1x3x4x2xf32>) -> tensor<1x3x"
        f"{width}x2xf32> {{\n  %0 = synap.pad %x {{pads = array<i64: 0, 0, 0, 0, "
        f"{before}, {after}, 0, 0>, mode = #synap<pad_mode {mode}>}} : "
        f"(tensor<1x3x4x2xf32>) -> tensor<1x3x{width}x2xf32>\n"
        f"  func.return %0 : tensor<1x3x{width}x2xf32>\n}}\n"
    )
    x = np.random.default_rng(0).standard_normal((1, 1, 4, 2)).astype(np.float32)
    x = np.repeat(x, 3, axis=1)
    widths = [(0, 0), (0, 0), (before, after), (0, 0)]
    got = np.asarray(_compile(text).run([x])[0])
    np.testing.assert_array_equal(got, np.pad(x, widths, mode=mode))


def test_a_pad_many_times_its_axis_compiles_quickly() -> None:
    start = time.perf_counter()
    exe = _compile(FINDING.read_text())
    x = np.arange(48, dtype=np.float32).reshape(1, 4, 4, 3)
    q = np.array([10, 11, 12], np.uint8)
    outputs = exe.run([x, q])
    assert time.perf_counter() - start < 60
    want = np.pad(x, [(0, 0), (5, 1), (0, 65536), (0, 0)], mode="wrap")
    np.testing.assert_array_equal(np.asarray(outputs[7]), want)
