"""Cutting a model at named tensors during import (`import_model(..., outputs=[...])`,
a metafile's ``outputs[].name``): the cut model returns exactly those tensors, agrees
with the source framework's value of them, and never imports what lies after the cut,
so an operator synapc does not support there does no harm."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import synapc
from synapc.testing.onnx_reference import steps_to_nearer_reference
from synapc.testing.oracle import reference_resolver
from synapc.testing.tflite_builder import ModelBuilder, Quant

RNG = np.random.default_rng(7)
#: A constant only the post-processing after the cut reads: it must not reach the IR.
POST_SCALE = np.full([4], 7.25, np.float32)


def weight_arrays(model: synapc.Model) -> list[np.ndarray]:
    """Every weight the model's IR refers to."""
    return [array for _, array in model.weights.items()]


def run(model: synapc.Model, feeds: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs of `model` compiled for GENERIC on `feeds`."""
    return synapc.compile(model, target="GENERIC").run(feeds)


# -- ONNX ------------------------------------------------------------------------------


def onnx_detector(tmp_path: Path, outputs: list[str] | None = None) -> Path:
    """A float NCHW 'detector': two inputs x [1, 3, 8, 8] and aux [1, 4]; a backbone
    (Conv, Relu -> 'feat', GlobalAveragePool -> 'pooled', Flatten -> 'flat', Add aux ->
    'logits') and a post-processing synapc does not support (Mul by POST_SCALE, then
    NonZero, whose output shape depends on the data). `outputs` replaces the graph
    output (NonZero's indices) for ONNX Runtime; the
    weights are the same on every call."""
    rng = np.random.default_rng(11)
    w = rng.normal(size=[4, 3, 3, 3]).astype(np.float32)
    b = rng.normal(size=[4]).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], name="conv", pads=[1] * 4),
        helper.make_node("Relu", ["conv"], ["feat"], name="relu"),
        helper.make_node("GlobalAveragePool", ["feat"], ["pooled"], name="gap"),
        helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"),
        helper.make_node("Add", ["flat", "aux"], ["logits"], name="add"),
        helper.make_node("Mul", ["logits", "post_scale"], ["scaled"], name="post_mul"),
        helper.make_node("NonZero", ["scaled"], ["indices"], name="nonzero"),
    ]
    names = outputs or ["indices"]
    graph = helper.make_graph(
        nodes,
        "detector",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
            helper.make_tensor_value_info("aux", TensorProto.FLOAT, [1, 4]),
        ],
        [
            helper.make_tensor_value_info(
                n, TensorProto.INT64 if n == "indices" else TensorProto.FLOAT, None
            )
            for n in names
        ],
        [
            numpy_helper.from_array(w, "w"),
            numpy_helper.from_array(b, "b"),
            numpy_helper.from_array(POST_SCALE, "post_scale"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / ("detector.onnx" if outputs is None else "reference.onnx")
    onnx.save(model, str(path))
    return path


def onnx_feeds() -> list[np.ndarray]:
    """Inputs x and aux of `onnx_detector`."""
    return [
        RNG.normal(size=[1, 3, 8, 8]).astype(np.float32),
        RNG.normal(size=[1, 4]).astype(np.float32),
    ]


def ort_run(path: Path, feeds: list[np.ndarray]) -> list[np.ndarray]:
    """ONNX Runtime's outputs of the model at `path`."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": feeds[0], "aux": feeds[1]})


def test_onnx_whole_model_fails_on_the_post_processing(tmp_path: Path) -> None:
    with pytest.raises(
        synapc.SynapcError, match=r"node 'nonzero' \(NonZero.*must be a constant"
    ):
        synapc.import_model(onnx_detector(tmp_path))


def test_onnx_cut_matches_onnxruntime(tmp_path: Path) -> None:
    path = onnx_detector(tmp_path)
    model = synapc.import_model(path, outputs=["logits"])
    assert [o.name for o in model.outputs] == ["logits"]
    assert model.outputs[0].shape == (1, 4)
    assert [i.name for i in model.inputs] == ["x", "aux"]
    assert "nonzero" not in str(model) and "post_mul" not in str(model)
    assert not any(np.array_equal(a, POST_SCALE) for a in weight_arrays(model))
    feeds = onnx_feeds()
    (expected,) = ort_run(onnx_detector(tmp_path, ["logits"]), feeds)
    (got,) = run(model, feeds)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_onnx_several_outputs_in_the_requested_order(tmp_path: Path) -> None:
    path = onnx_detector(tmp_path)
    order = ["pooled", "feat", "flat"]
    model = synapc.import_model(path, outputs=order)
    assert [o.name for o in model.outputs] == order
    assert [o.shape for o in model.outputs] == [(1, 4, 1, 1), (1, 4, 8, 8), (1, 4)]
    feeds = onnx_feeds()
    expected = ort_run(onnx_detector(tmp_path, order), feeds)
    got = run(model, feeds)
    for name, out, ref in zip(order, got, expected, strict=True):
        assert out.shape == ref.shape, name
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5, err_msg=name)


def test_onnx_cut_keeps_inputs_it_does_not_use(tmp_path: Path) -> None:
    """'feat' does not depend on aux: aux stays an input of the model (ignored)."""
    model = synapc.import_model(onnx_detector(tmp_path), outputs=["feat"])
    assert [i.name for i in model.inputs] == ["x", "aux"]
    assert model.inputs[1].shape == (1, 4)
    feeds = onnx_feeds()
    (expected,) = ort_run(onnx_detector(tmp_path, ["feat"]), feeds)
    (got,) = run(model, feeds)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_onnx_input_as_output_is_identity(tmp_path: Path) -> None:
    model = synapc.import_model(onnx_detector(tmp_path), outputs=["aux", "logits"])
    assert [o.name for o in model.outputs] == ["aux", "logits"]
    feeds = onnx_feeds()
    got = run(model, feeds)
    np.testing.assert_array_equal(got[0], feeds[1])
    (expected,) = ort_run(onnx_detector(tmp_path, ["logits"]), feeds)
    np.testing.assert_allclose(got[1], expected, rtol=1e-5, atol=1e-5)


def test_onnx_unknown_output_lists_close_names(tmp_path: Path) -> None:
    path = onnx_detector(tmp_path)
    with pytest.raises(synapc.SynapcError) as info:
        synapc.import_model(path, outputs=["feet"])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: output 'feet' is not a tensor of the model; ")
    closest = re.findall(r"'([^']+)'", message.split("closest names: ")[1])
    assert closest[0] == "feat" and 1 <= len(closest) <= 5


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        ([], "outputs is empty"),
        (["feat", "feat"], "output 'feat' is requested twice"),
        ("feat", "must be a list of tensor names"),
    ],
)
def test_onnx_bad_output_lists(tmp_path: Path, outputs: object, message: str) -> None:
    with pytest.raises(synapc.SynapcError, match=message):
        synapc.import_model(onnx_detector(tmp_path), outputs=outputs)  # type: ignore[arg-type]


