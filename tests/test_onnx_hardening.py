"""A hostile or broken `.onnx` file is refused with one clear line before anything big is
allocated or anything runs unbounded: initializers, folded constants (`Range`,
`ConstantOfShape`, `Expand`, ...) and `Loop` / `Scan` / `If` folding are checked against
`synapc.limits` first; bad attributes, names and protobufs name the file and the node
(index, name, op type) or tensor, never Python's own exception text.

Each test is the regression test of one finding of the ONNX fuzzer
(`benchmarks/fuzz/onnx.py`) or of the issue's report."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx import numpy_helper as nh

import synapc
from benchmarks.fuzz.harness import PYTHON_TEXT
from synapc.limits import use_limits

BIN = Path(sys.executable).parent


# -- helpers -------------------------------------------------------------------------
def save(
    tmp_path: Path,
    nodes: list[onnx.NodeProto],
    inits: list[onnx.TensorProto] = (),  # type: ignore[assignment]
    inputs: list[onnx.ValueInfoProto] | None = None,
    outputs: tuple[str, ...] = ("y",),
    opset: int = 17,
    name: str = "model.onnx",
) -> Path:
    """A model of `nodes` (input x [1, 3, 8, 8] float unless `inputs` is given)."""
    if inputs is None:
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])]
    graph = helper.make_graph(
        nodes,
        "g",
        inputs,
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs],
        list(inits),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / name
    path.write_bytes(model.SerializeToString())
    return path


def const(name: str, value: object, dtype: type = np.float32) -> onnx.TensorProto:
    """An initializer."""
    return nh.from_array(np.asarray(value, dtype), name)


def refused(path: Path, *needles: str, **limits: int) -> str:
    """The one-line message importing `path` gives (under `limits`); it names the file,
    holds each of `needles` and no Python exception text."""
    with use_limits(**limits), pytest.raises(synapc.SynapcError) as error:
        synapc.import_model(path)
    text = str(error.value)
    assert text.startswith(str(path)), text
    assert "\n" not in text and not PYTHON_TEXT.search(text), text
    for needle in needles:
        assert needle in text, text
    return text


def weights_of(model: synapc.Model) -> list[np.ndarray]:
    """The weight arrays of an imported model."""
    return [array for _, array in model.weights.items()]


def _memory_cap() -> None:
    cap = 3 << 30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def cli_refuses(path: Path, *needles: str, timeout: float = 120) -> str:
    """`synapc import` of `path` in a process capped at 3 GiB of address space and
    `timeout` seconds: one `synapc: error:` line holding `needles`, exit code 1 (an
    importer that hangs or allocates gigabytes fails here instead of stalling the
    suite)."""
    result = subprocess.run(
        [str(BIN / "synapc"), "import", str(path), "--no-weights"],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_memory_cap,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    assert result.stderr.startswith("synapc: error: "), result.stderr[-2000:]
    assert result.stderr.count("\n") == 1, result.stderr[-2000:]
    for needle in needles:
        assert needle in result.stderr, result.stderr
    return result.stderr


def loop_body(cond: str = "c_in") -> onnx.GraphProto:
    """A Loop body adding 1 to a [1, 4] carried value, scanning it; the condition is
    passed through (`cond` = "c_in") or computed as i < 3 ("less"). It reads nothing
    from the outer graph."""
    nodes = [
        helper.make_node("Constant", [], ["one"], value=const("1", np.ones((1, 4)))),
        helper.make_node("Add", ["v_in", "one"], ["v_out"]),
        helper.make_node("Identity", ["v_out"], ["scan"]),
    ]
    if cond == "less":
        three = helper.make_node("Constant", [], ["three"], value=const("3", 3, np.int64))
        nodes += [three, helper.make_node("Less", ["i", "three"], ["c_out"])]
    else:
        nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"]))
    return helper.make_graph(
        nodes,
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1, 4]),
        ],
        [
            helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("scan", TensorProto.FLOAT, [1, 4]),
        ],
    )


LOOP_INITS = [const("cond", True, np.bool_), const("v0", np.zeros((1, 4)))]
NO_INPUTS: list[onnx.ValueInfoProto] = []


def loop_model(tmp_path: Path, trip: int | None, cond: str = "c_in") -> Path:
    """A model whose outputs are a Loop's final value and scan outputs."""
    inits = list(LOOP_INITS)
    if trip is not None:
        inits.append(const("M", trip, np.int64))
    node = helper.make_node(
        "Loop",
        ["M" if trip is not None else "", "cond", "v0"],
        ["y", "scans"],
        body=loop_body(cond),
        name="the_loop",
    )
    return save(tmp_path, [node], inits, NO_INPUTS, ("y", "scans"))


