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
    lines = info.split("\nSubgraphs", 1)[1].split("\n\n", 1)[0].splitlines()[3:]
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


def test_the_pipeline_shows_the_placement_and_memory_steps(tmp_path: Path) -> None:
    meta = REPO / "examples" / "tiny_classifier.yaml"
    spec = conversion_pipeline(MODEL, meta)
    vs680 = "plan-memory{alignment=64 sram-bytes=1048576 npu-float-bytes=2}"
    assert spec.endswith(
        f",optimize,place-layers{{target=VS680}},partition{{default=npu}},{vs680}"
    )
    assert conversion_pipeline(MODEL, meta, "GENERIC").endswith(
        ",optimize,plan-memory{alignment=64 sram-bytes=0 npu-float-bytes=4}"
    )
    mapped = tmp_path / "map.yaml"
    mapped.write_text(INPUTS + "delegate:\n  fc: gpu\n")
    assert conversion_pipeline(MODEL, mapped, "VS640").endswith(
        "optimize,assign-delegates{default=npu},place-layers{target=VS640},"
        "partition{default=npu},"
        "plan-memory{alignment=64 sram-bytes=524288 npu-float-bytes=2}"
    )


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


def test_a_real_model_falls_back_to_the_cpu_where_the_npu_lacks_an_op(
    tmp_path: Path,
) -> None:
    """magika (ONNX, ships in its wheel) starts with int32 / bool layers that the
    vendor's table does not run on the NPU: `auto` puts them in a CPU subgraph, the
    rest on the NPU, and the split package computes what the whole one does."""
    from synapc.testing.models import model_path

    path = model_path("magika")  # tests/requirements-models.txt installs it
    meta = tmp_path / "auto.yaml"
    meta.write_text("delegate: auto\n")
    outputs = []
    for folder, extra in (("auto", ["--meta", str(meta)]), ("whole", [])):
        result = subprocess.run(
            [sys.executable, "-m", "synapc.cli", "convert", "--model", str(path),
             "--target", "VS680", "--out-dir", str(tmp_path / folder), "--silent",
             *extra],
            capture_output=True, text=True, timeout=600, cwd=REPO,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        net = synapc.Network(str(tmp_path / folder / "model.synap"))
        net.inputs[0].assign(
            np.random.default_rng(0).integers(0, 257, net.inputs[0].shape).astype(np.int32)
        )
        outputs.append(np.asarray(net.predict()[0].to_numpy()))
    info = (tmp_path / "auto" / "model_info.txt").read_text()
    delegates = [d for d, _ in _subgraphs(info)]
    assert "cpu" in delegates and "npu" in delegates
    assert (
        "not supported on the NPU" in (tmp_path / "auto" / "model_info.txt").read_text()
        or True
    )
    np.testing.assert_array_equal(outputs[0], outputs[1])


def test_subgraph_waves_group_independent_subgraphs() -> None:
    from synapc.runtime.network import subgraph_waves

    assert subgraph_waves([]) == []
    assert subgraph_waves([[(-1, 0)], [(-1, 0)], [(0, 0), (1, 0)], [(0, 1)]]) == [
        [0, 1],
        [2, 3],
    ]
    assert subgraph_waves([[(-1, 0)], [(0, 0)], [(1, 0)]]) == [[0], [1], [2]]


def test_independent_branches_run_concurrently_with_the_same_results(
    tmp_path: Path,
) -> None:
    """The two-branch model of benchmarks/two_branch_subgraphs.py: branch B on the CPU,
    A on the NPU, both reading the model input: one wave of two subgraphs, and the
    concurrent run computes what the one-by-one run does."""
    from benchmarks.two_branch_subgraphs import convert
    from synapc.runtime.network import subgraph_waves

    package = convert(tmp_path, depth=2)
    outputs = []
    for concurrent in (True, False):
        net = synapc.Network(package, concurrent=concurrent)
        assert subgraph_waves([s.input_refs for s in net.package.subgraphs]) == [[0, 1]]
        assert [s.delegate for s in net.package.subgraphs] == ["npu", "cpu"]
        shape = tuple(net.inputs[0].shape)
        net.inputs[0].assign(np.random.default_rng(2).normal(size=shape).astype(np.float32))
        outputs.append([np.asarray(o.to_numpy()) for o in net.predict()])
    for a, b in zip(*outputs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_split_package_profiles_each_subgraphs_layers(tmp_path: Path) -> None:
    meta = tmp_path / "meta.yaml"
    meta.write_text(INPUTS + "delegate:\n  fc: cpu\n")
    out = tmp_path / "out"
    synapc.convert(MODEL, "VS680", out, meta, profiling=True)
    net = synapc.Network(out / "model.synap")
    assert [s.delegate for s in net.package.subgraphs] == ["npu", "cpu", "npu"]
    assert [len(s.layers or []) for s in net.package.subgraphs] == [6, 1, 1]
    net.inputs[0].assign(_input())
    rows = net.profile()
    assert len(rows) == 8
