"""The storage-only element types (float8, float4, 2- and 4-bit integers) and uint64:
synap.cast converts to and from them as ONNX's Cast does (checked against onnx's
reference implementation on the values where the rules differ: ties, subnormals,
overflow, infinities, NaN), no other op takes them, and 64-bit integer inputs that do
not fit the 32-bit device type are refused instead of wrapped."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference.ops.op_cast import cast_to

import synapc
from synapc.dtypes import element_type_for, numpy_dtype
from synapc.errors import SynapcError
from synapc.importers.onnx import import_onnx
from synapc.testing.pass_check import model_from_text

#: Values where the conversions differ: ties, subnormals, the edges of each range,
#: overflow, infinities and NaN, both signs.
SPECIAL = np.array(
    [0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 3.5, 7.9, 8.5, -9.0, 17.0, 0.3, 1e-3, 2e-3, 1e-7,
     240.0, 250.0, 448.0, 464.0, 500.0, 57344.0, 61440.0, 1e6, -1e6, 3e38,
     np.inf, -np.inf, np.nan, 0.124, 1.1, 4.0],
    np.float32,
)  # fmt: skip

ONNX_TYPES = {
    TensorProto.FLOAT8E4M3FN: "float8_e4m3fn",
    TensorProto.FLOAT8E4M3FNUZ: "float8_e4m3fnuz",
    TensorProto.FLOAT8E5M2: "float8_e5m2",
    TensorProto.FLOAT8E5M2FNUZ: "float8_e5m2fnuz",
    TensorProto.FLOAT8E8M0: "float8_e8m0fnu",
    TensorProto.FLOAT4E2M1: "float4_e2m1fn",
    TensorProto.INT4: "int4",
    TensorProto.UINT4: "uint4",
    TensorProto.INT2: "int2",
    TensorProto.UINT2: "uint2",
}


def _cast_model(to: int, saturate: int, round_mode: str = "up") -> onnx.ModelProto:
    attrs = {"to": to, "saturate": saturate}
    if to == TensorProto.FLOAT8E8M0:
        attrs["round_mode"] = round_mode
    node = helper.make_node("Cast", ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "cast",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [SPECIAL.size])],
        [helper.make_tensor_value_info("y", to, [SPECIAL.size])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    imported = import_onnx(Path("cast.onnx"), None, proto=model)
    return synapc.compile(imported, "GENERIC").run([x])[0]


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


CASES = [
    (to, saturate, mode)
    for to in ONNX_TYPES
    for saturate in (1, 0)
    for mode in (("up", "down", "nearest") if to == TensorProto.FLOAT8E8M0 else ("up",))
]


@pytest.mark.parametrize(
    ("to", "saturate", "mode"),
    CASES,
    ids=[f"{ONNX_TYPES[t]}-sat{s}-{m}" for t, s, m in CASES],
)
def test_cast_to_a_storage_only_type_matches_onnx(
    to: int, saturate: int, mode: str
) -> None:
    x = SPECIAL
    if ONNX_TYPES[to] in ("int4", "uint4", "int2", "uint2"):
        x = x[np.isfinite(x) & (np.abs(x) < 1e5)]  # numpy leaves the rest undefined
    model = _cast_model(to, saturate, mode)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = x.size
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_value = x.size
    expected = cast_to(x, to, bool(saturate), mode)
    got = _run(model, x)
    assert _same_bits(got, np.asarray(expected)), (got, expected)


@pytest.mark.parametrize("name", sorted(ONNX_TYPES.values()))
def test_cast_from_a_storage_only_type_is_exact(name: str) -> None:
    dtype = np.dtype(getattr(ml_dtypes, name))
    codes = np.arange(256 if dtype.itemsize == 1 else 16, dtype=np.uint8)
    if name in ("int4", "uint4", "float4_e2m1fn"):
        codes = codes[:16]
    if name in ("int2", "uint2"):
        codes = codes[:4]
    values = codes.view(dtype) if name.startswith("float") else codes.astype(dtype)
    element = element_type_for(dtype)
    text = (
        f"builtin.module {{ func.func @main(%x: tensor<{values.size}x{element}>) -> "
        f"tensor<{values.size}xf32> {{\n"
        f"%y = synap.cast %x : (tensor<{values.size}x{element}>) -> "
        f"tensor<{values.size}xf32>\n"
        f"func.return %y : tensor<{values.size}xf32> }} }}"
    )
    got = synapc.compile(model_from_text(text), "GENERIC").run([values])[0]
    np.testing.assert_array_equal(got, values.astype(np.float32))


def test_only_cast_takes_storage_only_types() -> None:
    text = (
        "builtin.module { func.func @main(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {\n"
        "%y = synap.add %x, %x : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> "
        "tensor<4xf8E4M3FN>\nfunc.return %y : tensor<4xf8E4M3FN> } }"
    )
    with pytest.raises(Exception, match=r"only synap\.cast takes"):
        model_from_text(text).module.verify()


def test_element_types_round_trip() -> None:
    for name in [*ONNX_TYPES.values(), "uint64"]:
        dtype = np.dtype(getattr(ml_dtypes, name, name))
        assert numpy_dtype(element_type_for(dtype)) == dtype


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_64_bit_input_beyond_the_32_bit_device_type_is_refused(dtype: type) -> None:
    """64-bit integers run as 32-bit ones on the device: a value that does not fit is
    refused by name, not wrapped."""
    name = "i64" if dtype is np.int64 else "ui64"
    text = (
        f"builtin.module {{ func.func @main(%x: tensor<2x{name}>) -> tensor<2x{name}> {{\n"
        f"%y = synap.add %x, %x : (tensor<2x{name}>, tensor<2x{name}>) -> "
        f"tensor<2x{name}>\nfunc.return %y : tensor<2x{name}> }} }}"
    )
    exe = synapc.compile(model_from_text(text), "GENERIC")
    np.testing.assert_array_equal(exe.run([np.array([1, 7], dtype)])[0], [2, 14])
    with pytest.raises(SynapcError, match="runs as"):
        exe.run([np.array([1, 2**40], dtype)])


@pytest.mark.parametrize(
    ("source", "to", "x", "expected"),
    [
        (
            TensorProto.FLOAT,
            TensorProto.FLOAT8E4M3FN,
            np.array([0.3, 500.0, -1e9, 2.0], np.float32),
            np.array([0.3125, 448.0, -448.0, 2.0], np.float32),
        ),
        (
            TensorProto.INT4,
            TensorProto.FLOAT,
            np.array([1, -8, 7, -1], ml_dtypes.int4),
            np.array([1.0, -8.0, 7.0, -1.0], np.float32),
        ),
    ],
    ids=["float-to-float8", "int4-to-float"],
)
def test_a_package_with_storage_only_inputs_or_outputs_loads_and_runs(
    tmp_path: Path, source: int, to: int, x: np.ndarray, expected: np.ndarray
) -> None:
    """The writer stored these types' names, which the package reader refused: every
    data type a converted model has is one the runtime loads."""
    from synapc.runtime import Network

    node = helper.make_node("Cast", ["x"], ["y"], to=to)
    graph = helper.make_graph(
        [node],
        "cast",
        [helper.make_tensor_value_info("x", source, [4])],
        [helper.make_tensor_value_info("y", to, [4])],
    )
    path = tmp_path / "cast.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    synapc.convert(path, "VS680", tmp_path / "out")
    network = Network(tmp_path / "out" / "model.synap")
    network.inputs[0].assign(x)
    network.predict()
    got = network.outputs[0].to_numpy().astype(np.float32)
    np.testing.assert_array_equal(got, expected)
