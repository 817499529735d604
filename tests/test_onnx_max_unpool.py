"""ONNX MaxUnpool beyond the conformance cases: unpooling a MaxPool's output with its
Indices (overlapping padded windows, the pool's results held channels-last) to a larger
constant output_shape, a 3-D unpool of run-time values and indices, against ONNX's
reference implementation; out-of-range indices (data: their values are dropped) and
the refusals (a run-time output_shape, one smaller than the unpooled shape), each one
line naming node and operator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper

import synapc
from synapc.testing.onnx_cases import assert_refused, check_against_reference, save_model

_RNG = np.random.default_rng(5)


def _run(path: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """synapc's (GENERIC) output of `path` on `feeds`."""
    model = synapc.import_model(path)
    return synapc.compile(model, "GENERIC").run([feeds[i.name] for i in model.inputs])[0]


def _unpool(inputs: list[str], **attrs: object) -> onnx.NodeProto:
    return helper.make_node("MaxUnpool", inputs, ["y"], name="the_layer", **attrs)


def test_unpool_a_max_pool_to_a_larger_output_shape(tmp_path: Path) -> None:
    """MaxPool 3x3 / stride 2 / pads 1 with Indices, unpooled to [2, 3, 10, 9] (the
    unpooled shape is [2, 3, 9, 7])."""
    x = _RNG.standard_normal((2, 3, 9, 7)).astype(np.float32)
    window = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    pool = helper.make_node("MaxPool", ["x"], ["p", "i"], **window)
    unpool = _unpool(["p", "i", "shape"], **window)
    shape = np.array([2, 3, 10, 9], np.int64)
    path = save_model(tmp_path, [pool, unpool], {"x": x}, initializers={"shape": shape})
    check_against_reference(path, {"x": x}, rtol=1e-6)


def test_unpool_3d_runtime_values_and_indices(tmp_path: Path) -> None:
    """A 3-D unpool (kernel 2, stride 2) of run-time values at distinct run-time flat
    positions, float16."""
    x = _RNG.standard_normal((1, 2, 2, 3, 2)).astype(np.float16)
    size = 1 * 2 * 4 * 6 * 4
    i = _RNG.permutation(size)[: x.size].reshape(x.shape).astype(np.int64)
    node = _unpool(["x", "i"], kernel_shape=[2, 2, 2], strides=[2, 2, 2])
    path = save_model(tmp_path, [node], {"x": x, "i": i})
    check_against_reference(path, {"x": x, "i": i}, rtol=1e-6)


def test_out_of_range_indices_are_dropped(tmp_path: Path) -> None:
    """Indices are data: one past the end of the flat output (ONNX's reference raises
    on it) is dropped, its value written nowhere; a negative one counts from the end."""
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], np.float32)
    i = np.array([[[[0, 16], [-1, 5]]]], np.int64)
    node = _unpool(["x", "i"], kernel_shape=[2, 2], strides=[2, 2])
    path = save_model(tmp_path, [node], {"x": x, "i": i})
    want = np.zeros(16, np.float32)
    want[[0, 15, 5]] = [1.0, 3.0, 4.0]
    np.testing.assert_array_equal(_run(path, {"x": x, "i": i}), want.reshape(1, 1, 4, 4))


def test_refusals(tmp_path: Path) -> None:
    """A run-time output_shape and one smaller than the unpooled shape are refused."""
    x = np.zeros((1, 1, 2, 2), np.float32)
    i = np.zeros((1, 1, 2, 2), np.int64)
    node = _unpool(["x", "i", "shape"], kernel_shape=[2, 2], strides=[2, 2])
    shape = np.array([1, 1, 4, 4], np.int64)
    path = save_model(tmp_path, [node], {"x": x, "i": i, "shape": shape})
    assert_refused(path, "output_shape (input 2) 'shape'", "run time", operator="MaxUnpool")
    small = {"shape": np.array([1, 1, 3, 4], np.int64)}
    path = save_model(tmp_path, [node], {"x": x, "i": i}, initializers=small)
    assert_refused(path, "output_shape", "smaller", operator="MaxUnpool")
