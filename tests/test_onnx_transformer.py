"""ONNX SwiGLU and FlexAttention (ai.onnx.preview) beyond the conformance cases: an
NCHW-layout SwiGLU gate, FlexAttention with grouped heads under both modifier
subgraphs, float16 with an explicit softmax precision, against ONNX's reference
implementation; and the refusals, each one line naming node and operator."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import synapc
from synapc.testing.onnx_cases import assert_refused, check_against_reference, save_model

_RNG = np.random.default_rng(1)
_PREVIEW = "ai.onnx.preview"
#: this file's models: opset 24 and ai.onnx.preview 1
_save = partial(save_model, opset=24, domains={_PREVIEW: 1})


def _flex(**attrs: Any) -> onnx.NodeProto:
    return helper.make_node(
        "FlexAttention", ["q", "k", "v"], ["y"], name="the_layer", domain=_PREVIEW, **attrs
    )


def _random(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(dtype)


def test_swiglu_after_a_channels_last_conv(tmp_path: Path) -> None:
    """SwiGLU of two conv outputs held channels-last by the importer, alpha 1.7."""
    feeds = {"x": _random(1, 3, 5, 5)}
    w = {"w": _random(4, 3, 1, 1)}
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["a"]),
        helper.make_node("Relu", ["a"], ["b"]),
        helper.make_node("SwiGLU", ["a", "b"], ["y"], name="the_layer", alpha=1.7),
    ]
    check_against_reference(_save(tmp_path, nodes, feeds, initializers=w, opset=28), feeds)


def test_flex_attention_grouped_heads_with_both_modifiers(tmp_path: Path) -> None:
    """Six query heads over two key/value heads, a score_mod adding a bias constant
    and a prob_mod scaling the probabilities, explicit scale."""
    feeds = {"q": _random(2, 6, 3, 8), "k": _random(2, 2, 5, 8), "v": _random(2, 2, 5, 4)}
    bias = numpy_helper.from_array(_random(1, 1, 3, 5), "bias")
    score_mod = helper.make_graph(
        [helper.make_node("Add", ["s", "bias"], ["s2"])],
        "score_mod",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("s2", TensorProto.FLOAT, None)],
        [bias],
    )
    half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
    prob_mod = helper.make_graph(
        [helper.make_node("Mul", ["p", "half"], ["p2"])],
        "prob_mod",
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("p2", TensorProto.FLOAT, None)],
        [half],
    )
    node = _flex(scale=0.3, score_mod=score_mod, prob_mod=prob_mod)
    check_against_reference(_save(tmp_path, [node], feeds), feeds)


def test_flex_attention_imports_reproducibly(tmp_path: Path) -> None:
    """Two imports of one FlexAttention model with grouped heads and a modifier print
    the same IR (the repeated-heads constants are named by role, not by object)."""
    feeds = {"q": _random(1, 4, 3, 8), "k": _random(1, 2, 5, 8), "v": _random(1, 2, 5, 4)}
    half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
    prob_mod = helper.make_graph(
        [helper.make_node("Mul", ["p", "half"], ["p2"])],
        "prob_mod",
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("p2", TensorProto.FLOAT, None)],
        [half],
    )
    path = _save(tmp_path, [_flex(prob_mod=prob_mod)], feeds)
    first, second = synapc.import_model(path), synapc.import_model(path)
    assert str(first) == str(second)
    assert "heads_k" in str(first) and "heads_v" in str(first)


def test_flex_attention_float16_with_softmax_precision(tmp_path: Path) -> None:
    """float16 inputs, softmax_precision float: the result is float16."""
    feeds = {k: _random(1, 2, 4, 8, dtype=np.float16) for k in ("q", "k", "v")}
    node = _flex(softmax_precision=TensorProto.FLOAT)
    check_against_reference(_save(tmp_path, [node], feeds), feeds, rtol=1e-2)


def test_refusals(tmp_path: Path) -> None:
    """Mismatched SwiGLU shapes, integer gates, 3-D attention inputs, a modifier with
    two outputs and FlexAttention outside its domain are refused by name."""
    pair = {"a": _random(2, 3), "b": _random(2, 4)}
    node = helper.make_node("SwiGLU", ["a", "b"], ["y"], name="the_layer")
    assert_refused(_save(tmp_path, [node], pair), "SwiGLU", "one shape")
    ints = {"a": np.zeros((2, 3), np.int32), "b": np.zeros((2, 3), np.int32)}
    assert_refused(_save(tmp_path, [node], ints), "SwiGLU", "float")
    three_d = {k: _random(2, 4, 8) for k in ("q", "k", "v")}
    assert_refused(_save(tmp_path, [_flex()], three_d), "FlexAttention", "rank 4")
    feeds = {k: _random(1, 2, 4, 8) for k in ("q", "k", "v")}
    two_outputs = helper.make_graph(
        [
            helper.make_node("Identity", ["s"], ["o1"]),
            helper.make_node("Neg", ["s"], ["o2"]),
        ],
        "score_mod",
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
        [
            helper.make_tensor_value_info("o1", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("o2", TensorProto.FLOAT, None),
        ],
    )
    assert_refused(
        _save(tmp_path, [_flex(score_mod=two_outputs)], feeds), "score_mod", "one output"
    )
    plain = helper.make_node("FlexAttention", ["q", "k", "v"], ["y"], name="the_layer")
    assert_refused(_save(tmp_path, [plain], feeds), "FlexAttention", _PREVIEW)
