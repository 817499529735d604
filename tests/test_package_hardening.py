"""The hardened package reader and runtime: each finding of the package fuzzer (and each
check added with them) on a malformed package built explicitly from a real one.

Every package here starts as examples/tiny_classifier.onnx converted by `synapc.convert`;
a test edits members and re-zips them (recomputing bundle.json's checksums when it needs
to get past them), then expects one clear `PackageError` that names the package file and
the member (and the field path inside JSON), never a traceback.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import struct
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import synapc
from benchmarks.fuzz.harness import classify_message
from synapc.backends.jax.export import export_program
from synapc.backends.package import (
    PackageError,
    Subgraph,
    TensorSpec,
    build_package,
    read_package,
)
from synapc.backends.package.reader import json_depth
from synapc.errors import SynapcError
from synapc.limits import use_limits
from synapc.runtime import Network

REPO = Path(__file__).resolve().parents[1]
MODEL = "0/model.json"
PROGRAM = "0/model.stablehlo"
WEIGHTS = "0/weights.bin"


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """examples/tiny_classifier.onnx converted for VS680 (one subgraph)."""
    out = tmp_path_factory.mktemp("converted")
    result = synapc.convert(
        REPO / "examples/tiny_classifier.onnx",
        "VS680",
        out,
        meta=REPO / "examples/tiny_classifier.yaml",
    )
    return result.package.read_bytes()


def members_of(data: bytes) -> dict[str, bytes]:
    """The members of a package, in archive order."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def rezip(members: dict[str, bytes], fix_checksums: bool = True) -> bytes:
    """The members as a stored zip; bundle.json's sizes and SHA-256s recomputed."""
    if fix_checksums:
        bundle = json.loads(members["bundle.json"])
        bundle["members"] = {
            name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            for name, data in members.items()
            if name != "bundle.json" and name in bundle["members"]
        }
        members = {**members, "bundle.json": json.dumps(bundle).encode()}
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return stream.getvalue()


def edit_json(
    data: bytes, member: str, change: Callable[[Any], object], fix: bool = True
) -> bytes:
    """The package with JSON member `member` changed in place by `change`."""
    members = members_of(data)
    document = json.loads(members[member])
    change(document)
    members[member] = json.dumps(document).encode()
    return rezip(members, fix)


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "model.synap"
    path.write_bytes(data)
    return path


def refused(path: Path, *fragments: str, load: Callable[[Path], object] = Network) -> str:
    """The one-line error loading `path` gives: a PackageError naming the file, each of
    `fragments`, and clear by the fuzz harness's rules (no Python exception text)."""
    with pytest.raises(PackageError) as error:
        load(path)
    message = str(error.value)
    assert isinstance(error.value, SynapcError)
    assert str(path) in message and "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message
    assert classify_message(message, path) == "clear", message
    return message


def test_original_runs(tmp_path: Path, original: bytes) -> None:
    network = Network(write(tmp_path, original))
    network.inputs[0].assign(np.full((1, 3, 64, 64), 128, np.uint8))
    assert network.predict()[0].to_numpy().shape == (1, 10)
    # re-zipping through the test helpers keeps a valid package
    assert Network(write(tmp_path, rezip(members_of(original)))).inputs[0].shape == (
        1,
        3,
        64,
        64,
    )


# -- finding: OverflowError (spec.py: math.isfinite of a huge JSON integer) -----------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (10**400, "bundle.json: not valid JSON: an integer of more than 40 digits"),
        (
            10**39,
            "bundle.json: inputs[0].means[1]: an integer of more than 30 digits is out of "
            "range",
        ),
        (-(10**39), "bundle.json: inputs[0].means[1]: an integer of more than 30 digits"),
    ],
)
def test_huge_integer(tmp_path: Path, original: bytes, value: int, expected: str) -> None:
    def change(bundle: dict[str, Any]) -> None:
        bundle["inputs"][0]["means"][1] = value

    refused(write(tmp_path, edit_json(original, "bundle.json", change)), expected)


