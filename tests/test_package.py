"""The model.synap package: layout, determinism (also across processes, on a compiled
model) and every check of the reader, including one flipped byte anywhere."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from synapc.backends.jax.export import export_program
from synapc.backends.package import (
    PackageError,
    ProfiledLayer,
    Quantization,
    Subgraph,
    TensorSpec,
    build_package,
    read_package,
)
from synapc.runtime import Network

X = TensorSpec("x", (2, 3), "float32", means=(0.5,), scale=2.0)
H = TensorSpec("h", (2, 4), "float32")
Y = TensorSpec("y", (2, 4), "uint8", format="rgb", quantization=Quantization((0.05,), (3,)))


def _first(params: dict[str, jax.Array], x: jax.Array) -> list[jax.Array]:
    return [jnp.tanh(x @ params["w"]) + params["b"]]


def _second(params: dict[str, jax.Array], h: jax.Array) -> list[jax.Array]:
    q = jnp.round(h * params["s"]) + 3
    return [jnp.clip(q, 0, 255).astype(jnp.uint8)]


def _subgraphs(profiling: bool = False) -> list[Subgraph]:
    """Two chained subgraphs (x -> h on the NPU, h -> y on the CPU)."""
    rng = np.random.default_rng(0)
    p1 = {
        "w": jnp.asarray(rng.normal(size=(3, 4)).astype(np.float32)),
        "b": jnp.asarray(rng.normal(size=(4,)).astype(np.float32)),
    }
    p2 = {"s": jnp.asarray(np.float32(20.0))}
    spec = jax.ShapeDtypeStruct((2, 3), np.float32)
    hspec = jax.ShapeDtypeStruct((2, 4), np.float32)
    exe1, w1 = export_program(_first, p1, [spec])
    exe2, w2 = export_program(_second, p2, [hspec])
    layers = outputs = None
    if profiling:
        layers = [ProfiledLayer("dense", "synap.fully_connected", exe1, w1, [(-1, 0)])]
        outputs = [(0, 0)]
    return [
        Subgraph("npu", exe1, w1, [X], [H], [(-1, 0)], layers, outputs),
        Subgraph("cpu", exe2, w2, [H], [Y], [(0, 0)]),
    ]


def _package(profiling: bool = False) -> bytes:
    return build_package(
        target="VS680",
        source={"model": "m.tflite", "sha256": "ab" * 32, "synapc": "0.1"},
        inputs=[X],
        outputs=[Y],
        output_refs=[(1, 0)],
        subgraphs=_subgraphs(profiling),
        metadata={"note": "é"},
    )


@pytest.fixture(scope="module")
def package() -> bytes:
    """The bytes of a two-subgraph profiling package."""
    return _package(profiling=True)


def _write(tmp_path: Path, data: bytes, name: str = "model.synap") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_layout(package: bytes) -> None:
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        infos = archive.infolist()
        names = [i.filename for i in infos]
        assert names[0] == "bundle.json" and names[1:] == sorted(names[1:])
        assert set(names) == {
            "bundle.json",
            "0/model.json",
            "0/model.stablehlo",
            "0/weights.bin",
            "0/layers/0.stablehlo",
            "0/layers/0.weights.bin",
            "1/model.json",
            "1/model.stablehlo",
            "1/weights.bin",
        }
        for info in infos:
            assert info.compress_type == zipfile.ZIP_STORED
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.external_attr >> 16 == 0o100644
        bundle = json.loads(archive.read("bundle.json"))
        model = json.loads(archive.read("0/model.json"))
    assert bundle["format"] == "synapc.model" and bundle["version"] == 2
    assert bundle["graph"] == [
        {"model": "0/model.json", "inputs": [{"subgraph": -1, "out": 0}]},
        {"model": "1/model.json", "inputs": [{"subgraph": 0, "out": 0}]},
    ]
    assert bundle["outputs_from"] == [{"subgraph": 1, "out": 0}]
    assert set(bundle["members"]) == set(names) - {"bundle.json"}
    assert all(w["offset"] % 64 == 0 for w in model["weights"])
    assert model["layers"][0]["operands"] == [{"layer": -1, "out": 0}]


def test_round_trip(tmp_path: Path, package: bytes) -> None:
    read = read_package(_write(tmp_path, package))
    assert read.inputs == [X] and read.outputs == [Y]
    assert read.target == "VS680" and read.bundle["metadata"] == {"note": "é"}
    expected = _subgraphs(profiling=True)
    for got, want in zip(read.subgraphs, expected, strict=True):
        assert got.delegate == want.delegate and got.executable == want.executable
        assert got.input_refs == want.input_refs
        for a, b in zip(got.weights, want.weights, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    assert read.has_layers is False  # subgraph 1 has no layers
    assert read.subgraphs[0].layers[0].name == "dense"
    model_json, executable, _ = read.subgraph(1)
    assert model_json["delegate"] == "cpu" and executable == expected[1].executable


def test_same_arguments_same_bytes(package: bytes) -> None:
    assert _package(profiling=True) == package
    assert _package(profiling=False) != package


_CONVERT_TINY_CNN = """
import hashlib, jax, synapc
from synapc.backends.jax.export import export_program
from synapc.backends.package import Subgraph, TensorSpec, build_package
ctx = synapc.make_context()
module = synapc.read_module("examples/tiny_cnn.mlir", ctx.weights, ctx)
exe = synapc.compile(synapc.Model.from_module(module, ctx.weights), "VS680")
x = exe.inputs[0]
blob, weights = export_program(exe._function, exe._params,
                               [jax.ShapeDtypeStruct(x.shape, x.dtype)])
