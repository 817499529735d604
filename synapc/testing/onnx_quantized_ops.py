"""Per-operator fidelity of synapc on quantized ONNX: the quantized nodes of the real
models (`synapc.testing.models.ONNX_MODELS`, quantized by ONNX Runtime's
`quantize_static` in each `Variant`) cut out with their real scales, zero points and
weights, run on quantized inputs and compared element by element with the exact
references of `synapc.testing.onnx_reference` (the unfused graph in float32 by ONNX
Runtime and in float64 by onnx's reference evaluator).

A cut keeps what makes a node quantized: a QOperator node (`QLinearConv`, `com.microsoft`
`QLinearAdd`, ...) alone; a node of a QDQ graph with the DequantizeLinear nodes of its
inputs and the QuantizeLinear of its output (whatever its operator: the graph says it is
quantized); a QuantizeLinear or DequantizeLinear at the edge of a float island alone.
Each quantized activation input enters through a QuantizeLinear of its own scale and
zero point from a float graph input that holds the input's exact real values, so that
the node reads a quantized tensor as it does inside the model (a raw integer graph input
would be read as plain integers and dequantized in float). The sampled cuts of one model
are bundled into one model of independent subgraphs, one output each, compiled once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import NodeProto, helper, numpy_helper

import synapc
from synapc.testing.models import ONNX_MODELS, model_path
from synapc.testing.onnx_quantization import fixed_shape_model, image_like
from synapc.testing.onnx_reference import (
    exact_outputs,
    float64_outputs,
    unfuse_qoperators,
)

_MS = "com.microsoft"

# -- Variants of ONNX Runtime's quantizer -----------------------------------------------


@dataclass(frozen=True)
class Variant:
    """One way `quantize_static` quantizes a model: format, per-channel weights,
    activation type (int8 weights always) and 7-bit weights (`reduce_range`)."""

    fmt: str  # "QDQ" or "QOperator"
    per_channel: bool
    activations: str  # "uint8" or "int8"
    reduce_range: bool

    @property
    def label(self) -> str:
        """A short name, e.g. ``QDQ-pc-u8s8-rr``."""
        return "-".join(
            (
                self.fmt,
                "pc" if self.per_channel else "pt",
                "u8s8" if self.activations == "uint8" else "s8s8",
                "rr" if self.reduce_range else "full",
            )
        )


#: Every combination: QDQ / QOperator x per-tensor / per-channel x uint8 / int8
#: activations x full-range / reduce_range weights.
VARIANTS = [
    Variant(fmt, per_channel, activations, reduce_range)
    for fmt in ("QDQ", "QOperator")
    for per_channel in (False, True)
    for activations in ("uint8", "int8")
    for reduce_range in (False, True)
]


class _ImageFeeds:
    """`CalibrationDataReader` over `count` image-like inputs (seeds 0, 1, ...)."""

    def __init__(self, name: str, shape: tuple[int, ...], count: int) -> None:
        self._name, self._shape = name, shape
        self._seeds = iter(range(count))

    def get_next(self) -> dict[str, np.ndarray] | None:
        seed = next(self._seeds, None)
        return None if seed is None else {self._name: image_like(self._shape, seed)}


def quantized_variant(name: str, variant: Variant, folder: Path) -> Path:
    """Real model `name` quantized by ONNX Runtime's `quantize_static` as `variant` says
    (int8 weights; cached in `folder`), calibrated on four image-like inputs."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    out = folder / f"{name}_{variant.label}.onnx"
    if out.is_file():
        return out
    shape = ONNX_MODELS[name][2]
    fixed = folder / f"{name}.fixed.onnx"
    if not fixed.is_file():
        fixed_shape_model(model_path(name), shape, fixed)
    first = onnx.load(str(fixed), load_external_data=False).graph.input[0].name
    quantize_static(
        str(fixed),
        str(out),
        _ImageFeeds(first, shape, 4),
        quant_format=getattr(QuantFormat, variant.fmt),
        per_channel=variant.per_channel,
        reduce_range=variant.reduce_range,
        activation_type=QuantType.QUInt8
        if variant.activations == "uint8"
        else QuantType.QInt8,
        weight_type=QuantType.QInt8,
    )
    return out


# -- Cutting quantized nodes out ---------------------------------------------------------