# -- Loop / Scan / If: bounded -------------------------------------------------------
def test_condition_driven_loop_that_never_stops_is_refused(tmp_path: Path) -> None:
    """Fuzzer finding (hang): a Loop without a trip count whose condition stays true ran
    forever inside onnx.reference's Loop."""
    path = loop_model(tmp_path, None)
    cli_refuses(
        path,
        "node 'the_loop' (Loop, opset 17)",
        "4,096 loop iterations",
        "SYNAPC_MAX_LOOP_ITERATIONS",
        "graph node 0",
    )


def test_loop_with_a_huge_trip_count_is_refused(tmp_path: Path) -> None:
    """Fuzzer finding (hang): a trip count of 2**62 is not run to the end."""
    path = loop_model(tmp_path, 2**62)
    cli_refuses(path, "(Loop, opset 17)", "4,096 loop iterations")
    refused(path, "10 loop iterations", max_loop_iterations=10)


def test_loops_within_the_limit_are_folded(tmp_path: Path) -> None:
    """A loop with a trip count, and one its condition stops, fold to the values ONNX
    Runtime computes (scan outputs stacked on a new first axis)."""
    model = synapc.import_model(loop_model(tmp_path, 5))
    assert [o.shape for o in model.outputs] == [(1, 4), (5, 1, 4)]
    weights = {tuple(a.shape): a for a in weights_of(model)}
    np.testing.assert_array_equal(weights[(1, 4)], np.full((1, 4), 5.0))
    np.testing.assert_array_equal(weights[(5, 1, 4)][:, 0, 0], [1, 2, 3, 4, 5])
    # the condition stops it: iterations 0..3 run (i < 3 is checked after each)
    model = synapc.import_model(loop_model(tmp_path, None, cond="less"))
    assert [o.shape for o in model.outputs] == [(1, 4), (4, 1, 4)]
    # the limit counts iterations, not trip counts
    with use_limits(max_loop_iterations=5):
        synapc.import_model(loop_model(tmp_path, 5))


def test_nested_loops_count_every_inner_iteration(tmp_path: Path) -> None:
    """Loops inside loop bodies: the limit is on all the iterations one fold runs."""
    inner = helper.make_node(
        "Loop", ["M", "c_in", "v_in"], ["v_out", "scan"], body=loop_body(), name="inner"
    )
    outer_body = helper.make_graph(
        [inner, helper.make_node("Identity", ["c_in"], ["c_out"])],
        "outer",
        [
            helper.make_tensor_value_info("j", TensorProto.INT64, []),
            helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1, 4]),
        ],
        [
            helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1, 4]),
        ],
    )
    node = helper.make_node(
        "Loop", ["M", "cond", "v0"], ["y"], body=outer_body, name="outer"
    )
    path = save(tmp_path, [node], [*LOOP_INITS, const("M", 100, np.int64)], NO_INPUTS)
    text = refused(path, "node 'outer' (Loop", "4,096 loop iterations")
    assert "its body node 0 'inner' (Loop)" in text
    with use_limits(max_loop_iterations=100 * 101):
        model = synapc.import_model(path)
    assert next(iter(weights_of(model)))[0, 0] == 100 * 100