def test_onnx_qdq_cut_folds_into_quantized_ops(tmp_path: Path) -> None:
    """A QDQ model cut at a DequantizeLinear output: the Conv before it still folds into
    one quantized conv (its only kept reader is the QuantizeLinear), the result is the
    dequantized tensor, and it agrees with the exact evaluations of the graph (unfused,
    float32 and float64): within one step of the nearer one, equal on 99%."""
    rng = np.random.default_rng(11)
    w = rng.integers(-100, 100, size=[4, 3, 3, 3]).astype(np.int8)
    inits = [
        numpy_helper.from_array(np.float32(0.05), "s_x"),
        numpy_helper.from_array(np.uint8(128), "z_x"),
        numpy_helper.from_array(w, "w_q"),
        numpy_helper.from_array(np.float32(0.01), "s_w"),
        numpy_helper.from_array(np.int8(0), "z_w"),
        numpy_helper.from_array(np.float32(0.1), "s_y"),
        numpy_helper.from_array(np.uint8(100), "z_y"),
        numpy_helper.from_array(np.array([2], np.int64), "k"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s_x", "z_x"], ["x_q"]),
        helper.make_node("DequantizeLinear", ["x_q", "s_x", "z_x"], ["x_dq"]),
        helper.make_node("DequantizeLinear", ["w_q", "s_w", "z_w"], ["w_dq"]),
        helper.make_node("Conv", ["x_dq", "w_dq"], ["conv"], name="conv", pads=[1] * 4),
        helper.make_node("QuantizeLinear", ["conv", "s_y", "z_y"], ["y_q"]),
        helper.make_node("DequantizeLinear", ["y_q", "s_y", "z_y"], ["y_dq"]),
        helper.make_node("Flatten", ["y_dq"], ["flat"]),
        helper.make_node("TopK", ["flat", "k"], ["values", "indices"], name="topk"),
    ]

    def save(outputs: list[str], name: str) -> Path:
        graph = helper.make_graph(
            nodes,
            "qdq",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
            [
                helper.make_tensor_value_info(
                    n, TensorProto.INT64 if n == "indices" else TensorProto.FLOAT, None
                )
                for n in outputs
            ],
            inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, str(tmp_path / name))
        return tmp_path / name

    model = synapc.import_model(save(["values", "indices"], "qdq.onnx"), outputs=["y_dq"])
    assert [o.name for o in model.outputs] == ["y_dq"]
    assert "synap.conv2d" in str(model)
    assert re.search(r"-> tensor<1x8x8x4x!quant.uniform<u8:f32, 0.1\d*:100>>", str(model))
    x = rng.uniform(-3, 3, size=[1, 3, 8, 8]).astype(np.float32)
    reference = save(["y_dq"], "ref.onnx")
    (got,) = run(model, [x])
    steps = steps_to_nearer_reference(got, reference, {"x": x}, step=0.1)
    assert steps.max() <= 1 + 1e-3
    assert (steps < 1e-3).mean() >= 0.99


# -- TFLite ----------------------------------------------------------------------------


def tflite_detector(
    path: Path, quantized: bool
) -> tuple[Path, list[np.ndarray], np.ndarray]:
    """An NHWC 'detector' [1, 8, 8, 3] -> CONV_2D (RELU) 'feat' -> MEAN 'pooled' ->
    post-processing synapc does not support (MUL by POST_SCALE, TOPK_V2). Float, or
    int8 with per-channel weights; returns the file, its input values and the values
    of the post-processing's constant."""
    b = ModelBuilder()
    w_real = RNG.normal(size=[4, 3, 3, 3]).astype(np.float32)
    bias_real = RNG.normal(size=[4]).astype(np.float32)
    if quantized:
        qx, qf, qp = Quant(0.03, -3), Quant(0.05, -128), Quant(0.04, -128)
        w_scales = np.abs(w_real).reshape(4, -1).max(axis=1) / 127
        w_q = np.round(w_real / w_scales[:, None, None, None]).astype(np.int8)
        bias_scales = w_scales * 0.03
        bias_q = np.round(bias_real / bias_scales).astype(np.int32)
        x = b.input("x", [1, 8, 8, 3], np.int8, quant=qx)
        w = b.constant("w", w_q, quant=Quant(list(w_scales), [0] * 4, 0))
        bias = b.constant("bias", bias_q, quant=Quant(list(bias_scales), [0] * 4, 0))
        feat = b.tensor("feat", [1, 8, 8, 4], np.int8, quant=qf)
        pooled = b.tensor("pooled", [1, 4], np.int8, quant=qp)
        post_array = np.full([4], 9, np.int8)
        post = b.constant("post_scale", post_array, quant=Quant(0.8, 0))
        scaled = b.tensor("scaled", [1, 4], np.int8, quant=Quant(0.5, 0))
        values = b.tensor("values", [1, 2], np.int8, quant=Quant(0.5, 0))
        feeds = [RNG.integers(-128, 128, size=[1, 8, 8, 3]).astype(np.int8)]
    else:
        x = b.input("x", [1, 8, 8, 3], np.float32)
        w = b.constant("w", w_real)
        bias = b.constant("bias", bias_real)
        feat = b.tensor("feat", [1, 8, 8, 4], np.float32)
        pooled = b.tensor("pooled", [1, 4], np.float32)
        post_array = POST_SCALE
        post = b.constant("post_scale", post_array)
        scaled = b.tensor("scaled", [1, 4], np.float32)
        values = b.tensor("values", [1, 2], np.float32)
        feeds = [RNG.normal(size=[1, 8, 8, 3]).astype(np.float32)]
    b.op(
        "CONV_2D",
        [x, w, bias],
        [feat],
        padding="SAME",
        stride_w=1,
        stride_h=1,
        fused_activation_function="RELU",
    )
    b.op("MEAN", [feat, b.constant("axes", np.array([1, 2], np.int32))], [pooled])
    b.op("MUL", [pooled, post], [scaled])
    indices = b.tensor("indices", [1, 2], np.int32)
    b.op("TOPK_V2", [scaled, b.constant("k", np.array(2, np.int32))], [values, indices])
    b.output(values, indices)
    return b.save(path), feeds, post_array


def litert_tensors(path: Path, feeds: list[np.ndarray], names: list[str]) -> list:
    """LiteRT's (reference kernels) values of the tensors `names` of the whole model."""
    from ai_edge_litert import interpreter as litert

    interp = litert.Interpreter(
        model_path=str(path),
        experimental_op_resolver_type=reference_resolver(),
        experimental_preserve_all_tensors=True,
    )
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], feeds[0])
    interp.invoke()
    index = {d["name"]: d["index"] for d in interp.get_tensor_details()}
    return [interp.get_tensor(index[n]) for n in names]