def test_huge_float_and_nan(tmp_path: Path, original: bytes) -> None:
    members = members_of(original)
    text = members["bundle.json"].replace(b"58.4", b"1e999")
    refused(write(tmp_path, rezip({**members, "bundle.json": text}, False)), "out of range")
    text = members["bundle.json"].replace(b"58.4", b"NaN")
    refused(
        write(tmp_path, rezip({**members, "bundle.json": text}, False)),
        "NaN is not a number",
    )


# -- finding: RecursionError (reader.py: json.loads of a deeply nested model.json) -------


@pytest.mark.parametrize("depth", [33, 100_000])
def test_deeply_nested_json(tmp_path: Path, original: bytes, depth: int) -> None:
    members = members_of(original)
    members[MODEL] = b"[" * depth + b"]" * depth
    message = refused(write(tmp_path, rezip(members)), f"{MODEL}: JSON nested {depth}")
    assert "SYNAPC_MAX_JSON_DEPTH" in message


def test_json_depth_does_not_recurse() -> None:
    assert json_depth(b"[" * 5_000_000) == 5_000_000
    assert json_depth(b'{"a": "[[[[\\"[[", "b": [[1], {"c": []}]}') == 4
    assert json_depth(b"") == 0


def test_json_size_limit(tmp_path: Path, original: bytes) -> None:
    with use_limits(max_json_bytes=1000):
        refused(write(tmp_path, original), "bundle.json:", "SYNAPC_MAX_JSON_BYTES")


# -- finding: a zip bomb inflated to 1 GiB before it was refused ----------------------


def _deflate_bomb(size: int) -> tuple[bytes, int]:
    """A raw deflate stream of `size` zero bytes (a multiple of 1 MiB), built by
    repeating one flushed 1 MiB block, and the CRC-32 of what it inflates to."""
    chunk = bytes(1 << 20)
    block = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = block.compress(chunk) + block.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(size >> 20):
        crc = zlib.crc32(chunk, crc)
    return body * (size >> 20) + b"\x03\x00", crc


def _with_member_bytes(
    data: bytes, name: str, raw: bytes, crc: int, size: int, method: int
) -> bytes:
    """The package with member `name` replaced by `raw` (stored as is), its headers
    declaring `method`, CRC `crc` and uncompressed size `size`."""
    members = members_of(data)
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED) as archive:
        for member, content in members.items():
            archive.writestr(member, raw if member == name else content)
    out = bytearray(stream.getvalue())
    name_bytes = name.encode()
    for signature, fields in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        at = 0
        while (at := out.find(signature, at)) >= 0:
            name_at = at + (30 if fields == 8 else 46)
            if out[name_at : name_at + len(name_bytes)] == name_bytes:
                struct.pack_into("<H", out, at + fields, method)
                struct.pack_into("<I", out, at + fields + 6, crc)
                struct.pack_into("<I", out, at + fields + 14, size)
            at += 4
    return bytes(out)


def test_zip_bomb_refused_before_inflating(tmp_path: Path, original: bytes) -> None:
    raw, crc = _deflate_bomb(1 << 30)
    path = write(tmp_path, _with_member_bytes(original, WEIGHTS, raw, crc, 1 << 30, 8))
    tracemalloc.start()
    try:
        message = refused(path, WEIGHTS, "compressed (zip method 8)", load=read_package)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, (peak, message)


def test_member_and_package_size_limits(tmp_path: Path, original: bytes) -> None:
    path = write(tmp_path, original)
    with use_limits(max_package_member_bytes=5000):
        refused(path, PROGRAM, "bytes exceed the member limit of 5,000")
    with use_limits(max_package_bytes=10_000):
        refused(path, "bytes exceed the package limit of 10,000")


# -- finding: LZMAError (a member that says it is LZMA-compressed) ----------------------


def test_lzma_member(tmp_path: Path, original: bytes) -> None:
    raw = members_of(original)[WEIGHTS]
    data = _with_member_bytes(
        original, WEIGHTS, b"\x00garbage" * 8, zlib.crc32(raw), len(raw), 14
    )
    refused(write(tmp_path, data), WEIGHTS, "compressed (zip method 14)")


