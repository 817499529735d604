"""ONNX indexing operators end to end (GatherElements, GatherND, ScatterElements /
Scatter, ScatterND, OneHot, Trilu, TopK, EyeLike, Range, Einsum, ReverseSequence,
Compress, NonZero): results against ONNX's reference implementation, with inputs held
channels-last after a convolution (axes mapped through the layout), constant and
run-time indices (negative ones wrap once), and refusals that name the node, the
operator and the input or attribute."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import synapc
from synapc.dialects.synap import indexing as ix
from synapc.importers.onnx.indexing import explicit_einsum
from synapc.limits import use_limits

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
X_SHAPE = [1, 3, 4, 5]
#: An NCHW convolution with integer weights: its result is held channels-last.
CONV = helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])
C_SHAPE = [1, 4, 4, 5]


def _save(
    tmp_path: Path,
    nodes: list[onnx.NodeProto],
    inputs: list[tuple[str, int, list[int]]],
    outputs: list[str],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 19,
) -> Path:
    """A model of `nodes` (output types left to the importer) saved in `tmp_path`."""
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_empty_tensor_value_info(n) for n in outputs],
        [numpy_helper.from_array(v, n) for n, v in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    return path


def _conv_inputs(rng: np.random.Generator) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The convolution's weights and an integer-valued input (exact in float32)."""
    weights = rng.integers(-2, 3, (4, 3, 3, 3)).astype(np.float32)
    return {"w": weights}, rng.integers(-3, 4, X_SHAPE).astype(np.float32)


def _check(
    path: Path,
    feeds: dict[str, np.ndarray],
    target: str = "GENERIC",
    reference: Path | None = None,
) -> None:
    """synapc's outputs equal the reference implementation's (dtype, shape, values), on
    the model or on an equivalent `reference` model."""
    want = ReferenceEvaluator(str(reference or path)).run(None, feeds)
    model = synapc.import_model(path)
    got = synapc.compile(model, target).run(list(feeds.values()))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape)
        np.testing.assert_array_equal(g, w)


# -- results against the reference implementation ----------------------------------------
@pytest.mark.parametrize("axis", [1, -1, 2])
def test_gather_and_scatter_elements_along_a_channels_last_tensor(
    tmp_path: Path, axis: int
) -> None:
    """Run-time indices (some negative) along each kind of axis of a convolution's
    result; scatter with every reduction (repeated indices where they combine)."""
    rng = np.random.default_rng(1)
    init, x = _conv_inputs(rng)
    size = C_SHAPE[axis]
    index_shape = list(C_SHAPE)
    index_shape[axis] = 2
    nodes = [CONV, helper.make_node("GatherElements", ["c", "i"], ["g"], axis=axis)]
    outputs = ["g"]
    for reduction in ("none", "add", "mul", "max", "min"):
        nodes.append(
            helper.make_node(
                "ScatterElements",
                ["c", "i" if reduction != "none" else "j", "u"],
                [f"s_{reduction}"],
                axis=axis,
                reduction=reduction,
            )
        )
        outputs.append(f"s_{reduction}")
    along = [1] * len(C_SHAPE)
    along[axis] = 2
    unique = np.broadcast_to(np.array([0, -1]).reshape(along), index_shape)
    feeds = {
        "x": x,
        "i": rng.integers(-size, size, index_shape).astype(np.int64),
        "j": unique.astype(np.int64),
        "u": rng.integers(-3, 4, index_shape).astype(np.float32),
    }
    inputs = [("x", F, X_SHAPE), ("i", I64, index_shape), ("j", I64, index_shape)]
    inputs.append(("u", F, index_shape))
    path = _save(tmp_path, nodes, inputs, outputs, init, opset=18)
    # the reference GatherElements mishandles a negative axis: compare with axis + rank
    for node in nodes[1:]:
        node.attribute[0].i %= len(C_SHAPE)
    reference = _save(tmp_path / "ref", nodes, inputs, outputs, init, opset=18)
    _check(path, feeds, reference=reference)


