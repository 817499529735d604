"""`synapc convert` / `synapc.convert`: packages that a fresh process loads with
`synapc.Network` and runs to the same outputs as `synapc.compile(...).run`, byte-identical
re-conversion, the cache, metafile-driven signatures (data layout, dequantized outputs,
cut outputs), model_info.txt, and one-line errors that leave nothing half-written."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest

import synapc
from synapc.cli import main
from synapc.testing.tflite_builder import ModelBuilder, Quant

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "tiny_classifier.onnx"
EXAMPLE_META = REPO / "examples" / "tiny_classifier.yaml"

#: Runs a package in a fresh process: inputs from x{i}.npy, outputs to y{i}.npy.
RUNNER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import numpy as np
    import synapc
    folder = Path(sys.argv[1])
    network = synapc.Network(folder / "model.synap")
    for i, tensor in enumerate(network.inputs):
        tensor.assign(np.load(folder / f"x{i}.npy"))
    for i, tensor in enumerate(network.predict()):
        np.save(folder / f"y{i}.npy", tensor.to_numpy())
    loaded = sorted(m for m in sys.modules if m.startswith(("xdsl", "synapc.importers",
                                                             "synapc.dialects")))
    assert not loaded, loaded
    """
)


def _run_fresh(folder: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    for i, x in enumerate(inputs):
        np.save(folder / f"x{i}.npy", x)
    subprocess.run([sys.executable, "-c", RUNNER, str(folder)], check=True)
    return [np.load(p) for p in sorted(folder.glob("y*.npy"))]


def _tflite_cnn(path: Path, quantized: bool) -> Path:
    """conv 3x3 + relu, max pool, reshape, fully connected: float32 or int8 (per-channel
    weights)."""
    rng = np.random.default_rng(7)
    b = ModelBuilder()

    def q(scale: float, zp: int = 0) -> Quant | None:
        return Quant(scale, zp) if quantized else None

    act = np.int8 if quantized else np.float32
    x = b.input("image", [1, 8, 8, 3], act, quant=q(0.02, -5))
    w = rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32)
    bias = rng.normal(0, 0.1, 4).astype(np.float32)
    if quantized:
        w_scale = np.abs(w).reshape(4, -1).max(1) / 127
        wq = np.round(w / w_scale[:, None, None, None]).astype(np.int8)
        wt = b.constant("conv.w", wq, quant=Quant(w_scale, 0, axis=0))
        bt = b.constant(
            "conv.b",
            np.round(bias / (0.02 * w_scale)).astype(np.int32),
            quant=Quant(0.02 * w_scale, 0, axis=0),
        )
    else:
        wt, bt = b.constant("conv.w", w), b.constant("conv.b", bias)
    conv = b.tensor("conv", [1, 8, 8, 4], act, quant=q(0.05, -128))
    b.op(
        "CONV_2D",
        [x, wt, bt],
        [conv],
        padding="SAME",
        stride_w=1,
        stride_h=1,
        fused_activation_function="RELU",
    )
    pool = b.tensor("pool", [1, 4, 4, 4], act, quant=q(0.05, -128))
    b.op(
        "MAX_POOL_2D",
        [conv],
        [pool],
        padding="VALID",
        stride_w=2,
        stride_h=2,
        filter_width=2,
        filter_height=2,
    )
    flat = b.tensor("flat", [1, 64], act, quant=q(0.05, -128))
    b.op("RESHAPE", [pool, b.constant("shape", np.array([1, 64], np.int32))], [flat])
    fw = rng.normal(0, 0.2, (5, 64)).astype(np.float32)
    if quantized:
        fwt = b.constant("fc.w", np.round(fw / 0.01).astype(np.int8), quant=Quant(0.01, 0))
        fbt = b.constant("fc.b", np.zeros(5, np.int32), quant=Quant(0.05 * 0.01, 0))
    else:
        fwt, fbt = b.constant("fc.w", fw), b.constant("fc.b", np.zeros(5, np.float32))
    logits = b.tensor("logits", [1, 5], act, quant=q(0.1, 3))
    b.op("FULLY_CONNECTED", [flat, fwt, fbt], [logits])
    b.output(logits)
    return b.save(path)


