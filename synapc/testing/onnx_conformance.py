"""ONNX conformance: the ONNX backend test suite run through synapc on the GENERIC target.

Two kinds of cases are run:

* node cases, from `onnx.backend.test.case.node.collect_testcases()`: one small graph per
  case, attributed to one operator (the op type of the case's single node; an
  ``*_expanded`` case, the operator's function body, counts for the same operator);
* model sets shipped in the `onnx` wheel (``onnx/backend/test/data/{light, simple,
  pytorch-converted, pytorch-operator}``). A ``light_X.onnx`` model has only its expected
  output ``light_X_output_0.pb``; its inputs are made as ONNX's backend runner makes them
  (`onnx.backend.test.runner.Runner.generate_dummy_data` with ``random=False``:
  ``arange(n).reshape(shape) / n`` in float32, unknown dimensions 1).

Outputs are compared with ``numpy.testing.assert_allclose`` at ``rtol=1e-3`` and
``atol=1e-5`` (or the case's own, looser, tolerances; bfloat16 outputs at two bfloat16
ulps, ``BFLOAT16_RTOL``, as ONNX's backend runner compares them), shapes and dtypes must
match.

Shape-like operands become constants. synapc compiles static graphs: shapes are fixed
at import, so an operand that decides a shape or an index range must be known then. When
a graph input feeds such an operand (`SHAPE_OPERANDS`: Reshape's shape, Slice's starts /
ends / axes / steps, Pad's pads / constant_value / axes, Resize's roi / scales / sizes,
Upsample's scales, Tile's repeats, Expand's shape, Split's split, the Reduce* and
Squeeze / Unsqueeze axes, ConstantOfShape's input, TopK's k, CumSum's
axis, Dropout's ratio / training_mode, the sequence_lens of LSTM / GRU / RNN (they
select the op's behaviour, like an attribute), Loop's trip count and condition (they
decide how often it runs, hence its scan outputs' shapes), the scales and zero points of
QuantizeLinear / DequantizeLinear / QLinear* (they are part of the quantized element
types), ...) the runner turns that input into
an initializer holding the data set's value, exactly as an exporter with static shapes
would write it; in an ``*_expanded`` case the same graph input is frozen whichever
body nodes it feeds. Data and weight operands (Conv's W,
BatchNormalization's statistics, Gather's indices, MatMul's B, Clip's min / max, ...)
stay graph inputs: the converters must handle them at run time.

A case passes, fails with a one-line reason, or is excluded: `EXCLUDED` (node cases) and
`MODEL_EXCLUDED` (model sets) map a case name to the precise reason synapc does not
match ONNX on it. Excluded cases are still run and counted; `run_node_case` reports
the exclusion only when the case does not pass.
"""

from __future__ import annotations

import argparse
import functools
import glob
import os
import re
import sys
import textwrap
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import onnx
from onnx import numpy_helper

#: Default comparison tolerances (a case's own tolerances win when they are looser).
RTOL = 1e-3
ATOL = 1e-5
#: The relative tolerance on bfloat16 outputs: two bfloat16 ulps, as ONNX's backend runner
#: allows them.
BFLOAT16_RTOL = 2.0**-6

#: The model sets shipped in the onnx wheel that the runner knows.
MODEL_SETS = ("light", "simple", "pytorch-converted", "pytorch-operator")