def test_constant_indices_wrap_once(tmp_path: Path) -> None:
    """Constant indices with negative values, for each gather and scatter."""
    rng = np.random.default_rng(2)
    init, x = _conv_inputs(rng)
    init["ge"] = np.array([[[[-1, 0, 2, -4, 3]]]], np.int64).repeat(4, 1).repeat(2, 2)
    init["nd"] = np.array([[0, -1], [-4, 2], [1, 1]], np.int64)
    init["snd"] = np.array([[-1], [1]], np.int64)
    init["upd"] = rng.integers(-3, 4, (2, 4, 5)).astype(np.float32)
    reshape = helper.make_node("Reshape", ["c", "shape"], ["r"])
    init["shape"] = np.array([4, 4, 5], np.int64)
    nodes = [
        CONV,
        helper.make_node("GatherElements", ["c", "ge"], ["a"], axis=2),
        reshape,
        helper.make_node("GatherND", ["r", "nd"], ["b"]),
        helper.make_node("ScatterND", ["r", "snd", "upd"], ["s"], reduction="add"),
    ]
    path = _save(tmp_path, nodes, [("x", F, X_SHAPE)], ["a", "b", "s"], init, opset=18)
    _check(path, {"x": x})


def test_gather_nd_with_batch_dims_and_scatter_nd(tmp_path: Path) -> None:
    """GatherND with batch dimensions and ScatterND of slices and of elements."""
    rng = np.random.default_rng(3)
    nodes = [
        helper.make_node("GatherND", ["d", "i"], ["g1"], batch_dims=1),
        helper.make_node("GatherND", ["d", "k"], ["g0"]),
        helper.make_node("ScatterND", ["d", "k", "u"], ["s"], reduction="max"),
    ]
    d = rng.integers(-5, 6, (2, 3, 4)).astype(np.float32)
    i = np.array([[[2, -1], [0, 3]], [[-3, 0], [1, 1]]], np.int64)
    k = np.array([[1, -3], [0, 2]], np.int64)
    u = rng.integers(-5, 6, (2, 4)).astype(np.float32)
    inputs = [("d", F, [2, 3, 4]), ("i", I64, [2, 2, 2]), ("k", I64, [2, 2])]
    inputs.append(("u", F, [2, 4]))
    path = _save(tmp_path, nodes, inputs, ["g1", "g0", "s"], opset=18)
    _check(path, {"d": d, "i": i, "k": k, "u": u})


@pytest.mark.parametrize("target", ["GENERIC", "VS680"])
def test_top_k_both_outputs_ties_and_layouts(tmp_path: Path, target: str) -> None:
    """Largest and smallest along channels and along the last axis of a convolution's
    result, with many ties (the lower index first), values and int64 indices."""
    rng = np.random.default_rng(4)
    init, x = _conv_inputs(rng)
    init["w"] = np.clip(init["w"], 0, 1)  # small values: ties everywhere
    x = np.clip(x, 0, 1)
    init["k2"] = np.array([2], np.int64)
    init["k3"] = np.array([3], np.int64)
    nodes = [
        CONV,
        helper.make_node("TopK", ["c", "k2"], ["v1", "i1"], axis=1),
        helper.make_node("TopK", ["c", "k3"], ["v2", "i2"], largest=0),
        helper.make_node("TopK", ["x", "k2"], ["v3", "i3"], axis=-3, largest=0),
    ]
    outputs = ["v1", "i1", "v2", "i2", "v3", "i3"]
    path = _save(tmp_path, nodes, [("x", F, X_SHAPE)], outputs, init)
    _check(path, {"x": x}, target)