def test_local_header_disagrees(tmp_path: Path, original: bytes) -> None:
    data = bytearray(original)
    with zipfile.ZipFile(io.BytesIO(original)) as archive:
        offset = archive.getinfo(WEIGHTS).header_offset
    struct.pack_into("<I", data, offset + 22, 10)  # the local uncompressed size
    refused(write(tmp_path, bytes(data)), WEIGHTS, "local header disagrees")


def test_data_descriptor_and_encryption_flags(tmp_path: Path, original: bytes) -> None:
    for flag, expected in ((0x8, "data descriptor"), (0x1, "encrypted")):
        data = bytearray(original)
        at = data.find(b"PK\x01\x02")
        while at >= 0:  # every central directory entry
            struct.pack_into("<H", data, at + 8, flag)
            at = data.find(b"PK\x01\x02", at + 4)
        refused(write(tmp_path, bytes(data)), expected)


def test_truncated_and_trailing(tmp_path: Path, original: bytes) -> None:
    refused(write(tmp_path, original[: len(original) // 2]), "not a zip file")
    refused(write(tmp_path, original[:-3]), "not a zip file")
    refused(write(tmp_path, original + b"junk"), "end record is not at the end")


def test_crc_mismatch(tmp_path: Path, original: bytes) -> None:
    with zipfile.ZipFile(io.BytesIO(original)) as archive:
        info = archive.getinfo(WEIGHTS)
    data = bytearray(original)
    data[info.header_offset + 30 + len(WEIGHTS) + 5] ^= 0x40
    refused(write(tmp_path, bytes(data)), f"{WEIGHTS}: CRC-32 mismatch")


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../x", "unsafe member name '../x'"),
        ("/abs", "unsafe member name '/abs'"),
        (WEIGHTS, f"unsafe member name '{WEIGHTS}'"),  # a duplicate
        ("0/extra.bin", "member '0/extra.bin' is present but not listed"),
        ("a\nb", "unsafe member name 'a\\nb'"),
    ],
)
def test_added_members(tmp_path: Path, original: bytes, name: str, expected: str) -> None:
    stream = io.BytesIO(original)
    with zipfile.ZipFile(stream, "a") as archive:
        archive.writestr(name, b"x")
    refused(write(tmp_path, stream.getvalue()), expected)


def test_listed_member_that_no_subgraph_uses(tmp_path: Path, original: bytes) -> None:
    members = members_of(original)
    members["0/unused.bin"] = b"x"
    bundle = json.loads(members["bundle.json"])
    bundle["members"]["0/unused.bin"] = {}
    members["bundle.json"] = json.dumps(bundle).encode()
    refused(
        write(tmp_path, rezip(members)), "member '0/unused.bin' is listed but no subgraph"
    )


def test_renamed_member(tmp_path: Path, original: bytes) -> None:
    members = members_of(original)
    members["0/w.bin"] = members.pop(WEIGHTS)
    bundle = json.loads(members["bundle.json"])
    bundle["members"]["0/w.bin"] = bundle["members"].pop(WEIGHTS)
    members["bundle.json"] = json.dumps(bundle).encode()
    model = json.loads(members[MODEL])
    model["weights_file"] = "0/w.bin"
    members[MODEL] = json.dumps(model).encode()
    refused(write(tmp_path, rezip(members)), f"{MODEL}: weights_file: expected '{WEIGHTS}'")


# -- finding: unhashable dtype (reader.py: a list where a dtype name belongs) ------------


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda m: m["weights"][0].update(dtype=["float16"]),
            "weights[0].dtype: expected a string, got a list",
        ),
        (
            lambda m: m["weights"][0].update(dtype={"a": 1}),
            "weights[0].dtype: expected a string, got an object",
        ),
        (
            lambda m: m["weights"][1].update(shape=[1, 3, 3, -16]),
            "weights[1].shape[3]: -16 is out of range",
        ),
        (
            lambda m: m["weights"][1].update(offset=1000),
            "weights[1].offset: 1,000 is not a multiple of 64",
        ),
        (lambda m: m["weights"][1].update(offset=0), "weights[1].offset: overlaps"),
        (
            lambda m: m["weights"][0].update(nbytes=2**64),
            "weights[0].nbytes: 18446744073709551616 is out of range",
        ),
        (lambda m: m["weights"][0].update(extra=1), "weights[0]: unknown field 'extra'"),
        (
            lambda m: m["weights"][0].update(stored="float16", dtype="int32"),
            "weights[0].stored: only float32 weights are stored narrower, not int32",
        ),
        (
            lambda m: m["weights"][0].update(stored="float8_e4m3fn", dtype="float32"),
            "weights[0].stored: unknown type 'float8_e4m3fn'",
        ),
        (lambda m: m.pop("delegate"), "field 'delegate' is missing"),
        (lambda m: m.update(delegate="dsp"), "delegate: unknown delegate 'dsp'"),
        (
            lambda m: m["inputs"][0].update(shape=[1, 3, 64, 64, 1, 1] * 6),
            "inputs[0].shape: 36 dimensions",
        ),
        (
            lambda m: m["inputs"][0].update(shape=[2**20, 2**20, 1, 1]),
            "inputs[0].shape: 1,099,511,627,776 elements exceed",
        ),
        (
            lambda m: m["inputs"][0].update(means=[1.0, 2.0]),
            "inputs[0].means: 2 means, expected 1 or 3",
        ),
        (lambda m: m["inputs"][0].update(scale=0), "inputs[0].scale: scale is zero"),
        (
            lambda m: m["inputs"][0].update(name=7),
            "inputs[0].name: expected a string, got an integer",
        ),
        (
            lambda m: m["outputs"][0].update(
                quantization={"scale": [0.1, 0.2], "zero_point": [0, 0], "axis": 1}
            ),
            "outputs[0].quantization.scale: 2 scales for 10 channels along axis 1",
        ),
        (
            lambda m: m["outputs"][0].update(
                quantization={"scale": [-0.1], "zero_point": [0]}
            ),
            "outputs[0].quantization.scale[0]: scale -0.1 is not positive",
        ),
        (lambda m: m.update(layers=[]), "field 'layer_outputs' is missing"),
        (
            lambda m: m["memory_plan"]["figures"].update(arena=-1),
            "memory_plan.figures.arena: -1 is out of range",
        ),
        (
            lambda m: m["memory_plan"]["figures"].pop("lower_bound"),
            "memory_plan.figures: field 'lower_bound' is missing",
        ),
        (
            lambda m: m["memory_plan"]["tensors"][0].update(memory="l2"),
            "memory_plan.tensors[0].memory: unknown memory 'l2'",
        ),
        (
            lambda m: m["memory_plan"]["tensors"][0].update(offset=2**40),
            "memory_plan.tensors[0]: bytes [1099511627776, ",
        ),
        (
            lambda m: m["memory_plan"]["tensors"][0].update(first=9, last=2),
            "memory_plan.tensors[0]: its first step comes after its last",
        ),
    ],
)
def test_model_json_fields(
    tmp_path: Path, original: bytes, change: Callable[[Any], object], expected: str
) -> None:
    refused(write(tmp_path, edit_json(original, MODEL, change)), f"{MODEL}: {expected}")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda b: b.update(version=True), "package version a boolean is not supported"),
        (lambda b: b.update(extra=1), "bundle.json: unknown field 'extra'"),
        (
            lambda b: b.update(target=["VS680"]),
            "bundle.json: target: expected a string, got a list",
        ),
        (
            lambda b: b["metadata"].update(x=1),
            "bundle.json: metadata['x']: expected a string",
        ),
        (
            lambda b: b["graph"][0].update(model="0/weights.bin"),
            "graph[0].model: expected '0/model.json'",
        ),
        (
            lambda b: b["graph"][0]["inputs"][0].update(out=5),
            "graph[0].inputs[0]: reference (-1, 5) names no earlier value",
        ),
        (
            lambda b: b["graph"][0]["inputs"][0].update(subgraph=2**70),
            "graph[0].inputs[0].subgraph: 1180591620717411303424 is out of range",
        ),
        (
            lambda b: b["outputs_from"][0].update(out=-1),
            "outputs_from[0].out: -1 is out of range",
        ),
        (
            lambda b: b["outputs"][0].update(shape=[1, 11]),
            "bundle.json: outputs[0]: 'probabilities' is float32[1, 11], but the output 0 "
            "of subgraph 0",
        ),
        (
            lambda b: b["inputs"][0].update(data_type="uint8"),
            f"{MODEL}: inputs[0]: 'image' is float32[1, 3, 64, 64], but the model input 0",
        ),
        (
            lambda b: b["members"][WEIGHTS].update(sha256="A" * 64),
            "members['0/weights.bin'].sha256: expected 64 lowercase hex digits",
        ),
    ],
)
def test_bundle_fields(
    tmp_path: Path, original: bytes, change: Callable[[Any], object], expected: str
) -> None:
    members = members_of(original)
    bundle = json.loads(members["bundle.json"])
    change(bundle)
    members["bundle.json"] = json.dumps(bundle).encode()
    refused(write(tmp_path, rezip(members, fix_checksums=False)), expected)


