"""Post-training quantization end to end (issue 19): the calibration dataset, the
per-layer type map, `synapc.quantize`, and `synapc convert` with a metafile
``quantization`` section (pipeline, quantization_info.txt, cache key)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import synapc
from synapc.convert.convert import conversion_pipeline
from synapc.errors import SynapcError
from synapc.model import Model
from synapc.quantization.annotate import layer_types
from synapc.quantization.dataset import Dataset, InputFeed, input_feeds

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "examples" / "tiny_classifier.onnx"

IMAGE = InputFeed("image", (1, 3, 8, 6), np.dtype(np.float32), "nchw", (10.0,), 2.0)
VECTOR = InputFeed("vector", (1, 5), np.dtype(np.float32), "nhwc")


@pytest.fixture(scope="module")
def optimized() -> Model:
    """The tiny classifier, optimized (fused layers: conv1, dw2, pw3, gap, flatten,
    fc, softmax)."""
    return synapc.optimize(synapc.import_model(TINY))


def _write_png(path: Path, height: int, width: int, seed: int = 0) -> np.ndarray:
    from PIL import Image

    pixels = np.random.default_rng(seed).integers(0, 256, (height, width, 3), np.uint8)
    Image.fromarray(pixels).save(path)
    return pixels


# -- the dataset ----------------------------------------------------------------------


def test_dataset_reads_npy_with_or_without_batch_dim(tmp_path: Path) -> None:
    a = np.arange(5, dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", a[None] * 2)
    data = Dataset(str(tmp_path / "*.npy"), [VECTOR], batch_size=1)
    batches = list(data.batches())
    assert len(data) == 2 and data.batch_count == 2
    np.testing.assert_array_equal(batches[0][0], a[None, None])
    np.testing.assert_array_equal(batches[1][0], 2 * a[None, None])


def test_dataset_decodes_resizes_and_normalizes_images(tmp_path: Path) -> None:
    pixels = _write_png(tmp_path / "x.png", 8, 6)
    (batch,) = list(Dataset(str(tmp_path / "*.png"), [IMAGE]).batches())
    assert batch[0].shape == (1, *IMAGE.shape) and batch[0].dtype == np.float32
    expected = (np.moveaxis(pixels, -1, 0)[None].astype(np.float64) - 10.0) / 2.0
    np.testing.assert_allclose(batch[0][0], expected, rtol=1e-6)
    _write_png(tmp_path / "big.jpg", 40, 30)
    (batch,) = list(Dataset(str(tmp_path / "big.jpg"), [IMAGE]).batches())
    assert batch[0].shape == (1, *IMAGE.shape)


def test_random_dataset_has_the_input_shapes() -> None:
    data = Dataset("random", [IMAGE, VECTOR], batch_size=4, random_samples=6)
    shapes = [[a.shape for a in batch] for batch in data.batches()]
    assert shapes == [
        [(4, *IMAGE.shape), (4, *VECTOR.shape)],
        [(2, *IMAGE.shape), (2, *VECTOR.shape)],
    ]


def test_dataset_errors_name_the_field(tmp_path: Path) -> None:
    np.save(tmp_path / "v0.npy", np.zeros(5, np.float32))
    np.save(tmp_path / "v1.npy", np.zeros(5, np.float32))
    np.save(tmp_path / "bad.npy", np.zeros(4, np.float32))
    _write_png(tmp_path / "i0.png", 8, 6)
    field = "quantization.dataset"
    with pytest.raises(SynapcError, match=rf"{field}\[1\]: '.*nothing\*' matches no files"):
        Dataset([str(tmp_path / "i0.png"), str(tmp_path / "nothing*")], [IMAGE, VECTOR])
    with pytest.raises(SynapcError, match=rf"{field}: the globs match different numbers"):
        Dataset([str(tmp_path / "i0.png"), str(tmp_path / "v*.npy")], [IMAGE, VECTOR])
    with pytest.raises(SynapcError, match=rf"{field}: .*i0.png' is an image, but input"):
        Dataset(str(tmp_path / "i0.png"), [VECTOR])
    with pytest.raises(SynapcError, match=rf"{field}: .*bad.npy' has shape \[4\]"):
        list(Dataset(str(tmp_path / "bad.npy"), [VECTOR]).batches())
    data = Dataset(str(tmp_path / "v*.npy"), [VECTOR])
    (tmp_path / "v1.npy").unlink()
    with pytest.raises(SynapcError, match=rf"{field}: .*v1.npy': no such file"):
        list(data.batches())


# -- the per-layer type map -------------------------------------------------------------


def _types_by_name(optimized: Model, data_type: object) -> tuple[dict[str, str], str]:
    """Layer name -> type (ops without a name by op position) and the inputs' type."""
    types = layer_types(optimized.main, data_type, "quantization.data_type")  # type: ignore[arg-type]
    ops = list(optimized.main.body.block.ops)
    named = {}
    for p, kind in types.ops.items():
        name = ops[p].attributes.get("layer_name")
        named[name.data if name is not None else f"#{p}"] = kind  # type: ignore[attr-defined]
    return named, types.args[0]