def test_top_k_of_integers_and_opset_1(tmp_path: Path) -> None:
    """Smallest int32 values (the order-reversing key must not overflow) and TopK-1's
    k attribute."""
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"], largest=0)]
    x = np.array([[2**31 - 1, -(2**31), 0, -(2**31), 5]], np.int32)
    path = _save(
        tmp_path, nodes, [("x", TensorProto.INT32, [1, 5])], ["v", "i"],
        {"k": np.array([4], np.int64)},
    )  # fmt: skip
    _check(path, {"x": x})
    nodes = [helper.make_node("TopK", ["x"], ["v", "i"], k=2, axis=0)]
    path = _save(tmp_path, nodes, [("x", F, [4, 3])], ["v", "i"], opset=9)
    _check(path, {"x": np.array([[1, 5, 2], [3, 5, 0], [3, 1, 9], [0, 0, 0]], np.float32)})


def test_one_hot_with_run_time_indices_and_values(tmp_path: Path) -> None:
    """Float and integer indices (negative ones wrap, out-of-range ones give all-off
    rows), run-time values, a constant depth given as a float, each axis."""
    nodes = [
        helper.make_node("OneHot", ["fi", "depth", "vals"], ["a"], axis=0),
        helper.make_node("OneHot", ["ii", "depth", "vals"], ["b"]),
        helper.make_node("OneHot", ["ii", "depth", "ivals"], ["c"], axis=-2),
    ]
    init = {"depth": np.array(4.0, np.float32), "ivals": np.array([1, 7], np.int32)}
    feeds = {
        "fi": np.array([[1.0, -1.0, 3.0], [4.0, -5.0, 2.0]], np.float32),
        "ii": np.array([[0, -1, 3], [4, -5, -4]], np.int64),
        "vals": np.array([-2.0, 3.0], np.float32),
    }
    inputs = [("fi", F, [2, 3]), ("ii", I64, [2, 3]), ("vals", F, [2])]
    _check(_save(tmp_path, nodes, inputs, ["a", "b", "c"], init), feeds)


def test_one_hot_truncates_float_depth_and_indices(tmp_path: Path) -> None:
    """The spec casts a float depth and float indices to int64 (toward zero): depth 3.7
    is 3, index 1.9 is 1 and -1.5 is -1 (the last position). (ONNX's reference
    implementation compares the floats instead.)"""
    node = helper.make_node("OneHot", ["fi", "depth", "vals"], ["a"])
    init = {"depth": np.array(3.7, np.float32), "vals": np.array([0, 1], np.int64)}
    model = synapc.import_model(_save(tmp_path, [node], [("fi", F, [3])], ["a"], init))
    (got,) = synapc.compile(model, "GENERIC").run([np.array([1.9, -1.5, 3.2], np.float32)])
    np.testing.assert_array_equal(got, [[0, 1, 0], [0, 0, 1], [0, 0, 0]])


@pytest.mark.parametrize("k", [-1, 0, 2, 9])
def test_trilu_of_a_channels_last_tensor_and_a_matrix(tmp_path: Path, k: int) -> None:
    """Upper and lower triangles of a convolution's result (last two axes H, W are not
    stored last) and of a plain matrix, for k below, on and above the diagonal."""
    rng = np.random.default_rng(5)
    init, x = _conv_inputs(rng)
    init["k"] = np.array(k, np.int64)
    nodes = [
        CONV,
        helper.make_node("Trilu", ["c", "k"], ["u"]),
        helper.make_node("Trilu", ["c", "k"], ["l"], upper=0),
        helper.make_node("Trilu", ["m", "k"], ["m1"], upper=0),
    ]
    feeds = {"x": x, "m": rng.integers(-9, 9, (3, 6)).astype(np.int64)}
    inputs = [("x", F, X_SHAPE), ("m", I64, [3, 6])]
    _check(_save(tmp_path, nodes, inputs, ["u", "l", "m1"], init), feeds)