def _input_for(info: synapc.TensorInfo, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(info.dtype, np.integer):
        limits = np.iinfo(info.dtype)
        return rng.integers(limits.min, limits.max, info.shape, endpoint=True).astype(
            info.dtype
        )
    return rng.normal(0, 1, info.shape).astype(info.dtype)


@pytest.mark.parametrize("kind", ["tflite_float", "tflite_int8", "onnx"])
def test_fresh_process_matches_compile(kind: str, tmp_path: Path) -> None:
    if kind == "onnx":
        path = EXAMPLE
    else:
        path = _tflite_cnn(tmp_path / f"{kind}.tflite", kind == "tflite_int8")
    out = tmp_path / "out"
    result = synapc.convert(path, "VS680", out)
    assert result.package.is_file() and result.model_info.is_file()
    model = synapc.import_model(path)
    rng = np.random.default_rng(1)
    inputs = [_input_for(i, rng) for i in model.inputs]
    want = synapc.compile(model, "VS680").run(inputs)
    got = _run_fresh(out, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_convert_twice_is_byte_identical_and_cached(tmp_path: Path) -> None:
    first = synapc.convert(EXAMPLE, "VS680", tmp_path / "a", EXAMPLE_META)
    second = synapc.convert(EXAMPLE, "VS680", tmp_path / "b", EXAMPLE_META)
    assert not first.cached and not second.cached
    assert first.package.read_bytes() == second.package.read_bytes()
    assert first.model_info.read_bytes() == second.model_info.read_bytes()
    with zipfile.ZipFile(first.package) as archive:
        infos = archive.infolist()
    assert infos[0].filename == "bundle.json"
    assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)
    assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in infos)

    again = synapc.convert(EXAMPLE, "VS680", tmp_path / "a", EXAMPLE_META)
    assert again.cached
    assert again.package.read_bytes() == first.package.read_bytes()
    key = (tmp_path / "a" / "cache" / "key.json").read_text()
    # another target changes the key: the cache is wiped and rebuilt
    other = synapc.convert(EXAMPLE, "VS640", tmp_path / "a", EXAMPLE_META)
    assert not other.cached
    assert (tmp_path / "a" / "cache" / "key.json").read_text() != key
    assert (
        json.loads((tmp_path / "a" / "cache" / "key.json").read_text())["target"] == "VS640"
    )


def test_metafile_means_scale_and_format_reach_the_package(tmp_path: Path) -> None:
    synapc.convert(EXAMPLE, "VS680", tmp_path, EXAMPLE_META)
    network = synapc.Network(tmp_path / "model.synap")
    (image,) = network.inputs
    assert image.name == "image" and image.layout == "nchw"
    assert image.means == pytest.approx((123.675, 116.28, 103.53))
    assert image.scale == pytest.approx(58.4)
    assert image.format.startswith("rgb")
    assert network.outputs[0].format == "confidence_array class_index_base=0"
    # uint8 pixels are normalized by assign(): the same as compiling the normalized image
    pixels = np.random.default_rng(3).integers(0, 256, (1, 3, 64, 64)).astype(np.uint8)
    image.assign(pixels)
    (probabilities,) = network.predict()
    means = np.array([123.675, 116.28, 103.53], np.float32).reshape(1, 3, 1, 1)
    normalized = ((pixels - means) / np.float32(58.4)).astype(np.float32)
    (want,) = synapc.compile(synapc.import_model(EXAMPLE), "VS680").run([normalized])
    np.testing.assert_allclose(probabilities.to_numpy(), want, rtol=2e-3, atol=1e-4)


def test_data_layout_nhwc_leaves_no_transpose(tmp_path: Path) -> None:
    meta = tmp_path / "meta.yaml"
    meta.write_text("data_layout: nhwc\n")
    out = tmp_path / "out"
    synapc.convert(EXAMPLE, "GENERIC", out, meta, preserve=True)
    optimized = next((out / "intermediate").glob("*_optimized.mlir")).read_text()
    assert "synap.transpose" not in optimized
    network = synapc.Network(out / "model.synap")
    assert network.inputs[0].shape == (1, 64, 64, 3) and network.inputs[0].layout == "nhwc"
    x = np.random.default_rng(4).normal(0, 1, (1, 3, 64, 64)).astype(np.float32)
    network.inputs[0].assign(x.transpose(0, 2, 3, 1).copy())
    (got,) = network.predict()
    (want,) = synapc.compile(synapc.import_model(EXAMPLE), "GENERIC").run([x])
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-5, atol=1e-6)


