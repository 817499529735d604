"""ONNX LSTM, GRU and RNN end to end against ONNX Runtime: directions, both layouts,
every optional input and output, the gate functions with their parameters, clip,
input_forget, linear_before_reset and sequence lengths; and the refusals, each one line
naming the node and the operator (or, for quantized layers, the layer at compile)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import synapc
from synapc.dialects.synap import recurrent as rec
from synapc.testing.pass_check import model_from_text

ort = pytest.importorskip("onnxruntime")

#: Gate blocks per operator.
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
SEQ, BATCH, INPUT, HIDDEN = 5, 3, 4, 6


def _layer(
    op_type: str,
    tmp_path: Path,
    *,
    direction: str = "forward",
    layout: int = 0,
    with_bias: bool = True,
    with_states: bool = True,
    with_peepholes: bool = True,
    sequence_lens: list[int] | None = None,
    constant_weights: bool = False,
    outputs: tuple[bool, ...] = (True, True, True),
    seed: int = 0,
    **attrs: Any,
) -> tuple[Path, dict[str, np.ndarray]]:
    """A model of one `op_type` node and random feeds. W, R, B, P and the initial states
    are graph inputs unless `constant_weights` (then W, R, B, P are initializers)."""
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    rows = GATES[op_type] * HIDDEN
    x_shape = [SEQ, BATCH, INPUT] if layout == 0 else [BATCH, SEQ, INPUT]
    state = [dirs, BATCH, HIDDEN] if layout == 0 else [BATCH, dirs, HIDDEN]
    values: dict[str, np.ndarray] = {
        "X": rng.standard_normal(x_shape),
        "W": rng.standard_normal((dirs, rows, INPUT)) * 0.5,
        "R": rng.standard_normal((dirs, rows, HIDDEN)) * 0.5,
    }
    names = ["X", "W", "R", "", "", "", "", ""]
    if with_bias:
        values["B"] = rng.standard_normal((dirs, 2 * rows)) * 0.5
        names[3] = "B"
    if with_states:
        values["initial_h"] = rng.standard_normal(state)
        names[5] = "initial_h"
        if op_type == "LSTM":
            values["initial_c"] = rng.standard_normal(state)
            names[6] = "initial_c"
    if op_type == "LSTM" and with_peepholes:
        values["P"] = rng.standard_normal((dirs, 3 * HIDDEN)) * 0.5
        names[7] = "P"
    values = {k: v.astype(np.float32) for k, v in values.items()}
    initializers = {}
    if sequence_lens is not None:
        initializers["sequence_lens"] = np.asarray(sequence_lens, np.int32)
        names[4] = "sequence_lens"
    if constant_weights:
        for key in ("W", "R", "B", "P"):
            if key in values:
                initializers[key] = values.pop(key)
    count = 3 if op_type == "LSTM" else 2
    out_names = [
        n if keep else ""
        for n, keep in zip(("Y", "Y_h", "Y_c")[:count], outputs[:count], strict=True)
    ]
    while names and not names[-1]:
        names.pop()
    node = helper.make_node(
        op_type,
        names,
        out_names,
        name="the_layer",
        hidden_size=HIDDEN,
        direction=direction,
        layout=layout,
        **attrs,
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape)
            for k, v in values.items()
        ],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in out_names if n],
        [numpy_helper.from_array(v, k) for k, v in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{op_type.lower()}.onnx"
    onnx.save(model, str(path))
    return path, values


def _onnxruntime(
    op_type: str, tmp_path: Path, feeds: dict[str, np.ndarray], options: dict[str, Any]
) -> list[np.ndarray]:
    """ONNX Runtime's outputs for the layer `_layer(op_type, **options)` on `feeds`.
    ONNX Runtime has no batch-major layers: a ``layout = 1`` layer is computed as its
    time-major twin on transposed inputs, its outputs transposed back."""
    batch_major = options.get("layout", 0) == 1
    twin = {**options, "layout": 0}
    path, _ = _layer(op_type, tmp_path / "reference", **twin)
    if batch_major:
        feeds = {
            k: v.transpose(1, 0, 2) if k in ("X", "initial_h", "initial_c") else v
            for k, v in feeds.items()
        }
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    outputs = session.run(None, feeds)
    if batch_major:
        outputs = [
            o.transpose(2, 0, 1, 3) if o.ndim == 4 else o.transpose(1, 0, 2)
            for o in outputs
        ]
    return outputs


def _compare(op_type: str, tmp_path: Path, target: str = "GENERIC", **options: Any) -> None:
    """synapc's outputs for `_layer(op_type, **options)` match ONNX Runtime's (within
    float32 rounding: the accumulation orders differ; float16 targets round the
    results to float16)."""
    path, feeds = _layer(op_type, tmp_path, **options)
    model = synapc.import_model(path)
    got = synapc.compile(model, target).run([feeds[i.name] for i in model.inputs])
    want = _onnxruntime(op_type, tmp_path, feeds, options)
    assert len(got) == len(want)
    tolerance = {"rtol": 1e-4, "atol": 2e-5} if target == "GENERIC" else {"atol": 2e-2}
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, **tolerance)


# -- against ONNX Runtime ------------------------------------------------------------------
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "lstm-forward-all-inputs": ("LSTM", {}),
    "lstm-reverse-no-optional-inputs": (
        "LSTM",
        {"direction": "reverse", "with_bias": False, "with_states": False,
         "with_peepholes": False, "outputs": (False, True, True)},
    ),
    "lstm-bidirectional-batch-major": ("LSTM", {"direction": "bidirectional", "layout": 1}),
    "lstm-constant-weights-only-y": (
        "LSTM", {"constant_weights": True, "outputs": (True, False, False)},
    ),
    "lstm-input-forget-clip": ("LSTM", {"input_forget": 1, "clip": 0.7}),
    "lstm-functions-per-direction": (
        "LSTM",
        {
            "direction": "bidirectional",
            "activations": [
                "HardSigmoid", "LeakyRelu", "Tanh", "Sigmoid", "Elu", "Softsign",
            ],
            "activation_alpha": [0.3, 0.05, 0.7],
            "activation_beta": [0.45],
        },
    ),
    "lstm-sequence-lens": ("LSTM", {"sequence_lens": [5, 0, 2]}),
    "lstm-sequence-lens-bidirectional-batch-major": (
        "LSTM", {"direction": "bidirectional", "layout": 1, "sequence_lens": [3, 5, 1]},
    ),
    "gru-forward": ("GRU", {}),
    "gru-linear-before-reset": ("GRU", {"linear_before_reset": 1}),
    "gru-linear-before-reset-no-bias": (
        "GRU", {"linear_before_reset": 1, "with_bias": False, "direction": "reverse"},
    ),
    "gru-bidirectional-batch-major-lens": (
        "GRU", {"direction": "bidirectional", "layout": 1, "sequence_lens": [2, 5, 0]},
    ),
    "gru-clip-functions": (
        "GRU",
        {"clip": 0.5, "activations": ["HardSigmoid", "Softsign"],
         "activation_alpha": [0.25], "activation_beta": [0.4]},
    ),
    "rnn-forward": ("RNN", {}),
    "rnn-relu-two-functions-listed": ("RNN", {"activations": ["Relu", "Tanh"]}),
    "rnn-bidirectional-batch-major-lens": (
        "RNN", {"direction": "bidirectional", "layout": 1, "sequence_lens": [4, 1, 5]},
    ),
    "rnn-reverse-clip-only-y-h": (
        "RNN", {"direction": "reverse", "clip": 0.3, "outputs": (False, True)},
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_layer_matches_onnxruntime(tmp_path: Path, case: str) -> None:
    op_type, options = CASES[case]
    _compare(op_type, tmp_path, **options)


#: One parameterised use of each ONNX gate function (alpha, beta as ONNX lists them).
FUNCTIONS = {
    "Sigmoid": ([], []),
    "Tanh": ([], []),
    "Relu": ([], []),
    "Affine": ([0.6], [-0.2]),
    "LeakyRelu": ([0.2], []),
    "ThresholdedRelu": ([0.3], []),
    "ScaledTanh": ([1.5], [0.7]),
    "HardSigmoid": ([0.3], [0.6]),
    "Elu": ([0.8], []),
    "Softsign": ([], []),
    "Softplus": ([], []),
}


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_each_gate_function_matches_onnxruntime(tmp_path: Path, function: str) -> None:
    """The function as the LSTM's cell function g (its input is not squashed first)."""
    alpha, beta = FUNCTIONS[function]
    attrs: dict[str, Any] = {"activations": ["Sigmoid", function, "Tanh"]}
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    _compare("LSTM", tmp_path, **attrs)