@pytest.mark.parametrize("quantized", [False, True], ids=["float", "int8"])
def test_tflite_cut_matches_litert(tmp_path: Path, quantized: bool) -> None:
    path, feeds, post = tflite_detector(tmp_path / "detector.tflite", quantized)
    with pytest.raises(synapc.SynapcError, match=r"TOPK_V2.*not supported"):
        synapc.import_model(path)
    order = ["pooled", "feat"]
    model = synapc.import_model(path, outputs=order)
    assert [o.name for o in model.outputs] == order
    assert [o.shape for o in model.outputs] == [(1, 4), (1, 8, 8, 4)]
    assert (model.outputs[0].quantization is not None) == quantized
    # post_scale is read only after the cut
    assert not any(np.array_equal(a, post) for a in weight_arrays(model))
    assert "post_scale" not in str(model)
    expected = litert_tensors(path, feeds, order)
    got = run(model, feeds)
    for name, out, ref in zip(order, got, expected, strict=True):
        assert out.shape == ref.shape and out.dtype == ref.dtype, name
        if quantized:
            np.testing.assert_array_equal(out, ref, err_msg=name)
        else:
            np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5, err_msg=name)


def test_tflite_unknown_output_lists_close_names(tmp_path: Path) -> None:
    path, _, _ = tflite_detector(tmp_path / "detector.tflite", quantized=False)
    with pytest.raises(synapc.SynapcError) as info:
        synapc.import_model(path, outputs=["pooled", "pool"])
    message = str(info.value)
    assert message.startswith(f"{path}: output 'pool' is not a tensor of the model; ")
    assert "closest names: 'pooled'" in message and "\n" not in message