def test_dequantized_output_and_cut(tmp_path: Path) -> None:
    path = _tflite_cnn(tmp_path / "int8.tflite", quantized=True)
    meta = tmp_path / "meta.yaml"
    meta.write_text("outputs:\n  - name: pool\n    dequantize: true\n")
    out = tmp_path / "out"
    synapc.convert(path, "VS680", out, meta)
    network = synapc.Network(out / "model.synap")
    (pool,) = network.outputs
    assert pool.name == "pool" and pool.shape == (1, 4, 4, 4)
    assert pool.data_type == np.float32 and pool.quantization is None
    x = _input_for(network_input_info(path), np.random.default_rng(5))
    network.inputs[0].assign(x)
    (got,) = network.predict()
    model = synapc.import_model(path, outputs=["pool"])
    (q,) = synapc.compile(model, "VS680").run([x])
    np.testing.assert_array_equal(got.to_numpy(), (q.astype(np.float32) + 128) * 0.05)
    info = (out / "model_info.txt").read_text()
    assert "fully_connected" not in info  # cut away


def network_input_info(path: Path) -> synapc.TensorInfo:
    """The first input of a model file."""
    return synapc.import_model(path).inputs[0]


def test_model_info_layer_table(tmp_path: Path) -> None:
    result = synapc.convert(EXAMPLE, "VS680", tmp_path, EXAMPLE_META)
    info = result.model_info.read_text()
    for section in (
        "Inputs",
        "Outputs",
        "Subgraphs",
        "Layers",
        "Operations",
        "Memory usage",
    ):
        assert f"\n{section}" in info, section
    layers = info.split("\nLayers")[1].split("\nOperations")[0]
    # conv1 + its batch norm + relu + max pool are one fused layer
    row = next(line for line in layers.splitlines() if line.split()[1:2] == ["conv1"])
    for source in ("conv1.bn", "relu1", "pool1"):
        assert source in row, row
    assert "image" in info and "1x3x64x64" in info


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


def _assert_one_line_error(code: int, err: str, *words: str) -> None:
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("synapc: error: "), err
    for word in words:
        assert word in lines[0], (word, err)


def test_bad_model_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code, err = _cli(
        [
            "convert",
            "--model",
            str(tmp_path / "none.onnx"),
            "--target",
            "VS680",
            "--out-dir",
            str(out),
        ],
        capsys,
    )
    _assert_one_line_error(code, err, "none.onnx", "no such model file")
    weird = tmp_path / "model.h5"
    weird.write_bytes(b"\x89HDF")
    code, err = _cli(
        ["convert", "--model", str(weird), "--target", "VS680", "--out-dir", str(out)],
        capsys,
    )
    _assert_one_line_error(code, err, "model.h5", ".onnx")
    assert not out.exists()