@pytest.mark.parametrize(("batch", "time"), [(0, 1), (1, 0)])
def test_reverse_sequence_of_a_channels_last_tensor(
    tmp_path: Path, batch: int, time: int
) -> None:
    """Sequence reversal along the channels or the batch of a convolution's result."""
    rng = np.random.default_rng(6)
    init, x = _conv_inputs(rng)
    x = np.concatenate([x, x[:, :, ::-1]], axis=0)  # a batch of 2
    shape = [2, 4, 4, 5]
    lengths = np.array([4, 0] if batch == 0 else [1, 2, 0, 2], np.int64)
    node = helper.make_node(
        "ReverseSequence", ["c", "n"], ["y"], batch_axis=batch, time_axis=time
    )
    inputs = [("x", F, [2, *X_SHAPE[1:]]), ("n", I64, [shape[batch]])]
    path = _save(tmp_path, [CONV, node], inputs, ["y"], init)
    _check(path, {"x": x, "n": lengths})


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("nchw,oc->nohw", ["conv", [2, 4]]),
        ("...ii->...i", [[2, 3, 3]]),
        ("ij,jk", [[3, 4], [4, 2]]),
        ("b i j, b j k -> b k i", [[2, 3, 4], [2, 4, 2]]),
        ("...ij,jk->...ik", [[2, 1, 3, 4], [4, 2]]),
        ("...j,...j->...", [[2, 3, 4], [3, 4]]),
        ("ii", [[4, 4]]),
        ("i,j->ij", [[3], [4]]),
    ],
)
def test_einsum_matches_onnx(tmp_path: Path, equation: str, shapes: list) -> None:
    """Contractions, transposes, diagonals, traces, outer products, implicit outputs
    and broadcasting ellipses; a first operand held channels-last."""
    rng = np.random.default_rng(7)
    init, x = _conv_inputs(rng)
    names = ["c" if s == "conv" else f"e{k}" for k, s in enumerate(shapes)]
    nodes = ([CONV] if "c" in names else []) + [
        helper.make_node("Einsum", names, ["y"], equation=equation)
    ]
    feeds = {"x": x} if "c" in names else {}
    inputs = [("x", F, X_SHAPE)] if "c" in names else []
    for name, shape in zip(names, shapes, strict=True):
        if name != "c":
            feeds[name] = rng.integers(-3, 4, shape).astype(np.float32)
            inputs.append((name, F, shape))
    if "c" not in names:
        init = {}
    _check(_save(tmp_path, nodes, inputs, ["y"], init), feeds)


def test_compress_and_eye_like(tmp_path: Path) -> None:
    """Compress along channels (also as a negative axis) and of the flattened tensor;
    EyeLike of a run-time input with dtype and k."""
    rng = np.random.default_rng(8)
    init, x = _conv_inputs(rng)
    init["keep"] = np.array([True, False, True, True])
    init["flat"] = np.array([False, True, True, False, True])
    nodes = [
        CONV,
        helper.make_node("Compress", ["c", "keep"], ["a"], axis=1),
        helper.make_node("Compress", ["c", "flat"], ["b"], axis=-1),
        helper.make_node("Compress", ["c", "flat"], ["f"]),
        helper.make_node("EyeLike", ["m"], ["e"], dtype=TensorProto.INT32, k=-1),
        helper.make_node("EyeLike", ["m"], ["e2"], k=3),
    ]
    feeds = {"x": x, "m": rng.integers(-3, 4, (3, 4)).astype(np.float32)}
    inputs = [("x", F, X_SHAPE), ("m", F, [3, 4])]
    _check(_save(tmp_path, nodes, inputs, ["a", "b", "f", "e", "e2"], init), feeds)


def test_scatter_of_opset_10(tmp_path: Path) -> None:
    """The older Scatter: ScatterElements without reductions."""
    node = helper.make_node("Scatter", ["m", "j", "u"], ["s"], axis=1)
    feeds = {
        "m": np.arange(12, dtype=np.float32).reshape(3, 4),
        "j": np.array([[3, -4], [0, 1], [-1, 2]], np.int64),
        "u": -np.arange(6, dtype=np.float32).reshape(3, 2),
    }
    inputs = [("m", F, [3, 4]), ("j", I64, [3, 2]), ("u", F, [3, 2])]
    model = synapc.import_model(_save(tmp_path, [node], inputs, ["s"], opset=10))
    (got,) = synapc.compile(model, "GENERIC").run(list(feeds.values()))
    want = np.array([[-1, 1, 2, 0], [-2, -3, 6, 7], [8, 9, -5, -4]], np.float32)
    np.testing.assert_array_equal(got, want)