def test_loop_body_nodes_are_checked_like_graph_nodes(tmp_path: Path) -> None:
    """Fuzzer finding (over-memory): a ConstantOfShape of 2**40 elements inside a Loop
    body was allocated by the reference implementation."""
    shape = const("s", [1 << 20, 1 << 20], np.int64)
    body = helper.make_graph(
        [
            helper.make_node("Constant", [], ["shape"], value=shape),
            helper.make_node("ConstantOfShape", ["shape"], ["big"], name="big"),
            helper.make_node("ReduceSum", ["big"], ["v_out"], keepdims=0),
            helper.make_node("Identity", ["c_in"], ["c_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_in", TensorProto.FLOAT, []),
        ],
        [
            helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v_out", TensorProto.FLOAT, []),
        ],
    )
    inits = [const("M", 2, np.int64), const("cond", True, np.bool_), const("v0", 0.0)]
    node = helper.make_node("Loop", ["M", "cond", "v0"], ["y"], body=body, name="loop")
    path = save(tmp_path, [node], inits, NO_INPUTS)
    cli_refuses(
        path, "its body node 1 'big' (ConstantOfShape)", "1,099,511,627,776 elements"
    )


def test_scan_and_if_fold_within_the_limits(tmp_path: Path) -> None:
    """Scan runs once per row (a cumulative sum here) and If takes its constant branch;
    a Scan longer than max_loop_iterations is refused before it runs."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "row"], ["s_out"]),
            helper.make_node("Identity", ["s_out"], ["out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [4]),
            helper.make_tensor_value_info("row", TensorProto.FLOAT, [4]),
        ],
        [
            helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [4]),
            helper.make_tensor_value_info("out", TensorProto.FLOAT, [4]),
        ],
    )
    rows = np.arange(12, dtype=np.float32).reshape(3, 4)
    scan = helper.make_node(
        "Scan", ["s0", "rows"], ["s", "y"], body=body, num_scan_inputs=1, name="scan"
    )
    path = save(
        tmp_path, [scan], [const("s0", np.zeros(4)), const("rows", rows)], NO_INPUTS
    )
    model = synapc.import_model(path)
    (folded,) = weights_of(model)
    np.testing.assert_array_equal(folded, np.cumsum(rows, axis=0))
    refused(path, "node 'scan' (Scan", "3 scan iterations", max_loop_iterations=2)

    branch = helper.make_graph(
        [helper.make_node("Range", ["a", "b", "c"], ["r"], name="range")],
        "then",
        [],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
    )
    inits = [
        const("cond", True, np.bool_),
        const("a", 0.0),
        const("b", 4.0),
        const("c", 1.0),
    ]
    node = helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=other)
    model = synapc.import_model(save(tmp_path, [node], inits, NO_INPUTS))
    np.testing.assert_array_equal(next(iter(weights_of(model))), [0, 1, 2, 3])
    huge = [*inits[:3], const("c", 1e-9)]
    refused(
        save(tmp_path, [node], huge, NO_INPUTS),
        "its then_branch node 0 'range' (Range)",
        "SYNAPC_MAX_FOLD_ELEMENTS",
    )


# -- folding: sizes before allocation --------------------------------------------------
def test_constant_of_shape_of_16_gib_is_refused_before_allocation(tmp_path: Path) -> None:
    """Fuzzer finding (over-memory, 17 cases): ConstantOfShape of [65536, 65536] float32
    (16 GiB) was folded by numpy. It now stays an op (a broadcast of its one value) whose
    result exceeds max_tensor_elements."""
    nodes = [
        helper.make_node("ConstantOfShape", ["shape"], ["c"], name="fill"),
        helper.make_node("Add", ["x", "c"], ["y"]),
    ]
    path = save(tmp_path, nodes, [const("shape", [65536, 65536], np.int64)])
    cli_refuses(
        path, "node 'fill' (ConstantOfShape, graph node 0)", "4,294,967,296 exceeds"
    )


def test_large_constant_of_shape_runs_on_the_target(tmp_path: Path) -> None:
    """Between max_fold_elements and max_tensor_elements (the weights of ONNX's "light"
    models), ConstantOfShape is not folded: its value is broadcast on the target."""
    nodes = [
        helper.make_node(
            "ConstantOfShape", ["shape"], ["w"], value=const("v", [0.5]), name="fill"
        ),
        helper.make_node("MatMul", ["x2", "w"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("x2", TensorProto.FLOAT, [1, 4096])]
    path = save(tmp_path, nodes, [const("shape", [4096, 2048], np.int64)], inputs)
    model = synapc.import_model(path)
    assert all(w.size < 1 << 20 for w in weights_of(model))
    assert "synap.broadcast_to" in str(model.module)
    with use_limits(max_fold_elements=1 << 24):  # folded when the limit allows it
        model = synapc.import_model(path)
    assert max(w.size for w in weights_of(model)) == 4096 * 2048


def test_range_with_a_tiny_step_is_refused(tmp_path: Path) -> None:
    """Fuzzer finding (over-memory, 4.8 GB): Range(0, 1e9, 1e-3) has ceil((limit -
    start) / delta) = 1e12 elements; Range cannot run on the target, so the import
    stops, naming the limit. A step of 0 never ends."""
    inits = [const("a", 0.0), const("b", 1e9), const("c", 1e-3)]
    node = helper.make_node("Range", ["a", "b", "c"], ["y"], name="range")
    path = save(tmp_path, [node], inits, NO_INPUTS)
    cli_refuses(path, "node 'range' (Range, opset 17)", "SYNAPC_MAX_FOLD_ELEMENTS")
    inits = [const("a", 0, np.int64), const("b", 2**62, np.int64), const("c", 3, np.int64)]
    refused(save(tmp_path, [node], inits, NO_INPUTS), f"{-(-(2**62) // 3):,} elements")
    inits = [const("a", 0, np.int64), const("b", 10, np.int64), const("c", 0, np.int64)]
    refused(save(tmp_path, [node], inits, NO_INPUTS), "delta is 0")


def test_expand_of_a_constant_to_a_huge_shape(tmp_path: Path) -> None:
    """Fuzzer finding (over-memory): Expand of a constant to a shape from an initializer
    was folded by numpy. Above max_fold_elements it stays a broadcast op; above
    max_tensor_elements it is refused; a negative dimension is named."""
    nodes = [helper.make_node("Expand", ["k", "shape"], ["y"], name="expand")]
    inits = [const("k", [1.0, 2.0]), const("shape", [1 << 40, 2], np.int64)]
    cli_refuses(save(tmp_path, nodes, inits, NO_INPUTS), "node 'expand' (Expand")
    inits[1] = const("shape", [1 << 22, 2], np.int64)
    model = synapc.import_model(save(tmp_path, nodes, inits, NO_INPUTS))
    assert model.outputs[0].shape == (1 << 22, 2)
    assert all(w.size <= 2 for w in weights_of(model))
    inits[1] = const("shape", [-3, 2], np.int64)
    refused(save(tmp_path, nodes, inits, NO_INPUTS), "negative dimension", "(Expand")


@pytest.mark.parametrize(
    ("op", "inputs", "attrs", "needle"),
    [
        ("Tile", {"t": np.ones((2, 2)), "r": np.array([1 << 20, 1 << 20])}, {}, "Tile"),
        (
            "OneHot",
            {"i": np.arange(8), "d": np.array(1 << 40), "v": np.array([0.0, 1.0])},
            {},
            "8,796,093,022,208",
        ),
        (
            "Pad",
            {"t": np.ones((2, 2)), "p": np.array([0, 1 << 30, 0, 1 << 30])},
            {},
            "Pad",
        ),
        (
            "Gather",
            {"t": np.ones((1 << 11, 1 << 11)), "i": np.zeros(1 << 12)},
            {},
            "Gather",
        ),
        ("MatMul", {"a": np.ones((1 << 12, 1)), "b": np.ones((1, 1 << 12))}, {}, "MatMul"),
        (
            "GatherND",
            {"t": np.ones((1 << 10, 1 << 10)), "i": np.zeros((1 << 10, 1 << 10, 1), int)},
            {},
            "1,073,741,824",
        ),
    ],
    ids=["tile", "onehot", "pad", "gather", "outer-product", "gathernd"],
)
def test_folds_are_sized_from_shapes_and_values_first(
    tmp_path: Path, op: str, inputs: dict[str, np.ndarray], attrs: dict, needle: str
) -> None:
    """Fuzzer findings (over-memory): shape-changing ops on constants are sized before
    they are evaluated; one that can run on the target is left to it (and then checked
    against max_tensor_elements), the others are refused naming the fold limit."""
    inits = [
        nh.from_array(v.astype(np.int64 if v.dtype.kind in "iu" else np.float32), k)
        for k, v in inputs.items()
    ]
    node = helper.make_node(op, list(inputs), ["y"], name="n", **attrs)
    path = save(tmp_path, [node], inits, NO_INPUTS)
    with use_limits(max_tensor_elements=1 << 22):
        text = refused(path, needle)
    assert "(graph node 0)" in text or "graph node 0)" in text


def test_top_k_and_split_beyond_their_input_are_refused(tmp_path: Path) -> None:
    """Fuzzer finding (over-memory): TopK of a 4 x 4 constant with k = 2**31 made the
    reference implementation allocate for k; Split with more sizes (or num_outputs)
    than outputs would make that many arrays."""
    x = const("x", np.ones((4, 4)))
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top")
    path = save(tmp_path, [node], [x, const("k", [2**31], np.int64)], NO_INPUTS, ("v",))
    cli_refuses(path, "node 'top' (TopK", "k 2147483648 is not within the 4 values")
    node = helper.make_node("Split", ["x", "s"], ["a", "b"], axis=1, name="split")
    sizes = const("s", np.ones(2**20), np.int64)
    path = save(tmp_path, [node], [x, sizes], NO_INPUTS, ("a",))
    refused(path, "node 'split' (Split", "1,048,576 split sizes for 2 outputs")


def test_work_of_a_fold_is_bounded(tmp_path: Path) -> None:
    """A constant matrix product with a long inner dimension is not folded (it runs on
    the target); a ReduceSum of it is then not constant either."""
    a = np.ones((512, 1 << 16), np.float32)
    b = np.ones((1 << 16, 512), np.float32)
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    model = synapc.import_model(
        save(tmp_path, [node], [const("a", a), const("b", b)], NO_INPUTS)
    )
    assert model.outputs[0].shape == (512, 512)
    assert "synap.fully_connected" in str(model.module) or "synap.matmul" in str(
        model.module
    )


# -- initializers, external data, the file -------------------------------------------
def test_initializer_whose_data_disagrees_with_its_dims(tmp_path: Path) -> None:
    """Fuzzer finding (traceback): raw_data of another length than dims x itemsize gave
    numpy's `cannot reshape` ValueError; typed values likewise."""
    init = const("w", np.ones((4, 3, 3, 3)))
    init.dims[0] = 5
    node = helper.make_node("Conv", ["x", "w"], ["y"])
    refused(save(tmp_path, [node], [init]), "initializer 'w'", "raw_data holds 432 bytes")
    init = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 3, 3, 3])
    init.float_data.extend([1.0] * 7)
    refused(save(tmp_path, [node], [init]), "float_data holds 7 values")