@pytest.mark.parametrize(
    ("meta", "words"),
    [
        (
            "inputs:\n  - name: image\n    shape: [1, 3, 64, 64]\n    meens: [1]\n",
            ["meens", "means"],
        ),
        (
            "inputs:\n  - name: image\n    shape: [1, 3, 64, 64]\n    scale: big\n",
            ["inputs[0].scale"],
        ),
        ("outputs:\n  - name: relu_3\n", ["meta.yaml: outputs[0].name", "relu_3", "relu3"]),
        ("dequantize_outputs: 3\n", ["dequantize_outputs"]),
        (
            "quantization:\n  dataset: none/*.npy\n",
            ["meta.yaml: quantization.dataset", "matches no files"],
        ),
    ],
)
def test_bad_metafiles(
    meta: str, words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "meta.yaml"
    path.write_text(meta)
    out = tmp_path / "out"
    code, err = _cli(
        [
            "convert",
            "--model",
            str(EXAMPLE),
            "--meta",
            str(path),
            "--target",
            "VS680",
            "--out-dir",
            str(out),
        ],
        capsys,
    )
    _assert_one_line_error(code, err, *words)
    assert not out.exists()


def test_failed_conversion_keeps_existing_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    synapc.convert(EXAMPLE, "VS680", out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    meta = tmp_path / "meta.yaml"
    meta.write_text("outputs:\n  - name: nowhere\n")
    code, err = _cli(
        [
            "convert",
            "--model",
            str(EXAMPLE),
            "--meta",
            str(meta),
            "--target",
            "VS680",
            "--out-dir",
            str(out),
        ],
        capsys,
    )
    _assert_one_line_error(code, err, "nowhere")
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before


def test_unwritable_out_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    code, err = _cli(
        [
            "convert",
            "--model",
            str(EXAMPLE),
            "--target",
            "VS680",
            "--out-dir",
            str(blocker / "out"),
        ],
        capsys,
    )
    _assert_one_line_error(code, err, "cannot write")


def test_corrupt_packages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    synapc.convert(EXAMPLE, "VS680", tmp_path / "out")
    data = bytearray((tmp_path / "out" / "model.synap").read_bytes())
    with zipfile.ZipFile(tmp_path / "out" / "model.synap") as archive:
        member = archive.getinfo("0/model.stablehlo")
    data[member.header_offset + 30 + len(member.filename) + member.file_size // 2] ^= 0x10
    flipped = tmp_path / "flipped.synap"
    flipped.write_bytes(bytes(data))
    code, err = _cli(["benchmark", "--model", str(flipped), "--num-runs", "1"], capsys)
    _assert_one_line_error(code, err, "flipped.synap", "corrupt")

    evil = tmp_path / "evil.synap"
    with (
        zipfile.ZipFile(tmp_path / "out" / "model.synap") as source,
        zipfile.ZipFile(evil, "w") as target,
    ):
        for info in source.infolist():
            target.writestr(info, source.read(info))
        target.writestr("../x", b"escape")
    code, err = _cli(["benchmark", "--model", str(evil), "--num-runs", "1"], capsys)
    _assert_one_line_error(code, err, "evil.synap", "../x")
    assert not (tmp_path / "x").exists()


def test_cli_convert_profiling_and_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(
        [
            "convert",
            "--model",
            str(EXAMPLE),
            "--meta",
            str(EXAMPLE_META),
            "--target",
            "DOLPHIN",
            "--out-dir",
            str(out),
            "--profiling",
            "--preserve",
            "--verbose",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "imported" in printed and "optimized" in printed
    assert sorted(p.name for p in (out / "intermediate").iterdir()) == [
        "00_imported.mlir",
        "01_signature.mlir",
        "02_optimized.mlir",
        "03_placed.mlir",
    ]
    bundle = json.loads(zipfile.ZipFile(out / "model.synap").read("bundle.json"))
    assert bundle["target"] == "VS680"
    code = main(
        ["benchmark", "--model", str(out / "model.synap"), "--num-runs", "3", "--profiling"]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "First inference" in printed and "Inference (avg)" in printed
    assert "conv1" in printed


def test_onnx_model_file_is_the_example() -> None:
    """The shipped example is what its generator script writes."""
    sys.path.insert(0, str(REPO / "examples"))
    try:
        from make_tiny_classifier import build
    finally:
        sys.path.pop(0)
    assert build().SerializeToString() == onnx.load(EXAMPLE).SerializeToString()


def test_public_names_resolve_lazily() -> None:
    """Every public name of `synapc` resolves (they are imported on first use)."""
    for name in synapc.__all__:
        assert getattr(synapc, name) is not None, name
    assert "Network" in dir(synapc)
    with pytest.raises(AttributeError):
        synapc.no_such_name  # noqa: B018


def test_torchscript_convert_keeps_the_translated_onnx(tmp_path: Path) -> None:
    """A TorchScript model takes its input shape from the metafile; --preserve keeps
    the ONNX model it was translated to; the package runs as the compiled model does."""
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2)
    ).eval()
    path = tmp_path / "net.pt"
    torch.jit.trace(net, torch.zeros(1, 3, 16, 16)).save(str(path))
    meta = tmp_path / "meta.yaml"
    meta.write_text("inputs:\n  - shape: [1, 3, 16, 16]\n")
    out = tmp_path / "out"
    synapc.convert(path, "VS680", out, meta, preserve=True)
    translated = onnx.load(out / "intermediate" / "net.translated.onnx")
    assert [n.op_type for n in translated.graph.node][:1] == ["Conv"]
    x = np.random.default_rng(8).normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    model = synapc.import_model(path, input_shapes=[[1, 3, 16, 16]])
    want = synapc.compile(model, "VS680").run([x])
    got = _run_fresh(out, [x])
    np.testing.assert_array_equal(got[0], want[0])


def test_convert_stays_callable_after_its_modules_are_imported(tmp_path: Path) -> None:
    """Importing a `synapc.convert.*` module first (as the CLI does) binds the package to
    `synapc.convert`; the call must still convert, whatever the import order."""
    script = textwrap.dedent(
        f"""
        import synapc.convert.output
        import synapc
        result = synapc.convert(
            {str(EXAMPLE)!r}, "VS680", {str(tmp_path / "out")!r}, {str(EXAMPLE_META)!r}
        )
        print(type(result).__name__)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "Conversion"
    assert (tmp_path / "out" / "model.synap").is_file()
