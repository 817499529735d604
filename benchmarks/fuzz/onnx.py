"""Fuzzer of the ONNX importer: mutated `.onnx` files through `synapc.import_model`.

Seeds (built once per process, deterministic): small models made with `onnx.helper`
(a conv net, a depthwise net, a `Loop` with a trip count and a condition-driven one, an
`If`, a `Scan`, `Range` / `ConstantOfShape` / `Expand` / `Tile` shape arithmetic, a
reshape / slice / pad / resize chain, QDQ and QOperator quantized nets),
`examples/tiny_classifier.onnx`, a few dozen of ONNX's own node test models (built by
`onnx.backend.test.case.node.collect_testcases`, their shape operands frozen to
initializers as the conformance runner does) and the small models of the wheel's
`simple` / `pytorch-operator` sets.

Each case copies a seed's `ModelProto` and applies one to four structure-aware
mutations through protobuf: dims of initializers and inputs (0, -1, 2**31, 2**62, ...),
element types, attribute values (interesting ints, NaN / inf floats, wrong attribute
types, deleted or added attributes), initializer contents (shape values, raw_data
lengths, typed fields, external data pointing anywhere), node inputs and outputs
(dangling names, cycles, empty names, swapped nodes), op types, opset versions and
domains, loop trip counts and conditions, graph inputs turned into initializers (so that
folding runs) and names that are not text; a fraction also gets `mutate_bytes` on the
serialized file.

`check(path)` imports the file, as `synapc import` and `synapc convert` do first.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

# `python benchmarks/fuzz/run.py` puts this folder on sys.path, where this module would
# shadow the `onnx` package for the whole process (synapc's importer included).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
if getattr(sys.modules.get("onnx"), "__file__", None) == __file__:  # pragma: no cover
    del sys.modules["onnx"]

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as T  # noqa: E402
from onnx import helper  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

from benchmarks.fuzz.harness import Case  # noqa: E402
from benchmarks.fuzz.mutate import INTERESTING_INTS, mutate_bytes  # noqa: E402

TARGET = "onnx"
#: cases tests/test_fuzz.py runs
TEST_CASES = 300

REPO = Path(__file__).resolve().parents[2]
#: Node test models of ONNX used as seeds (at most; small ones only).
NODE_SEEDS = 600
#: The biggest model-set model used as a seed, in bytes.
MAX_SEED_BYTES = 64 * 1024

FLOATS = (0.0, -1.0, float("nan"), float("inf"), -float("inf"), 1e-45, 1e38, 0.5, 2.0)
OP_TYPES = (
    "Conv", "ConvTranspose", "MaxPool", "AveragePool", "Relu", "Add", "Mul", "Concat",
    "Reshape", "Slice", "Pad", "Resize", "Gather", "Expand", "Tile", "Range",
    "ConstantOfShape", "Loop", "If", "Scan", "Split", "Transpose", "Squeeze",
    "Unsqueeze", "Softmax", "Gemm", "MatMul", "QuantizeLinear", "DequantizeLinear",
    "QLinearConv", "BatchNormalization", "LRN", "DepthToSpace", "Flatten", "Cast",
    "ReduceMean", "ArgMax", "Shape", "Identity", "Constant", "OneHot", "NonZero",
    "Where", "TopK", "Einsum", "Unknown", "",
)  # fmt: skip
ATTRIBUTE_NAMES = (
    "axis", "axes", "pads", "strides", "kernel_shape", "dilations", "group", "perm",
    "blocksize", "size", "to", "mode", "auto_pad", "value", "num_outputs", "split",
    "keepdims", "output_shape", "output_padding", "scales", "body", "then_branch",
)  # fmt: skip
OPSETS = (0, 1, 6, 7, 9, 10, 11, 12, 13, 17, 18, 21, 28, 29, 1000, -1, 2**31, 2**62)
DOMAINS = ("", "ai.onnx", "com.microsoft", "ai.onnx.ml", "com.example", "x" * 300)
DATA_TYPES = (*range(0, 26), 99, 2**31 - 1)


def check(path: Path) -> None:
    """Import the model file, as every synapc command does first."""
    import synapc

    synapc.import_model(path)


# -- seeds ---------------------------------------------------------------------------
def _vi(name: str, elem: int, shape: list[int | str] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[str],
    inits: list[onnx.TensorProto] = (),  # type: ignore[assignment]
    opset: int = 17,
    extra_opsets: tuple[tuple[str, int], ...] = (),
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "seed", inputs, [_vi(o, T.UNDEFINED, None) for o in outputs], list(inits)
    )
    opsets = [helper.make_opsetid("", opset)]
    opsets += [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def _const(name: str, value: object, dtype: type = np.float32) -> onnx.TensorProto:
    return nh.from_array(np.asarray(value, dtype), name)


def _conv_net() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [
        _const("w1", rng.standard_normal((4, 3, 3, 3))),
        _const("b1", rng.standard_normal(4)),
        _const("w2", rng.standard_normal((4, 1, 3, 3))),
        _const("w3", rng.standard_normal((10, 4))),
        _const("b3", rng.standard_normal(10)),
        _const("gamma", np.ones(4)),
        _const("beta", np.zeros(4)),
        _const("mean", np.zeros(4)),
        _const("var", np.ones(4)),
    ]
    nodes = [
        helper.make_node(
            "Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[1, 1]
        ),
        helper.make_node(
            "BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn"]
        ),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], group=4, pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], axis=-1),
    ]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 3, 16, 16])], ["y"], inits)


def _loop_body(cond_driven: bool) -> onnx.GraphProto:
    nodes = [
        helper.make_node("Add", ["v_in", "step"], ["v_out"]),
        helper.make_node("Identity", ["v_out"], ["scan"]),
    ]
    if cond_driven:
        nodes.append(helper.make_node("Less", ["i", "three"], ["c_out"]))
    else:
        nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"]))
    return helper.make_graph(
        nodes,
        "body",
        [_vi("i", T.INT64, []), _vi("c_in", T.BOOL, []), _vi("v_in", T.FLOAT, [1, 4])],
        [
            _vi("c_out", T.BOOL, []),
            _vi("v_out", T.FLOAT, [1, 4]),
            _vi("scan", T.FLOAT, [1, 4]),
        ],
    )


def _loop(cond_driven: bool) -> onnx.ModelProto:
    inits = [
        _const("M", 5, np.int64),
        _const("cond", True, np.bool_),
        _const("v0", np.zeros((1, 4))),
        _const("step", np.ones((1, 4))),
        _const("three", 3, np.int64),
    ]
    trip = "" if cond_driven else "M"
    nodes = [
        helper.make_node(
            "Loop", [trip, "cond", "v0"], ["v", "scans"], body=_loop_body(cond_driven)
        ),
        helper.make_node("Add", ["x", "v"], ["y"]),
    ]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 4])], ["y", "scans"], inits)


def _if() -> onnx.ModelProto:
    then = helper.make_graph(
        [helper.make_node("Constant", [], ["t"], value=_const("tv", [[1, 2, 3, 4]]))],
        "then",
        [],
        [_vi("t", T.FLOAT, [1, 4])],
    )
    other = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["shape"], ["e"], value=_const("ev", [2.0]))],
        "else",
        [],
        [_vi("e", T.FLOAT, [1, 4])],
    )
    inits = [_const("c", True, np.bool_), _const("shape", [1, 4], np.int64)]
    nodes = [
        helper.make_node("If", ["c"], ["k"], then_branch=then, else_branch=other),
        helper.make_node("Mul", ["x", "k"], ["y"]),
    ]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 4])], ["y"], inits)


def _scan() -> onnx.ModelProto:
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "row"], ["s_out"]),
            helper.make_node("Identity", ["s_out"], ["out"]),
        ],
        "body",
        [_vi("s_in", T.FLOAT, [4]), _vi("row", T.FLOAT, [4])],
        [_vi("s_out", T.FLOAT, [4]), _vi("out", T.FLOAT, [4])],
    )
    inits = [_const("s0", np.zeros(4)), _const("rows", np.arange(12).reshape(3, 4))]
    nodes = [
        helper.make_node(
            "Scan", ["s0", "rows"], ["s", "all"], body=body, num_scan_inputs=1
        ),
        helper.make_node("Add", ["x", "s"], ["y"]),
    ]
    return _model(nodes, [_vi("x", T.FLOAT, [4])], ["y", "all"], inits)


def _shape_arithmetic() -> onnx.ModelProto:
    inits = [
        _const("zero", 0, np.int64),
        _const("one", 1, np.int64),
        _const("idx", [3], np.int64),
        _const("axes0", [0], np.int64),
        _const("target", [2, 1, 1, 1], np.int64),
        _const("repeats", [1, 1, 1, 2], np.int64),
        _const("shape2", [2, 3], np.int64),
    ]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "idx"], ["w"], axis=0),
        helper.make_node("Squeeze", ["w", "axes0"], ["wn"]),
        helper.make_node("Range", ["zero", "wn", "one"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=T.FLOAT),
        helper.make_node("Add", ["x", "rf"], ["a"]),
        helper.make_node("ConstantOfShape", ["s"], ["ones"], value=_const("v", [1.0])),
        helper.make_node("Mul", ["a", "ones"], ["m"]),
        helper.make_node("Expand", ["m", "target"], ["e"]),
        helper.make_node("Tile", ["e", "repeats"], ["t"]),
        helper.make_node(
            "ConstantOfShape", ["shape2"], ["k"], value=_const("v2", [0], np.int64)
        ),
        helper.make_node("ReduceSum", ["t"], ["y"], keepdims=1),
    ]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 3, 4, 8])], ["y", "k"], inits)


def _data_movement() -> onnx.ModelProto:
    inits = [
        _const("shape", [1, 8, 4, 3], np.int64),
        _const("starts", [0, 1], np.int64),
        _const("ends", [4, 3], np.int64),
        _const("axes", [2, 3], np.int64),
        _const("pads", [0, 0, 1, 1, 0, 0, 1, 1], np.int64),
        _const("roi", np.zeros(0)),
        _const("scales", [1.0, 1.0, 2.0, 2.0]),
        _const("split", [4, 4], np.int64),
    ]
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 1, 3, 2]),
        helper.make_node("Slice", ["t", "starts", "ends", "axes"], ["s"]),
        helper.make_node("Pad", ["s", "pads"], ["p"], mode="constant"),
        helper.make_node("Resize", ["p", "roi", "scales"], ["z"], mode="nearest"),
        helper.make_node("Split", ["z", "split"], ["a", "b"], axis=1),
        helper.make_node("Concat", ["b", "a"], ["c"], axis=1),
        helper.make_node("DepthToSpace", ["c"], ["d"], blocksize=2),
        helper.make_node("SpaceToDepth", ["d"], ["y"], blocksize=2),
    ]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 96])], ["y"], inits)


def _qdq() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    inits = [
        _const("xs", 0.02),
        _const("xz", 128, np.uint8),
        nh.from_array(rng.integers(-127, 127, (8, 3, 3, 3)).astype(np.int8), "wq"),
        _const("ws", np.full(8, 0.01)),
        _const("wz", np.zeros(8), np.int8),
        nh.from_array(rng.integers(-100, 100, 8).astype(np.int32), "bq"),
        _const("bs", np.full(8, 0.0002)),
        _const("bz", np.zeros(8), np.int32),
        _const("ys", 0.05),
        _const("yz", 0, np.uint8),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
        helper.make_node("DequantizeLinear", ["bq", "bs", "bz"], ["bd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["cq"]),
        helper.make_node("DequantizeLinear", ["cq", "ys", "yz"], ["cd"]),
        helper.make_node("Relu", ["cd"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "ys", "yz"], ["rq"]),
        helper.make_node("DequantizeLinear", ["rq", "ys", "yz"], ["y"]),
    ]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 3, 8, 8])], ["y"], inits, opset=13)


def _qoperator() -> onnx.ModelProto:
    rng = np.random.default_rng(2)
    inits = [
        _const("xs", 0.02),
        _const("xz", 128, np.uint8),
        nh.from_array(rng.integers(0, 255, (4, 3, 3, 3)).astype(np.uint8), "w"),
        _const("ws", 0.01),
        _const("wz", 128, np.uint8),
        _const("ys", 0.05),
        _const("yz", 128, np.uint8),
        nh.from_array(rng.integers(-50, 50, 4).astype(np.int32), "b"),
    ]
    nodes = [
        helper.make_node(
            "QLinearConv",
            ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
            ["y"],
            pads=[1, 1, 1, 1],
        )
    ]
    return _model(nodes, [_vi("x", T.UINT8, [1, 3, 8, 8])], ["y"], inits, opset=13)


BUILT: dict[str, Callable[[], onnx.ModelProto]] = {
    "conv": _conv_net,
    "loop": lambda: _loop(False),
    "while": lambda: _loop(True),
    "if": _if,
    "scan": _scan,
    "shapes": _shape_arithmetic,
    "moves": _data_movement,
    "qdq": _qdq,
    "qop": _qoperator,
}


def _node_seeds() -> list[tuple[str, onnx.ModelProto]]:
    """Up to `NODE_SEEDS` small node test models of ONNX (a stride through the claimed
    operators' cases, so most converters are reached), shape operands frozen."""
    try:
        from synapc.testing import onnx_conformance as conformance

        node_cases = conformance.node_cases()
    except Exception:  # pragma: no cover - an onnx without its test cases
        return []
    from synapc.importers.onnx import CONVERTERS

    claimed, other = [], []
    for case in sorted(node_cases, key=lambda c: c.name):
        if case.model.ByteSize() > 4096 or not case.data_sets:
            continue
        try:
            frozen, _ = conformance.freeze_shape_inputs(case.model, case.data_sets[0][0])
        except Exception:  # an input that is not a tensor
            continue
        group = claimed if case.operator in CONVERTERS else other
        group.append((f"node_{case.name}", frozen))
    # mostly operators synapc converts, a few it does not (or folds)
    picked = claimed[:: max(1, len(claimed) // (NODE_SEEDS * 3 // 4))]
    picked = picked[: NODE_SEEDS * 3 // 4]
    picked += other[:: max(1, len(other) // (NODE_SEEDS // 4))][: NODE_SEEDS // 4]
    return picked


def _file_seeds() -> list[tuple[str, onnx.ModelProto]]:
    found = []
    paths = [REPO / "examples" / "tiny_classifier.onnx"]
    data = Path(onnx.__file__).parent / "backend" / "test" / "data"
    for kind in ("simple", "pytorch-operator"):
        paths += sorted((data / kind).glob("*/model.onnx"))
    for path in paths:
        if path.is_file() and path.stat().st_size <= MAX_SEED_BYTES:
            found.append((f"{path.parent.name}_{path.stem}", onnx.load(str(path))))
    return found


@cache
def seeds() -> list[tuple[str, bytes]]:
    """Every seed as (name, serialized model)."""
    models = [(name, build()) for name, build in BUILT.items()]
    models += _file_seeds() + _node_seeds()
    return [(name, model.SerializeToString()) for name, model in models]


# -- mutations -------------------------------------------------------------------------
def _graphs(graph: onnx.GraphProto) -> list[onnx.GraphProto]:
    """`graph` and every subgraph inside it."""
    found = [graph]
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("g"):
                found += _graphs(attribute.g)
            for g in attribute.graphs:
                found += _graphs(g)
    return found


def _pick(rng: np.random.Generator, items: list) -> object:
    return items[int(rng.integers(0, len(items)))] if items else None


def _int(rng: np.random.Generator) -> int:
    if rng.random() < 0.5:
        return int(rng.choice(INTERESTING_INTS))
    return int(rng.integers(-4, 12))


def _tensors(graph: onnx.GraphProto) -> list[onnx.TensorProto]:
    tensors = list(graph.initializer)
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                tensors.append(attribute.t)
    return tensors


def m_dims(model: onnx.ModelProto, rng: np.random.Generator) -> str:
    """A dim of an initializer or a graph input becomes interesting, or a dim is added
    or dropped."""
    graph = _pick(rng, _graphs(model.graph))
    if rng.random() < 0.5 and graph.input:
        dims = _pick(rng, list(graph.input)).type.tensor_type.shape.dim
        if dims and rng.random() < 0.8:
            dim = dims[int(rng.integers(0, len(dims)))]
            dim.dim_value = max(_int(rng), -(2**63))
        elif dims:
            del dims[int(rng.integers(0, len(dims)))]
        return "input-dims"
    tensor = _pick(rng, _tensors(graph))
    if tensor is None:
        return "none"
    kind = rng.random()
    if kind < 0.6 and tensor.dims:
        tensor.dims[int(rng.integers(0, len(tensor.dims)))] = _int(rng)
    elif kind < 0.8:
        tensor.dims.append(_int(rng) if rng.random() < 0.5 else 1)
    else:
        del tensor.dims[:]
    return "init-dims"


def m_types(model: onnx.ModelProto, rng: np.random.Generator) -> str:
    """An element type of an initializer, input or Cast changes."""
    graph = _pick(rng, _graphs(model.graph))
    value = int(rng.choice(DATA_TYPES))
    choice = rng.random()
    tensor = _pick(rng, _tensors(graph))
    if choice < 0.4 and tensor is not None:
        tensor.data_type = value
        return "init-type"
    if choice < 0.7 and graph.input:
        _pick(rng, list(graph.input)).type.tensor_type.elem_type = value
        return "input-type"
    nodes = [n for n in graph.node if n.op_type in ("Cast", "ConstantOfShape")]
    node = _pick(rng, nodes) or _pick(rng, list(graph.node))
    if node is not None:
        node.attribute.append(helper.make_attribute("to", value))
    return "cast-type"


def _odd_attribute(name: str, rng: np.random.Generator) -> onnx.AttributeProto:
    kind = int(rng.integers(0, 7))
    if kind == 0:
        return helper.make_attribute(name, _int(rng))
    if kind == 1:
        count = int(rng.choice([0, 1, 2, 4, 8, 1000]))
        return helper.make_attribute(name, [_int(rng) for _ in range(count)])
    if kind == 2:
        return helper.make_attribute(name, float(rng.choice(FLOATS)))
    if kind == 3:
        return helper.make_attribute(name, [float(rng.choice(FLOATS))] * 4)
    if kind == 4:
        return helper.make_attribute(
            name, str(rng.choice(["", "SAME_UPPER", "linear", "x" * 200, "CRD", "\n"]))
        )
    if kind == 5:
        return helper.make_attribute(name, nh.from_array(np.zeros(3, np.float32)))
    empty = helper.make_graph([], "empty", [], [])
    return helper.make_attribute(name, empty)


def m_attribute(model: onnx.ModelProto, rng: np.random.Generator) -> str:
    """An attribute's value becomes interesting, changes type, goes away, or a known
    attribute with an odd value is added."""
    graph = _pick(rng, _graphs(model.graph))
    node = _pick(rng, list(graph.node))
    if node is None:
        return "none"
    attrs = list(node.attribute)
    choice = rng.random()
    if attrs and choice < 0.55:
        attr = _pick(rng, attrs)
        if attr.type == onnx.AttributeProto.INT:
            attr.i = max(min(_int(rng), 2**63 - 1), -(2**63))
        elif attr.type == onnx.AttributeProto.INTS and attr.ints:
            attr.ints[int(rng.integers(0, len(attr.ints)))] = _int(rng)
        elif attr.type == onnx.AttributeProto.INTS:
            attr.ints.extend([_int(rng)] * int(rng.integers(1, 5)))
        elif attr.type == onnx.AttributeProto.FLOAT:
            attr.f = float(rng.choice(FLOATS))
        elif attr.type == onnx.AttributeProto.FLOATS and attr.floats:
            attr.floats[0] = float(rng.choice(FLOATS))
        elif attr.type == onnx.AttributeProto.STRING:
            attr.s = bytes(rng.choice([b"", b"bogus", b"\xff\xfe", b"NOTSET"]))
        else:
            attr.type = int(rng.integers(0, 15))
        return "attr-value"
    if attrs and choice < 0.75:
        attr = _pick(rng, attrs)
        if rng.random() < 0.5:
            node.attribute.remove(attr)
            return "attr-drop"
        attr.type = int(rng.integers(0, 15))
        return "attr-type"
    name = str(rng.choice(ATTRIBUTE_NAMES))
    for attr in list(node.attribute):
        if attr.name == name:
            node.attribute.remove(attr)
    node.attribute.append(_odd_attribute(name, rng))
    return "attr-add"


def m_contents(model: onnx.ModelProto, rng: np.random.Generator) -> str:
    """An initializer's values become interesting (shape tensors get huge, negative or
    zero values, floats NaN), or its raw data is cut, grown or moved to typed fields."""
    graph = _pick(rng, _graphs(model.graph))
    tensor = _pick(rng, _tensors(graph))
    if tensor is None:
        return "none"
    choice = rng.random()
    try:
        array = nh.to_array(tensor).copy()
    except Exception:
        array = None
    if choice < 0.5 and array is not None and array.size:
        flat = array.reshape(-1)
        at = int(rng.integers(0, flat.size))
        if flat.dtype.kind in "iu":
            info = np.iinfo(flat.dtype)
            flat[at] = min(max(_int(rng), info.min), info.max)
        elif flat.dtype.kind == "f":
            flat[at] = rng.choice(FLOATS)
        elif flat.dtype == np.bool_:
            flat[at] = not flat[at]
        tensor.CopyFrom(nh.from_array(array.reshape(array.shape), tensor.name))
        return "init-value"
    if choice < 0.8 and tensor.HasField("raw_data"):
        raw = tensor.raw_data
        if rng.random() < 0.5:
            tensor.raw_data = raw[: int(rng.integers(0, len(raw) + 1))]
        else:
            tensor.raw_data = raw + bytes(int(rng.integers(1, 64)))
        return "raw-length"
    if choice < 0.9:
        tensor.ClearField("raw_data")
        tensor.float_data.extend([1.0] * int(rng.integers(0, 5)))
        tensor.int64_data.extend([_int(rng)] * int(rng.integers(0, 3)))
        return "typed-fields"
    tensor.data_location = T.EXTERNAL
    del tensor.external_data[:]
    location = str(rng.choice(["weights.bin", "../weights.bin", "/etc/passwd", "", "none"]))
    for key, value in (
        ("location", location),
        ("offset", str(_int(rng) if rng.random() < 0.3 else 0)),
        ("length", str(_int(rng) if rng.random() < 0.5 else 16)),
    ):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    tensor.ClearField("raw_data")
    return "external"


def m_wiring(model: onnx.ModelProto, rng: np.random.Generator) -> str:
    """Node inputs and outputs: a dangling name, a cycle, an empty name, a dropped or
    duplicated output, two nodes swapped, a node removed or duplicated."""
    graph = _pick(rng, _graphs(model.graph))
    nodes = list(graph.node)
    if not nodes:
        return "none"
    k = int(rng.integers(0, len(nodes)))
    node = graph.node[k]
    choice = int(rng.integers(0, 8))
    if choice == 0 and node.input:
        node.input[int(rng.integers(0, len(node.input)))] = "dangling"
    elif choice == 1 and node.input and node.output:
        later = graph.node[int(rng.integers(k, len(nodes)))]
        if later.output:
            node.input[int(rng.integers(0, len(node.input)))] = later.output[0]
    elif choice == 2 and node.input:
        node.input[int(rng.integers(0, len(node.input)))] = ""
    elif choice == 3 and node.output:
        if rng.random() < 0.5:
            del node.output[-1]
        else:
            node.output.append(node.output[0])
    elif choice == 4 and len(nodes) > 1:
        j = int(rng.integers(0, len(nodes)))
        a, b = onnx.NodeProto(), onnx.NodeProto()
        a.CopyFrom(graph.node[k])
        b.CopyFrom(graph.node[j])
        graph.node[k].CopyFrom(b)
        graph.node[j].CopyFrom(a)
    elif choice == 5:
        del graph.node[k]
    elif choice == 6:
        node.input.append(
            str(rng.choice(["x", "", "dangling", node.output[0] if node.output else "y"]))
        )
    else:
        if graph.output and rng.random() < 0.5:
            graph.output[0].name = str(rng.choice(["", "missing", "x"]))
        else:
            del graph.output[:]
    return "wiring"


def m_op_type(model: onnx.ModelProto, rng: np.random.Generator) -> str:
    """A node becomes another operator (its inputs and attributes stay)."""
    graph = _pick(rng, _graphs(model.graph))
    node = _pick(rng, list(graph.node))
    if node is None:
        return "none"
    node.op_type = str(rng.choice(OP_TYPES))
    return "op-type"


def m_opset(model: onnx.ModelProto, rng: np.random.Generator) -> str:
    """Opset versions and domains of the model or a node change."""
    choice = rng.random()
    if choice < 0.4 and model.opset_import:
        model.opset_import[0].version = int(rng.choice(OPSETS))
    elif choice < 0.55:
        del model.opset_import[:]
    elif choice < 0.7:
        model.opset_import.append(
            helper.make_opsetid(str(rng.choice(DOMAINS)), int(rng.choice(OPSETS)))
        )
    else:
        graph = _pick(rng, _graphs(model.graph))
        node = _pick(rng, list(graph.node))
        if node is not None:
            node.domain = str(rng.choice(DOMAINS))
    return "opset"


def m_loop(model: onnx.ModelProto, rng: np.random.Generator) -> str:
    """A control-flow node gets an interesting trip count, a condition that never turns
    false, or a body whose condition or outputs change."""
    for graph in _graphs(model.graph):
        for node in graph.node:
            if node.op_type not in ("Loop", "If", "Scan") or not node.attribute:
                continue
            body = node.attribute[0].g
            choice = rng.random()
            if choice < 0.4 and node.op_type == "Loop":
                name = f"M{int(rng.integers(0, 1000))}"
                value = max(min(_int(rng), 2**63 - 1), -(2**63))
                graph.initializer.append(nh.from_array(np.array(value, np.int64), name))
                node.input[0] = name if rng.random() < 0.8 else ""
            elif choice < 0.6 and body.node and body.input:
                body.node[-1].op_type = "Identity"
                del body.node[-1].input[1:]
                body.node[-1].input[0] = body.input[min(1, len(body.input) - 1)].name
            elif choice < 0.8 and body.output:
                del body.output[-1]
            elif body.node:
                inner = body.node[int(rng.integers(0, len(body.node)))]
                inner.op_type = str(
                    rng.choice(["ConstantOfShape", "Range", "Expand", "Loop"])
                )
            return "loop"
    return "none"


def m_freeze(model: onnx.ModelProto, rng: np.random.Generator) -> str:
    """A graph input becomes an initializer (random values of its shape when small),
    so that what reads it is folded at import."""
    graph = model.graph
    inits = {i.name for i in graph.initializer}
    inputs = [i for i in graph.input if i.name not in inits]
    info = _pick(rng, inputs)
    if info is None:
        return "none"
    ttype = info.type.tensor_type
    shape = [d.dim_value if d.HasField("dim_value") else 1 for d in ttype.shape.dim]
    if any(d < 0 for d in shape) or int(np.prod(shape, dtype=np.float64)) > 1 << 16:
        return "none"
    try:
        dtype = helper.tensor_dtype_to_np_dtype(ttype.elem_type)
        array = (rng.standard_normal(shape) * 4).astype(dtype)
    except Exception:
        return "none"
    graph.initializer.append(nh.from_array(array, info.name))
    graph.input.remove(info)
    return "freeze"


def m_names(model: onnx.ModelProto, rng: np.random.Generator) -> str:
    """A node or tensor name gets control characters or becomes very long."""
    graph = _pick(rng, _graphs(model.graph))
    node = _pick(rng, list(graph.node))
    if node is None:
        return "none"
    odd = str(rng.choice(["line\nbreak", "tab\there", "x" * 5000, "\x00", "é\u202e"]))
    if rng.random() < 0.5:
        node.name = odd
    elif node.output:
        old = node.output[0]
        node.output[0] = odd
        for other in graph.node:
            for k, name in enumerate(other.input):
                if name == old:
                    other.input[k] = odd
    return "names"


def _fold_value(rng: np.random.Generator, kind: str) -> np.ndarray:
    """A constant for a shape-like operand: small, huge, negative, zero or NaN."""
    count = int(rng.choice([0, 1, 1, 2, 3, 4]))
    if kind == "float":
        return np.array(rng.choice([*FLOATS, 1e-3, 1e9, 3.0], count), np.float32)
    values = [
        _int(rng) if rng.random() < 0.4 else int(rng.integers(0, 9)) for _ in range(count)
    ]
    values = [max(min(v, 2**63 - 1), -(2**63)) for v in values]
    return np.array(values, np.int64)


#: Constant-folded ops and the kind of their operands after input 0 ("x" is the data).
FOLD_TEMPLATES = (
    ("ConstantOfShape", ("int",)),
    ("Expand", ("x", "int")),
    ("Tile", ("x", "int")),
    ("Range", ("scalar", "scalar", "scalar")),
    ("OneHot", ("xint", "scalar", "float")),
    ("Pad", ("x", "int")),
    ("Resize", ("x", "float", "float")),
    ("Gather", ("x", "int")),
    ("GatherND", ("x", "int")),
    ("Reshape", ("x", "int")),
    ("Slice", ("x", "int", "int", "int")),
    ("Concat", ("x", "x")),
    ("MatMul", ("x", "x")),
    ("Split", ("x", "int")),
    ("Unsqueeze", ("x", "int")),
    ("TopK", ("x", "int")),
    ("CumSum", ("x", "scalar")),
    ("NonZero", ("x",)),
    ("Loop", ("scalar", "bool", "x")),
    ("If", ("bool",)),
)


def fold_model(rng: np.random.Generator) -> onnx.ModelProto:
    """A model of one to three shape-changing ops on constants with odd operand values,
    which the importer folds (or refuses, or leaves to the target)."""
    inits, nodes = [], []
    previous = None
    for k in range(int(rng.integers(1, 4))):
        op, kinds = FOLD_TEMPLATES[int(rng.integers(0, len(FOLD_TEMPLATES)))]
        names = []
        for j, kind in enumerate(kinds):
            name = f"c{k}_{j}"
            if kind == "x" and previous is not None and rng.random() < 0.5:
                names.append(previous)
                continue
            if kind in ("x", "xint"):
                shape = [int(rng.integers(1, 5)) for _ in range(int(rng.integers(0, 4)))]
                value = rng.standard_normal(shape).astype(np.float32)
                if kind == "xint":
                    value = value.astype(np.int64)
            elif kind == "scalar":
                value = _fold_value(rng, str(rng.choice(["int", "float"])))[:1]
                if value.size == 0:
                    value = np.array([int(rng.integers(0, 5))], np.int64)
                value = value.reshape(())
            elif kind == "bool":
                value = np.array(bool(rng.integers(0, 2)))
            else:
                value = _fold_value(rng, kind)
            inits.append(nh.from_array(value, name))
            names.append(name)
        attrs: dict = {}
        if op == "Loop":
            attrs["body"] = _loop_body(bool(rng.integers(0, 2)))
            if not any(i.name == "step" for i in inits):
                inits += [_const("step", np.ones((1, 4))), _const("three", 3, np.int64)]
        elif op == "If":
            branch = helper.make_graph(
                [helper.make_node("Range", ["r0", "r1", "r2"], ["b"])],
                "branch",
                [],
                [_vi("b", T.UNDEFINED, None)],
            )
            for j in range(3):
                value = _fold_value(rng, "float")[:1].reshape(-1)
                scalar = value[0] if value.size else np.float32(j + 1)
                inits.append(nh.from_array(np.array(scalar, np.float32), f"r{k}{j}"))
            branch.node[0].input[:] = [f"r{k}{j}" for j in range(3)]
            attrs["then_branch"] = attrs["else_branch"] = branch
        elif rng.random() < 0.5:
            attrs["axis"] = int(rng.integers(-3, 4))
        out = f"y{k}"
        outputs = [out, f"{out}_b"] if op in ("Split", "TopK", "Loop") else [out]
        nodes.append(helper.make_node(op, names, outputs, name=f"n{k}", **attrs))
        previous = out
    model = _model(nodes, [], [previous], inits, opset=int(rng.choice([11, 13, 17, 18])))
    return model


MUTATIONS = (
    (m_dims, 3),
    (m_types, 1),
    (m_attribute, 4),
    (m_contents, 4),
    (m_wiring, 2),
    (m_op_type, 1),
    (m_opset, 1),
    (m_loop, 2),
    (m_freeze, 2),
    (m_names, 1),
)
_PROBABILITIES = np.array([w for _, w in MUTATIONS], np.float64)
_PROBABILITIES /= _PROBABILITIES.sum()


def make_case(seed: int, index: int) -> Case:
    """Case `index` of the campaign `seed`."""
    with np.errstate(all="ignore"):  # NaN and 1e38 written into float16 and ints
        return _make_case(seed, index)


def _make_case(seed: int, index: int) -> Case:
    rng = np.random.default_rng([seed, index])
    if rng.random() < 0.1:
        name, model = "fold", fold_model(rng)
        data = model.SerializeToString()
    else:
        pool = seeds()
        name, data = pool[int(rng.integers(0, len(pool)))]
        model = onnx.ModelProto()
        model.ParseFromString(data)
    kinds = []
    if name == "fold" and rng.random() < 0.5:  # odd values are mutation enough
        kinds.append("values")
    elif rng.random() < 0.15:  # some stay structurally valid, then get bytes mutated
        data = mutate_bytes(data, rng, int(rng.integers(1, 8)))
        kinds.append("bytes")
    else:
        wanted = int(rng.integers(1, 5))
        for _ in range(4 * wanted):  # a mutation that finds nothing to change is retried
            mutation = MUTATIONS[int(rng.choice(len(MUTATIONS), p=_PROBABILITIES))]
            try:
                kind = mutation[0](model, rng)
            except Exception:  # protobuf or onnx refused the value
                kind = "refused"
            if kind != "none":
                kinds.append(kind)
            if len(kinds) == wanted:
                break
        data = model.SerializeToString()
        if rng.random() < 0.05:  # a name that is not UTF-8
            data = data.replace(b"x", b"\xff\xfe", 1)
            kinds.append("utf8")
    extra = {}
    if "external" in kinds:
        extra["weights.bin"] = bytes(rng.integers(0, 256, 64, dtype=np.uint8))
    return Case(f"{seed}-{index}-{name}-{'+'.join(kinds)}", data, ".onnx", extra)


def cases(seed: int, count: int) -> Iterator[Case]:
    """`count` mutated models, deterministic for `seed`."""
    for index in range(count):
        yield make_case(seed, index)


# Load what a check needs before the harness forks its workers (each child then starts
# with the importer, ONNX's reference implementation and the seeds in memory).
import onnx.reference  # noqa: E402

import synapc.importers.onnx  # noqa: E402, F401