i = [TensorSpec(x.name, x.shape, "float32", "nhwc")]
o = [TensorSpec(t.name, t.shape, "float32") for t in exe.outputs]
data = build_package(target="VS680", source={"model": "tiny_cnn.mlir", "sha256": "0",
                     "synapc": "0"}, inputs=i, outputs=o, output_refs=[(0, 0)],
                     subgraphs=[Subgraph("npu", blob, weights, i, o, [(-1, 0)])])
print(hashlib.sha256(data).hexdigest())
"""


def test_compiled_model_same_bytes_in_two_processes() -> None:
    """The lowering's param keys and set order differ between processes; the package
    does not."""
    root = Path(__file__).resolve().parents[1]
    digests = [
        subprocess.run(
            [sys.executable, "-c", _CONVERT_TINY_CNN],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for _ in range(2)
    ]
    assert len(digests[0]) == 64 and digests[0] == digests[1]


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w") as archive:
        for name, data in members:
            archive.writestr(name, data)
    return stream.getvalue()


def _members(package: bytes) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        return [(i.filename, archive.read(i)) for i in archive.infolist()]


def _with_bundle(package: bytes, change: Callable[[dict[str, Any]], object]) -> bytes:
    members = _members(package)
    bundle = json.loads(members[0][1])
    change(bundle)
    return _zip([("bundle.json", json.dumps(bundle).encode()), *members[1:]])


def _error(path: Path) -> str:
    with pytest.raises(PackageError) as error:
        read_package(path)
    message = str(error.value)
    assert "\n" not in message and str(path) in message
    return message


def test_not_a_package(tmp_path: Path) -> None:
    assert "cannot read" in _error(tmp_path / "missing.synap")
    assert "cannot read" in _error(tmp_path)
    assert "not a synapc package" in _error(_write(tmp_path, b"PK\3\4 not really"))
    no_bundle = _write(tmp_path, _zip([("0/model.json", b"{}")]))
    assert "no bundle.json" in _error(no_bundle)


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a\\b", "C:x", "0/../../x", "dup"])
def test_unsafe_member_names(tmp_path: Path, package: bytes, name: str) -> None:
    members = _members(package)
    extra = [(name, b"x"), (name, b"y")] if name == "dup" else [(name, b"x")]
    message = _error(_write(tmp_path, _zip([*members, *extra])))
    assert f"unsafe member name '{name}'" in message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda b: b.update(format="other"), "no format 'synapc.model'"),
        (lambda b: b.update(version=1), "version 1 is not supported"),
        (lambda b: b.update(version=3), "version 3 is not supported"),
        (lambda b: b.pop("members"), "'members' is missing"),
        (
            lambda b: b["members"].update({"2/x": {"size": 1, "sha256": "0"}}),
            "member '2/x' is listed but absent",
        ),
        (
            lambda b: b["members"].pop("1/weights.bin"),
            "member '1/weights.bin' is present but not listed",
        ),
        (
            lambda b: b["members"]["0/model.json"].update(size=1),
            "member '0/model.json': checksum mismatch (the file is corrupt)",
        ),
        (lambda b: b["inputs"][0].update(data_type="object"), "unknown data_type"),
        (
            lambda b: b["inputs"][0].update(shape="2x3"),
            "bundle.json: inputs[0].shape: expected a list, got a string",
        ),
        (lambda b: b["graph"][1]["inputs"][0].update(subgraph=1), "names no earlier"),
        (
            lambda b: b["outputs_from"].clear(),
            "bundle.json: outputs_from: must name one value per output",
        ),
    ],
)
def test_bad_bundle(
    tmp_path: Path,
    package: bytes,
    change: Callable[[dict[str, Any]], object],
    expected: str,
) -> None:
    assert expected in _error(_write(tmp_path, _with_bundle(package, change)))


def test_bundle_not_json(tmp_path: Path, package: bytes) -> None:
    members = _members(package)
    data = _zip([("bundle.json", b"{not json"), *members[1:]])
    assert "bundle.json: not valid JSON" in _error(_write(tmp_path, data))


def test_altered_member(tmp_path: Path, package: bytes) -> None:
    members = [
        (n, d[:-1] + bytes([d[-1] ^ 1]) if n == "1/model.stablehlo" else d)
        for n, d in _members(package)
    ]
    message = _error(_write(tmp_path, _zip(members)))
    assert "member '1/model.stablehlo': checksum mismatch (the file is corrupt)" in message


def test_weights_out_of_bounds(tmp_path: Path, package: bytes) -> None:
    """A consistent package (checksums recomputed) whose model.json points past the end
    of its weights file."""
    members = dict(_members(package))
    model = json.loads(members["1/model.json"])
    model["weights"][0]["offset"] = 10**6
    members["1/model.json"] = json.dumps(model).encode()
    bundle = json.loads(members["bundle.json"])
    bundle["members"]["1/model.json"] = {
        "size": len(members["1/model.json"]),
        "sha256": hashlib.sha256(members["1/model.json"]).hexdigest(),
    }
    members["bundle.json"] = json.dumps(bundle).encode()
    message = _error(_write(tmp_path, _zip(list(members.items()))))
    assert (
        "1/model.json: weights[0]: bytes 1,000,000 to 1,000,002 lie outside 1/weights.bin"
        in message
    )


def test_one_flipped_byte_anywhere(tmp_path: Path) -> None:
    """Every 97th byte flipped: a PackageError, or (a byte no check depends on, like an
    entry's date) a package that runs exactly like the original."""
    data = _package()
    original = Network(_write(tmp_path, data, "original.synap"))
    x = np.random.default_rng(1).normal(size=(2, 3)).astype(np.float32)
    original.inputs[0].assign(x)
    expected = original.predict()[0].to_numpy()
    loaded = 0
    for offset in range(0, len(data), 97):
        flipped = bytearray(data)
        flipped[offset] ^= 0xFF
        path = _write(tmp_path, bytes(flipped), "flipped.synap")
        try:
            network = Network(path)
        except PackageError as error:
            assert "\n" not in str(error)
            continue
        loaded += 1
        network.inputs[0].assign(x)
        assert np.array_equal(network.predict()[0].to_numpy(), expected), offset
    assert loaded < len(data) // 97 // 2


def test_float16_valued_weights_take_half_the_bytes(tmp_path: Path, package: bytes) -> None:
    """A float32 weight holding float16 values only (the CPU subgraph's scale, 20.0) is
    stored as float16 and read back as the same float32 bits; others stay float32."""
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        entries = [json.loads(archive.read(f"{i}/model.json"))["weights"] for i in (0, 1)]
    assert all("stored" not in e for e in entries[0])  # random normal values
    assert entries[1] == [{"dtype": "float32", "shape": [], "offset": 0, "nbytes": 2,
                           "stored": "float16"}]  # fmt: skip
    assert read_package(_write(tmp_path, package)).subgraphs[1].weights[0].tobytes() == (
        np.float32(20.0).tobytes()
    )


def test_only_bit_exact_float16_values_are_narrowed() -> None:
    """Signed zeros and infinities narrow; a NaN payload float16 cannot hold does not."""
    from synapc.backends.package.writer import pack_weights

    narrow = np.array([-0.0, np.inf, 65504.0, 2.0**-24], np.float32)
    payload = np.array([0x7FC00001], np.uint32).view(np.float32)
    _, entries = pack_weights([narrow, payload, np.float32([0.1])])
    assert [e.get("stored") for e in entries] == ["float16", None, None]