def test_parameter_defaults_ort_agrees_on(tmp_path: Path) -> None:
    """LeakyRelu, HardSigmoid and Elu without listed parameters take ONNX's defaults."""
    _compare("GRU", tmp_path, activations=["HardSigmoid", "LeakyRelu"])
    _compare("RNN", tmp_path, activations=["Elu"])


def test_float16_target_runs_close(tmp_path: Path) -> None:
    """On a float16 NPU the layer computes in float32 and rounds its results."""
    _compare("LSTM", tmp_path, target="VS680", direction="bidirectional")


def test_time_major_layer_is_one_op(tmp_path: Path) -> None:
    """A time-major layer imports as exactly one synap op (the weights are constants);
    full-length sequence_lens are dropped."""
    path, _ = _layer("LSTM", tmp_path, constant_weights=True, sequence_lens=[SEQ] * BATCH)
    model = synapc.import_model(path)
    ops = [op for op in model.module.walk() if op.name.startswith("synap.")]
    layers = [op for op in ops if isinstance(op, rec.LSTMOp)]
    assert len(layers) == 1
    assert layers[0].props()["sequence_lens"] == ()
    assert {op.name for op in ops} == {"synap.lstm", "synap.constant"}


def test_streaming_state_feeds_back(tmp_path: Path) -> None:
    """Running a sequence in two chunks, the second starting from the first's Y_h and
    Y_c, gives the states of running it whole (the initial states are run-time inputs,
    the streaming state of a model run chunk by chunk)."""
    path, feeds = _layer("LSTM", tmp_path, constant_weights=True)
    graph = onnx.load(str(path)).graph
    whole = synapc.compile(synapc.import_model(path), "GENERIC").run(
        [feeds["X"], feeds["initial_h"], feeds["initial_c"]]
    )
    h, c = feeds["initial_h"], feeds["initial_c"]
    for x in (feeds["X"][:2], feeds["X"][2:]):
        chunk = synapc.import_model(_with_sequence_length(graph, x.shape[0], tmp_path))
        _, h, c = synapc.compile(chunk, "GENERIC").run([x, h, c])
    np.testing.assert_allclose(h, whole[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c, whole[2], rtol=1e-5, atol=1e-6)


def _with_sequence_length(graph: onnx.GraphProto, length: int, folder: Path) -> Path:
    """`graph` saved with input X of sequence length `length`."""
    new = onnx.GraphProto()
    new.CopyFrom(graph)
    new.input[0].type.tensor_type.shape.dim[0].dim_value = length
    model = helper.make_model(new, opset_imports=[helper.make_opsetid("", 22)])
    path = folder / f"chunk{length}.onnx"
    onnx.save(model, str(path))
    return path


# -- refusals ------------------------------------------------------------------------------
def _refused(path: Path, *needles: str) -> str:
    """The one-line import error for `path`; it names the node and the operator."""
    with pytest.raises(synapc.SynapcError) as caught:
        synapc.import_model(path)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert "node 'the_layer'" in message, message
    for needle in needles:
        assert needle in message, message
    return message


def test_run_time_sequence_lens_is_refused(tmp_path: Path) -> None:
    path, _ = _layer("LSTM", tmp_path, sequence_lens=[1, 2, 3])
    model = onnx.load(str(path))
    init = model.graph.initializer.pop()
    model.graph.input.append(
        helper.make_tensor_value_info(init.name, TensorProto.INT32, [BATCH])
    )
    onnx.save(model, str(path))
    _refused(path, "(LSTM,", "input sequence_lens 'sequence_lens' must be a constant")


@pytest.mark.parametrize(
    ("op_type", "options", "needles"),
    [
        (
            "GRU",
            {"sequence_lens": [1, 6, 2]},
            ("(GRU,", "sequence_lens [1, 6, 2]", "[0, 5]"),
        ),
        ("LSTM", {"direction": "sideways"}, ("(LSTM,", "attribute 'direction' 'sideways'")),
        ("RNN", {"layout": 2}, ("(RNN,", "attribute 'layout' 2 must be 0 or 1")),
        ("LSTM", {"clip": -1.0}, ("(LSTM,", "attribute 'clip' -1.0 must be a positive")),
        (
            "LSTM",
            {"activations": ["Sigmoid", "Tanh"]},
            ("(LSTM,", "'activations' lists 2 functions; 3 expected"),
        ),
        (
            "GRU",
            {"activations": ["Sigmoid", "Gelu"]},
            ("(GRU,", "activation 'Gelu' is not one of"),
        ),
        (
            "RNN",
            {"activations": ["ThresholdedRelu"]},
            ("(RNN,", "'ThresholdedRelu' needs a value in activation_alpha"),
        ),
        (
            "RNN",
            {"activations": ["Affine"], "activation_alpha": [1.0]},
            ("(RNN,", "'Affine' needs a value in activation_beta"),
        ),
        (
            "GRU",
            {"activations": ["Sigmoid", "Tanh"], "activation_alpha": [0.5]},
            ("(GRU,", "activation_alpha has 1 more values than the activations take"),
        ),
        ("GRU", {"hidden_size": 7}, ("(GRU,", "'hidden_size' 7 does not match")),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_bad_attributes_are_refused(
    tmp_path: Path, op_type: str, options: dict[str, Any], needles: tuple[str, ...]
) -> None:
    hidden = options.pop("hidden_size", None)
    path, _ = _layer(op_type, tmp_path, **options)
    if hidden is not None:
        model = onnx.load(str(path))
        for attribute in model.graph.node[0].attribute:
            if attribute.name == "hidden_size":
                attribute.i = hidden
        onnx.save(model, str(path))
    _refused(path, *needles)


def test_weights_of_the_wrong_direction_count_are_refused(tmp_path: Path) -> None:
    path, _ = _layer("LSTM", tmp_path, direction="bidirectional")
    model = onnx.load(str(path))
    for attribute in model.graph.node[0].attribute:
        if attribute.name == "direction":
            attribute.s = b"forward"
    onnx.save(model, str(path))
    _refused(path, "(LSTM,", "input W has shape [2, 24, 4]; [1, 24, 4] expected")


def test_integer_input_is_refused(tmp_path: Path) -> None:
    path, _ = _layer("RNN", tmp_path)
    model = onnx.load(str(path))
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.INT32
    onnx.save(model, str(path))
    _refused(
        path, "(RNN,", "input X has element type i32; recurrent layers compute on float"
    )


def test_quantized_layer_is_refused_at_compile() -> None:
    q8 = "!quant.uniform<i8:f32, 0.05:-3>"
    text = f"""builtin.module {{
  func.func @main(%x: tensor<5x1x4x{q8}>) -> (tensor<1x1x2x{q8}>) {{
    %w = synap.constant dense_resource<w> : tensor<1x2x4x{q8}>
    %r = synap.constant dense_resource<r> : tensor<1x2x2x{q8}>
    %y, %h = synap.rnn %x, %w, %r {{layer_name = "rnn1"}} : tensor<5x1x4x{q8}>,
      tensor<1x2x4x{q8}>, tensor<1x2x2x{q8}> -> tensor<5x1x1x2x{q8}>, tensor<1x1x2x{q8}>
    func.return %h : tensor<1x1x2x{q8}>
  }}
}}"""
    model = model_from_text(text)
    model.source = "net.mlir"
    with pytest.raises(synapc.SynapcError) as caught:
        synapc.compile(model, "VS680")
    message = str(caught.value)
    assert "\n" not in message
    assert 'layer "rnn1"' in message and "quantized synap.rnn is not supported" in message


def test_quantize_dequantize_layer_runs_in_float(tmp_path: Path) -> None:
    """Between DequantizeLinear and QuantizeLinear (a QDQ model) the layer computes on
    the dequantized values, as ONNX defines it: a float layer."""
    rng = np.random.default_rng(1)
    rows = GATES["LSTM"] * HIDDEN
    weights = {
        "W": (rng.standard_normal((1, rows, INPUT)) * 0.5).astype(np.float32),
        "R": (rng.standard_normal((1, rows, HIDDEN)) * 0.5).astype(np.float32),
        "s": np.float32(0.02),
        "z": np.uint8(128),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
        helper.make_node("LSTM", ["xd", "W", "R"], ["", "yh"], hidden_size=HIDDEN),
        helper.make_node("QuantizeLinear", ["yh", "s", "z"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "s", "z"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [SEQ, BATCH, INPUT])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    path = tmp_path / "qdq.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), path)
    x = rng.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32)
    model = synapc.import_model(path)
    assert any(isinstance(op, rec.LSTMOp) for op in model.module.walk())
    got = synapc.compile(model, "VS680").run([x])[0]
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]
    # one quantization step apart at most (a float32 rounding may cross a tie)
    np.testing.assert_allclose(got, want, atol=0.02 + 1e-6)
