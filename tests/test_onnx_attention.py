"""ONNX Attention and RotaryEmbedding: semantics the conformance suite does not pin
down (the raw scores of qk_matmul_output_mode 0 under a softcap, a fully masked row,
rotary embeddings of 3-D input with a partial interleaved rotation) against ONNX's
reference implementation, and the refusals, each one line naming the node and the
operator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import synapc

_OPSET = 24


def _model(
    tmp_path: Path,
    op_type: str,
    inputs: dict[str, tuple[int, list[int]]],
    outputs: list[str],
    **attrs: Any,
) -> Path:
    """A model of one `op_type` node called 'the_layer' with graph inputs `inputs`
    (name -> element type, shape; an empty name skips an optional input)."""
    node = helper.make_node(op_type, list(inputs), outputs, name="the_layer", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items() if n],
        [
            helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
            for o in outputs
            if o
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


def _run(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """synapc's outputs of the model at `path` (GENERIC target)."""
    model = synapc.import_model(path)
    return synapc.compile(model, "GENERIC").run([feeds[i.name] for i in model.inputs])


def _reference(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """ONNX's reference outputs of the model at `path`."""
    return ReferenceEvaluator(str(path)).run(None, feeds)


def _refused(path: Path, *needles: str) -> None:
    """Importing `path` fails with one line naming the node, the operator and
    `needles`."""
    with pytest.raises(synapc.SynapcError) as caught:
        synapc.import_model(path)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert "node 'the_layer'" in message, message
    for needle in needles:
        assert needle in message, message


_F = TensorProto.FLOAT
_RNG = np.random.default_rng(0)


def _random(*shape: int) -> np.ndarray:
    """Standard normal float32 values of `shape`."""
    return _RNG.standard_normal(shape).astype(np.float32)


def test_raw_scores_under_softcap_and_fully_masked_row(tmp_path: Path) -> None:
    """Mode 0 returns the scaled product before the softcap (the operator's spec); a
    query row whose mask forbids every key gives zeros; grouped 3-D heads."""
    feeds = {"Q": _random(1, 3, 16), "K": _random(1, 4, 8), "V": _random(1, 4, 6)}
    mask = np.ones((3, 4), bool)
    mask[1] = False
    feeds["M"] = mask
    inputs = {"Q": (_F, [1, 3, 16]), "K": (_F, [1, 4, 8]), "V": (_F, [1, 4, 6])}
    inputs["M"] = (TensorProto.BOOL, [3, 4])
    path = _model(
        tmp_path,
        "Attention",
        inputs,
        ["Y", "", "", "QK"],
        q_num_heads=4,
        kv_num_heads=2,
        softcap=0.5,
        qk_matmul_output_mode=0,
    )
    y, qk = _run(path, feeds)
    q = feeds["Q"].reshape(1, 3, 4, 4).transpose(0, 2, 1, 3)
    k = np.repeat(feeds["K"].reshape(1, 4, 2, 4).transpose(0, 2, 1, 3), 2, axis=1)
    np.testing.assert_allclose(qk, q @ k.transpose(0, 1, 3, 2) / 2, rtol=1e-5, atol=1e-5)
    assert not np.any(qk == 0.5)  # not soft-capped
    np.testing.assert_allclose(y[0, 1], 0)
    want = _reference(path, feeds)[0]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding_3d_partial(tmp_path: Path, interleaved: int) -> None:
    """A 3-D input split into heads, a partial rotation, run-time position ids."""
    feeds = {
        "X": _random(2, 3, 16),
        "C": _random(10, 2),
        "S": _random(10, 2),
        "P": np.array([[0, 4, 9], [3, 2, 1]], np.int64),
    }
    inputs = {
        "X": (_F, [2, 3, 16]),
        "C": (_F, [10, 2]),
        "S": (_F, [10, 2]),
        "P": (TensorProto.INT64, [2, 3]),
    }
    path = _model(
        tmp_path,
        "RotaryEmbedding",
        inputs,
        ["Y"],
        num_heads=2,
        rotary_embedding_dim=4,
        interleaved=interleaved,
    )
    (got,) = _run(path, feeds)
    np.testing.assert_allclose(got, _reference(path, feeds)[0], rtol=1e-5, atol=1e-6)


def test_attention_refusals(tmp_path: Path) -> None:
    """3-D inputs without head counts, a bad output mode, integer queries."""
    three_d = {"Q": (_F, [1, 3, 8]), "K": (_F, [1, 4, 8]), "V": (_F, [1, 4, 8])}
    _refused(
        _model(tmp_path, "Attention", three_d, ["Y"]),
        "Attention",
        "q_num_heads and kv_num_heads",
    )
    four_d = {"Q": (_F, [1, 2, 3, 8]), "K": (_F, [1, 2, 4, 8]), "V": (_F, [1, 2, 4, 8])}
    _refused(
        _model(tmp_path, "Attention", four_d, ["Y"], qk_matmul_output_mode=4),
        "qk_matmul_output_mode",
    )
    grouped = {"Q": (_F, [1, 3, 3, 8]), "K": (_F, [1, 2, 4, 8]), "V": (_F, [1, 2, 4, 8])}
    _refused(_model(tmp_path, "Attention", grouped, ["Y"]), "do not divide")
    ints = {k: (TensorProto.INT32, s) for k, (_, s) in four_d.items()}
    _refused(_model(tmp_path, "Attention", ints, ["Y"]), "takes floats")


def test_rotary_refusals(tmp_path: Path) -> None:
    """An odd rotation size; a 3-D input without num_heads."""
    inputs = {"X": (_F, [1, 2, 3, 8]), "C": (_F, [1, 3, 4]), "S": (_F, [1, 3, 4])}
    _refused(
        _model(tmp_path, "RotaryEmbedding", inputs, ["Y"], rotary_embedding_dim=3),
        "RotaryEmbedding",
        "rotary_embedding_dim 3",
    )
    flat = {"X": (_F, [1, 3, 16]), "C": (_F, [1, 3, 4]), "S": (_F, [1, 3, 4])}
    _refused(_model(tmp_path, "RotaryEmbedding", flat, ["Y"]), "num_heads")
