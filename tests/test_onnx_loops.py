"""ONNX `Scan` and `Loop` on run-time data, unrolled one body copy per iteration: scan
axes and directions (inputs and outputs), several states, the opset-8 batched Scan, a
scan over a channels-last tensor, a Loop on a constant trip count and one its folded
condition stops, against ONNX Runtime; the refusals (a run-time trip count, a condition
computed from run-time data, more unrolled nodes than `max_unrolled_nodes`, a body of
sequences) name the node and the input."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import synapc
from synapc.limits import use_limits
from synapc.testing.onnx_cases import (
    Spec,
    assert_refused,
    check_against_reference,
    reference_outputs,
    save_model,
    value_infos,
)

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64

_save = partial(save_model, opset=19)
#: the outputs on GENERIC equal ONNX Runtime's (ONNX's reference implementation scans
#: along axis 0 only)
_matches_reference = partial(
    check_against_reference, rtol=1e-5, atol=1e-6, reference="onnxruntime"
)


def _body(
    nodes: list[onnx.NodeProto], inputs: list[Spec], outputs: list[Spec]
) -> onnx.GraphProto:
    """A loop body graph."""
    return helper.make_graph(nodes, "body", value_infos(inputs), value_infos(outputs))


def _accumulating_body() -> onnx.GraphProto:
    """Scan body: states (sum, product) of rows; outputs the sum and the row doubled."""
    return _body(
        [
            helper.make_node("Add", ["s_in", "row"], ["s_out"]),
            helper.make_node("Mul", ["p_in", "row"], ["p_out"]),
            helper.make_node("Add", ["row", "row"], ["twice"]),
            helper.make_node("Identity", ["s_out"], ["sum_t"]),
        ],
        [("s_in", F, [3]), ("p_in", F, [3]), ("row", F, [3])],
        [("s_out", F, [3]), ("p_out", F, [3]), ("sum_t", F, [3]), ("twice", F, [3])],
    )


def test_scan_with_axes_and_directions(tmp_path: Path) -> None:
    """Two states (one a constant), a scan input read along axis 1 in reverse, scan
    outputs stacked along axis 1 (one of them reversed)."""
    scan = helper.make_node(
        "Scan",
        ["s0", "p0", "x"],
        ["s", "p", "sums", "twices"],
        body=_accumulating_body(),
        num_scan_inputs=1,
        scan_input_axes=[1],
        scan_input_directions=[1],
        scan_output_axes=[1, -1],
        scan_output_directions=[0, 1],
    )
    path = _save(
        tmp_path,
        [scan],
        [("s0", F, [3]), ("x", F, [3, 4])],
        [("s", F, [3]), ("p", F, [3]), ("sums", F, [3, 4]), ("twices", F, [3, 4])],
        initializers={"p0": np.ones(3, np.float32)},
    )
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    _matches_reference(path, {"s0": np.array([1, 2, 3], np.float32), "x": x})


def test_opset8_scan_runs_each_batch_entry(tmp_path: Path) -> None:
    """Before opset 9 a Scan has a batch axis 0 and a scan axis 1 (`directions`)."""
    body = _body(
        [
            helper.make_node("Add", ["s_in", "row"], ["s_out"]),
            helper.make_node("Identity", ["s_out"], ["y_t"]),
        ],
        [("s_in", F, [2]), ("row", F, [2])],
        [("s_out", F, [2]), ("y_t", F, [2])],
    )
    scan = helper.make_node(
        "Scan", ["", "s0", "x"], ["s", "y"], body=body, num_scan_inputs=1, directions=[1]
    )
    path = _save(
        tmp_path,
        [scan],
        [("s0", F, [2, 2]), ("x", F, [2, 3, 2])],
        [("s", F, [2, 2]), ("y", F, [2, 3, 2])],
        opset=8,
    )
    model = synapc.import_model(path)
    s0 = np.array([[0, 1], [2, 3]], np.float32)
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    s, y = synapc.compile(model, "GENERIC").run([s0, x])
    reverse = x[:, ::-1]
    np.testing.assert_allclose(y, s0[:, None] + np.cumsum(reverse, axis=1))
    np.testing.assert_allclose(s, s0 + x.sum(axis=1))


def test_scan_over_a_channels_last_tensor(tmp_path: Path) -> None:
    """A convolution's result (held channels-last) scanned along its channel axis."""
    body = _body(
        [
            helper.make_node("Max", ["m_in", "plane"], ["m_out"]),
            helper.make_node("Relu", ["plane"], ["r"]),
        ],
        [("m_in", F, [1, 4, 4]), ("plane", F, [1, 4, 4])],
        [("m_out", F, [1, 4, 4]), ("r", F, [1, 4, 4])],
    )
    rng = np.random.default_rng(0)
    path = _save(
        tmp_path,
        [
            helper.make_node("Conv", ["x", "w"], ["conv"], pads=[1, 1, 1, 1]),
            helper.make_node(
                "Scan",
                ["m0", "conv"],
                ["m", "relus"],
                body=body,
                num_scan_inputs=1,
                scan_input_axes=[1],
                scan_output_axes=[3],
            ),
        ],
        [("x", F, [1, 2, 4, 4])],
        [("m", F, [1, 4, 4]), ("relus", F, [1, 4, 4, 3])],
        initializers={
            "w": rng.standard_normal((3, 2, 3, 3)).astype(np.float32),
            "m0": np.full((1, 4, 4), -1.0, np.float32),
        },
    )
    _matches_reference(path, {"x": rng.standard_normal((1, 2, 4, 4)).astype(np.float32)})


