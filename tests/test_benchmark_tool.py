"""`synapc benchmark` (synapc/tools/benchmark.py) on a small package with per-layer
programs: the TFLite-style report, the --profiling table and the error cases."""

from __future__ import annotations

import argparse
import io
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from synapc.backends.jax.export import export_program
from synapc.backends.package import ProfiledLayer, Subgraph, TensorSpec, build_package
from synapc.errors import SynapcError
from synapc.tools.benchmark import add_arguments, run

X = TensorSpec("x", (4, 8), "float32")
H = TensorSpec("h", (4, 16), "float32")
Y = TensorSpec("y", (4, 16), "float32")


def _dense(params: dict[str, jax.Array], x: jax.Array) -> list[jax.Array]:
    return [jax.nn.relu(x @ params["w"])]


def _scale(params: dict[str, jax.Array], h: jax.Array) -> list[jax.Array]:
    return [h * params["s"] + 1.0]


def _whole(params: dict[str, jax.Array], x: jax.Array) -> list[jax.Array]:
    return _scale(params, _dense(params, x)[0])


def _package(path: Path, profiling: bool) -> Path:
    """x -> dense -> scale -> y, with one program per layer when `profiling`."""
    rng = np.random.default_rng(0)
    w = jnp.asarray(rng.normal(size=(8, 16)).astype(np.float32))
    s = jnp.float32(0.5)
    xs = jax.ShapeDtypeStruct((4, 8), np.float32)
    hs = jax.ShapeDtypeStruct((4, 16), np.float32)
    whole, weights = export_program(_whole, {"w": w, "s": s}, [xs])
    layers = layer_outputs = None
    if profiling:
        dense = export_program(_dense, {"w": w}, [xs])
        scale = export_program(_scale, {"s": s}, [hs])
        layers = [
            ProfiledLayer("fc1", "synap.fully_connected", *dense, [(-1, 0)]),
            ProfiledLayer("mul2", "synap.mul", *scale, [(0, 0)]),
        ]
        layer_outputs = [(1, 0)]
    data = build_package(
        target="VS680",
        source={"model": "m.tflite", "sha256": "0", "synapc": "0"},
        inputs=[X],
        outputs=[Y],
        output_refs=[(0, 0)],
        subgraphs=[
            Subgraph("npu", whole, weights, [X], [Y], [(-1, 0)], layers, layer_outputs)
        ],
    )
    path.write_bytes(data)
    return path


def _run(*argv: str) -> str:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = io.StringIO()
    assert run(parser.parse_args(list(argv)), out) == 0
    return out.getvalue()


def test_report(tmp_path: Path) -> None:
    path = _package(tmp_path / "plain.synap", profiling=False)
    text = _run("--model", str(path), "--num-runs", "7", "--warmup-runs", "2")
    assert f"Graph: [{path}]" in text
    assert re.search(r"^Init: \d+ us$", text, re.M)
    assert re.search(
        r"^count=7 first=\d+ curr=\d+ min=\d+ max=\d+ avg=[\d.]+ std=\d+$", text, re.M
    )
    assert re.search(
        r"^Inference timings in us: Init: \d+, First inference: \d+, "
        r"Warmup \(avg\): [\d.]+, Inference \(avg\): [\d.]+$",
        text,
        re.M,
    )
    assert re.search(
        r"^Peak memory footprint \(MB\): init=[\d.]+ overall=[\d.]+$", text, re.M
    )
    assert "Per-layer" not in text


def test_profiling_table(tmp_path: Path) -> None:
    path = _package(tmp_path / "profiled.synap", profiling=True)
    text = _run("--model", str(path), "--num-runs", "2", "--profiling")
    table = text[text.index("Per-layer profile") :].splitlines()
    assert table[1].split() == ["layer", "type", "time", "(us)", "share", "(%)"]
    rows = [line.split() for line in table[2:] if not line.startswith("-")]
    assert [r[:2] for r in rows[:2]] == [
        ["fc1", "synap.fully_connected"],
        ["mul2", "synap.mul"],
    ]
    assert rows[2][0] == "total" and rows[2][-1] == "100.0"
    assert sum(float(r[-1]) for r in rows[:2]) == pytest.approx(100.0, abs=0.2)
    assert float(rows[2][1]) == pytest.approx(sum(float(r[2]) for r in rows[:2]), abs=0.2)


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(SynapcError, match=r"missing\.synap: no such file"):
        _run("--model", str(tmp_path / "missing.synap"))
    plain = _package(tmp_path / "plain.synap", profiling=False)
    with pytest.raises(SynapcError, match="built without --profiling"):
        _run("--model", str(plain), "--profiling")
    with pytest.raises(SynapcError, match="--num-runs 0"):
        _run("--model", str(plain), "--num-runs", "0")
    corrupt = tmp_path / "corrupt.synap"
    data = bytearray(plain.read_bytes())
    data[len(data) // 2] ^= 0xFF
    corrupt.write_bytes(bytes(data))
    with pytest.raises(SynapcError, match="corrupt"):
        _run("--model", str(corrupt))