def test_constant_range_and_nonzero_are_folded(tmp_path: Path) -> None:
    """Range and NonZero of constants become constants at import."""
    init = {
        "s": np.array(1, np.int64),
        "l": np.array(9, np.int64),
        "d": np.array(3, np.int64),
        "z": np.array([[0, 2], [3, 0]], np.float32),
    }
    nodes = [
        helper.make_node("Range", ["s", "l", "d"], ["r"]),
        helper.make_node("NonZero", ["z"], ["n"]),
        helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT64),
        helper.make_node("Add", ["xi", "r"], ["y"]),
    ]
    path = _save(tmp_path, nodes, [("x", F, [3])], ["y", "n"], init)
    _check(path, {"x": np.array([1, 2, 3], np.float32)})


def test_run_time_out_of_range_indices_are_clamped_or_dropped(tmp_path: Path) -> None:
    """Indices beyond [-size, size) computed at run time (undefined in ONNX): gathers
    read the nearest position and scatters drop the update; nothing faults."""
    nodes = [
        helper.make_node("GatherElements", ["d", "i"], ["g"]),
        helper.make_node("ScatterElements", ["d", "i", "u"], ["s"], reduction="add"),
    ]
    d = np.array([10, 20, 30], np.float32)
    i = np.array([7, -5, 1], np.int64)
    u = np.array([1, 2, 3], np.float32)
    inputs = [("d", F, [3]), ("i", I64, [3]), ("u", F, [3])]
    model = synapc.import_model(_save(tmp_path, nodes, inputs, ["g", "s"], opset=18))
    g, s = synapc.compile(model, "GENERIC").run([d, i, u])
    np.testing.assert_array_equal(g, [30, 10, 20])
    np.testing.assert_array_equal(s, [10, 23, 30])


def test_explicit_einsum_equations() -> None:
    """Spaces go, ellipses become unused letters aligned right, implicit outputs are
    the ellipsis then the letters used once in ASCII order."""
    assert explicit_einsum("ij,jk", [2, 2]) == "ij,jk->ik"
    assert explicit_einsum("ba", [2]) == "ba->ab"
    assert explicit_einsum("...ii ->...i", [3]) == "aii->ai"
    assert explicit_einsum("...ij,j...", [4, 2]) == "abij,jb->abi"
    assert explicit_einsum("Ba,aB", [2, 2]) == "Ba,aB->"
    with pytest.raises(ValueError, match=r"drops the '\.\.\.' dimensions"):
        explicit_einsum("...i->i", [2])
    with pytest.raises(ValueError, match="does not fit an input of rank 3"):
        explicit_einsum("ij->i", [3])


def test_dialect_shape_rules() -> None:
    """The verifier's rules: gathers, scatters, one-hot, top-k and einsum shapes."""
    assert ix.gather_nd((2, 3, 4), (2, 5, 1), 1) == (2, 5, 4)
    assert ix.one_hot((2, 3), 4, -1) == (2, 3, 4)
    assert ix.top_k((3, 4), 2, -1) == [(3, 2), (3, 2)]
    assert ix.einsum([(2, 1, 3), (3, 4)], "abc,cd->abd") == (2, 1, 4)
    with pytest.raises(ix.ShapeError, match="must have shape"):
        ix.scatter_nd((4, 4), (2, 1), (2, 3))
    with pytest.raises(ix.ShapeError, match="exceeds the data's"):
        ix.gather_elements((2, 3), (3, 3), 1)
    with pytest.raises(ix.ShapeError, match="'j' has sizes 3 and 4"):
        ix.einsum([(2, 3), (4, 5)], "ij,jk->ik")