def _loop_body(condition: onnx.NodeProto) -> onnx.GraphProto:
    """Loop body: v += x * i (i the iteration number), scan output v; `condition`
    computes cond_out."""
    return _body(
        [
            helper.make_node("Cast", ["i"], ["i_f"], to=F),
            helper.make_node("Mul", ["x", "i_f"], ["step"]),
            helper.make_node("Add", ["v_in", "step"], ["v_out"]),
            helper.make_node("Identity", ["v_out"], ["scan"]),
            condition,
        ],
        [("i", I64, []), ("c_in", B, []), ("v_in", F, [2])],
        [("c_out", B, []), ("v_out", F, [2]), ("scan", F, [2])],
    )


def _loop_model(
    tmp_path: Path, condition: onnx.NodeProto, trip: int | None, runtime_trip: bool = False
) -> Path:
    """A Loop over `_loop_body(condition)`, reading the outer input x; the trip count is
    `trip` (a graph input when `runtime_trip`, absent when None)."""
    inits: dict[str, np.ndarray] = {
        "cond": np.array(True),
        "two": np.array(2, np.int64),
        "v0": np.zeros(2, np.float32),
    }
    inputs: list[Spec] = [("x", F, [2])]
    if runtime_trip:
        inputs.append(("M", I64, []))
    elif trip is not None:
        inits["M"] = np.array(trip, np.int64)
    loop = helper.make_node(
        "Loop",
        ["M" if trip is not None or runtime_trip else "", "cond", "v0"],
        ["v", "scans"],
        body=_loop_body(condition),
        name="the_loop",
    )
    outputs: list[Spec] = [("v", F, [2]), ("scans", F, None)]
    return _save(tmp_path, [loop], inputs, outputs, initializers=inits)


def test_loop_with_a_constant_trip_count(tmp_path: Path) -> None:
    """Five iterations, the condition passed through; the iteration number folds."""
    path = _loop_model(tmp_path, helper.make_node("Identity", ["c_in"], ["c_out"]), 5)
    model = _matches_reference(path, {"x": np.array([1.0, -0.5], np.float32)})
    assert [o.shape for o in model.outputs] == [(2,), (5, 2)]


def test_loop_stopped_by_a_folded_condition(tmp_path: Path) -> None:
    """No trip count: the body's condition i < 2 folds each iteration and stops it
    after three."""
    path = _loop_model(tmp_path, helper.make_node("Less", ["i", "two"], ["c_out"]), None)
    model = _matches_reference(path, {"x": np.array([3.0, 4.0], np.float32)})
    assert [o.shape for o in model.outputs] == [(2,), (3, 2)]


def test_runtime_trip_count_is_refused(tmp_path: Path) -> None:
    path = _loop_model(
        tmp_path, helper.make_node("Identity", ["c_in"], ["c_out"]), None, True
    )
    assert_refused(
        path, "trip count M (input 0) 'M'", "run-time", node="the_loop", operator="Loop"
    )


def test_condition_computed_from_runtime_data_is_refused(tmp_path: Path) -> None:
    condition = helper.make_node("ReduceMax", ["v_out"], ["big"], keepdims=0)
    body = _loop_body(condition)
    body.node.append(helper.make_node("Less", ["big", "ten"], ["c_out"]))
    body.initializer.append(numpy_helper.from_array(np.array(10, np.float32), "ten"))
    loop = helper.make_node(
        "Loop", ["M", "cond", "v0"], ["v", "scans"], body=body, name="the_loop"
    )
    path = _save(
        tmp_path,
        [loop],
        [("x", F, [2])],
        [("v", F, [2]), ("scans", F, None)],
        initializers={
            "M": np.array(9, np.int64),
            "cond": np.array(True),
            "v0": np.zeros(2, np.float32),
        },
    )
    assert_refused(
        path, "condition output is computed from run-time", node="the_loop", operator="Loop"
    )