@dataclass(frozen=True)
class CutInput:
    """A run-time input of a cut: tensor `value` of the model, quantized with the
    initializers `scale` / `zero_point`, or a float input when `scale` is None."""

    value: str
    scale: str | None
    zero_point: str | None


@dataclass
class Cut:
    """One quantized node with what makes it quantized (see the module docstring)."""

    model: str
    op: str  # "QLinearConv", "QLinearAdd", "Conv (QDQ)", "QuantizeLinear", ...
    nodes: list[NodeProto]
    inputs: list[CutInput]
    output: str
    signature: str = ""  # operator, attributes and shapes: what makes two cuts differ

    @property
    def main(self) -> NodeProto:
        """The node the cut is about (for QDQ, the one between DQ and Q)."""
        return self.nodes[-2] if self.op.endswith("(QDQ)") else self.nodes[0]


Triples = Callable[[int], list[tuple[int, int, int]]]


def _pairs(n: int) -> list[tuple[int, int, int]]:
    return [(0, 1, 2), (3, 4, 5)]


def _single(n: int) -> list[tuple[int, int, int]]:
    return [(0, 1, 2)]


#: QOperator (domain, op type), and DequantizeLinear -> the (value, scale, zero point)
#: positions of its quantized inputs, given its number of inputs.
QOPERATOR_INPUTS: dict[tuple[str, str], Triples] = {
    ("", "QLinearConv"): _pairs,
    ("", "QLinearMatMul"): _pairs,
    (_MS, "QGemm"): _pairs,
    (_MS, "QLinearAdd"): _pairs,
    (_MS, "QLinearMul"): _pairs,
    (_MS, "QLinearSigmoid"): _single,
    (_MS, "QLinearLeakyRelu"): _single,
    (_MS, "QLinearSoftmax"): _single,
    (_MS, "QLinearGlobalAveragePool"): _single,
    (_MS, "QLinearAveragePool"): _single,
    (_MS, "QLinearConcat"): lambda n: [(i, i + 1, i + 2) for i in range(2, n, 3)],
    ("", "DequantizeLinear"): _single,
}


def _input(node: NodeProto, k: int) -> str:
    return node.input[k] if k < len(node.input) else ""


def _qoperator_cut(model: str, node: NodeProto, constants: set[str]) -> Cut | None:
    triples = QOPERATOR_INPUTS.get((node.domain or "", node.op_type))
    if triples is None:
        return None
    inputs = [
        CutInput(_input(node, v), _input(node, s), _input(node, z) or None)
        for v, s, z in triples(len(node.input))
        if _input(node, v) and _input(node, v) not in constants
    ]
    return Cut(model, node.op_type, [node], inputs, node.output[0]) if inputs else None


def cuts_of(model: onnx.ModelProto, name: str) -> list[Cut]:
    """Every quantized node of `model` (named `name`) as a `Cut`, in graph order."""
    graph = model.graph
    constants = {i.name for i in graph.initializer}
    producers = {o: n for n in graph.node for o in n.output}
    readers: dict[str, list[NodeProto]] = defaultdict(list)
    for node in graph.node:
        for i in node.input:
            readers[i].append(node)
    cuts: list[Cut] = []
    in_qdq: set[int] = set()  # ids of nodes inside a QDQ cut (its ops and trailing Qs)
    for node in graph.node:
        cut = _qoperator_cut(name, node, constants)
        if cut is None and node.op_type not in ("QuantizeLinear", "DequantizeLinear"):
            cut = _qdq_cut(name, node, constants, producers, readers)
            if cut is not None:
                in_qdq.update(id(n) for n in cut.nodes[-2:])
        if cut is not None:
            cuts.append(cut)
    outputs = {o.name for o in graph.output}
    for node in graph.node:
        if not node.input or node.input[0] in constants or id(node) in in_qdq:
            continue
        if node.op_type == "QuantizeLinear":
            float_input = CutInput(node.input[0], None, None)
            cuts.append(Cut(name, node.op_type, [node], [float_input], node.output[0]))
        elif node.op_type == "DequantizeLinear" and (
            node.output[0] in outputs
            or any(id(r) not in in_qdq for r in readers[node.output[0]])
        ):
            cut = _qoperator_cut(name, node, constants)
            if cut is not None:
                cuts.append(cut)
    return cuts


