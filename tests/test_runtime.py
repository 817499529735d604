"""synapc.Network on packages of compiled models: outputs identical to
`synapc.compile(...).run`, assign semantics (normalization, quantization), wiring of
several subgraphs, statistics, no compiler modules after loading, the JAX cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import synapc
from synapc.backends.jax.export import export_program
from synapc.backends.package import (
    PackageError,
    Quantization,
    Subgraph,
    TensorSpec,
    build_package,
)
from synapc.compiler import Executable
from synapc.dtypes import device_dtype
from synapc.model import TensorInfo
from synapc.runtime import Network, Tensor
from synapc.runtime.cache import settings_from_environment
from synapc.testing.pass_check import model_from_text

ROOT = Path(__file__).resolve().parents[1]

QUANTIZED = """
builtin.module {
  func.func @main(%x: tensor<1x5x5x8x!quant.uniform<u8:f32, 0.02:128>>)
      -> tensor<1x3x3x6x!quant.uniform<u8:f32, 0.05:3>> {
    %w = synap.constant dense_resource<w> : tensor<6x3x3x8x!quant.uniform<i8:f32, 0.01>>
    %y = synap.conv2d %x, %w {layer_name = "conv"}
        : (tensor<1x5x5x8x!quant.uniform<u8:f32, 0.02:128>>,
           tensor<6x3x3x8x!quant.uniform<i8:f32, 0.01>>)
        -> tensor<1x3x3x6x!quant.uniform<u8:f32, 0.05:3>>
    func.return %y : tensor<1x3x3x6x!quant.uniform<u8:f32, 0.05:3>>
  }
}
"""


def spec(info: TensorInfo, layout: str = "nhwc", **extra: object) -> TensorSpec:
    """The package tensor of a model input or output."""
    quant = info.quantization
    quantization = None
    if quant is not None:
        quantization = Quantization(
            tuple(float(s) for s in quant.scales),
            tuple(int(z) for z in quant.zero_points),
            quant.quantized_dimension,
        )
    rank4 = len(info.shape) == 4
    return TensorSpec(
        info.name,
        tuple(info.shape),
        info.dtype.name,
        layout if rank4 else "none",
        quantization=quantization,
        **extra,
    )  # type: ignore[arg-type]


def write_package(exe: Executable, path: Path, **input_extra: object) -> Path:
    """`exe` as a one-subgraph model.synap at `path`."""
    avals = [jax.ShapeDtypeStruct(i.shape, device_dtype(i.dtype)) for i in exe.inputs]
    blob, weights = export_program(exe._function, exe._params, avals)
    inputs = [spec(i, **input_extra) for i in exe.inputs]
    outputs = [spec(o) for o in exe.outputs]
    data = build_package(
        target=exe.target.name,
        source={"model": "test", "sha256": "0", "synapc": "0"},
        inputs=inputs,
        outputs=outputs,
        output_refs=[(0, j) for j in range(len(outputs))],
        subgraphs=[
            Subgraph(
                "npu", blob, weights, inputs, outputs, [(-1, i) for i in range(len(inputs))]
            )
        ],
    )
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def tiny_cnn() -> Executable:
    """examples/tiny_cnn.mlir compiled for VS680 (float16 on the NPU)."""
    ctx = synapc.make_context()
    module = synapc.read_module(ROOT / "examples/tiny_cnn.mlir", ctx.weights, ctx)
    return synapc.compile(synapc.Model.from_module(module, ctx.weights), "VS680")


@pytest.fixture(scope="module")
def tiny_cnn_package(
    tiny_cnn: Executable, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """tiny_cnn as a model.synap."""
    return write_package(tiny_cnn, tmp_path_factory.mktemp("tiny") / "model.synap")


@pytest.fixture(scope="module")
def quantized() -> Executable:
    """A uint8 convolution with TFLite integer semantics."""
    return synapc.compile(model_from_text(QUANTIZED), "GENERIC")


def test_float_model_identical_to_compile(
    tiny_cnn: Executable, tiny_cnn_package: Path
) -> None:
    network = Network(tiny_cnn_package)
    x = np.random.default_rng(0).normal(size=(1, 32, 32, 3)).astype(np.float32)
    network.inputs[0].assign(x)
    outputs = network.predict()
    expected = tiny_cnn.run([x])[0]
    assert outputs is network.outputs
    assert outputs[0].to_numpy().dtype == expected.dtype
    assert np.array_equal(outputs[0].to_numpy(), expected)
    assert np.array_equal(outputs[0].as_float(), expected.astype(np.float32))
    tensor = network.inputs[0]
    assert (tensor.name, tensor.shape, tensor.layout) == ("input_0", (1, 32, 32, 3), "nhwc")
    assert tensor.data_type == np.float32 and tensor.quantization is None


def test_statistics(tiny_cnn_package: Path) -> None:
    network = Network(tiny_cnn_package)
    assert network.statistics.inference_count == 0
    for _ in range(3):
        network.predict()
    stats = network.statistics
    assert stats.inference_count == 3 and stats.last_time_us > 0
    assert stats.total_time_us >= 3 * min(stats.last_time_us, stats.average_time_us) > 0


def test_quantized_model_identical_to_compile(
    quantized: Executable, tmp_path: Path
) -> None:
    network = Network(write_package(quantized, tmp_path / "q.synap"))
    q = np.random.default_rng(1).integers(0, 256, (1, 5, 5, 8)).astype(np.uint8)
    network.inputs[0].assign(q)  # same dtype: copied as is
    assert np.array_equal(network.inputs[0].to_numpy(), q)
    out = network.predict()[0]
    expected = quantized.run([q])[0]
    assert out.to_numpy().dtype == np.uint8 and np.array_equal(out.to_numpy(), expected)
    assert out.quantization == Quantization((0.05,), (3,), None)
    assert np.allclose(out.as_float(), (expected.astype(np.float32) - 3) * 0.05)


def test_assign_normalizes_and_quantizes(quantized: Executable, tmp_path: Path) -> None:
    """Float data: (x - means[c]) / scale, then q = round(x / 0.02) + 128, saturated."""
    means = tuple(float(m) for m in range(8))
    path = write_package(quantized, tmp_path / "q.synap", means=means, scale=4.0)
    tensor = Network(path).inputs[0]
    assert tensor.means == means and tensor.scale == 4.0
    x = np.random.default_rng(2).uniform(-2, 10, (1, 5, 5, 8)).astype(np.float32)
    tensor.assign(x)
    real = (x.astype(np.float64) - np.arange(8)) / 4.0
    step = real / 0.02
    expected = np.clip(np.sign(step) * np.floor(np.abs(step) + 0.5) + 128, 0, 255)
    assert np.array_equal(tensor.to_numpy(), expected.astype(np.uint8))
    assert np.abs(tensor.as_float() - np.clip(real, -2.56, 2.54)).max() <= 0.01 + 1e-6


def test_assign_rules() -> None:
    nchw = Tensor(TensorSpec("x", (1, 2, 2, 2), "float32", "nchw", means=(1.0, 3.0)))
    nchw.assign(np.full((1, 2, 2, 2), 5, np.int32))
    assert np.array_equal(nchw.to_numpy()[0, :, 0, 0], [4.0, 2.0])
    half = Tensor(TensorSpec("h", (4,), "int8", quantization=Quantization((0.5,), (0,))))
    half.assign(np.array([0.25, -0.25, 0.75, 100.0]))
    assert half.to_numpy().tolist() == [1, -1, 2, 127]  # half away from zero, saturated
    per_channel = Tensor(
        TensorSpec("c", (2, 2), "int8", quantization=Quantization((1.0, 0.1), (0, 5), 1))
    )
    per_channel.assign(np.array([[1.0, 1.0], [2.0, -1.0]], np.float32))
    assert per_channel.to_numpy().tolist() == [[1, 15], [2, -5]]
    assert np.allclose(per_channel.as_float(), [[1.0, 1.0], [2.0, -1.0]])
    with pytest.raises(synapc.SynapcError, match="tensor 'c': data of shape \\[3\\]"):
        per_channel.assign(np.zeros(3))


def test_several_subgraphs_and_int64(tmp_path: Path) -> None:
    """Subgraph 1 reads model input 0 and subgraph 0's output; the int64 output comes
    back from JAX as int32 and is returned as int64."""

    def first(params: dict[str, jax.Array], a: jax.Array) -> list[jax.Array]:
        return [a * params["k"], a + 1]

    def second(params: dict[str, jax.Array], a: jax.Array, b: jax.Array) -> list[jax.Array]:
        return [(a + b).astype(jnp.int32)]

    f32 = jax.ShapeDtypeStruct((3,), np.float32)
    exe0, w0 = export_program(first, {"k": jnp.float32(2.0)}, [f32])
    exe1, w1 = export_program(second, {}, [f32, f32])
    a = TensorSpec("a", (3,), "float32")
    m, n = TensorSpec("m", (3,), "float32"), TensorSpec("n", (3,), "float32")
    out = TensorSpec("out", (3,), "int64")
    data = build_package(
        target="GENERIC",
        source={},
        inputs=[a],
        outputs=[out, m],
        output_refs=[(1, 0), (0, 0)],
        subgraphs=[
            Subgraph("npu", exe0, w0, [a], [m, n], [(-1, 0)]),
            Subgraph("cpu", exe1, w1, [a, m], [out], [(-1, 0), (0, 0)]),
        ],
    )
    path = tmp_path / "two.synap"
    path.write_bytes(data)
    network = Network(path)
    network.inputs[0].assign(np.array([1.0, 2.0, 3.5], np.float32))
    result, doubled = network.predict()
    assert result.to_numpy().dtype == np.int64
    assert result.to_numpy().tolist() == [3, 6, 10]
    assert doubled.to_numpy().tolist() == [2.0, 4.0, 7.0]
    with pytest.raises(PackageError, match="built without --profiling"):
        network.profile()


_LOAD_AND_PREDICT = """
import json, sys, time
import numpy as np
import synapc
start = time.perf_counter()
network = synapc.Network(sys.argv[1])
loaded = time.perf_counter()
network.inputs[0].assign(np.ones(network.inputs[0].shape, np.float32))
network.predict()
first = time.perf_counter()
banned = [m for m in sys.modules
          if m.startswith(("xdsl", "synapc.importers", "synapc.dialects", "synapc.model",
                           "synapc.compiler", "synapc.dtypes", "synapc.backends.jax"))]
