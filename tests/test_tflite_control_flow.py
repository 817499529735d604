"""TFLite IF and WHILE inlined at import, against LiteRT's reference kernels.

Models are built with `ModelBuilder` (subgraph 0 calls the others): a WHILE counted by
a loop counter (x = x * 2 + 1, five times) is unrolled; an IF on a run-time boolean
inlines both branches and selects; an IF on a constant inlines one branch. A WHILE
whose condition reads run-time data, one longer than `max_loop_iterations`, and a
run-time IF whose branches disagree on an output's shape are refused by name.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import synapc
from synapc.errors import SynapcError
from synapc.importers.tflite import import_tflite
from synapc.limits import use_limits
from synapc.testing.tflite_builder import ModelBuilder

litert = pytest.importorskip("ai_edge_litert.interpreter")

SHAPE = [1, 4]


def _litert(path: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs of LiteRT's reference kernels on `inputs`."""
    interpreter = litert.Interpreter(
        model_path=str(path),
        experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
    )
    interpreter.allocate_tensors()
    for detail, x in zip(interpreter.get_input_details(), inputs, strict=True):
        interpreter.set_tensor(detail["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


def _matches_litert(path: Path, inputs: list[np.ndarray]) -> synapc.Model:
    """Import `path`, run it on GENERIC and compare every output with LiteRT's."""
    model = import_tflite(path)
    got = synapc.compile(model, "GENERIC").run(inputs)
    expected = _litert(path, inputs)
    assert len(got) == len(expected)
    for out, ref in zip(got, expected, strict=True):
        assert out.shape == ref.shape and out.dtype == ref.dtype
        np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
    return model


def _op_names(model: synapc.Model) -> list[str]:
    return [op.name for op in model.module.walk()]


def _counted_loop(path: Path, trips: int, *, runtime_count: bool = False) -> Path:
    """WHILE (i, n, x): while i < n: i += 1; x = x * 2 + 1. `n` is the constant `trips`,
    or a model input with `runtime_count`."""
    b = ModelBuilder()
    x = b.input("x", SHAPE, np.float32)
    if runtime_count:
        n = b.input("n", [], np.int32)
    else:
        n = b.constant("n", np.array(trips, np.int32))
    i0 = b.constant("i0", np.array(0, np.int32))
    i_out = b.tensor("i_out", [], np.int32)
    n_out = b.tensor("n_out", [], np.int32)
    y = b.tensor("y", SHAPE, np.float32)
    b.op(
        "WHILE", [i0, n, x], [i_out, n_out, y], cond_subgraph_index=1, body_subgraph_index=2
    )
    b.output(y)
    b.subgraph("cond")
    i, count = b.input("i", [], np.int32), b.input("n", [], np.int32)
    b.input("x", SHAPE, np.float32)
    go = b.tensor("go", [], np.bool_)
    b.op("LESS", [i, count], [go])
    b.output(go)
    b.subgraph("body")
    i, count = b.input("i", [], np.int32), b.input("n", [], np.int32)
    xb = b.input("x", SHAPE, np.float32)
    step = b.tensor("step", [], np.int32)
    doubled = b.tensor("doubled", SHAPE, np.float32)
    x_next = b.tensor("x_next", SHAPE, np.float32)
    b.op("ADD", [i, b.constant("one", np.array(1, np.int32))], [step])
    b.op("MUL", [xb, b.constant("two", np.full(SHAPE, 2, np.float32))], [doubled])
    b.op("ADD", [doubled, b.constant("one_f", np.ones(SHAPE, np.float32))], [x_next])
    b.output(step, count, x_next)
    path.write_bytes(b.build())
    return path


def _if_model(path: Path, *, condition: bool | None, else_shape: list[int] = SHAPE) -> Path:
    """IF (c, x): then x * 3, else x + 1 (of `else_shape`, broadcast). `c` is a model
    input when `condition` is None, else that constant."""
    b = ModelBuilder()
    x = b.input("x", SHAPE, np.float32)
    if condition is None:
        c = b.input("c", [], np.bool_)
    else:
        c = b.constant("c", np.array(condition))
    y = b.tensor("y", SHAPE, np.float32)
    b.op("IF", [c, x], [y], then_subgraph_index=1, else_subgraph_index=2)
    b.output(y)
    b.subgraph("then")
    xt = b.input("x", SHAPE, np.float32)
    tripled = b.tensor("tripled", SHAPE, np.float32)
    b.op("MUL", [xt, b.constant("three", np.full(SHAPE, 3, np.float32))], [tripled])
    b.output(tripled)
    b.subgraph("else")
    xe = b.input("x", SHAPE, np.float32)
    plus = b.tensor("plus", else_shape, np.float32)
    b.op("ADD", [xe, b.constant("one", np.ones(else_shape, np.float32))], [plus])
    b.output(plus)
    path.write_bytes(b.build())
    return path


def _branches(b: ModelBuilder) -> None:
    """Two more subgraphs of `b`, IF branches on x: then x * 3, else x + 1."""
    for name, op, value in (("then", "MUL", 3.0), ("else", "ADD", 1.0)):
        b.subgraph(name)
        x = b.input("x", SHAPE, np.float32)
        out = b.tensor(f"{name}_out", SHAPE, np.float32)
        b.op(op, [x, b.constant(f"{name}_c", np.full(SHAPE, value, np.float32))], [out])
        b.output(out)


def _loop_with_if(path: Path) -> Path:
    """WHILE (i, x): while i < 4: x = i == 2 ? x * 3 : x + 1; i += 1. The IF inside the
    body has a condition that folds in each unrolled iteration."""
    b = ModelBuilder()
    x = b.input("x", SHAPE, np.float32)
    i_out = b.tensor("i_out", [], np.int32)
    y = b.tensor("y", SHAPE, np.float32)
    i0 = b.constant("i0", np.array(0, np.int32))
    b.op("WHILE", [i0, x], [i_out, y], cond_subgraph_index=1, body_subgraph_index=2)
    b.output(y)
    b.subgraph("cond")
    i = b.input("i", [], np.int32)
    b.input("x", SHAPE, np.float32)
    go = b.tensor("go", [], np.bool_)
    b.op("LESS", [i, b.constant("four", np.array(4, np.int32))], [go])
    b.output(go)
    b.subgraph("body")
    i = b.input("i", [], np.int32)
    xb = b.input("x", SHAPE, np.float32)
    is_two, step = b.tensor("is_two", [], np.bool_), b.tensor("step", [], np.int32)
    picked = b.tensor("picked", SHAPE, np.float32)
    b.op("EQUAL", [i, b.constant("two", np.array(2, np.int32))], [is_two])
    b.op("IF", [is_two, xb], [picked], then_subgraph_index=3, else_subgraph_index=4)
    b.op("ADD", [i, b.constant("one", np.array(1, np.int32))], [step])
    b.output(step, picked)
    _branches(b)
    path.write_bytes(b.build())
    return path


def _x() -> np.ndarray:
    return np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)


def test_counted_while_is_unrolled(tmp_path: Path) -> None:
    path = _counted_loop(tmp_path / "while.tflite", 5)
    model = _matches_litert(path, [_x()])
    names = _op_names(model)
    assert "synap.mul" in names and names.count("synap.mul") == 5


def test_while_that_never_runs_passes_its_inputs(tmp_path: Path) -> None:
    path = _counted_loop(tmp_path / "while0.tflite", 0)
    _matches_litert(path, [_x()])


@pytest.mark.parametrize("flag", [True, False])
def test_runtime_if_selects(tmp_path: Path, flag: bool) -> None:
    path = _if_model(tmp_path / "if.tflite", condition=None)
    model = _matches_litert(path, [_x(), np.array(flag)])
    assert "synap.select" in _op_names(model)


@pytest.mark.parametrize("flag", [True, False])
def test_constant_if_inlines_one_branch(tmp_path: Path, flag: bool) -> None:
    path = _if_model(tmp_path / "if_const.tflite", condition=flag)
    names = _op_names(_matches_litert(path, [_x()]))
    assert "synap.select" not in names
    assert ("synap.mul" in names) == flag and ("synap.add" in names) != flag


def test_runtime_trip_count_is_refused(tmp_path: Path) -> None:
    path = _counted_loop(tmp_path / "while_n.tflite", 5, runtime_count=True)
    with pytest.raises(
        SynapcError, match=r"operator 0 \(WHILE.*depends on data computed at"
    ):
        import_tflite(path)


def test_loop_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = _counted_loop(tmp_path / "while.tflite", 5)
    too_many = r"WHILE.*5 exceeds.*MAX_LOOP_ITERATIONS"
    with use_limits(max_loop_iterations=4), pytest.raises(SynapcError, match=too_many):
        import_tflite(path)
    with use_limits(max_loop_iterations=5):
        import_tflite(path)


def test_runtime_if_with_branches_of_other_shapes_is_refused(tmp_path: Path) -> None:
    path = _if_model(tmp_path / "if_shapes.tflite", condition=None, else_shape=[2, 4])
    with pytest.raises(SynapcError, match=r"operator 0 \(IF.*output 0 .*then branch"):
        import_tflite(path)


def test_if_inside_a_loop_folds_per_iteration(tmp_path: Path) -> None:
    model = _matches_litert(_loop_with_if(tmp_path / "loop_if.tflite"), [_x()])
    names = _op_names(model)
    assert "synap.select" not in names
    assert names.count("synap.mul") == 1 and names.count("synap.add") == 3
