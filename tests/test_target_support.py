"""Target descriptions and NPU support: every number says where it comes from, the
vendor's operator table ships and is read strictly, constraint functions give engines
and reasons, and `synapc support` prints the per-layer table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import synapc
from synapc.backends.targets import ASSUMED, PUBLISHED, TARGETS, get_target
from synapc.backends.targets.operator_table import lookup, operator_table, parse_table
from synapc.backends.targets.support import (
    TABLE_OPERATORS,
    convolution_on_cores,
    layer_support,
)
from synapc.errors import SynapcError
from synapc.mlir_io import parse_module
from synapc.weights import WeightStore

REPO = Path(__file__).resolve().parents[1]
U8 = "!quant.uniform<u8:f32, 0.05:128>"
W8 = "!quant.uniform<u8:f32, 0.02:120>"


def _op(body: str, operands: str):
    """The first op of a function with arguments `operands` and body `body`."""
    text = f"func.func @f({operands}) {{\n  {body}\n  func.return\n}}"
    module = parse_module(text, WeightStore())
    func = next(iter(module.ops))
    return next(iter(func.body.block.ops))


def _conv(kernel: int, stride: int, dilation: int = 1):
    out = (8 - (kernel - 1) * dilation - 1) // stride + 1 if kernel * dilation <= 8 else 1
    pad = "" if kernel * dilation <= 8 else ", pad = array<i64: 8, 8, 8, 8>"
    if pad:
        out = (8 + 16 - (kernel - 1) * dilation - 1) // stride + 1
    props = (
        f"{{strides = array<i64: {stride}, {stride}>, "
        f"dilations = array<i64: {dilation}, {dilation}>{pad}}}"
    )
    return _op(
        f"%y = synap.conv2d %x, %w {props} : (tensor<1x8x8x4x{U8}>, "
        f"tensor<4x{kernel}x{kernel}x4x{W8}>) -> tensor<1x{out}x{out}x4x{U8}>",
        f"%x: tensor<1x8x8x4x{U8}>, %w: tensor<4x{kernel}x{kernel}x4x{W8}>",
    )


def test_every_number_says_where_it_comes_from() -> None:
    for target in TARGETS.values():
        for name, fact in target.facts():
            assert fact.origin in (PUBLISHED, ASSUMED), (target.name, name)
            assert len(fact.source) > 10, (target.name, name)
            assert fact.value > 0, (target.name, name)
    vs680 = get_target("dolphin")
    assert vs680.convolution_cores == 22 and vs680.tensor_processors == 8
    assert vs680.sram_bytes is not None and vs680.sram_bytes.origin == ASSUMED
    assert get_target("GENERIC").facts() == []


def test_the_vendor_table_ships_as_package_data() -> None:
    table = operator_table()
    assert len(table) > 100 and {"CONV2D", "RESIZE", "SOFTMAX"} <= table.keys()
    row = lookup("CONV2D", ("asym-i8", "pc-sym-i8", "asym-i8"))
    assert row is not None and row.engines == ("NN", "PPU")
    assert lookup("ARGMAX", ("fp16", "int32")) is not None  # alternatives of one position
    assert lookup("RESIZE", ("dfp-i16", "dfp-i16")) is None
    named = {e if isinstance(e, str) else None for e in TABLE_OPERATORS.values()}
    assert named - {None} <= table.keys()  # every operator synapc names is in the table


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("op,category\n", "header"),
        ("category,operator,types,engines\nbasic,CONV2D,u8->u8\n", ":2: expected 4 fields"),
        ("category,operator,types,engines\nbasic,CONV2D,u8,NN\n", ":2: types 'u8'"),
        (
            "category,operator,types,engines\nbasic,CONV2D,u8->u8,GPU\n",
            "unknown engine 'GPU'",
        ),
    ],
)
def test_a_malformed_table_is_refused_naming_the_line(text: str, message: str) -> None:
    with pytest.raises(SynapcError, match=message):
        parse_table(text, "t.csv")


def test_convolutions_leave_the_cores_by_the_published_rule() -> None:
    target = get_target("VS680")
    on_cores = layer_support(_conv(3, 1), target)
    assert on_cores.engine == "NN" and "runs on NN" in on_cores.reason
    big = _conv(17, 2)
    assert convolution_on_cores(big) == "stride 2x2 and a 17x17 kernel"
    support = layer_support(big, target)
    assert support.engine == "TP"
    assert support.reason == "CONV2D with stride 2x2 and a 17x17 kernel: TP, not NN"
    assert convolution_on_cores(_conv(5, 1, dilation=4)) == (
        "a dilated kernel extent of 17x17"
    )
    assert convolution_on_cores(_conv(15, 1)) is None


def test_unsupported_types_and_ops_fall_back_with_their_reason() -> None:
    i16 = "!quant.uniform<i16:f32, 0.0078125>"  # dynamic fixed point; resize: nearest
    resize = _op(
        f"%y = synap.resize %x : (tensor<1x4x4x3x{i16}>) -> tensor<1x8x8x3x{i16}>",
        f"%x: tensor<1x4x4x3x{i16}>",
    )
    support = layer_support(resize, get_target("VS680"))
    assert not support.supported
    assert support.reason == "RESIZE dfp-i16->dfp-i16: not supported on the NPU"
    top_k = _op(
        "%v, %i = synap.top_k %x {k = 2 : i64} : (tensor<1x5xf32>) -> "
        "(tensor<1x2xf32>, tensor<1x2xi64>)",
        "%x: tensor<1x5xf32>",
    )
    support = layer_support(top_k, get_target("VS640"))
    assert support.engine is None and "TOP_K: no NPU operator" in support.reason
    assert layer_support(top_k, get_target("GENERIC")).reason == "GENERIC has no NPU"


def _support(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "synapc.cli", "support", *args],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip


def test_support_command_prints_every_layer(tmp_path: Path) -> None:
    model = str(REPO / "examples" / "tiny_classifier.onnx")
    result = _support(model, "--target", "VS680")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["#", "layer", "op", "types", "engine", "reason"]
    compiled = synapc.optimize(synapc.import_model(model))
    layers = [op for op in compiled.main.body.block.ops if op.name not in (
        "synap.constant", "func.return")]  # fmt: skip
    assert lines[-1].startswith(f"VS680: {len(layers)} layers:")
    for name in ("conv1", "dw2", "pw3", "fc", "softmax"):
        assert any(f" {name} " in line for line in lines), name
    meta = tmp_path / "q.yaml"
    meta.write_text(
        "inputs:\n  - name: image\n    shape: [1, 3, 64, 64]\n"
        "quantization:\n  data_type: uint8\n  dataset: [random]\n"
    )
    quantized = _support(model, "--target", "VS680", "--meta", str(meta))
    assert quantized.returncode == 0, quantized.stderr
    assert "CONV2D asym-u8->asym-u8->asym-u8 runs on NN" in quantized.stdout
    assert "CONV2D with stride 2x2: TP, not NN" in quantized.stdout
    for bad, message in (
        (("--target", "VS999"), "unknown target 'VS999'"),
        (("--target", "VS680", "--meta", str(tmp_path / "none.yaml")), "none.yaml"),
    ):
        result = _support(model, *bad)
        assert result.returncode == 1 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    missing = _support(str(tmp_path / "missing.onnx"), "--target", "VS680")
    assert missing.returncode == 1 and "missing.onnx: no such model file" in missing.stderr
