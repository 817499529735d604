"""`delegate` in a metafile: a map, `auto`, `gpu` / `cpu` split the model into
subgraphs that `model.synap` stores one executable each of, that `model_info.txt`
lists, and that `synapc.Network` runs in order; bad maps are clear errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import synapc
from synapc.convert.convert import conversion_pipeline

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "tiny_classifier.onnx"
INPUTS = "inputs:\n  - name: image\n    shape: [1, 3, 64, 64]\n"


def _convert(
    tmp_path: Path, delegate: str, target: str = "VS680"
) -> subprocess.CompletedProcess:
    meta = tmp_path / "meta.yaml"
    meta.write_text(INPUTS + delegate)
    return subprocess.run(
        [sys.executable, "-m", "synapc.cli", "convert", "--model", str(MODEL), "--meta",
         str(meta), "--target", target, "--out-dir", str(tmp_path / "out"), "--silent"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip


def _predict(package: Path, x: np.ndarray) -> np.ndarray:
    net = synapc.Network(str(package))
    net.inputs[0].assign(x)
    return np.asarray(net.predict()[0].to_numpy(), np.float32)


def _subgraphs(info: str) -> list[tuple[str, int]]:
    lines = info.split("Subgraphs\n", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    return [(line.split()[1], int(line.split()[4])) for line in lines]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    out = tmp_path_factory.mktemp("whole")
    result = _convert(out, "")
    assert result.returncode == 0, result.stderr
    return _predict(out / "out" / "model.synap", _input())


def _input() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(1, 3, 64, 64)).astype(np.float32)


@pytest.mark.parametrize(
    ("delegate", "expected"),
    [
        ("delegate:\n  '*': npu\n  fc: cpu\n", [("npu", 6), ("cpu", 1), ("npu", 1)]),
        ("delegate:\n  'gap...': gpu\n", [("npu", 5), ("gpu", 3)]),
        ("delegate:\n  '@4': cpu\n", [("npu", 2), ("cpu", 1), ("npu", 5)]),
        ("delegate: cpu\n", [("cpu", 8)]),
        ("delegate: auto\n", [("npu", 8)]),
    ],
)
def test_a_delegate_splits_the_package(
    tmp_path: Path, reference: np.ndarray, delegate: str, expected: list
) -> None:
    result = _convert(tmp_path, delegate)
    assert result.returncode == 0, result.stderr
    info = (tmp_path / "out" / "model_info.txt").read_text()
    assert _subgraphs(info) == expected
    actual = _predict(tmp_path / "out" / "model.synap", _input())
    # float16 on the NPU / GPU, float32 on the CPU: the same within fp16 rounding
    np.testing.assert_allclose(actual, reference, atol=2e-3)


def test_the_pipeline_shows_the_placement_steps() -> None:
    meta = REPO / "examples" / "tiny_classifier.yaml"
    assert "partition" not in conversion_pipeline(MODEL, meta)


@pytest.mark.parametrize(
    ("delegate", "target", "message"),
    [
        ("delegate: gpu\n", "GENERIC", "delegate: GENERIC has no 'gpu' delegate"),
        ("delegate:\n  nope: cpu\n", "VS680", "delegate: 'nope': no layer named 'nope'"),
        ("delegate:\n  '@999': cpu\n", "VS680", "no layer has operator index 999"),
        ("delegate:\n  '999': cpu\n", "VS680", "no layer has operator index 999"),
        ("delegate: tpu\n", "VS680", "delegate"),
    ],
)
def test_bad_delegates_are_clear_errors(
    tmp_path: Path, delegate: str, target: str, message: str
) -> None:
    result = _convert(tmp_path, delegate, target)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out" / "model.synap").exists()