def test_pattern_resolution(optimized: Model) -> None:
    named, inputs = _types_by_name(optimized, "int8")
    assert set(named.values()) == {"int8"} and inputs == "int8"
    named, inputs = _types_by_name(
        optimized,
        [("dw2...", "int16"), ("*", "uint8"), ("INPUTS", "float16"), ("@12", "float16")],
    )
    # '*' first whatever its place; 'dw2...' = downstream of dw2, dw2 itself excluded;
    # later entries override ('@12' is fc)
    assert named == {
        "#0": "uint8",
        "conv1": "uint8",
        "dw2": "uint8",
        "pw3": "int16",
        "gap": "int16",
        "flatten": "int16",
        "fc": "float16",
        "softmax": "int16",
    }
    assert inputs == "float16"
    # a fused source layer (relu2 is fused into dw2) names its op
    named, _ = _types_by_name(optimized, {"*": "uint8", "relu2": "int16"})
    assert named["dw2"] == "int16" and named["pw3"] == "uint8"


def test_pattern_errors(optimized: Model) -> None:
    func = optimized.main
    field = "quantization.data_type"
    with pytest.raises(SynapcError, match=f"{field}: 'uint8' and 'int8' cannot both"):
        layer_types(func, {"*": "uint8", "fc": "int8"}, field)
    with pytest.raises(
        SynapcError, match=f"{field}: 'dw3...': no layer named 'dw3'.*'dw2'"
    ):
        layer_types(func, {"dw3...": "int16"}, field)
    with pytest.raises(SynapcError, match=rf"{field}: '@99': no layer has operator index"):
        layer_types(func, {"@99": "int16"}, field)
    with pytest.raises(SynapcError, match=f"{field}: unknown data type 'int4'"):
        layer_types(func, "int4", field)


# -- synapc.quantize and synapc convert --------------------------------------------------


def test_quantize_api_runs(optimized: Model) -> None:
    quantized = synapc.quantize(optimized, "random", data_type="uint8")
    types = {str(v.type) for op in quantized.main.body.block.ops for v in op.results}
    assert any("quant.uniform<u8" in t for t in types)
    feeds = input_feeds(quantized)
    x = np.random.default_rng(1).standard_normal(feeds[0].shape).astype(np.float32)
    (out,) = synapc.compile(quantized, "VS680").run([x])
    assert out.shape == (1, 10)


def test_quantize_api_histogram_algorithm_per_channel(optimized: Model) -> None:
    quantized = synapc.quantize(
        optimized,
        "random",
        data_type="int8",
        scheme="perchannel_symmetric_affine",
        algorithm="percentile",
        options={"percentile": 99.9},
    )
    assert "calibrated_range" not in str(quantized.module)
    with pytest.raises(SynapcError, match="percentile"):
        synapc.quantize(optimized, "random", algorithm="percentile", options={"x": 1})


def _meta(tmp_path: Path, dataset: str, data_type: str) -> Path:
    meta = tmp_path / "meta.yaml"
    meta.write_text(f"quantization:\n  dataset: {dataset}\n  data_type:{data_type}\n")
    return meta


MIXED = "\n    '*': uint8\n    'dw2...': int16\n    INPUTS: uint8"


def _info_types(out: Path) -> dict[str, str]:
    """Layer -> data type column of quantization_info.txt."""
    lines = (out / "quantization_info.txt").read_text().splitlines()[3:]
    return {re.split(r"\s{2,}", line)[0]: re.split(r"\s{2,}", line)[2] for line in lines}


