"""Small ONNX gaps closed together: integer Pow, Pad mode wrap, nodes that fold because
their run-time inputs only contribute a type (CastLike), training-mode
BatchNormalization and zero-size tensors (empty constants). Each is compiled for
GENERIC and compared with ONNX's reference implementation; what stays unrepresentable
is refused with one line naming the node and the operator."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

import synapc
from synapc.errors import SynapcError
from synapc.testing.onnx_cases import check_against_reference, save_model

#: synapc's outputs equal the reference's, exactly for integers (the reference's cast to
#: synapc's type), within rtol 1e-5 for floats
_check = partial(check_against_reference, rtol=1e-5, atol=1e-6, same_dtype=False)
_POW = helper.make_node("Pow", ["x", "e"], ["y"])


# -- Pow of integers ---------------------------------------------------------------------
def test_integer_pow_is_exact_and_wraps(tmp_path: Path) -> None:
    base = np.array([-3, -2, 0, 1, 2, 3, 7, 3, -5], np.int32)
    exponent = np.array([3, 4, 0, 9, 30, 21, 11, 19, 1], np.int32)
    inputs = {"x": base, "e": exponent}
    _check(save_model(tmp_path, [_POW], inputs), inputs)


def test_integer_pow_negative_exponent_truncates(tmp_path: Path) -> None:
    """1 / x**|e| as C integer division: 1, +-1, 0 (and 0 for a base of 0)."""
    path = save_model(
        tmp_path, [_POW], {"x": np.zeros(7, np.int32), "e": np.zeros(7, np.int64)}
    )
    x = np.array([1, -1, -1, 2, -3, 5, 0], np.int32)
    e = np.array([-2, -3, -2, -1, -1, -4, -1], np.int64)
    got = synapc.compile(synapc.import_model(path), "GENERIC").run([x, e])[0]
    np.testing.assert_array_equal(np.asarray(got), [1, -1, 1, 0, 0, 0, 0])


def test_integer_base_float_exponent_truncates(tmp_path: Path) -> None:
    inputs = {
        "x": np.array([[1, 2, 3, -2, 9]], np.int64),
        "e": np.array([0.5, 2.5, 2.0, 3.0, -0.5], np.float32),
    }
    _check(save_model(tmp_path, [_POW], inputs), inputs)


def test_integer_pow_keeps_a_wider_exponent(tmp_path: Path) -> None:
    """An int64 exponent is not narrowed to an int8 base: 2 ** 256 wraps to 0, 3 ** 128
    is 1 in int8 (reference numpy), not 2 ** 0 and 3 ** -128."""
    inputs = {
        "x": np.array([2, 3, -1, 3], np.int8),
        "e": np.array([256, 128, 255, 5], np.int64),
    }
    _check(save_model(tmp_path, [_POW], inputs), inputs)
    unsigned = {
        "x": np.array([2, 3, 5], np.int16),
        "e": np.array([65536 + 2, 4, 3], np.uint32),
    }
    _check(save_model(tmp_path, [_POW], unsigned, opset=15), unsigned)


def test_integer_base_float_exponent_is_exact_below_2_to_24(tmp_path: Path) -> None:
    """An int32 base with a float exponent runs in float32 on the target (numpy: float64):
    exact while ``|x| < 2**24``; 16777217 ** 1.0 would give 16777216 (documented)."""
    inputs = {
        "x": np.array([16777215, -16777215, 4095, 3, 7], np.int32),
        "e": np.array([1.0, 1.0, 2.0, 15.0, 8.0], np.float32),
    }
    _check(save_model(tmp_path, [_POW], inputs), inputs)


# -- Pad mode wrap ---------------------------------------------------------------------
def test_pad_wrap_wider_than_the_dimension(tmp_path: Path) -> None:
    inputs = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    pads = {"pads": np.array([1, 5, 0, 2], np.int64)}
    node = helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")
    _check(save_model(tmp_path, [node], inputs, initializers=pads), inputs)


def test_pad_wrap_of_an_empty_dimension_is_refused(tmp_path: Path) -> None:
    inputs = {"x": np.zeros((2, 0), np.float32)}
    pads = {"pads": np.array([0, 1, 0, 1], np.int64)}
    node = helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap", name="wrapper")
    with pytest.raises(
        SynapcError, match=r"'wrapper' \(Pad.*wrap padding of empty dimension 1"
    ):
        synapc.import_model(save_model(tmp_path, [node], inputs, initializers=pads))


# -- type-only inputs fold -------------------------------------------------------------
def test_castlike_of_a_constant_folds(tmp_path: Path) -> None:
    """CastLike(constant, run-time x) is a constant: no cast op is emitted."""
    inputs = {"x": np.array([-3.0, 0.5, 2.0], np.float16)}
    nodes = [
        helper.make_node("CastLike", ["c", "x"], ["c16"]),
        helper.make_node("Max", ["x", "c16"], ["y"]),
    ]
    floor = {"c": np.array([-1.5], np.float32)}
    imported = _check(save_model(tmp_path, nodes, inputs, initializers=floor), inputs)
    assert "synap.cast" not in str(imported.module)


# -- BatchNormalization training mode ----------------------------------------------------
def _batch_norm_model(
    tmp_path: Path, opset: int, outputs: tuple[str, ...], **attrs: int
) -> Path:
    rng = np.random.default_rng(0)
    params = {
        "s": rng.uniform(0.5, 1.5, 3).astype(np.float32),
        "b": rng.uniform(-1, 1, 3).astype(np.float32),
        "m": rng.uniform(-1, 1, 3).astype(np.float32),
        "v": rng.uniform(0.5, 1.5, 3).astype(np.float32),
    }
    node = helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"], list(outputs), name="bn", **attrs
    )
    inputs = {"x": np.zeros((2, 3, 4, 5), np.float32)}
    return save_model(tmp_path, [node], inputs, outputs, initializers=params, opset=opset)


def test_batch_norm_training_mode(tmp_path: Path) -> None:
    path = _batch_norm_model(tmp_path, 15, ("y", "rm", "rv"), training_mode=1)
    x = np.random.default_rng(1).normal(1.0, 2.0, (2, 3, 4, 5)).astype(np.float32)
    _check(path, {"x": x})


def test_batch_norm_running_outputs_before_opset_14_refused(tmp_path: Path) -> None:
    path = _batch_norm_model(tmp_path, 9, ("y", "rm"))
    with pytest.raises(SynapcError, match=r"'bn' \(BatchNormalization.*running statistics"):
        synapc.import_model(path)


# -- zero-size tensors -------------------------------------------------------------------
def test_zero_size_split_part_is_an_empty_constant(tmp_path: Path) -> None:
    """A Split part of size 0 is an empty constant: Concat drops it, and it is a graph
    output of shape (1, 0)."""
    inputs = {"x": np.array([[1.0, -2.0, 3.0, -4.0]], np.float32)}
    nodes = [
        helper.make_node("Split", ["x", "sizes"], ["a", "z"], axis=1),
        helper.make_node("Concat", ["z", "x", "z"], ["c"], axis=1),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    sizes = {"sizes": np.array([4, 0], np.int64)}
    path = save_model(tmp_path, nodes, inputs, ("y", "z"), initializers=sizes)
    imported = _check(path, inputs)
    text = str(imported.module)
    assert "synap.split" not in text and "synap.concat" not in text