def test_initializer_declaring_a_huge_shape_is_refused_before_reading(
    tmp_path: Path,
) -> None:
    """Fuzzer finding (over-memory): dims of 2**62 or 2**31 x 2**31 are checked against
    max_tensor_elements before any conversion."""
    init = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2**31, 2**31])
    node = helper.make_node("Add", ["x", "w"], ["y"])
    refused(save(tmp_path, [node], [init]), "initializer 'w'", "SYNAPC_MAX_TENSOR_ELEMENTS")
    init = onnx.TensorProto(name="w", data_type=TensorProto.STRING, dims=[1])
    init.string_data.append(b"text")
    refused(save(tmp_path, [node], [init]), "element type STRING is not supported")


def test_external_data_is_bounded_and_confined(tmp_path: Path) -> None:
    """External data: the length must match the dims, the file must hold offset +
    size bytes and lie inside the model's folder."""
    (tmp_path / "w.bin").write_bytes(np.ones(16, np.float32).tobytes())
    (tmp_path.parent / "outside.bin").write_bytes(bytes(64))
    node = helper.make_node("Add", ["x", "w"], ["y"])

    def model(location: str, length: int, offset: int = 0) -> Path:
        init = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[8])
        init.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", offset), ("length", length)):
            entry = init.external_data.add()
            entry.key, entry.value = key, str(value)
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])]
        return save(tmp_path, [node], [init], inputs)

    assert synapc.import_model(model("w.bin", 32)).outputs[0].shape == (8,)
    refused(model("w.bin", 2**40), "initializer 'w'", "does not match shape [8]")
    refused(model("w.bin", 32, offset=40), "fewer than offset 40 + 32")
    refused(model("../outside.bin", 32), "outside the model's folder")
    refused(model("missing.bin", 32), "cannot read external data 'missing.bin'")