def _qdq_cut(
    name: str,
    node: NodeProto,
    constants: set[str],
    producers: dict[str, NodeProto],
    readers: dict[str, list[NodeProto]],
) -> Cut | None:
    """`node` with its input DequantizeLinear nodes and output QuantizeLinear, when every
    tensor input is dequantized, one of them at run time, and a QuantizeLinear reads its
    output."""
    if len(node.output) != 1:
        return None
    dequantizers: list[NodeProto] = []
    for i in node.input:
        if not i or i in constants:
            continue
        producer = producers.get(i)
        if producer is None or producer.op_type != "DequantizeLinear":
            return None
        if all(producer is not d for d in dequantizers):
            dequantizers.append(producer)
    inputs = [
        CutInput(d.input[0], d.input[1], _input(d, 2) or None)
        for d in dequantizers
        if d.input[0] not in constants
    ]
    quantizers = [r for r in readers[node.output[0]] if r.op_type == "QuantizeLinear"]
    if not inputs or not quantizers:
        return None
    q = quantizers[0]
    return Cut(name, f"{node.op_type} (QDQ)", [*dequantizers, node, q], inputs, q.output[0])


# -- Real activations --------------------------------------------------------------------


def capture(path: Path, names: Iterable[str], x: np.ndarray) -> dict[str, np.ndarray]:
    """Tensors `names` of quantized model `path` on its single input `x`, computed unfused
    by ONNX Runtime (the exact float32 reference), with the input itself."""
    import onnxruntime as ort

    model = onnx.load(str(path))
    unfused = onnx.shape_inference.infer_shapes(unfuse_qoperators(model))
    typed = {v.name: v for v in (*unfused.graph.value_info, *unfused.graph.output)}
    first = unfused.graph.input[0].name
    wanted = [n for n in dict.fromkeys(names) if n != first]
    missing = [n for n in wanted if n not in typed]
    if missing:
        raise ValueError(f"{path.name}: no inferred type for {missing[:3]}")
    del unfused.graph.output[:]
    unfused.graph.output.extend(typed[n] for n in wanted)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        unfused.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    values = session.run(wanted, {first: x})
    return {first: x, **dict(zip(wanted, values, strict=True))}


def signature(
    cut: Cut, constants: dict[str, tuple[int, ...]], values: dict[str, np.ndarray]
) -> str:
    """What makes two cuts differ: operator, attributes and input shapes (`constants`:
    initializer name -> dims; `values`: run-time tensors from `capture`)."""
    node = cut.main
    shapes = [values[i].shape if i in values else constants.get(i, ()) for i in node.input]
    attributes = sorted(
        (a.name, str(helper.get_attribute_value(a))) for a in node.attribute
    )
    return f"{cut.op} {attributes} {shapes}"


def select(cuts: list[Cut], per_op: int) -> list[Cut]:
    """Up to `per_op` cuts per operator with distinct signatures, spread evenly over the
    graph order (the first and the last distinct one included)."""
    by_op: dict[str, list[Cut]] = defaultdict(list)
    for cut in cuts:
        distinct = by_op[cut.op]
        if all(c.signature != cut.signature for c in distinct):
            distinct.append(cut)
    chosen: list[Cut] = []
    for distinct in by_op.values():
        picks = np.unique(np.linspace(0, len(distinct) - 1, per_op).round().astype(int))
        chosen += [distinct[int(k)] for k in picks]
    return chosen


# -- Bundling cuts into one model --------------------------------------------------------


@dataclass
class Bundle:
    """Cuts of one model as one ONNX model of independent subgraphs: output k is cut k's;
    `inputs` lists each graph input as (cut index, the cut's input, name, shape)."""

    model: onnx.ModelProto
    cuts: list[Cut]
    inputs: list[tuple[int, CutInput, str, tuple[int, ...]]] = field(default_factory=list)
    steps: list[float] = field(default_factory=list)  # output k's quantization step


def _renamed(node: NodeProto, prefix: str) -> NodeProto:
    copy = NodeProto()
    copy.CopyFrom(node)
    copy.name = prefix + (node.name or node.output[0])
    copy.input[:] = [prefix + i if i else "" for i in node.input]
    copy.output[:] = [prefix + o if o else "" for o in node.output]
    return copy


