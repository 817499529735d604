"""ONNX losses (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss) and assorted ops
(CumProd, DynamicQuantizeLinear, TensorScatter, Col2Im, BitCast, windows): results
against ONNX's reference implementation, and clear refusals of what synapc cannot
represent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.utils.exceptions import VerifyException

import synapc
from synapc.mlir_io import parse_module
from synapc.weights import WeightStore

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def _save(
    tmp_path: Path,
    node: onnx.NodeProto,
    inputs: list[tuple[str, int, list[int]]],
    outputs: list[tuple[str, int]],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 24,
) -> Path:
    """A one-node model saved in `tmp_path` (not checked: error tests build bad ones)."""
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


def _run_both(path: Path, feeds: dict[str, np.ndarray]) -> None:
    """synapc (GENERIC) gives ONNX's reference outputs: same dtypes and shapes, values
    within the conformance tolerances."""
    want = [np.asarray(v) for v in ReferenceEvaluator(str(path)).run(None, feeds)]
    model = synapc.import_model(path)
    got = synapc.compile(model, "GENERIC").run(list(feeds.values()))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_softmax_cross_entropy_nchw_weights_ignored_labels(
    tmp_path: Path, reduction: str
) -> None:
    """Rank-4 scores, run-time labels with an ignored label outside [0, C), weights and
    the log_prob output."""
    node = helper.make_node(
        "SoftmaxCrossEntropyLoss",
        ["x", "y", "w"],
        ["loss", "log_prob"],
        reduction=reduction,
        ignore_index=-7,
    )
    path = _save(
        tmp_path,
        node,
        [("x", F, [2, 4, 3, 2]), ("y", I64, [2, 3, 2]), ("w", F, [4])],
        [("loss", F), ("log_prob", F)],
    )
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, (2, 3, 2))
    labels[0, 1, 1] = labels[1, 2, 0] = -7
    feeds = {
        "x": rng.standard_normal((2, 4, 3, 2)).astype(np.float32),
        "y": labels.astype(np.int64),
        "w": np.array([0.5, 1.0, 2.0, 0.25], np.float32),
    }
    _run_both(path, feeds)


def test_negative_log_likelihood_sum_without_weights(tmp_path: Path) -> None:
    node = helper.make_node(
        "NegativeLogLikelihoodLoss", ["x", "y"], ["loss"], reduction="sum"
    )
    path = _save(tmp_path, node, [("x", F, [3, 5]), ("y", I64, [3])], [("loss", F)])
    feeds = {
        "x": np.arange(15, dtype=np.float32).reshape(3, 5) / 7.0,
        "y": np.array([4, 0, 2], np.int64),
    }
    _run_both(path, feeds)


def test_dynamic_quantize_linear_and_cumprod(tmp_path: Path) -> None:
    x = np.array([[0.0, 2.5, -1.25], [3.75, -0.5, 1.0]], np.float32)
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zp"])
    path = _save(
        tmp_path, node, [("x", F, [2, 3])], [("y", 2), ("scale", F), ("zp", 2)], opset=11
    )
    _run_both(path, {"x": x})
    node = helper.make_node("CumProd", ["x", "axis"], ["y"], exclusive=1, reverse=1)
    path = _save(
        tmp_path,
        node,
        [("x", F, [2, 3])],
        [("y", F)],
        {"axis": np.array(1, np.int64)},
        opset=26,
    )
    _run_both(path, {"x": x})


def test_tensor_scatter_circular_and_col2im(tmp_path: Path) -> None:
    node = helper.make_node(
        "TensorScatter", ["past", "update", "at"], ["present"], mode="circular"
    )
    path = _save(
        tmp_path,
        node,
        [("past", F, [2, 4, 3]), ("update", F, [2, 2, 3]), ("at", I64, [2])],
        [("present", F)],
    )
    feeds = {
        "past": np.arange(24, dtype=np.float32).reshape(2, 4, 3),
        "update": -np.arange(1, 13, dtype=np.float32).reshape(2, 2, 3),
        "at": np.array([3, 1], np.int64),
    }
    _run_both(path, feeds)
    node = helper.make_node(
        "Col2Im", ["x", "image", "block"], ["y"], strides=[1, 2], pads=[1, 0, 0, 1]
    )
    constants = {"image": np.array([3, 4], np.int64), "block": np.array([2, 2], np.int64)}
    path = _save(tmp_path, node, [("x", F, [1, 8, 6])], [("y", F)], constants)
    _run_both(path, {"x": np.arange(48, dtype=np.float32).reshape(1, 8, 6)})


_REFUSED = [
    (
        helper.make_node("SoftmaxCrossEntropyLoss", ["x", "y"], ["l"], reduction="avg"),
        [("x", F, [2, 3]), ("y", I64, [2])],
        "attribute 'reduction' 'avg' must be one of",
    ),
    (
        helper.make_node("NegativeLogLikelihoodLoss", ["x", "y"], ["l"]),
        [("x", F, [2, 3]), ("y", F, [2])],
        "the labels (input 1) must be integers",
    ),
    (
        helper.make_node("BitCast", ["x"], ["l"], to=TensorProto.INT64),
        [("x", TensorProto.DOUBLE, [2])],
        "64-bit values run as 32-bit ones",
    ),
    (
        helper.make_node("BitCast", ["x"], ["l"], to=TensorProto.INT16),
        [("x", F, [2])],
        "BitCast needs equal widths",
    ),
    (
        helper.make_node("CumProd", ["x", "a"], ["l"]),
        [("x", F, [2]), ("a", I64, [])],
        "axis (input 1) must be a constant",
    ),
    (
        helper.make_node("Col2Im", ["x", "i", "b"], ["l"]),
        [("x", F, [1, 4, 4]), ("i", I64, [2]), ("b", I64, [2])],
        "image_shape (input 1) must be a constant",
    ),
]


@pytest.mark.parametrize(("node", "inputs", "message"), _REFUSED)
def test_refusals_name_node_and_operator(
    tmp_path: Path, node: onnx.NodeProto, inputs: list, message: str
) -> None:
    node.name = "bad_node"
    path = _save(tmp_path, node, inputs, [("l", F)], opset=26)
    with pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path)
    text = str(error.value)
    assert f"node 'bad_node' ({node.op_type}, opset 26)" in text
    assert message in text
    assert "\n" not in text


def test_window_is_a_constant_of_its_length(tmp_path: Path) -> None:
    """A window whose length comes from a constant folds or converts to a constant."""
    node = helper.make_node("HammingWindow", ["n"], ["w"], periodic=0)
    path = _save(tmp_path, node, [], [("w", F)], {"n": np.array(7, np.int32)}, opset=17)
    model = synapc.import_model(path)
    assert model.outputs[0].shape == (7,)


def test_bitcast_verifier_refuses_other_widths() -> None:
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<2xi16> {
      %0 = synap.bitcast %x : (tensor<2xf32>) -> tensor<2xi16>
      func.return %0 : tensor<2xi16>
    }
    """
    module = parse_module(text, WeightStore())
    with pytest.raises(VerifyException, match="different widths"):
        module.verify()