def test_model_file_size_is_checked_before_reading(tmp_path: Path) -> None:
    """The file's size is compared with max_model_file_bytes before it is read."""
    path = save(tmp_path, [helper.make_node("Relu", ["x"], ["y"])])
    refused(path, "model file size", "SYNAPC_MAX_MODEL_FILE_BYTES", max_model_file_bytes=16)


def test_protobuf_that_does_not_parse(tmp_path: Path) -> None:
    """Fuzzer finding (traceback text): DecodeError was quoted in the message."""
    path = tmp_path / "model.onnx"
    path.write_bytes(b"\x08\x07\x12\x04abcd\x3a\xff\xff\xff")
    text = refused(path, "not a valid ONNX model")
    assert "DecodeError" not in text and "Error parsing" not in text


# -- attributes, nodes, names ----------------------------------------------------------
W = const("w", np.ones((4, 3, 3, 3)))


@pytest.mark.parametrize(
    ("node", "inits", "needle"),
    [
        (helper.make_node("Conv", ["x", "w"], ["y"], pads=[2**62] * 4), [W], "'pads'"),
        (helper.make_node("Conv", ["x", "w"], ["y"], strides=[0, 1]), [W], "'strides'"),
        (
            helper.make_node("Conv", ["x", "w"], ["y"], dilations=[1, -2]),
            [W],
            "'dilations'",
        ),
        (helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[-3, 3]), [W], "kernel"),
        (helper.make_node("Conv", ["x", "w"], ["y"], group=2**40), [W], "'group'"),
        (helper.make_node("Conv", ["x", "w"], ["y"], group=3), [W], "'group' 3"),
        (helper.make_node("Conv", ["x", "w"], ["y"], strides=[1, 1, 1]), [W], "'strides'"),
        (
            helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[0, 2]),
            [],
            "'kernel_shape'",
        ),
        (helper.make_node("Softmax", ["x"], ["y"], axis=7), [], "axis 7"),
        (helper.make_node("Concat", ["x", "x"], ["y"], axis=-9), [], "axis -9"),
        (helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0, 1, 2]), [], "perm"),
        (helper.make_node("Flatten", ["x"], ["y"], axis=5), [], "axis 5"),
        (
            helper.make_node("Split", ["x"], ["y", "z"], axis=1, num_outputs=2**62),
            [],
            "num_outputs",
        ),
        (helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=0), [], "'blocksize'"),
        (helper.make_node("LRN", ["x"], ["y"], size=2**40), [], "'size'"),
        (
            helper.make_node("Gather", ["x", "i"], ["y"], axis=4),
            [const("i", [0], np.int64)],
            "axis 4",
        ),
        (
            helper.make_node("Gather", ["x", "i"], ["y"], axis=1),
            [const("i", [7], np.int64)],
            "out of range",
        ),
        (
            helper.make_node("Unsqueeze", ["x", "a"], ["y"]),
            [const("a", [9], np.int64)],
            "unsqueeze axis 9",
        ),
        (
            helper.make_node("Tile", ["x", "r"], ["y"]),
            [const("r", [1, -1, 1, 1], np.int64)],
            "repeats",
        ),
    ],
    ids=[
        "conv-pads-2**62",
        "conv-stride-0",
        "conv-dilation-negative",
        "conv-kernel-negative",
        "conv-group-huge",
        "conv-group-not-dividing",
        "conv-strides-too-many",
        "pool-kernel-0",
        "softmax-axis",
        "concat-axis",
        "transpose-perm",
        "flatten-axis",
        "split-num-outputs",
        "depth-to-space-block-0",
        "lrn-size",
        "gather-axis",
        "gather-index",
        "unsqueeze-axis",
        "tile-negative",
    ],
)
def test_bad_attributes_are_refused_naming_the_node(
    tmp_path: Path, node: onnx.NodeProto, inits: list, needle: str
) -> None:
    """Fuzzer findings (the issue saw conv pads of 2**62 accepted; out-of-range axes
    were accepted or failed with Python's IndexError; Split's num_outputs of 2**62 ran
    for ever; LRN's size 2**40 allocated a channels x channels band from it)."""
    node.name = "bad"
    text = refused(save(tmp_path, [node], inits), needle, "node 'bad' (", "(graph node 0)")
    assert f"({node.op_type}, opset 17)" in text