def test_unrolling_beyond_the_limit_is_refused(tmp_path: Path) -> None:
    """A 4-step scan of a 4-node body is 16 unrolled nodes."""
    scan = helper.make_node(
        "Scan",
        ["s0", "p0", "x"],
        ["s", "p", "sums", "twices"],
        body=_accumulating_body(),
        num_scan_inputs=1,
        name="scan",
    )
    path = _save(
        tmp_path,
        [scan],
        [("s0", F, [3]), ("p0", F, [3]), ("x", F, [4, 3])],
        [("s", F, [3]), ("p", F, [3]), ("sums", F, [4, 3]), ("twices", F, [4, 3])],
    )
    assert_refused(
        path,
        "16 body nodes",
        "limit of 15",
        "SYNAPC_MAX_UNROLLED_NODES",
        node="scan",
        operator="Scan",
        limits={"max_unrolled_nodes": 15},
    )
    with use_limits(max_unrolled_nodes=16):
        synapc.import_model(path)


def test_sequence_body_is_refused(tmp_path: Path) -> None:
    body = helper.make_graph(
        [
            helper.make_node("SequenceEmpty", [], ["seq"]),
            helper.make_node("Identity", ["c_in"], ["c_out"]),
        ],
        "body",
        value_infos([("i", I64, []), ("c_in", B, []), ("v", F, [2])]),
        [
            *value_infos([("c_out", B, []), ("v", F, [2])]),
            helper.make_tensor_sequence_value_info("seq", F, None),
        ],
    )
    loop = helper.make_node(
        "Loop", ["M", "cond", "x"], ["y", "seqs"], body=body, name="the_loop"
    )
    path = _save(
        tmp_path,
        [loop],
        [("x", F, [2])],
        [("y", F, [2])],
        initializers={"M": np.array(2, np.int64), "cond": np.array(True)},
    )
    assert_refused(
        path, "body output 'seq' is a sequence", node="the_loop", operator="Loop"
    )


def test_huge_trip_count_is_refused_before_unrolling(tmp_path: Path) -> None:
    """A trip count of 2**62 with the condition passed through is refused at once."""
    identity = helper.make_node("Identity", ["c_in"], ["c_out"])
    path = _loop_model(tmp_path, identity, 2**62)
    assert_refused(
        path,
        "limit of 32,768",
        "SYNAPC_MAX_UNROLLED_NODES",
        node="the_loop",
        operator="Loop",
    )


def test_loop_without_trip_count_passing_its_condition_is_refused(tmp_path: Path) -> None:
    """No trip count and the condition passed through: the loop never stops, refused at
    once (not after unrolling up to the budget)."""
    identity = helper.make_node("Identity", ["c_in"], ["c_out"])
    path = _loop_model(tmp_path, identity, None)
    assert_refused(
        path, "runs forever", "trip count M (input 0)", node="the_loop", operator="Loop"
    )


def test_loop_running_no_iteration_gives_an_empty_scan_output(tmp_path: Path) -> None:
    """A trip count of 0: the state keeps its initial value and the scan output is an
    empty [0, 2] constant, shaped by the body's declared output."""
    identity = helper.make_node("Identity", ["c_in"], ["c_out"])
    path = _loop_model(tmp_path, identity, 0)
    model = synapc.import_model(path)
    assert [o.shape for o in model.outputs] == [(2,), (0, 2)]
    feeds = {"x": np.array([1.0, 2.0], np.float32)}
    want = reference_outputs(path, feeds, "onnxruntime")
    assert [w.shape for w in want] == [(2,), (0, 2)]


def test_loop_running_no_iteration_without_declared_scan_shape_is_refused(
    tmp_path: Path,
) -> None:
    """A trip count of 0 and a scan output whose shape the body leaves open."""
    body = _loop_body(helper.make_node("Identity", ["c_in"], ["c_out"]))
    body.output[2].type.tensor_type.ClearField("shape")
    loop = helper.make_node(
        "Loop", ["M", "cond", "v0"], ["v", "scans"], body=body, name="the_loop"
    )
    path = _save(
        tmp_path,
        [loop],
        [("x", F, [2])],
        [("v", F, [2]), ("scans", F, None)],
        initializers={
            "M": np.array(0, np.int64),
            "cond": np.array(True),
            "v0": np.zeros(2, np.float32),
        },
    )
    assert_refused(
        path, "scan output 0", "runs no iteration", node="the_loop", operator="Loop"
    )
