"""WeightStore and MLIR text I/O: blobs round-trip bit-exactly for every element type,
handles survive repeated parsing, and malformed resource sections give clear errors."""

from __future__ import annotations

import io

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp

from synapc import mlir_io
from synapc.dialects.quant import UniformQuantizedType
from synapc.mlir_io import (
    ResourceError,
    parse_module,
    print_module,
    read_module,
    write_module,
)
from synapc.weights import WeightStore

ARRAYS = {
    "f32": np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32),
    "f16": np.random.default_rng(1).standard_normal((7,)).astype(np.float16),
    "f64": np.array([np.pi, -0.0, np.inf]),
    "bf16": np.arange(6, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(2, 3),
    "i8": np.array([[-128, 127, 0]], np.int8),
    "u8": np.arange(256, dtype=np.uint8),
    "i16": np.array([-32768, 5], np.int16),
    "i32": np.array([2**31 - 1, -(2**31)], np.int32),
    "i64": np.array([[2**62]], np.int64),
    "bool": np.array([True, False, True]),
}


def constants_module(store: WeightStore, arrays: dict[str, np.ndarray]) -> ModuleOp:
    func = FuncOp("weights", ([], []))
    ops = [store.constant(a, name) for name, a in arrays.items()]
    func.body.block.add_ops(ops)
    func.body.block.add_op(ReturnOp(*[o.results[0] for o in ops]))
    func.function_type = type(func.function_type).from_lists(
        [], [o.results[0].type for o in ops]
    )
    return ModuleOp([func])


def test_store_hands_out_unique_read_only_handles() -> None:
    store = WeightStore()
    a, b = store.add(np.zeros(3), "conv/w"), store.add(np.ones(3), "conv/w")
    assert (a, b) == ("conv_w", "conv_w_0") and len(store) == 2
    with pytest.raises(ValueError, match="read-only"):
        store[a][0] = 1.0
    with pytest.raises(KeyError, match="no weight with handle 'nope'"):
        store["nope"]
    with pytest.raises(ValueError, match="not a valid resource handle"):
        store["1 bad"] = np.zeros(1)
    assert store.new_handle("7x") == "w_7x"


def test_constant_checks_dtype_against_type() -> None:
    store = WeightStore()
    q = TensorType(UniformQuantizedType.per_tensor("u8", 0.5, 3), [2])
    store.constant(np.array([1, 2], np.uint8), "q", q)
    with pytest.raises(ValueError, match="does not fit"):
        store.constant(np.array([1, 2], np.int8), "q", q)


def test_blobs_round_trip_bit_exactly_for_every_dtype() -> None:
    store = WeightStore()
    module = constants_module(store, ARRAYS)
    text = print_module(module, store, with_weights=True)
    assert "{-#" in text and "dialect_resources" in text
    loaded = WeightStore()
    again = parse_module(text, loaded)
    again.verify()
    for name, array in ARRAYS.items():
        assert loaded[name].dtype == array.dtype and loaded[name].shape == array.shape
        assert loaded[name].tobytes() == array.tobytes(), name
    assert print_module(again, loaded, with_weights=True) == text


def test_quantized_blob_holds_stored_integers() -> None:
    store = WeightStore()
    q = TensorType(UniformQuantizedType.per_axis("i8", 0, [0.5, 0.25]), [2, 2])
    func = FuncOp("q", ([], []))
    c = store.constant(np.array([[1, -2], [3, -4]], np.int8), "qw", q)
    func.body.block.add_ops([c, ReturnOp(c.results[0])])
    func.function_type = type(func.function_type).from_lists([], [q])
    text = print_module(ModuleOp([func]), store, with_weights=True)
    loaded = WeightStore()
    parse_module(text, loaded)
    np.testing.assert_array_equal(loaded["qw"], [[1, -2], [3, -4]])


def test_parsing_the_same_text_twice_keeps_handles_and_values() -> None:
    store = WeightStore()
    text = print_module(constants_module(store, {"w": ARRAYS["f32"]}), store, True)
    for _ in range(3):
        loaded = WeightStore()
        module = parse_module(text, loaded)
        assert "dense_resource<w>" in print_module(module)
        np.testing.assert_array_equal(loaded["w"], ARRAYS["f32"])


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_streamed_reading_handles_every_chunk_boundary(
    tmp_path, monkeypatch, chunk
) -> None:
    store = WeightStore()
    module = constants_module(store, {"a": ARRAYS["f32"], "b": ARRAYS["u8"]})
    path = tmp_path / "m.mlir"
    write_module(module, path, store)
    monkeypatch.setattr(mlir_io, "_CHUNK", chunk)
    loaded = WeightStore()
    read_module(path, loaded)
    assert loaded["a"].tobytes() == ARRAYS["f32"].tobytes()
    assert loaded["b"].tobytes() == ARRAYS["u8"].tobytes()


def test_handles_only_printing_has_no_resource_section() -> None:
    store = WeightStore()
    text = print_module(constants_module(store, {"w": ARRAYS["f32"]}), store)
    assert "{-#" not in text and "dense_resource<w>" in text


def test_module_text_without_blobs_parses_with_an_empty_store() -> None:
    store = WeightStore()
    text = print_module(constants_module(WeightStore(), {"w": ARRAYS["f32"]}))
    parse_module(text, store)
    assert len(store) == 0


def _section(body: str) -> str:
    module = print_module(constants_module(WeightStore(), {"w": ARRAYS["u8"][:4]}))
    return module + "\n{-#\n" + body + "\n#-}\n"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('dialect_resources: { builtin: { w: "0x0100000001020304" } }', None),
        ('dialect_resources: { builtin: { w: "0x01000000010203" } }', "has 3 bytes"),
        ('dialect_resources: { builtin: { w: "0x0100000001020" } }', "odd number"),
        ('dialect_resources: { builtin: { w: "0x01000000zz020304" } }', "not a hex string"),
        (
            'dialect_resources: { builtin: { w: "0x0100000001020304" ',
            "unterminated|expected",
        ),
        ('dialect_resources: { other: { w: "0x01000000" } }', "dialect 'other'"),
        ("external_resources: { }", "unsupported resource section 'external_resources'"),
        ("dialect_resources: { builtin: { w: 12 } }", "expected '\"0x'"),
    ],
)
def test_resource_section_errors(body: str, message: str | None) -> None:
    store = WeightStore()
    if message is None:
        parse_module(_section(body), store)
        np.testing.assert_array_equal(store["w"], [1, 2, 3, 4])
        return
    with pytest.raises(ResourceError, match=message):
        parse_module(_section(body), store)


def test_write_module_to_stream_matches_print() -> None:
    store = WeightStore()
    module = constants_module(store, {"w": ARRAYS["i16"]})
    out = io.StringIO()
    write_module(module, out, store)
    assert out.getvalue() == print_module(module, store, with_weights=True)