#: Operand positions, per op type, that decide a shape or an index range and therefore
#: must be constants for synapc; graph inputs feeding them become initializers.
SHAPE_OPERANDS: dict[str, tuple[int, ...]] = {
    "Reshape": (1,),
    "Slice": (1, 2, 3, 4),
    "Pad": (1, 2, 3),
    "Resize": (1, 2, 3),
    "AffineGrid": (1,),
    "Upsample": (1,),
    "Tile": (1,),
    "Expand": (1,),
    "Split": (1,),
    "ReduceMean": (1,),
    "ReduceSum": (1,),
    "ReduceMax": (1,),
    "ReduceMin": (1,),
    "ReduceProd": (1,),
    "ReduceL1": (1,),
    "ReduceL2": (1,),
    "ReduceLogSum": (1,),
    "ReduceLogSumExp": (1,),
    "ReduceSumSquare": (1,),
    "Squeeze": (1,),
    "Unsqueeze": (1,),
    "ConstantOfShape": (0,),
    "TopK": (1,),
    "CumSum": (1,),
    "OneHot": (1,),
    "Range": (0, 1, 2),
    "CenterCropPad": (1,),
    "CumProd": (1,),
    "Col2Im": (1, 2),
    "HannWindow": (0,),
    "HammingWindow": (0,),
    "BlackmanWindow": (0,),
    "Trilu": (1,),
    "Compress": (1,),
    "NonZero": (0,),
    "Dropout": (1, 2),
    "LSTM": (4,),
    "Loop": (0, 1),
    "GRU": (4,),
    "RNN": (4,),
    "QuantizeLinear": (1, 2),
    "DequantizeLinear": (1, 2),
    "QLinearConv": (1, 2, 4, 5, 6, 7),
    "QLinearMatMul": (1, 2, 4, 5, 6, 7),
    "DFT": (1, 2),
    "STFT": (1, 3),
    "MelWeightMatrix": (0, 1, 2, 3, 4),
    "MaxUnpool": (2,),
}