def test_attribute_of_the_wrong_type_or_missing(tmp_path: Path) -> None:
    """Fuzzer finding (traceback): an INTS attribute given as FLOATS, a STRING
    attribute as INT, a missing required attribute or an attribute without a valid
    type reached the converters (`'float' object cannot be interpreted...`)."""
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2.0, 2.0])
    refused(save(tmp_path, [node]), "attribute 'kernel_shape' is of type FLOATS", "INTS")
    node = helper.make_node("Concat", ["x", "x"], ["y"])
    refused(save(tmp_path, [node]), "required attribute 'axis' is missing")
    node = helper.make_node("Relu", ["x"], ["y"], name="r")
    node.attribute.add(name="odd", type=onnx.AttributeProto.INT, ref_attr_name="outer")
    refused(save(tmp_path, [node]), "attribute 'odd' has no value of a valid type")


def test_node_with_too_few_inputs_or_outputs(tmp_path: Path) -> None:
    """Fuzzer finding (traceback): a Conv without weights gave `list index out of
    range`; an operator newer than the model's opset is checked against its first
    schema (QLinearConv in an opset 9 model)."""
    refused(save(tmp_path, [helper.make_node("Conv", ["x"], ["y"])]), "has 1 inputs")
    node = helper.make_node("QLinearConv", ["x"], ["y"])
    refused(save(tmp_path, [node], opset=9), "has 1 inputs; the operator takes 8 to 9")
    node = helper.make_node("Relu", ["x"], [])
    refused(save(tmp_path, [node]), "has 0 outputs")
    refused(save(tmp_path, [helper.make_node("Max", [""], ["y"])]), "has no inputs")
    qadd = helper.make_node("QLinearAdd", ["x", "s"], ["y"], domain="com.microsoft")
    refused(save(tmp_path, [qadd], [const("s", 0.1)]), "required input 3 is missing")


