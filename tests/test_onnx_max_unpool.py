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
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import synapc

_RNG = np.random.default_rng(5)


def _save(
    tmp_path: Path,
    nodes: list[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    initializers: dict[str, np.ndarray] | None = None,
) -> Path:
    """A model of `nodes` with graph inputs like `inputs` and output 'y'."""
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info(
                n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape
            )
            for n, a in inputs.items()
        ],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


def _run(path: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """synapc's (GENERIC) output of `path` on `feeds`."""
    model = synapc.import_model(path)
    return synapc.compile(model, "GENERIC").run([feeds[i.name] for i in model.inputs])[0]


def _check(path: Path, feeds: dict[str, np.ndarray]) -> None:
    """synapc matches ONNX's reference implementation on `feeds`."""
    ours = _run(path, feeds)
    (expected,) = ReferenceEvaluator(str(path)).run(None, feeds)
    assert ours.dtype == expected.dtype and ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-6)


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
    path = _save(tmp_path, [pool, unpool], {"x": x}, {"shape": shape})
    _check(path, {"x": x})


def test_unpool_3d_runtime_values_and_indices(tmp_path: Path) -> None:
    """A 3-D unpool (kernel 2, stride 2) of run-time values at distinct run-time flat
    positions, float16."""
    x = _RNG.standard_normal((1, 2, 2, 3, 2)).astype(np.float16)
    size = 1 * 2 * 4 * 6 * 4
    i = _RNG.permutation(size)[: x.size].reshape(x.shape).astype(np.int64)
    path = _save(tmp_path, [_unpool(["x", "i"], kernel_shape=[2, 2, 2], strides=[2, 2, 2])],
                 {"x": x, "i": i})  # fmt: skip
    _check(path, {"x": x, "i": i})


def test_out_of_range_indices_are_dropped(tmp_path: Path) -> None:
    """Indices are data: one past the end of the flat output (ONNX's reference raises
    on it) is dropped, its value written nowhere; a negative one counts from the end."""
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], np.float32)
    i = np.array([[[[0, 16], [-1, 5]]]], np.int64)
    path = _save(tmp_path, [_unpool(["x", "i"], kernel_shape=[2, 2], strides=[2, 2])],
                 {"x": x, "i": i})  # fmt: skip
    want = np.zeros(16, np.float32)
    want[[0, 15, 5]] = [1.0, 3.0, 4.0]
    np.testing.assert_array_equal(_run(path, {"x": x, "i": i}), want.reshape(1, 1, 4, 4))


def _refused(path: Path, *needles: str) -> None:
    """Importing `path` fails with one line naming the node, the operator and
    `needles`."""
    with pytest.raises(synapc.SynapcError) as caught:
        synapc.import_model(path)
    message = str(caught.value)
    assert "\n" not in message and "node 'the_layer' (MaxUnpool" in message, message
    for needle in needles:
        assert needle in message, message


def test_refusals(tmp_path: Path) -> None:
    """A run-time output_shape and one smaller than the unpooled shape are refused."""
    x = np.zeros((1, 1, 2, 2), np.float32)
    i = np.zeros((1, 1, 2, 2), np.int64)
    node = _unpool(["x", "i", "shape"], kernel_shape=[2, 2], strides=[2, 2])
    shape = np.array([1, 1, 4, 4], np.int64)
    path = _save(tmp_path, [node], {"x": x, "i": i, "shape": shape})
    _refused(path, "output_shape (input 2) 'shape'", "run time")
    small = {"shape": np.array([1, 1, 3, 4], np.int64)}
    _refused(_save(tmp_path, [node], {"x": x, "i": i}, small), "output_shape", "smaller")