Status = Literal["pass", "fail", "excluded"]


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one conformance case: `status` is "pass", "fail" (with `reason`,
    one line) or "excluded" (a failure whose `reason` is documented in an exclusion
    table)."""

    name: str
    operator: str
    status: Status
    reason: str = ""


@dataclass
class NodeCase:
    """One ONNX node test case attributed to `operator`."""

    name: str
    operator: str
    model: onnx.ModelProto
    data_sets: list[tuple[list[Any], list[Any]]]
    rtol: float
    atol: float


@dataclass
class ModelCase:
    """One model of a model set: the model file and its (inputs, outputs) data sets."""

    name: str
    kind: str
    path: Path
    data_sets: list[tuple[list[np.ndarray], list[np.ndarray]]] = field(default_factory=list)
    rtol: float = RTOL
    atol: float = ATOL


# -- exclusions ------------------------------------------------------------------------
#: Why each group of node cases does not match ONNX (the case lists follow).
_REASONS: dict[str, str] = {
    "_TRAINING": "training-mode Dropout draws random masks (nondeterministic output): "
    "synapc compiles inference graphs",
    "_SEQUENCE": "sequence and optional types are not supported (synapc converts tensors "
    "only)",
    "_STRING": "string tensors have no synap element type (synapc converts numeric and "
    "boolean tensors only)",
    "_BITCAST_64BIT": "float64 / int64 values run as 32-bit ones on the target (the JAX "
    "backend runs without 64-bit mode), so their bits cannot be reinterpreted",
}

_TRAINING_CASES = (
    "test_training_dropout_default",
    "test_training_dropout_default_mask",
    "test_training_dropout",
    "test_training_dropout_mask",
)
_SEQUENCE_CASES = (
    "test_identity_sequence",
    "test_identity_opt",
)

_STRING_CASES = (
    "test_equal_string",
    "test_equal_string_broadcast",
)

_BITCAST_64BIT_CASES = ("test_bitcast_float64_to_int64", "test_bitcast_int64_to_float64")

_IF_SEQUENCE_CASES = ("test_if_seq", "test_if_opt")
_LOOP_SEQUENCE_CASES = ("test_loop13_seq", "test_loop16_seq_none")

#: Why synapc does not claim an operator of the node suite (checked against the
#: importer's converters by the test suite; `--markdown` lists them).
UNCLAIMED: dict[str, str] = {
    **dict.fromkeys(
        ("Adagrad", "Adam", "Momentum", "Gradient"),
        "training (ai.onnx.preview.training: gradients and optimizer updates)",
    ),
    **dict.fromkeys(
        (
            "ArrayFeatureExtractor",
            "Binarizer",
            "LabelEncoder",
            "TreeEnsemble",
            "TreeEnsembleClassifier",
            "TreeEnsembleRegressor",
        ),
        "classical ML domain ai.onnx.ml (trees, encoders, feature extractors), not "
        "neural-network layers",
    ),
    **dict.fromkeys(
        (
            "RegexFullMatch",
            "StringConcat",
            "StringNormalizer",
            "StringSplit",
            "TfIdfVectorizer",
        ),
        "string tensors or string n-grams (the synap dialect has numeric and boolean "
        "element types only)",
    ),
    **dict.fromkeys(
        (
            "OptionalGetElement",
            "OptionalHasElement",
            "SequenceInsert",
            "SequenceMap",
            "SplitToSequence",
        ),
        "sequence and optional types (synapc converts tensors only)",
    ),
    **dict.fromkeys(
        ("NonMaxSuppression", "Unique"),
        "output shape decided by the data at run time (an NPU graph has static shapes)",
    ),
    "Bernoulli": "random numbers at run time",
    "ImageDecoder": "image file decoding (bytes in, not a layer)",
}

#: Node cases of claimed operators that synapc does not match, with the reason.
EXCLUDED: dict[str, str] = {
    name: _REASONS[group]
    for group, names in (
        ("_TRAINING", _TRAINING_CASES),
        ("_SEQUENCE", _SEQUENCE_CASES),
        ("_STRING", _STRING_CASES),
        ("_BITCAST_64BIT", _BITCAST_64BIT_CASES),
        ("_SEQUENCE", _IF_SEQUENCE_CASES),
        ("_SEQUENCE", _LOOP_SEQUENCE_CASES),
    )
    for name in names
}

_SEQ = "sequence ops (SequenceConstruct, SplitToSequence, ...) are not supported"
_STR = "string tensors (StringNormalizer) are not supported"
_F64_GARBAGE = (
    "the float64 test data holds values up to 1e199 (uninitialized memory in the "
    "exporter's data set); the JAX backend computes float64 as float32, where they are inf"
)

#: Model-set models that synapc does not match, with the reason.
MODEL_EXCLUDED: dict[str, str] = {
    "light_squeezenet": "NaN from synap.softmax on 1000 equal logits of ~9.5e9 inside the "
    "fused XLA program (the kernel alone gives 0.001): a JAX-backend numerical bug",
    "test_gradient_of_add": "Gradient (ai.onnx.preview.training) is a training op",
    "test_gradient_of_add_and_mul": "Gradient (ai.onnx.preview.training) is a training op",
    **{f"test_sequence_model{k}": _SEQ for k in range(1, 9)},
    **{
        f"test_strnorm_model_{suffix}": _STR
        for suffix in (
            "monday_casesensintive_lower",
            "monday_casesensintive_nochangecase",
            "monday_casesensintive_upper",
            "monday_empty_output",
            "monday_insensintive_upper_twodim",
            "nostopwords_nochangecase",
        )
    },
    **{
        name: _F64_GARBAGE
        for name in (
            "test_operator_add_broadcast",
            "test_operator_add_size1_right_broadcast",
            "test_operator_add_size1_singleton_broadcast",
            "test_operator_addconstant",
        )
    },
}


# -- collecting cases ------------------------------------------------------------------
_EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


def _base_name(name: str) -> str:
    """The case name without its ``_expanded`` suffix."""
    return _EXPANDED.sub("", name)


@functools.cache
def node_cases() -> tuple[NodeCase, ...]:
    """All ONNX node test cases, each attributed to its operator (cached: collecting
    them builds ~2000 models)."""
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases()
    operators: dict[str, str] = {}
    for case in cases:
        if not _EXPANDED.search(case.name) and len(case.model.graph.node) == 1:
            operators[case.name] = case.model.graph.node[0].op_type
    result = []
    for case in cases:
        nodes = case.model.graph.node
        operator = operators.get(_base_name(case.name))
        if operator is None:
            operator = nodes[0].op_type if len(nodes) == 1 else "<graph>"
        result.append(
            NodeCase(
                name=case.name,
                operator=operator,
                model=case.model,
                data_sets=list(case.data_sets or []),
                rtol=float(case.rtol),
                atol=float(case.atol),
            )
        )
    return tuple(result)


def claimed_node_cases(operators: Iterable[str] | None = None) -> list[NodeCase]:
    """The node cases of `operators` (default: every op the ONNX importer converts)."""
    if operators is None:
        from synapc.importers.onnx import CONVERTERS

        operators = CONVERTERS
    wanted = set(operators)
    return [case for case in node_cases() if case.operator in wanted]


def _claimed_operators() -> set[str]:
    from synapc.importers.onnx import CONVERTERS

    return set(CONVERTERS)


def data_dir() -> Path:
    """The directory of the model sets inside the installed onnx wheel."""
    return Path(onnx.__file__).parent / "backend" / "test" / "data"


def dummy_input(value_info: onnx.ValueInfoProto) -> np.ndarray:
    """The input ONNX's backend runner feeds a `light` model: ``arange(n) / n`` in
    float32, reshaped to the declared shape (unknown dimensions 1)."""
    shape = tuple(
        d.dim_value if d.HasField("dim_value") else 1
        for d in value_info.type.tensor_type.shape.dim
    )
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) / n).astype(np.float32)


def _read_tensor(path: str) -> np.ndarray:
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def model_cases(kind: str) -> list[ModelCase]:
    """The models of model set `kind` (one of `MODEL_SETS`) with their data sets."""
    root = data_dir() / kind
    cases = []
    if kind == "light":
        for path in sorted(root.glob("light_*.onnx")):
            name = path.stem
            proto = onnx.load(str(path), load_external_data=False)
            inits = {i.name for i in proto.graph.initializer}
            inputs = [dummy_input(i) for i in proto.graph.input if i.name not in inits]
            outputs = []
            for k in range(len(proto.graph.output)):
                expected = root / f"{name}_output_{k}.pb"
                outputs.append(_read_tensor(str(expected)))
            cases.append(ModelCase(name, kind, path, [(inputs, outputs)]))
        return cases
    for case_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        data_sets = []
        for set_dir in sorted(glob.glob(str(case_dir / "test_data_set_*"))):
            count_in = len(glob.glob(os.path.join(set_dir, "input_*.pb")))
            count_out = len(glob.glob(os.path.join(set_dir, "output_*.pb")))
            data_sets.append(
                (
                    [
                        _read_tensor(os.path.join(set_dir, f"input_{i}.pb"))
                        for i in range(count_in)
                    ],
                    [
                        _read_tensor(os.path.join(set_dir, f"output_{i}.pb"))
                        for i in range(count_out)
                    ],
                )
            )
        cases.append(ModelCase(case_dir.name, kind, case_dir / "model.onnx", data_sets))
    return cases


# -- running ---------------------------------------------------------------------------
def freeze_shape_inputs(
    model: onnx.ModelProto, inputs: Sequence[Any], body_of: str | None = None
) -> tuple[onnx.ModelProto, list[np.ndarray]]:
    """`model` with the graph inputs that feed shape-like operands (`SHAPE_OPERANDS`)
    turned into initializers holding their value in `inputs`; returns the new model and
    the values of the inputs that stay graph inputs, in order.

    `body_of` names the operator an ``_expanded`` case's graph is the function body
    of: its graph inputs are that operator's inputs, in order, and those the operator
    takes as shape operands are frozen too (the same input as in the operator's own
    case, whichever body nodes it then feeds)."""
    graph = model.graph
    inits = {i.name for i in graph.initializer}
    graph_inputs = [i for i in graph.input if i.name not in inits]
    frozen: set[str] = set()
    for node in _all_nodes(graph):
        for k in SHAPE_OPERANDS.get(node.op_type, ()):
            if k < len(node.input) and node.input[k]:
                frozen.add(node.input[k])
    if body_of is not None:
        for k in SHAPE_OPERANDS.get(body_of, ()):
            if k < len(graph.input):
                frozen.add(graph.input[k].name)
    values = [_as_array(v) for v in inputs]
    if not frozen & {i.name for i in graph_inputs}:
        return model, values
    new = onnx.ModelProto()
    new.CopyFrom(model)
    kept_inputs, kept_values = [], []
    del new.graph.input[:]
    for info, value in zip(graph_inputs, values, strict=False):
        if info.name in frozen:
            new.graph.initializer.append(numpy_helper.from_array(value, info.name))
        else:
            kept_inputs.append(info)
            kept_values.append(value)
    new.graph.input.extend(kept_inputs)
    new.graph.input.extend(i for i in graph.input if i.name in inits)
    return new, kept_values


def _all_nodes(graph: onnx.GraphProto) -> Iterable[onnx.NodeProto]:
    """The nodes of `graph` (the main graph only: subgraphs are not converted)."""
    return graph.node


def _as_array(value: Any) -> np.ndarray:
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, np.ndarray | np.generic):
        return np.asarray(value)
    raise TypeError(f"a {type(value).__name__} input (only tensors are supported)")


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def compare(
    outputs: Sequence[np.ndarray],
    expected: Sequence[Any],
    rtol: float = RTOL,
    atol: float = ATOL,
) -> str | None:
    """Why `outputs` do not match `expected` (None when they do): counts, shapes, dtypes,
    then values with ``assert_allclose``."""
    if len(outputs) != len(expected):
        return f"{len(outputs)} outputs, expected {len(expected)}"
    for k, (out, ref) in enumerate(zip(outputs, expected, strict=True)):
        ref = _as_array(ref)
        out = np.asarray(out)
        if out.shape != ref.shape:
            return f"output {k} has shape {list(out.shape)}, expected {list(ref.shape)}"
        if out.dtype != ref.dtype:
            return f"output {k} has dtype {out.dtype}, expected {ref.dtype}"
        if ref.dtype.kind in "biuU" or ref.dtype == np.bool_:
            bad = int(np.count_nonzero(out != ref))
            if bad:
                return f"output {k}: {bad} of {ref.size} values differ"
            continue
        if ref.dtype.name == "bfloat16":
            # ONNX's own backend runner allows two bfloat16 ulps on bfloat16 outputs
            # (onnx.backend.test.runner): 1e-3 is below bfloat16's resolution.
            rtol = max(rtol, BFLOAT16_RTOL)
        try:
            np.testing.assert_allclose(
                out.astype(np.float64), ref.astype(np.float64), rtol=rtol, atol=atol
            )
        except AssertionError:
            diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
            worst = float(np.nanmax(diff)) if diff.size else 0.0
            bad = int(
                np.count_nonzero(
                    ~np.isclose(out, ref, rtol=rtol, atol=atol, equal_nan=True)
                )
            )
            return (
                f"output {k}: {bad} of {ref.size} values differ (max abs diff {worst:.3g})"
            )
    return None


def run_model(
    model: onnx.ModelProto,
    inputs: Sequence[Any],
    expected: Sequence[Any],
    rtol: float = RTOL,
    atol: float = ATOL,
    name: str = "model",
    body_of: str | None = None,
) -> str | None:
    """Import `model` (shape-like inputs frozen, see `freeze_shape_inputs` for
    `body_of`), compile it for GENERIC, run it on `inputs` and compare with `expected`;
    returns the one-line failure reason or None."""
    import synapc
    from synapc.importers.onnx import import_onnx

    try:
        frozen, values = freeze_shape_inputs(model, inputs, body_of)
    except TypeError as error:
        return f"cannot feed {_one_line(error)}"
    inits = {i.name for i in frozen.graph.initializer}
    graph_inputs = [i.name for i in frozen.graph.input if i.name not in inits]
    shapes = {n: tuple(v.shape) for n, v in zip(graph_inputs, values, strict=False)}
    try:
        imported = import_onnx(Path(f"{name}.onnx"), shapes, proto=frozen)
        exe = synapc.compile(imported, "GENERIC")
        outputs = exe.run(values)
    except synapc.SynapcError as error:
        return _one_line(error)
    except Exception as error:
        return f"internal error: {type(error).__name__}: {_one_line(error)}"
    return compare(outputs, expected, rtol, atol)


def run_node_case(case: NodeCase) -> CaseResult:
    """Run node case `case` on every data set; pass, fail or excluded (a failing case
    listed in `EXCLUDED`)."""
    reason = None
    rtol, atol = max(case.rtol, RTOL), max(case.atol, ATOL)
    for inputs, outputs in case.data_sets:
        body_of = case.operator if _EXPANDED.search(case.name) else None
        reason = run_model(case.model, inputs, outputs, rtol, atol, case.name, body_of)
        if reason is not None:
            break
    return _result(case.name, case.operator, reason, EXCLUDED)


def run_node_case_onnxruntime(case: NodeCase) -> CaseResult:
    """Run node case `case` through onnxruntime (CPU, one thread, every input at run
    time as ONNX allows) and compare as `run_node_case` does: the reference column of
    the conformance table. Needs the `[test]` extra's onnxruntime."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 4
    rtol, atol = max(case.rtol, RTOL), max(case.atol, ATOL)
    reason = None
    try:
        session = ort.InferenceSession(
            case.model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        inits = {i.name for i in case.model.graph.initializer}
        names = [i.name for i in case.model.graph.input if i.name not in inits]
        for inputs, outputs in case.data_sets:
            feed = dict(zip(names, (_as_array(v) for v in inputs), strict=False))
            reason = compare(session.run(None, feed), outputs, rtol, atol)
            if reason is not None:
                break
    except Exception as error:  # onnxruntime refuses the model or an input
        reason = _one_line(error)
    return _result(case.name, case.operator, reason, {})


def run_model_case(case: ModelCase) -> CaseResult:
    """Run model-set case `case` on every data set (see `run_node_case`)."""
    try:
        proto = onnx.load(str(case.path))
    except Exception as error:
        return _result(case.name, case.kind, f"cannot load: {_one_line(error)}", {})
    reason = None
    if not case.data_sets:
        reason = "the model has no test data"
    rtol, atol = max(case.rtol, RTOL), max(case.atol, ATOL)
    for inputs, outputs in case.data_sets:
        reason = run_model(proto, inputs, outputs, rtol, atol, case.name)
        if reason is not None:
            break
    return _result(case.name, case.kind, reason, MODEL_EXCLUDED)


def _result(
    name: str, operator: str, reason: str | None, excluded: dict[str, str]
) -> CaseResult:
    if reason is None:
        return CaseResult(name, operator, "pass")
    if name in excluded:
        return CaseResult(name, operator, "excluded", f"{excluded[name]} ({reason})")
    return CaseResult(name, operator, "fail", reason)


# -- reports ---------------------------------------------------------------------------
def operator_table(results: Iterable[CaseResult]) -> list[tuple[str, int, int, int]]:
    """Rows ``(operator, passed, excluded, total)`` sorted by operator."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        counts[r.operator][r.status] += 1
    return [
        (op, c["pass"], c["excluded"], sum(c.values())) for op, c in sorted(counts.items())
    ]


def format_operator_table(
    results: Sequence[CaseResult], reference: Sequence[CaseResult] | None = None
) -> str:
    """A Markdown table of `operator_table` with the overall passed / total; with
    `reference` (onnxruntime's results on the same cases), its passes beside synapc's."""
    rows = operator_table(results)
    passed = sum(r.status == "pass" for r in results)
    excluded = sum(r.status == "excluded" for r in results)
    if reference is None:
        lines = ["| Operator | Passed | Excluded | Total |", "|---|---:|---:|---:|"]
        lines += [f"| {op} | {p} | {e} | {t} |" for op, p, e, t in rows]
        lines.append(f"| **all** | **{passed}** | **{excluded}** | **{len(results)}** |")
        return "\n".join(lines)
    theirs = Counter(r.operator for r in reference if r.status == "pass")
    lines = [
        "| Operator | synapc passed | Excluded | onnxruntime passed | Total |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {op} | {p} | {e} | {theirs[op]} | {t} |" for op, p, e, t in rows]
    total = sum(theirs.values())
    lines.append(
        f"| **all** | **{passed}** | **{excluded}** | **{total}** | **{len(results)}** |"
    )
    return "\n".join(lines)


def conformance_markdown(
    results: Sequence[CaseResult],
    reference: Sequence[CaseResult],
    model_sets: dict[str, Sequence[CaseResult]],
) -> str:
    """docs/onnx_conformance.md: how the figures are made, the totals beside
    onnxruntime's, the unclaimed operators with their reasons (`UNCLAIMED`), the
    per-operator table and the model sets."""
    import onnxruntime

    ours = sum(r.status == "pass" for r in results)
    theirs = sum(r.status == "pass" for r in reference)
    excluded = sum(r.status == "excluded" for r in results)
    claimed = _claimed_operators()
    unclaimed = sorted({r.operator for r in results} - claimed)
    ort = f"onnxruntime {onnxruntime.__version__}"
    intro = (
        "Generated by `python benchmarks/onnx_conformance.py --all-operators --markdown "
        f"docs/onnx_conformance.md` (synapc GENERIC target, onnx {onnx.__version__}, {ort}"
        " run on the same cases in the same process, CPU, one thread); the test suite runs"
        " every case of the claimed operators in `tests/test_onnx_conformance.py`. Outputs"
        f" must match ONNX's expected outputs at rtol {RTOL:g}, atol {ATOL:g} (or the "
        "case's own, looser, tolerances; bfloat16 outputs at rtol 2^-6, two bfloat16 ulps, "
        "as ONNX's own backend runner compares them). A case of a claimed operator that "
        "does not match"
        " is listed with its reason in `synapc/testing/onnx_conformance.py` (`EXCLUDED`, "
        "`MODEL_EXCLUDED`); excluded cases are still run and counted, no case of a claimed"
        " operator fails, and an excluded case that passes fails the test suite. Graph "
        "inputs that feed operands deciding a shape or an index range (Reshape's shape, "
        "Slice's starts, Resize's sizes, reduction axes, TopK's k, ...) become initializers"
        " for synapc, as static-shape exporters write them (in an `*_expanded` case, the "
        "same inputs); data inputs (Clip's bounds included) stay run-time inputs. "
        "onnxruntime gets every input at run time through its Python API, which cannot "
        "exchange float8, float4, 4-bit and 2-bit tensors. `*_expanded` cases (an "
        "operator's ONNX function body) count for that operator."
    )
    lines = [
        "# ONNX conformance",
        "",
        textwrap.fill(intro, 90, break_on_hyphens=False, break_long_words=False),
        "",
        f"**synapc passes {ours} of {len(results)} node cases; {ort} passes {theirs}.** "
        f"{excluded} cases of claimed operators are excluded with a reason; "
        f"{len(claimed & {r.operator for r in results})} operators are claimed.",
        "",
        "## Unclaimed operators",
        "",
    ]
    by_reason: dict[str, list[str]] = defaultdict(list)
    for op in unclaimed:
        by_reason[UNCLAIMED.get(op, "no reason recorded")].append(op)
    lines += [f"- {', '.join(ops)}: {reason}." for reason, ops in by_reason.items()]
    reasons = Counter(EXCLUDED.get(r.name, "") for r in results if r.status == "excluded")
    lines += ["", "## Exclusion reasons among claimed operators", ""]
    lines += [f"- {n}: {reason}" for reason, n in reasons.most_common()]
    rows = format_operator_table(results, reference).splitlines()
    marked = [
        row.replace(f"| {op} |", f"| {op} (unclaimed) |", 1)
        if (op := row.split("|")[1].strip()) in unclaimed
        else row
        for row in rows
    ]
    lines += ["", "## Node tests per operator", "", *marked, ""]
    if model_sets:
        lines += ["## Model sets shipped in the onnx wheel", ""]
        lines += ["| Set | Passed | Total |", "|---|---:|---:|"]
        for kind, set_results in model_sets.items():
            ok = sum(r.status == "pass" for r in set_results)
            rate = 100 * ok // max(len(set_results), 1)
            lines.append(f"| {kind} | {ok} ({rate}%) | {len(set_results)} |")
        lines += ["", "Every model that does not pass is excluded with its reason in "
                  "`MODEL_EXCLUDED`."]  # fmt: skip
    return "\n".join(lines) + "\n"


def format_failures(results: Iterable[CaseResult]) -> str:
    """One line per case that did not pass: name, status and reason."""
    return "\n".join(
        f"  {r.status:8} {r.name}: {r.reason}" for r in results if r.status != "pass"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the per-operator node conformance table, the overall passed / total and the
    pass rate of each model set with its failure reasons. Exit status 1 when a case
    fails without a documented exclusion."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--all-operators",
        action="store_true",
        help="also run node cases of operators the importer does not claim",
    )
    parser.add_argument("--op", action="append", help="only these operators")
    parser.add_argument(
        "--sets", nargs="*", default=list(MODEL_SETS), help="model sets to run"
    )
    parser.add_argument(
        "--no-onnxruntime",
        action="store_true",
        help="do not run the same node cases through onnxruntime for comparison",
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        help="also write the report as Markdown (docs/onnx_conformance.md); needs "
        "--all-operators and onnxruntime",
    )
    args = parser.parse_args(argv)
    if args.markdown is not None and (args.no_onnxruntime or not args.all_operators):
        parser.error("--markdown needs --all-operators and onnxruntime")
    if args.op:
        cases = claimed_node_cases(args.op)
    elif args.all_operators:
        cases = list(node_cases())
    else:
        cases = claimed_node_cases()
    results = [run_node_case(c) for c in cases]
    reference = (
        None if args.no_onnxruntime else [run_node_case_onnxruntime(c) for c in cases]
    )
    print("ONNX node conformance (synapc GENERIC)\n")
    print(format_operator_table(results, reference))
    passed = sum(r.status == "pass" for r in results)
    print(f"\noverall: {passed}/{len(results)} node cases passed")
    if reference is not None:
        import onnxruntime

        theirs = sum(r.status == "pass" for r in reference)
        print(
            f"onnxruntime {onnxruntime.__version__} on the same cases: "
            f"{theirs}/{len(reference)} passed"
        )
        unclaimed = sorted({c.operator for c in cases} - _claimed_operators())
        if unclaimed:
            print(
                f"\noperators synapc does not claim ({len(unclaimed)}): "
                + ", ".join(unclaimed)
            )
    if any(r.status != "pass" for r in results):
        print("\nnot passing:\n" + format_failures(results))
    all_results = list(results)
    by_set: dict[str, list[CaseResult]] = {}
    for kind in args.sets:
        set_results = by_set[kind] = [run_model_case(c) for c in model_cases(kind)]
        all_results += set_results
        ok = sum(r.status == "pass" for r in set_results)
        rate = 100.0 * ok / max(len(set_results), 1)
        print(f"\nmodel set {kind}: {ok}/{len(set_results)} passed ({rate:.0f}%)")
        if ok != len(set_results):
            print(format_failures(set_results))
    if args.markdown is not None and reference is not None:
        args.markdown.write_text(conformance_markdown(results, reference, by_set))
    return 1 if any(r.status == "fail" for r in all_results) else 0


if __name__ == "__main__":
    sys.exit(main())
