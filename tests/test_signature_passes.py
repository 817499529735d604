"""The metafile's signature rewrites as passes (`describe-io`, `apply-layout`,
`dequantize-outputs`), the I/O description on `@main` (synapc/io_attributes.py), and the
one conversion pipeline that `synapc convert --print-pipeline` prints and `synapc-opt`
replays."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import synapc
from synapc.cli import main
from synapc.convert.pipeline import pipeline, run_pipeline
from synapc.io_attributes import (
    FORMAT,
    LAYOUT,
    MEANS,
    SCALE,
    io_float,
    io_floats,
    io_string,
)
from synapc.metafile import parse_metafile
from synapc.model import Model
from synapc.opt import run as opt
from synapc.weights import WeightStore

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "tiny_classifier.onnx"
EXAMPLE_META = REPO / "examples" / "tiny_classifier.yaml"

QUANTIZED = """
func.func @main(%x: tensor<1x4xf32> {synap.name = "x"}) -> (
    tensor<1x4x!quant.uniform<i8:f32, 0.5:3>> {synap.name = "a"},
    tensor<1x4x!quant.uniform<i8:f32, 0.25>> {synap.name = "b"}) {
  %a = synap.quantize %x : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<i8:f32, 0.5:3>>
  %b = synap.quantize %x : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<i8:f32, 0.25>>
  func.return %a, %b
    : tensor<1x4x!quant.uniform<i8:f32, 0.5:3>>, tensor<1x4x!quant.uniform<i8:f32, 0.25>>
}
"""

IDENTITY = """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
"""


def _run(model: Model, *inputs: np.ndarray) -> list[np.ndarray]:
    return [np.asarray(y) for y in synapc.compile(model, "GENERIC").run(list(inputs))]


def _text_model(text: str) -> Model:
    weights = WeightStore()
    return Model.from_module(synapc.parse_module(text, weights), weights)


def test_importer_names_survive_a_synapc_opt_round_trip() -> None:
    model = synapc.import_model(EXAMPLE)
    assert [i.name for i in model.inputs] == ["image"]
    assert io_string(model.main, "input", 0, LAYOUT) == "nchw"
    text = io.StringIO()
    synapc.write_module(model.module, text, model.weights)
    weights = WeightStore()
    again = Model.from_module(synapc.parse_module(text.getvalue(), weights), weights)
    assert again.inputs == model.inputs and again.outputs == model.outputs


def test_names_fall_back_to_input_i() -> None:
    model = _text_model(IDENTITY)
    assert [i.name for i in model.inputs] == ["input_0"]
    assert [o.name for o in model.outputs] == ["output_0"]


def test_apply_layout_runs_the_same_model_in_nhwc() -> None:
    model = synapc.import_model(EXAMPLE)
    nhwc = run_pipeline(model, "apply-layout{layout=nhwc}")
    assert nhwc.inputs[0].shape == (1, 64, 64, 3) and nhwc.inputs[0].name == "image"
    assert io_string(nhwc.main, "input", 0, LAYOUT) == "nhwc"
    x = np.random.default_rng(0).normal(0, 1, (1, 3, 64, 64)).astype(np.float32)
    (want,) = _run(model, x)
    (got,) = _run(nhwc, x.transpose(0, 2, 3, 1).copy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # and back: nchw again runs the original signature
    back = run_pipeline(nhwc, "apply-layout{layout=nchw},optimize")
    assert back.inputs[0].shape == (1, 3, 64, 64)
    np.testing.assert_allclose(_run(back, x)[0], want, rtol=1e-5, atol=1e-6)


def test_dequantize_outputs_gives_the_dequantized_values() -> None:
    model = _text_model(QUANTIZED)
    x = np.array([[-1.3, 0.2, 7.0, 30.0]], np.float32)
    a, b = _run(model, x)
    one = run_pipeline(model, "dequantize-outputs{outputs=1}")
    assert one.outputs[0].quantization is not None and one.outputs[1].quantization is None
    assert [o.name for o in one.outputs] == ["a", "b"]
    got_a, got_b = _run(one, x)
    np.testing.assert_array_equal(got_a, a)
    np.testing.assert_array_equal(got_b, b.astype(np.float32) * np.float32(0.25))
    every = run_pipeline(model, "dequantize-outputs")
    assert all(o.quantization is None for o in every.outputs)
    np.testing.assert_array_equal(_run(every, x)[0], (a.astype(np.float32) - 3) * 0.5)


def test_describe_io_only_records_attributes() -> None:
    model = synapc.import_model(EXAMPLE)
    described = run_pipeline(
        model,
        'describe-io{input=0 format="rgb" means=1,2.5,3 scale=58.4},'
        'describe-io{output=0 format="confidence_array"}',
    )
    func = described.main
    assert io_string(func, "input", 0, FORMAT) == "rgb"
    assert io_floats(func, "input", 0, MEANS) == (1.0, 2.5, 3.0)
    assert io_float(func, "input", 0, SCALE) == 58.4
    assert io_string(func, "output", 0, FORMAT) == "confidence_array"
    x = np.random.default_rng(1).normal(0, 1, (1, 3, 64, 64)).astype(np.float32)
    np.testing.assert_array_equal(_run(described, x)[0], _run(model, x)[0])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ('describe-io{format="rgb"}', "exactly one of input=INDEX, output=INDEX"),
        ("describe-io{output=0 scale=2}", "means and scale describe inputs only"),
        ('describe-io{input=3 format="rgb"}', "input=3: @main has 1 inputs"),
        ("apply-layout{layout=hwc}", "layout=hwc: expected one of nhwc, nchw"),
        ("dequantize-outputs{outputs=5}", "outputs=5: @main has 1 outputs"),
    ],
)
def test_bad_pass_options_are_one_line_errors(
    spec: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "m.mlir"
    source.write_text(IDENTITY)
    assert opt([str(source), "-p", spec]) == 1
    assert message in capsys.readouterr().err


def test_pipeline_follows_the_metafile() -> None:
    model = synapc.import_model(EXAMPLE)
    meta = parse_metafile(
        "data_layout: nhwc\ndequantize_outputs: true\n"
        "inputs:\n  - means: [0.00001, 2, 3]\n    scale: 2\n    format: rgb\n"
        "outputs:\n  - format: 'confidence_array class_index_base=0'\n"
    )
    assert pipeline(model, meta, "meta.yaml", "nchw") == (
        'describe-io{input=0 format="rgb" means=1.0e-05,2.0,3.0 scale=2.0},'
        'describe-io{output=0 format="confidence_array class_index_base=0"},'
        "apply-layout{layout=nhwc},optimize"  # the float output needs no dequantize
    )
    assert pipeline(model, parse_metafile("{}"), "metafile", "nchw") == "optimize"


def test_print_pipeline_is_what_convert_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    meta = tmp_path / "meta.yaml"
    meta.write_text(EXAMPLE_META.read_text() + "data_layout: nhwc\n")
    args = ["convert", "--model", str(EXAMPLE), "--meta", str(meta), "--target", "VS680"]
    assert main([*args, "--print-pipeline"]) == 0
    spec = capsys.readouterr().out.strip()
    assert spec.endswith(
        "apply-layout{layout=nhwc},optimize,place-layers{target=VS680},"
        "partition{default=npu},"
        "plan-memory{alignment=64 sram-bytes=1048576 npu-float-bytes=2}"
    )
    assert spec.startswith('describe-io{input=0 format="rgb" means=123.675,116.28,103.53')
    out = tmp_path / "out"
    assert not out.exists()
    assert main([*args, "--out-dir", str(out), "--preserve", "--silent"]) == 0
    stages = out / "intermediate"
    replayed = tmp_path / "replayed.mlir"
    imported = str(stages / "00_imported.mlir")
    assert opt([imported, "-p", spec, "--elide-weights", "-o", str(replayed)]) == 0
    assert replayed.read_text() == (stages / "03_placed.mlir").read_text()
    network = synapc.Network(out / "model.synap")
    assert network.inputs[0].layout == "nhwc" and network.inputs[0].format == "rgb"
    assert network.inputs[0].scale == pytest.approx(58.4)


def test_convert_needs_an_out_dir_unless_printing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["convert", "--model", str(EXAMPLE), "--target", "VS680"]) == 1
    assert "--out-dir is required" in capsys.readouterr().err