def test_tflite_input_as_output(tmp_path: Path) -> None:
    path, feeds, _ = tflite_detector(tmp_path / "detector.tflite", quantized=False)
    model = synapc.import_model(path, outputs=["x"])
    assert [o.name for o in model.outputs] == ["x"]
    (got,) = run(model, feeds)
    np.testing.assert_array_equal(got, feeds[0])


def test_tflite_ambiguous_name(tmp_path: Path) -> None:
    """Two computed tensors with one name: the cut cannot tell which is meant."""
    b = ModelBuilder()
    x = b.input("x", [1, 4], np.float32)
    a = b.tensor("same", [1, 4], np.float32)
    c = b.tensor("same", [1, 4], np.float32)
    b.op("RELU", [x], [a])
    b.op("TANH", [a], [c])
    b.output(c)
    path = b.save(tmp_path / "twice.tflite")
    with pytest.raises(synapc.SynapcError, match="output 'same' names 2 tensors"):
        synapc.import_model(path, outputs=["same"])


# -- TorchScript -------------------------------------------------------------------------


# torch 2.13 deprecates torch.jit.script / save in favour of torch.export
@pytest.mark.filterwarnings("ignore:.*is deprecated:DeprecationWarning")
def test_torchscript_cut_by_variable_and_value_names(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    nn = torch.nn

    class Net(nn.Module):
        """Conv, relu -> y, mean -> z, then a sort the importer cannot translate."""

        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.fc = nn.Linear(4, 5)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.relu(self.conv(x))
            z = y.mean(dim=(2, 3))
            return torch.sort(self.fc(z), dim=1)[0]

    net = Net().eval()
    path = tmp_path / "net.pt"
    torch.jit.script(net).save(str(path))
    shapes = [[1, 3, 8, 8]]
    with pytest.raises(synapc.SynapcError, match=r"aten::sort.*not supported"):
        synapc.import_model(path, shapes)
    with pytest.raises(synapc.SynapcError, match=r"aten::sort.*not supported"):
        synapc.import_model(path, shapes, outputs=["output"])  # depends on the sort
    with pytest.raises(synapc.SynapcError, match=r"output 'yy' .*closest names: 'y'"):
        synapc.import_model(path, shapes, outputs=["yy"])
    model = synapc.import_model(path, shapes, outputs=["z", "y.1"])
    assert [o.name for o in model.outputs] == ["z", "y.1"]
    x = RNG.normal(size=[1, 3, 8, 8]).astype(np.float32)
    with torch.no_grad():
        y = torch.relu(net.conv(torch.from_numpy(x)))
        expected = [y.mean(dim=(2, 3)).numpy(), y.numpy()]
    for out, ref in zip(run(model, [x]), expected, strict=True):
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