print(json.dumps({"banned": banned, "first": first - start,
                  "out": network.outputs[0].to_numpy().tolist()}))
"""


def _load_and_predict(path: Path, cache: Path, max_bytes: str | None = None) -> dict:
    env = dict(os.environ, SYNAPC_JAX_CACHE_DIR=str(cache))
    env.pop("SYNAPC_JAX_CACHE_MAX_BYTES", None)
    if max_bytes is not None:
        env["SYNAPC_JAX_CACHE_MAX_BYTES"] = max_bytes
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_AND_PREDICT, str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_fresh_process_no_compiler_and_warm_cache(
    tiny_cnn: Executable, tiny_cnn_package: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cold = _load_and_predict(tiny_cnn_package, cache)
    assert cold["banned"] == []
    assert any(cache.iterdir())
    warm = _load_and_predict(tiny_cnn_package, cache)
    # the program compiles when the package loads: the first answer (load and first
    # predict) is what the cache shortens
    assert warm["first"] < cold["first"]
    expected = tiny_cnn.run([np.ones((1, 32, 32, 3), np.float32)])[0]
    assert np.array_equal(np.array(cold["out"], expected.dtype), expected)
    assert warm["out"] == cold["out"]


def test_cache_disabled(tiny_cnn_package: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _load_and_predict(tiny_cnn_package, cache, max_bytes="0")
    assert not cache.exists() or not any(cache.iterdir())


def test_cache_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNAPC_JAX_CACHE_DIR", "/some/where")
    monkeypatch.setenv("SYNAPC_JAX_CACHE_MAX_BYTES", "1000")
    assert settings_from_environment() == (Path("/some/where"), 1000)
    monkeypatch.delenv("SYNAPC_JAX_CACHE_MAX_BYTES")
    assert settings_from_environment()[1] == 1 << 30
    monkeypatch.setenv("SYNAPC_JAX_CACHE_MAX_BYTES", "lots")
    with pytest.raises(synapc.SynapcError, match="SYNAPC_JAX_CACHE_MAX_BYTES='lots'"):
        settings_from_environment()


def test_float_data_assigned_to_a_bfloat16_tensor_keeps_its_fraction() -> None:
    """bfloat16 is a float (numpy calls its kind "V"): assigned float32 data is cast,
    not rounded to integers."""
    tensor = Tensor(TensorSpec("b", (3,), "bfloat16"))
    tensor.assign(np.array([0.25, -1.5, 3.0], np.float32))
    assert tensor.to_numpy().astype(np.float32).tolist() == [0.25, -1.5, 3.0]