def test_quantized_constant_of_another_type_than_its_zero_point(tmp_path: Path) -> None:
    """Fuzzer finding (traceback): a QLinearConv input holding uint32 values with a
    uint8 zero point reached the weight store (`array of uint32 does not fit
    tensor<...!quant.uniform<u8...>>`)."""
    inits = [
        const("x", np.ones((1, 3, 8, 8)), np.uint32),
        const("xs", 0.02),
        const("xz", 128, np.uint8),
        const("w", np.ones((4, 3, 3, 3)), np.uint8),
        const("ws", 0.01),
        const("wz", 128, np.uint8),
        const("ys", 0.05),
        const("yz", 128, np.uint8),
    ]
    node = helper.make_node(
        "QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], name="q"
    )
    path = save(tmp_path, [node], inits, NO_INPUTS, opset=13)
    refused(path, "node 'q' (QLinearConv", "input 0 ('x') holds uint32 values")


def test_qoperator_attributes_keep_their_types(tmp_path: Path) -> None:
    """Fuzzer finding (traceback): a QLinearConv with an empty list attribute was
    rebuilt as a Conv from the attribute values (`Could not infer attribute type from
    empty iterator`); the attributes are now copied as they are."""
    from benchmarks.fuzz import onnx as fuzz

    model = fuzz.BUILT["qop"]()
    model.graph.node[0].attribute.append(
        helper.make_attribute("extra", [], attr_type=onnx.AttributeProto.INTS)
    )
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    assert synapc.import_model(path).outputs[0].shape == (1, 4, 8, 8)