def test_convert_mixed_map_on_random_data(tmp_path: Path) -> None:
    meta = _meta(tmp_path, "random", MIXED)
    assert conversion_pipeline(TINY, meta) == (
        'optimize,equalize-layers,quantize{data_type="uint8" scheme="default" '
        'mode="standard"},optimize,place-layers{target=VS680},partition{default=npu},'
        "plan-memory{alignment=64 sram-bytes=1048576 npu-float-bytes=2}"
    )
    result = synapc.convert(TINY, "VS680", tmp_path / "out", meta)
    assert not result.cached
    types = _info_types(tmp_path / "out")
    assert types == {
        "input 'image'": "uint8",
        "op #0": "uint8",
        "conv1": "uint8",
        "dw2": "uint8",
        "pw3": "int16",
        "gap": "int16",
        "flatten": "int16",
        "fc": "int16",
        "softmax": "int16",
    }
    text = (tmp_path / "out" / "quantization_info.txt").read_text()
    assert "SQNR dB" in text and re.search(r"fc .* \d+\.\d$", text, re.MULTILINE)


def test_convert_on_npy_data_keys_the_cache_on_the_contents(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    for k in range(3):
        np.save(data / f"{k}.npy", rng.standard_normal((3, 64, 64)).astype(np.float32))
    meta = _meta(tmp_path, "data/*.npy", " uint8")
    out = tmp_path / "out"
    assert not synapc.convert(TINY, "VS680", out, meta).cached
    assert (out / "quantization_info.txt").is_file()
    assert synapc.convert(TINY, "VS680", out, meta).cached
    np.save(data / "1.npy", rng.standard_normal((3, 64, 64)).astype(np.float32))
    assert not synapc.convert(TINY, "VS680", out, meta).cached


def test_convert_names_the_metafile_field(tmp_path: Path) -> None:
    meta = _meta(tmp_path, "random", "\n    'dw3...': int16")
    with pytest.raises(
        SynapcError, match=r"meta.yaml: quantization.data_type: 'dw3\.\.\.'"
    ):
        synapc.convert(TINY, "VS680", tmp_path / "out", meta)
    meta = _meta(tmp_path, "none/*.npy", " uint8")
    with pytest.raises(SynapcError, match=r"meta.yaml: quantization.dataset: .*matches no"):
        synapc.convert(TINY, "VS680", tmp_path / "out", meta)


def test_cached_conversion_restores_quantization_info_and_float_one_drops_it(
    tmp_path: Path,
) -> None:
    """The cache serves quantization_info.txt with the package; a later float
    conversion into the same folder leaves no stale report behind."""
    meta = _meta(tmp_path, "random", " uint8")
    out = tmp_path / "out"
    assert not synapc.convert(TINY, "VS680", out, meta).cached
    report = (out / "quantization_info.txt").read_bytes()
    (out / "quantization_info.txt").unlink()
    assert synapc.convert(TINY, "VS680", out, meta).cached
    assert (out / "quantization_info.txt").read_bytes() == report
    assert not synapc.convert(TINY, "VS680", out).cached
    assert not (out / "quantization_info.txt").exists()
    assert not (out / "cache" / "quantization_info.txt").exists()


def test_quantized_inputs_round_as_the_quant_dialect_does() -> None:
    """Feeding a quantized input rounds halves away from zero (TFLite's rounding, as
    `quantize_array`), not to even as np.round does."""
    from types import SimpleNamespace

    from synapc.dialects.quant import UniformQuantizedType, quantize_array
    from synapc.quantization.compare import quantized_inputs

    q = UniformQuantizedType.per_tensor("u8", 0.5, 10)
    model = SimpleNamespace(
        inputs=[SimpleNamespace(quantization=q, dtype=np.dtype(np.uint8))]
    )
    batch = [np.array([0.25, -0.25, 0.75, 200.0], np.float32)]
    (stored,) = quantized_inputs(model, batch)  # type: ignore[arg-type]
    assert stored.tolist() == [11, 9, 12, 255]
    assert stored.tolist() == quantize_array(batch[0], q).tolist()


@pytest.mark.parametrize(
    ("mixed", "message"),
    [
        ({"data_typ": "int16"}, r"mixed_precision: unknown key data_typ"),
        ({"data_type": "int8"}, r"mixed_precision\.data_type: expected int16"),
        ({"max_fraction": 2}, r"mixed_precision\.max_fraction: expected a number in"),
        ({"target_sqnr_db": "high"}, r"mixed_precision\.target_sqnr_db: expected a"),
    ],
)
def test_quantize_api_mixed_precision_errors_name_the_field(
    optimized: Model, mixed: dict[str, object], message: str
) -> None:
    """A bad ``mixed_precision`` mapping is one error naming the field, before any
    calibration (never a TypeError traceback)."""
    with pytest.raises(SynapcError, match=message):
        synapc.quantize(optimized, "random", mixed_precision=mixed)