# -- refusals ----------------------------------------------------------------------------
def _refused(path: Path, *needles: str) -> str:
    """The import (or compilation) is refused with one line holding every needle."""
    with pytest.raises(synapc.SynapcError) as error:
        synapc.compile(synapc.import_model(path), "GENERIC")
    text = str(error.value)
    assert "\n" not in text and "Traceback" not in text
    for needle in needles:
        assert needle in text, text
    return text


RUN_TIME_VALUES = [
    (
        helper.make_node("Range", ["s", "l", "d"], ["y"], name="rng"),
        [("s", F, []), ("l", F, [])],
        {"d": np.array(1, np.float32)},
        "start 's' (input 0) must be a constant: the length of the output",
    ),
    (
        helper.make_node("NonZero", ["s"], ["y"], name="rng"),
        [("s", F, [3])],
        {},
        "X 's' (input 0) must be a constant: the shape of the output",
    ),
    (
        helper.make_node("Compress", ["s", "l"], ["y"], name="rng"),
        [("s", F, [3]), ("l", B, [3])],
        {},
        "condition 'l' (input 1) must be a constant",
    ),
    (
        helper.make_node("TopK", ["s", "l"], ["y", "z"], name="rng"),
        [("s", F, [3]), ("l", I64, [1])],
        {},
        "K (input 1) must be a constant: it sets the size of the outputs",
    ),
    (
        helper.make_node("OneHot", ["s", "l", "d"], ["y"], name="rng"),
        [("s", I64, [3]), ("l", I64, [])],
        {"d": np.array([0, 1], np.float32)},
        "depth (input 1) must be a constant",
    ),
    (
        helper.make_node("Trilu", ["s", "l"], ["y"], name="rng"),
        [("s", F, [3, 3]), ("l", I64, [])],
        {},
        "k (input 1) must be a constant",
    ),
]


@pytest.mark.parametrize(
    ("node", "inputs", "init", "message"),
    RUN_TIME_VALUES,
    ids=[case[0].op_type for case in RUN_TIME_VALUES],
)
def test_run_time_sizes_are_refused(
    tmp_path: Path, node: onnx.NodeProto, inputs: list, init: dict, message: str
) -> None:
    """An input that decides an output size must be a constant: the refusal names the
    node, the operator and the input."""
    path = _save(tmp_path, [node], inputs, [n for n in node.output], init)
    _refused(path, f"node 'rng' ({node.op_type}", message)


