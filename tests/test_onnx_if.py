"""ONNX `If` on a condition known only at run time: both branches converted in place
(reading outer-scope tensors, through layouts, nested) and each output selected by the
condition, against ONNX's reference implementation for both condition values; the
refusals (branches of different shapes or types, a branch that cannot be converted,
nesting beyond the limit) name the node; Silero VAD's 16 kHz / 8 kHz model against
ONNX Runtime."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import synapc
from synapc.dialects.synap.logical import SelectOp
from synapc.limits import use_limits

F, B, I32 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT32


def _branch(
    name: str,
    nodes: list[onnx.NodeProto],
    outputs: list[tuple[str, int, list[int] | None]],
    initializers: dict[str, np.ndarray] | None = None,
) -> onnx.GraphProto:
    """A branch graph (no inputs) of `nodes` giving `outputs`."""
    return helper.make_graph(
        nodes,
        name,
        [],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )


def _save(
    tmp_path: Path,
    nodes: list[onnx.NodeProto],
    inputs: list[tuple[str, int, list[int]]],
    outputs: list[tuple[str, int, list[int] | None]],
    initializers: dict[str, np.ndarray] | None = None,
) -> Path:
    """A model of `nodes` saved in `tmp_path`."""
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


def _check_both_conditions(
    path: Path, feeds: dict[str, np.ndarray], conditions: list[str]
) -> synapc.Model:
    """The model's outputs on GENERIC equal the reference's for every combination of the
    boolean inputs `conditions`; the imported model is returned."""
    model = synapc.import_model(path)
    executable = synapc.compile(model, "GENERIC")
    reference = ReferenceEvaluator(str(path))
    combinations = np.array(np.meshgrid(*[[True, False]] * len(conditions))).reshape(
        len(conditions), -1
    )
    for values in combinations.T:
        run = dict(feeds)
        run.update({c: np.array(v) for c, v in zip(conditions, values, strict=True)})
        ours = executable.run([run[i.name] for i in model.inputs])
        want = reference.run(None, run)
        for got, ref in zip(ours, want, strict=True):
            ref = np.asarray(ref)
            assert got.dtype == ref.dtype and got.shape == ref.shape
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    return model


def _selects(model: synapc.Model) -> int:
    """How many synap.select ops the model has."""
    return sum(isinstance(op, SelectOp) for op in model.module.walk())


def test_runtime_condition_selects_between_both_branches(tmp_path: Path) -> None:
    """Two outputs, outer-scope reads, a branch initializer, an integer output."""
    then = _branch(
        "then",
        [
            helper.make_node("Add", ["x", "bias"], ["t0"]),
            helper.make_node("Cast", ["x"], ["t1"], to=I32),
        ],
        [("t0", F, [2, 3]), ("t1", I32, [2, 3])],
        {"bias": np.arange(6, dtype=np.float32).reshape(2, 3)},
    )
    other = _branch(
        "else",
        [
            helper.make_node("Mul", ["x", "x"], ["e0"]),
            helper.make_node("Neg", ["x"], ["xn"]),
            helper.make_node("Cast", ["xn"], ["e1"], to=I32),
        ],
        [("e0", F, [2, 3]), ("e1", I32, [2, 3])],
    )
    path = _save(
        tmp_path,
        [helper.make_node("If", ["c"], ["y", "k"], then_branch=then, else_branch=other)],
        [("x", F, [2, 3]), ("c", B, [])],
        [("y", F, [2, 3]), ("k", I32, [2, 3])],
    )
    x = np.linspace(-3, 3, 6, dtype=np.float32).reshape(2, 3)
    model = _check_both_conditions(path, {"x": x}, ["c"])
    assert _selects(model) == 2


def test_condition_computed_in_the_graph_through_channels_last(tmp_path: Path) -> None:
    """An NCHW convolution (held channels-last) feeds both branches; the condition is a
    comparison of an input, of shape [1]."""
    rng = np.random.default_rng(0)
    then = _branch("then", [helper.make_node("Relu", ["conv"], ["t"])], [("t", F, None)])
    other = _branch(
        "else", [helper.make_node("Sigmoid", ["conv"], ["e"])], [("e", F, None)]
    )
    path = _save(
        tmp_path,
        [
            helper.make_node("Conv", ["x", "w"], ["conv"], pads=[1, 1, 1, 1]),
            helper.make_node("Greater", ["s", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
        ],
        [("x", F, [1, 3, 5, 5]), ("s", F, [1])],
        [("y", F, [1, 4, 5, 5])],
        {
            "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
            "zero": np.zeros(1, np.float32),
        },
    )
    x = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    model = synapc.import_model(path)
    executable = synapc.compile(model, "GENERIC")
    reference = ReferenceEvaluator(str(path))
    for s in (1.0, -1.0):
        feeds = {"x": x, "s": np.array([s], np.float32)}
        (got,) = executable.run([feeds[i.name] for i in model.inputs])
        np.testing.assert_allclose(got, reference.run(None, feeds)[0], rtol=1e-5, atol=1e-5)


def test_nested_runtime_conditions(tmp_path: Path) -> None:
    """An If inside a branch, on another run-time condition; both branches of the outer
    one use the same inner names (each branch is its own scope)."""

    def inner(tag: str, op: str) -> onnx.NodeProto:
        return helper.make_node(
            "If",
            ["d"],
            ["r"],
            then_branch=_branch(
                f"{tag}t", [helper.make_node(op, ["x", "x"], ["it"])], [("it", F, [4])]
            ),
            else_branch=_branch(
                f"{tag}e", [helper.make_node("Abs", ["x"], ["ie"])], [("ie", F, [4])]
            ),
        )

    then = _branch("then", [inner("a", "Add")], [("r", F, [4])])
    other = _branch("else", [inner("b", "Sub")], [("r", F, [4])])
    path = _save(
        tmp_path,
        [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        [("x", F, [4]), ("c", B, []), ("d", B, [])],
        [("y", F, [4])],
    )
    x = np.array([-2.0, -0.5, 1.0, 3.0], np.float32)
    model = _check_both_conditions(path, {"x": x}, ["c", "d"])
    assert _selects(model) == 3


def test_constant_condition_converts_the_chosen_branch_only(tmp_path: Path) -> None:
    """A constant condition whose branches read a run-time input: no select."""
    then = _branch("then", [helper.make_node("Neg", ["x"], ["t"])], [("t", F, [3])])
    other = _branch("else", [helper.make_node("Exp", ["x"], ["e"])], [("e", F, [3])])
    path = _save(
        tmp_path,
        [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        [("x", F, [3])],
        [("y", F, [3])],
        {"c": np.array(False)},
    )
    model = synapc.import_model(path)
    assert _selects(model) == 0
    x = np.array([0.0, 1.0, -1.0], np.float32)
    (got,) = synapc.compile(model, "GENERIC").run([x])
    np.testing.assert_allclose(got, np.exp(x), rtol=1e-6)


def _mismatched(tmp_path: Path, else_output: tuple[str, int, list[int]]) -> Path:
    """An If whose then branch gives [1, 64] float32 and whose else branch gives
    `else_output` (a slice of the input)."""
    name, kind, shape = else_output
    then = _branch(
        "then", [helper.make_node("Identity", ["x"], ["t"])], [("t", F, [1, 64])]
    )
    nodes = [
        helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["s"]),
        helper.make_node("Cast", ["s"], [name], to=kind),
    ]
    other = _branch(
        "else",
        nodes,
        [else_output],
        {
            "starts": np.array([0], np.int64),
            "ends": np.array([shape[1]], np.int64),
            "axes": np.array([1], np.int64),
        },
    )
    return _save(
        tmp_path,
        [
            helper.make_node(
                "If", ["c"], ["y"], name="choose", then_branch=then, else_branch=other
            )
        ],
        [("x", F, [1, 64]), ("c", B, [])],
        [("y", F, None)],
    )


def test_branches_of_different_shapes_are_refused(tmp_path: Path) -> None:
    path = _mismatched(tmp_path, ("e", F, [1, 32]))
    with pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path)
    message = str(error.value)
    assert "node 'choose' (If" in message and "output 'y'" in message
    assert "[1, 64] and [1, 32]" in message and "cannot choose a shape" in message


def test_branches_of_different_types_are_refused(tmp_path: Path) -> None:
    path = _mismatched(tmp_path, ("e", I32, [1, 64]))
    with pytest.raises(synapc.SynapcError, match=r"node 'choose' \(If.*output 'y'.*f32"):
        synapc.import_model(path)


def test_a_branch_that_cannot_be_converted_names_the_branch(tmp_path: Path) -> None:
    then = _branch("then", [helper.make_node("Relu", ["x"], ["t"])], [("t", F, [2])])
    other = _branch(
        "else",
        [helper.make_node("Unique", ["x"], ["e"], name="uniq")],
        [("e", F, None)],
    )
    path = _save(
        tmp_path,
        [
            helper.make_node(
                "If", ["c"], ["y"], name="choose", then_branch=then, else_branch=other
            )
        ],
        [("x", F, [2]), ("c", B, [])],
        [("y", F, [2])],
    )
    with pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path)
    message = str(error.value)
    assert "node 'choose' (If" in message and "else_branch: node 'uniq' (Unique" in message
    assert "Traceback" not in message and message.count("\n") == 0


def test_nesting_beyond_the_limit_is_refused(tmp_path: Path) -> None:
    leaf = _branch("leaf", [helper.make_node("Neg", ["x"], ["n"])], [("n", F, [2])])
    inner = helper.make_node("If", ["c"], ["r"], then_branch=leaf, else_branch=leaf)
    outer = _branch("outer", [inner], [("r", F, [2])])
    path = _save(
        tmp_path,
        [helper.make_node("If", ["c"], ["y"], then_branch=outer, else_branch=outer)],
        [("x", F, [2]), ("c", B, [])],
        [("y", F, [2])],
    )
    with (
        use_limits(max_graph_nesting=1),
        pytest.raises(synapc.SynapcError, match="nested more than 1 levels"),
    ):
        synapc.import_model(path)


# -- Silero VAD: Equal(sr, 16000) -> If(16 kHz network, 8 kHz network) ---------------
def _silero_path() -> Path:
    spec = importlib.util.find_spec("silero_vad")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("silero-vad is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "silero_vad.onnx"
    if not path.is_file():
        pytest.skip("silero_vad.onnx is not in the silero-vad wheel")
    return path


def _silero_feeds(samples: int, rate: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    t = np.arange(samples, dtype=np.float64) / rate
    audio = 0.4 * np.sin(2 * np.pi * 220 * t) + 0.05 * rng.standard_normal(samples)
    return {
        "input": audio.astype(np.float32)[None],
        "state": (0.3 * rng.standard_normal((2, 1, 128))).astype(np.float32),
        "sr": np.array(rate, np.int64),
    }


def test_silero_vad_both_rates_match_onnxruntime() -> None:
    """At 256 samples both networks can be built: one compiled model serves 16 kHz and
    8 kHz, chosen by the sr input at run time."""
    ort = pytest.importorskip("onnxruntime")
    path = _silero_path()
    model = synapc.import_model(
        path, input_shapes={"input": [1, 256], "state": [2, 1, 128]}
    )
    executable = synapc.compile(model, "GENERIC")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for rate in (16000, 8000):
        feeds = _silero_feeds(256, rate)
        ours = executable.run([feeds[i.name] for i in model.inputs])
        theirs = session.run([o.name for o in model.outputs], feeds)
        for got, ref in zip(ours, theirs, strict=True):
            assert got.shape == ref.shape
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_silero_vad_512_samples_is_refused_by_the_8khz_branch() -> None:
    """At 512 samples the 8 kHz network's shapes do not fit its LSTM (ONNX Runtime
    fails on it too), so the graph that runs both cannot be built."""
    path = _silero_path()
    with pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path, input_shapes={"input": [1, 512], "state": [2, 1, 128]})
    message = str(error.value)
    assert "node 'If_0' (If" in message and "else_branch: " in message
    assert "LSTM" in message