def test_duplicate_keys(tmp_path: Path, original: bytes) -> None:
    members = members_of(original)
    members["bundle.json"] = members["bundle.json"].replace(
        b'"target": "VS680"', b'"target": "VS680", "target": "VS640"'
    )
    refused(write(tmp_path, rezip(members, False)), "duplicate key 'target'")


# -- finding: JaxRuntimeError from deserialization (network.py: lowering) ---------------


def _replace_module(serialized: bytes, module: bytes) -> bytes:
    exported = jax.export.deserialize(bytearray(serialized))
    return bytes(dataclasses.replace(exported, mlir_module_serialized=module).serialize())


@pytest.mark.parametrize("kind", ["module", "flatbuffer", "flipped"])
def test_damaged_program_with_right_checksums(
    tmp_path: Path, original: bytes, kind: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """One line and nothing else: MLIR's own diagnostics on stderr are held back."""
    members = members_of(original)
    program = members[PROGRAM]
    if kind == "module":  # a valid flatbuffer around StableHLO bytecode that is garbage
        members[PROGRAM] = _replace_module(program, b"ML\xefR" + bytes(range(200)))
    elif kind == "flatbuffer":
        members[PROGRAM] = b"\xff" * 64
    else:
        members[PROGRAM] = (
            program[:100] + bytes(b ^ 0x55 for b in program[100:140]) + program[140:]
        )
    refused(write(tmp_path, rezip(members)), f"{PROGRAM}: cannot load the program")
    assert "error" not in capfd.readouterr().err


def test_custom_call_refused(tmp_path: Path) -> None:
    def program(params: dict[str, jax.Array], x: jax.Array) -> list[jax.Array]:
        y = jax.ffi.ffi_call("not_a_synapc_kernel", jax.ShapeDtypeStruct(x.shape, x.dtype))(
            x
        )
        return [y + params["b"]]

    spec = TensorSpec("x", (4,), "float32")
    f32 = jax.ShapeDtypeStruct((4,), np.float32)
    checks = [jax.export.DisabledSafetyCheck.custom_call("not_a_synapc_kernel")]
    original_export = jax.export.export

    def export(*args: Any, **kwargs: Any) -> Any:
        return original_export(*args, **kwargs, disabled_checks=checks)

    jax.export.export = export  # export_program calls jax.export.export
    try:
        blob, weights = export_program(program, {"b": jnp.ones(4, np.float32)}, [f32])
    finally:
        jax.export.export = original_export
    data = build_package(
        target="GENERIC",
        source={},
        inputs=[spec],
        outputs=[spec],
        output_refs=[(0, 0)],
        subgraphs=[Subgraph("cpu", blob, weights, [spec], [spec], [(-1, 0)])],
    )
    refused(write(tmp_path, data), PROGRAM, "custom call target 'not_a_synapc_kernel'")


def test_tensor_inside_the_program_beyond_the_limits(
    tmp_path: Path, original: bytes
) -> None:
    """The input has 12,288 elements; the program pads it (planar) to 1x3x66x66 = 13,068."""
    with use_limits(max_tensor_elements=12_288):
        refused(write(tmp_path, original), PROGRAM, "tensor of shape [1, 3, 66, 66]")


# -- finding: input shapes not checked against the exported signature -------------------


@pytest.mark.parametrize(
    ("shape", "data_type", "expected"),
    [
        (
            [1, 3, 32, 32],
            "float32",
            "'image' is float32[1, 3, 32, 32], but the program's input 0 is "
            "float32[1, 3, 64, 64]",
        ),
        (
            [1, 3, 64, 64],
            "int8",
            "'image' is int8[1, 3, 64, 64], but the program's input 0 is "
            "float32[1, 3, 64, 64]",
        ),
    ],
)
def test_inputs_against_the_program(
    tmp_path: Path, original: bytes, shape: list[int], data_type: str, expected: str
) -> None:
    """bundle.json and model.json agree with each other, not with the program."""

    def change(document: dict[str, Any]) -> None:
        document["inputs"][0].update(shape=shape, data_type=data_type, means=None)

    data = edit_json(edit_json(original, MODEL, change), "bundle.json", change, fix=False)
    refused(write(tmp_path, data), f"{MODEL}: inputs[0]: {expected}")


def test_outputs_against_the_program(tmp_path: Path, original: bytes) -> None:
    def change(document: dict[str, Any]) -> None:
        document["outputs"][0].update(shape=[1, 5, 2])

    data = edit_json(edit_json(original, MODEL, change), "bundle.json", change, fix=False)
    refused(
        write(tmp_path, data), f"{MODEL}: outputs[0]: 'probabilities' is float32[1, 5, 2]"
    )


def test_assign_and_predict_check_shapes(tmp_path: Path, original: bytes) -> None:
    network = Network(write(tmp_path, original))
    with pytest.raises(
        SynapcError, match=r"tensor 'image': data of shape \[1, 3, 32, 32\]"
    ):
        network.inputs[0].assign(np.zeros((1, 3, 32, 32), np.float32))
    network.inputs[0]._value = np.zeros((1, 3, 32, 32), np.float32)  # around assign
    with pytest.raises(SynapcError) as error:
        network.predict()
    message = str(error.value)
    assert (
        f"{tmp_path / 'model.synap'}: {PROGRAM}: input 0 is float32[1, 3, 32, 32]"
        in message
    )
    assert "the program takes float32[1, 3, 64, 64]" in message


def test_assign_ragged_data(tmp_path: Path, original: bytes) -> None:
    network = Network(write(tmp_path, original))
    with pytest.raises(SynapcError, match="tensor 'image': the data is not an array"):
        network.inputs[0].assign([[1.0, 2.0], [3.0]])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("%0 = stablehlo.custom_call @Sharding(%x)", None),
        ("%0 = stablehlo.custom_call @lapack_dgetrf(%x)", "target 'lapack_dgetrf'"),
        ('%0 = stablehlo.custom_call @"odd name"(%x)', "target 'odd name'"),
        ('%0 = "stablehlo.custom_call"(%x) <{call_target_name = "k"}>', "target 'k'"),
        ("%0 = stablehlo.custom_call", "calls a custom call,"),
    ],
)
def test_custom_call_forms(text: str, expected: str | None) -> None:
    """Both printed forms of a custom call are read; one that cannot be is refused."""
    from synapc.runtime.network import _check_module

    if expected is None:
        _check_module("m.synap: 0/model.stablehlo", text)
    else:
        with pytest.raises(PackageError, match=expected):
            _check_module("m.synap: 0/model.stablehlo", text)