def bundle(
    model: onnx.ModelProto, cuts: list[Cut], values: dict[str, np.ndarray]
) -> Bundle:
    """The cuts of `model` as one model; `values` (from `capture`) gives the shapes and
    types of their inputs and outputs."""
    constants = {i.name: i for i in model.graph.initializer}
    nodes: list[NodeProto] = []
    initializers: list[onnx.TensorProto] = []
    graph_inputs: list[onnx.ValueInfoProto] = []
    outputs: list[onnx.ValueInfoProto] = []
    result = Bundle(onnx.ModelProto(), cuts)
    for k, cut in enumerate(cuts):
        prefix = f"c{k}_"
        used: list[str] = []
        for cut_input in dict.fromkeys(cut.inputs):  # x * x reads x once
            value = values[cut_input.value]
            if cut_input.scale is None:
                real = prefix + cut_input.value
            else:
                real = f"{prefix}{cut_input.value}_real"
                operands = [cut_input.scale, cut_input.zero_point or ""]
                used += operands
                nodes.append(
                    helper.make_node(
                        "QuantizeLinear",
                        [real, *(prefix + o if o else "" for o in operands)],
                        [prefix + cut_input.value],
                        name=f"{prefix}{cut_input.value}_quantize",
                    )
                )
            graph_inputs.append(
                helper.make_tensor_value_info(real, onnx.TensorProto.FLOAT, value.shape)
            )
            result.inputs.append((k, cut_input, real, value.shape))
        for node in cut.nodes:
            nodes.append(_renamed(node, prefix))
            used += list(node.input)
        for name in dict.fromkeys(used):
            if name in constants:
                tensor = onnx.TensorProto()
                tensor.CopyFrom(constants[name])
                tensor.name = prefix + name
                initializers.append(tensor)
        out = values[cut.output]
        outputs.append(
            helper.make_tensor_value_info(
                prefix + cut.output, helper.np_dtype_to_tensor_dtype(out.dtype), out.shape
            )
        )
        result.steps.append(_output_step(cut, constants))
    graph = helper.make_graph(nodes, "cuts", graph_inputs, outputs, initializers)
    result.model = helper.make_model(graph, opset_imports=list(model.opset_import))
    result.model.ir_version = model.ir_version
    return result


def _output_step(cut: Cut, constants: dict[str, onnx.TensorProto]) -> float:
    """1 for an integer output; the scale of a DequantizeLinear's float output."""
    node = cut.nodes[-1]
    if node.op_type != "DequantizeLinear":
        return 1.0
    return float(numpy_helper.to_array(constants[node.input[1]]).reshape(-1)[0])


# -- Feeds ---------------------------------------------------------------------------------