BAD_NODES = [
    (
        helper.make_node("GatherElements", ["d", "i"], ["y"], name="bad", axis=1),
        {"i": np.array([[0, 4, -3]], np.int64)},
        "indices 'i' (input 1) hold 4, out of range for a dimension of 4",
    ),
    (
        helper.make_node("GatherND", ["d", "i"], ["y"], name="bad"),
        {"i": np.array([[2, 0]], np.int64)},
        "indices 'i' (input 1) hold 2, out of range for a dimension of 2",
    ),
    (
        helper.make_node("ScatterND", ["d", "i", "u"], ["y"], name="bad"),
        {"i": np.array([[1, -5]], np.int64), "u": np.ones(1, np.float32)},
        "indices 'i' (input 1) hold -5, out of range for a dimension of 4",
    ),
    (
        helper.make_node("GatherElements", ["d", "i"], ["y"], name="bad"),
        {"i": np.array([[0.0]], np.float32)},
        "indices 'i' (input 1) must be integers",
    ),
    (
        helper.make_node(
            "ScatterElements", ["d", "i", "u"], ["y"], name="bad", reduction="sum"
        ),
        {"i": np.zeros((1, 1), np.int64), "u": np.ones((1, 1), np.float32)},
        "attribute 'reduction' 'sum' is not supported",
    ),
    (
        helper.make_node(
            "ScatterElements", ["b", "i", "u"], ["y"], name="bad", reduction="add"
        ),
        {"i": np.zeros((1, 1), np.int64), "u": np.ones((1, 1), np.bool_)},
        "data 'b' (input 0) is boolean; ScatterElements computes on numbers",
    ),
    (
        helper.make_node("Einsum", ["d", "d", "d"], ["y"], name="bad", equation="ij,jk,kl"),
        {},
        "synapc converts Einsum of one or two inputs",
    ),
    (
        helper.make_node("Einsum", ["d"], ["y"], name="bad", equation="...j->j"),
        {},
        "equation '...j->j': the output drops the '...' dimensions",
    ),
    (
        helper.make_node("Einsum", ["d", "d"], ["y"], name="bad", equation="ij,jk->ik"),
        {},
        "'j' has sizes 4 and 2",
    ),
    (
        helper.make_node("Einsum", ["d"], ["y"], name="bad", equation="i$->i"),
        {},
        "term 'i$' holds something other than letters",
    ),
    (
        helper.make_node("ReverseSequence", ["d", "n"], ["y"], name="bad", batch_axis=2),
        {"n": np.ones(2, np.int64)},
        "attribute 'batch_axis' 2 must be 0 or 1",
    ),
    (
        helper.make_node(
            "ReverseSequence", ["d", "n"], ["y"], name="bad", batch_axis=0, time_axis=1
        ),
        {"n": np.array([1, 5], np.int64)},
        "sequence_lens 'n' (input 1) hold 5, outside [0, 4]",
    ),
    (
        helper.make_node("EyeLike", ["d"], ["y"], name="bad", dtype=TensorProto.STRING),
        {},
        "attribute 'dtype' STRING is not a supported element type",
    ),
    (
        helper.make_node("OneHot", ["d", "n", "u"], ["y"], name="bad"),
        {"n": np.array(0, np.int64), "u": np.ones(2, np.float32)},
        "depth (input 1) 0 must be at least 1",
    ),
    (
        helper.make_node("TopK", ["d", "k"], ["y", "z"], name="bad"),
        {"k": np.array([5], np.int64)},
        "K 5 is not within the 4 values of axis 1",
    ),
]


@pytest.mark.parametrize(
    ("node", "init", "message"),
    BAD_NODES,
    ids=[f"{case[0].op_type}-{k}" for k, case in enumerate(BAD_NODES)],
)
def test_bad_indexing_nodes_are_refused(
    tmp_path: Path, node: onnx.NodeProto, init: dict, message: str
) -> None:
    """Out-of-range constant indices, wrong types, reductions, axes, equations and
    dtypes: one line naming the node, the operator and what is wrong."""
    inputs = [("d", F, [2, 4]), ("b", B, [2, 4])]
    inputs = [i for i in inputs if i[0] in node.input]
    path = _save(tmp_path, [node], inputs, list(node.output), init, opset=18)
    _refused(path, f"node 'bad' ({node.op_type}", message)


def test_constant_results_beyond_the_fold_limit_are_refused(tmp_path: Path) -> None:
    """EyeLike, and Range / NonZero of constants the folder leaves alone, are computed
    at import only within `max_fold_elements`."""
    node = helper.make_node("EyeLike", ["d"], ["y"], name="eye")
    path = _save(tmp_path, [node], [("d", F, [40, 50])], ["y"])
    with use_limits(max_fold_elements=1000):
        _refused(path, "node 'eye' (EyeLike", "a tensor of 2,000 elements")
    init = {"s": np.array(0, np.int64), "l": np.array(5000, np.int64)}
    init["d"] = np.array(1, np.int64)
    node = helper.make_node("Range", ["s", "l", "d"], ["y"], name="range")
    path = _save(tmp_path, [node], [], ["y"], init)
    with use_limits(max_fold_elements=1000):
        _refused(path, "node 'range' (Range", "a tensor of 5,000 elements")
