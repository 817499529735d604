"""`synapc-opt` and `synapc` as users run them: console scripts, weights through
passes, pass pipelines with options, and one-line errors for bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from synapc.mlir_io import parse_module, print_module, write_module
from synapc.weights import WeightStore

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "tiny_cnn.mlir"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / args[0]), *args[1:]],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_example_round_trips_with_weights_through_cleanup_passes(tmp_path) -> None:
    out = tmp_path / "out.mlir"
    result = run("synapc-opt", str(EXAMPLE), "-p", "canonicalize,cse,dce", "-o", str(out))
    assert result.returncode == 0, result.stderr
    original, after = WeightStore(), WeightStore()
    parse_module(EXAMPLE.read_text(), original)
    parse_module(out.read_text(), after)
    assert set(after) <= set(original) and len(after) > 0
    for handle in after:
        assert after[handle].tobytes() == original[handle].tobytes()


def test_output_is_a_fixed_point_of_parse_and_print(tmp_path) -> None:
    first = run("synapc-opt", str(EXAMPLE))
    second = run("synapc-opt", stdin=first.stdout)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout == second.stdout
    assert "{-#" in first.stdout


def test_elide_weights_prints_handles_only() -> None:
    result = run("synapc-opt", str(EXAMPLE), "--elide-weights")
    assert result.returncode == 0 and "dense_resource<" in result.stdout
    assert "{-#" not in result.stdout


def test_print_ir_after_all_shows_every_stage() -> None:
    result = run(
        "synapc-opt",
        str(EXAMPLE),
        "-p",
        "canonicalize,cse",
        "--print-ir-after-all",
        "--elide-weights",
    )
    assert result.returncode == 0, result.stderr
    assert "IR Dump After canonicalize" in result.stderr
    assert "IR Dump After cse" in result.stderr


def test_canonicalize_removes_identities(tmp_path) -> None:
    text = """
func.func @f(%x: tensor<1x4xf32>) -> tensor<4x1xf32> {
  %a = synap.reshape %x : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = synap.transpose %a {perm = array<i64: 1, 0>} : (tensor<1x4xf32>) -> tensor<4x1xf32>
  %c = synap.transpose %b {perm = array<i64: 1, 0>} : (tensor<4x1xf32>) -> tensor<1x4xf32>
  %d = synap.reshape %c : (tensor<1x4xf32>) -> tensor<4xf32>
  %e = synap.reshape %d : (tensor<4xf32>) -> tensor<4x1xf32>
  func.return %e : tensor<4x1xf32>
}"""
    result = run("synapc-opt", "-p", "canonicalize", stdin=text)
    assert result.returncode == 0, result.stderr
    body = result.stdout
    assert body.count("synap.reshape") == 1 and "synap.transpose" not in body


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["/no/such/file.mlir"], None, "No such file or directory"),
        ([], "func.func @f( {", "Expected"),
        (["-p", "no-such-pass"], "builtin.module {}", "no-such-pass"),
        (["-p", "cse{bogus=1}"], "builtin.module {}", "bogus"),
        (
            [],
            "func.func @f(%x: tensor<2xf32>) -> tensor<3xf32> {\n"
            "  %y = synap.sigmoid %x : (tensor<2xf32>) -> tensor<3xf32>\n"
            "  func.return %y : tensor<3xf32>\n}",
            "result #0 shape [3] should be [2]",
        ),
        (
            [],
            'builtin.module {}\n{-#\n dialect_resources: { builtin: { w: "0x1" } }\n#-}',
            "odd number of hex digits",
        ),
    ],
)
def test_bad_input_is_one_line_without_traceback(args, stdin, message) -> None:
    result = run("synapc-opt", *args, stdin=stdin)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("synapc-opt")


def test_synapc_forwards_opt_and_reports_version() -> None:
    version = run("synapc", "--version")
    assert version.returncode == 0 and version.stdout.startswith("synapc ")
    forwarded = run("synapc", "opt", str(EXAMPLE), "--elide-weights")
    assert forwarded.returncode == 0 and "synap.conv2d" in forwarded.stdout


def test_large_blob_written_by_library_is_read_by_tool(tmp_path) -> None:
    from xdsl.dialects.builtin import FunctionType, ModuleOp
    from xdsl.dialects.func import FuncOp, ReturnOp

    store = WeightStore()
    weights = np.random.default_rng(3).standard_normal(300_000).astype(np.float32)
    func = FuncOp("w", ([], []))
    c = store.constant(weights, "big")
    func.body.block.add_ops([c, ReturnOp(c.results[0])])
    func.function_type = FunctionType.from_lists([], [c.results[0].type])
    path = tmp_path / "big.mlir"
    write_module(ModuleOp([func]), path, store)
    out = tmp_path / "out.mlir"
    assert run("synapc-opt", str(path), "-o", str(out)).returncode == 0
    loaded = WeightStore()
    parse_module(out.read_text(), loaded)
    assert loaded["big"].tobytes() == weights.tobytes()
    assert print_module(parse_module(out.read_text(), WeightStore())) in out.read_text()