def _real_values(ints: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """The float32 values that QuantizeLinear with (`scale`, `zero_point`) maps back onto
    `ints` exactly: DequantizeLinear's ``float32(ints - zero_point) * scale``."""
    real = (ints.astype(np.float32) - np.float32(zero_point)) * np.float32(scale)
    back = np.rint(real / np.float32(scale)) + zero_point
    if not np.array_equal(back, ints.astype(np.float64)):
        raise AssertionError("dequantized values do not quantize back to the integers")
    return real.astype(np.float32)


def _random_floats(
    rng: np.random.Generator, shape: tuple[int, ...], scale: float, lo: int, hi: int
) -> np.ndarray:
    """Floats over a quantized range and a little beyond (saturation), a quarter of them
    on rounding ties ((k + 0.5) * scale)."""
    k = rng.integers(lo - 3, hi + 3, shape).astype(np.float32)
    offset = np.where(
        rng.random(shape) < 0.25, np.float32(0.5), rng.uniform(-0.5, 0.5, shape)
    )
    return ((k + offset) * np.float32(scale)).astype(np.float32)


def _zero_point(constants: dict[str, np.ndarray], name: str | None) -> np.ndarray:
    """The per-tensor zero point `name` (absent: ONNX's default, uint8 zero)."""
    return constants[name].reshape(()) if name else np.zeros((), np.uint8)


def feeds(
    b: Bundle,
    constants: dict[str, np.ndarray],
    values: dict[str, np.ndarray] | None,
    seed: int,
) -> dict[str, np.ndarray]:
    """Inputs of bundle `b`: the real activations `values` (from `capture`), or with
    `values` None random integers over each input's full storage range (random floats
    around the quantized range for a QuantizeLinear's float input), seeded by `seed`."""
    rng = np.random.default_rng(seed)
    result: dict[str, np.ndarray] = {}
    for k, cut_input, name, shape in b.inputs:
        if cut_input.scale is None:  # a QuantizeLinear's float input
            if values is not None:
                result[name] = values[cut_input.value].astype(np.float32)
                continue
            quantizer = b.cuts[k].nodes[0]
            scale = float(constants[quantizer.input[1]].reshape(-1)[0])
            zero = _zero_point(constants, _input(quantizer, 2))
            info = np.iinfo(zero.dtype)
            lo, hi = info.min - int(zero), info.max - int(zero)
            result[name] = _random_floats(rng, shape, scale, lo, hi)
            continue
        scale = float(constants[cut_input.scale].reshape(-1)[0])
        zero = _zero_point(constants, cut_input.zero_point)
        if values is not None:
            ints = values[cut_input.value]
        else:
            info = np.iinfo(zero.dtype)
            ints = rng.integers(info.min, info.max + 1, shape, dtype=zero.dtype)
        result[name] = _real_values(ints, scale, int(zero))
    return result


# -- Fidelity ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CutResult:
    """synapc's output of one cut on one set of inputs, in quantization steps from the
    nearer exact reference."""

    cut: Cut
    inputs: str  # "random" or "real"
    max_steps: float
    exact: float  # fraction of elements equal to the nearer reference
    elements: int

    @property
    def within_bound(self) -> bool:
        """Every element within one step, at least 99% of them exact."""
        return self.max_steps <= 1.0 and self.exact >= 0.99


def steps_from_references(
    got: np.ndarray, float32: np.ndarray, float64: np.ndarray, step: float
) -> np.ndarray:
    """Element by element, the distance of `got` to the nearer reference in steps."""
    g = got.astype(np.float64)
    return np.minimum(
        np.abs(g - float32.astype(np.float64)), np.abs(g - float64.astype(np.float64))
    ) / np.float64(step)


def run_bundle(
    b: Bundle, folder: Path, inputs: dict[str, dict[str, np.ndarray]]
) -> list[CutResult]:
    """Compile bundle `b` for VS680 once and compare it with both exact references on
    every feed of `inputs` (label -> feeds)."""
    path = folder / f"bundle_{b.cuts[0].model}.onnx"
    onnx.save(b.model, str(path))
    network = synapc.compile(synapc.import_model(path), "VS680")
    order = [i.name for i in b.model.graph.input]
    results: list[CutResult] = []
    for label, feed in inputs.items():
        got = network.run([feed[name] for name in order])
        float32 = exact_outputs(path, feed)
        float64 = float64_outputs(path, feed)
        for k, cut in enumerate(b.cuts):
            steps = steps_from_references(got[k], float32[k], float64[k], b.steps[k])
            results.append(
                CutResult(
                    cut,
                    label,
                    float(steps.max()),
                    float((steps == 0).mean()),
                    int(steps.size),
                )
            )
    return results


@dataclass
class _Quantized:
    """One real model quantized in one variant, with its cuts and real activations."""

    model: onnx.ModelProto
    cuts: list[Cut]
    values: dict[str, np.ndarray]


def _quantized(name: str, variant: Variant, folder: Path) -> _Quantized:
    path = quantized_variant(name, variant, folder)
    model = onnx.load(str(path))
    cuts = cuts_of(model, name)
    names = [i.value for c in cuts for i in c.inputs] + [c.output for c in cuts]
    values = capture(path, names, image_like(ONNX_MODELS[name][2], 100))
    dims = {i.name: tuple(i.dims) for i in model.graph.initializer}
    for cut in cuts:
        cut.signature = signature(cut, dims, values)
    return _Quantized(model, cuts, values)


def variant_results(
    variant: Variant,
    folder: Path,
    models: Iterable[str] = tuple(ONNX_MODELS),
    per_op: int = 3,
    seed: int = 0,
) -> list[CutResult]:
    """Up to `per_op` distinct quantized nodes per operator, sampled over every model of
    `models` quantized as `variant`: synapc on VS680 against the exact references, on
    random full-range inputs and on the real activations of the reference run on an
    image-like input."""
    quantized = {name: _quantized(name, variant, folder) for name in models}
    chosen = select([c for q in quantized.values() for c in q.cuts], per_op)
    work = folder / variant.label
    work.mkdir(exist_ok=True)
    results: list[CutResult] = []
    for name, q in quantized.items():
        mine = [c for c in chosen if c.model == name]
        if not mine:
            continue
        b = bundle(q.model, mine, q.values)
        constants = {i.name: numpy_helper.to_array(i) for i in q.model.graph.initializer}
        inputs = {
            "random": feeds(b, constants, None, seed),
            "real": feeds(b, constants, q.values, seed),
        }
        results += run_bundle(b, work, inputs)
    return results


@dataclass(frozen=True)
class OpFidelity:
    """One row of the per-operator table: an operator in one variant."""

    op: str
    variant: str
    nodes: int
    max_steps: float
    exact: float  # over every element of every sampled node and feed
    worst_exact: float  # of the worst node and feed

    @property
    def within_bound(self) -> bool:
        """Every element within one step; every node and feed at least 99% exact."""
        return self.max_steps <= 1.0 and self.worst_exact >= 0.99


def op_table(variant: Variant, results: list[CutResult]) -> list[OpFidelity]:
    """`results` of one variant summed up per operator."""
    by_op: dict[str, list[CutResult]] = defaultdict(list)
    for r in results:
        by_op[r.cut.op].append(r)
    rows = []
    for op, rs in sorted(by_op.items()):
        elements = sum(r.elements for r in rs)
        rows.append(
            OpFidelity(
                op,
                variant.label,
                len({(r.cut.model, r.cut.output) for r in rs}),
                max(r.max_steps for r in rs),
                sum(r.exact * r.elements for r in rs) / elements,
                min(r.exact for r in rs),
            )
        )
    return rows


def format_table(rows: list[OpFidelity]) -> str:
    """`rows` as a Markdown table."""
    lines = [
        "| op | variant | nodes | max steps | % exact | worst node % exact |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {r.op} | {r.variant} | {r.nodes} | {r.max_steps:g} | {100 * r.exact:.3f} | "
        f"{100 * r.worst_exact:.3f} |"
        for r in rows
    ]
    return "\n".join(lines)


# -- The same integers on every instruction set ------------------------------------------

#: XLA's CPU flag capping the instruction set it compiles for (jaxlib 0.10): SSE4_2,
#: AVX, AVX2, AVX512, AVX512_VNNI, AVX512_BF16, AVX_VNNI, AMX (an unknown value is only
#: warned about: "Unknown CPU ISA").
MAX_ISA_FLAG = "--xla_cpu_max_isa"

_RUNNER = """
import sys
import numpy as np
import synapc
path, inputs, out = sys.argv[1:4]
feeds = np.load(inputs)
network = synapc.compile(synapc.import_model(path), "VS680")
outputs = network.run([feeds[i.name] for i in network.inputs])
np.savez(out, *outputs)
"""


def run_in_process(
    path: Path, feeds: dict[str, np.ndarray], folder: Path, xla_flags: str
) -> list[np.ndarray]:
    """synapc's VS680 outputs of model `path` on `feeds`, computed in a fresh Python
    process whose ``XLA_FLAGS`` are `xla_flags`, without JAX's persistent compilation
    cache (a cached executable would have been compiled for another instruction set)."""
    import os
    import subprocess
    import sys

    folder.mkdir(parents=True, exist_ok=True)
    inputs, out = folder / "inputs.npz", folder / "outputs.npz"
    np.savez(inputs, **feeds)
    env = {
        **os.environ,
        "XLA_FLAGS": xla_flags,
        "SYNAPC_JAX_CACHE_MAX_BYTES": "0",
        "JAX_PLATFORMS": "cpu",
    }
    subprocess.run(
        [sys.executable, "-c", _RUNNER, str(path), str(inputs), str(out)],
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    with np.load(out) as saved:
        return [saved[f"arr_{k}"] for k in range(len(saved.files))]


def vector_registers(dump: Path) -> set[str]:
    """The x86 vector register files (``xmm``, ``ymm``, ``zmm``) that the object code XLA
    dumped into `dump` (``--xla_dump_to``) uses, read with ``objdump -d``."""
    import re
    import subprocess

    found: set[str] = set()
    for obj in sorted(dump.glob("*.o")):
        text = subprocess.run(
            ["objdump", "-d", str(obj)], capture_output=True, text=True, check=True
        ).stdout
        found.update(re.findall(r"%([xyz]mm)\d+", text))
    return found