def test_names_with_line_breaks_or_not_utf8(tmp_path: Path) -> None:
    """Fuzzer findings: a node name with a line break made a two-line message; a name
    that is not UTF-8 came back from protobuf as bytes and broke the importer."""
    node = helper.make_node("Unique", ["x"], ["y"], name="line\nbreak")
    refused(save(tmp_path, [node]), "node 'line\\nbreak' (Unique")
    node = helper.make_node("Relu", ["x"], ["yyyy"])
    path = save(tmp_path, [node], outputs=("yyyy",))
    path.write_bytes(path.read_bytes().replace(b"yyyy", b"y\xff\xfey"))
    refused(path, "not UTF-8")


def test_opsets_and_graph_inputs_out_of_range(tmp_path: Path) -> None:
    """An opset beyond what the onnx library knows, no default opset at all, and a graph
    input of 2**40 elements are refused."""
    path = save(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], opset=2**40)
    refused(path, "opset_import gives ONNX opset 1099511627776")
    model = onnx.load(str(path))
    del model.opset_import[:]
    path.write_bytes(model.SerializeToString())
    refused(path, "declares no ONNX (default domain) opset")
    big = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 20, 1 << 20])]
    refused(
        save(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], inputs=big), "input 'x'"
    )


def test_constant_arithmetic_writes_no_numpy_warnings(tmp_path: Path) -> None:
    """Fuzzer finding: a batch norm variance of -1 folded into its convolution printed
    numpy's `invalid value encountered in sqrt` on stderr, which must hold at most the
    one error line; the weights get NaN, as in ONNX Runtime."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"]),
        helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["y"]),
    ]
    stats = [const(n, np.full(4, -1.0)) for n in "gbmv"]
    path = save(tmp_path, nodes, [W, *stats])
    result = subprocess.run(
        [str(BIN / "synapc"), "import", str(path), "--no-weights"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_fuzzer_seeds_import() -> None:
    """The models the ONNX fuzzer builds as seeds are valid for synapc (so that its
    mutations start from models that import)."""
    from benchmarks.fuzz import onnx as fuzz

    for name, build in fuzz.BUILT.items():
        model = build()
        path = Path(f"{name}.onnx")
        synapc.importers.onnx.import_onnx(path, proto=model)
