"""Small ONNX test cases: build and save a model of a few nodes, compare synapc with a
reference implementation, and check a refusal.

The ONNX operator tests (tests/test_onnx_*.py) each need the same three steps: a model of
one node (or a few) built from its nodes and example inputs, synapc's GENERIC outputs
compared with ONNX's reference implementation (or ONNX Runtime where the reference is
wrong or incomplete), and an unrepresentable model refused with one line that names the
node and the operator. They live here once so that every test asserts the same things.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import synapc
from synapc.limits import use_limits

#: A value's (name, ONNX element type, shape); a shape of None leaves it unknown.
Spec = tuple[str, int, Sequence[int | str] | None]

#: Where expected outputs come from: ONNX's reference implementation or ONNX Runtime.
Reference = Literal["onnx", "onnxruntime"]

#: The name `save_node_model` gives its node, which `assert_refused` looks for.
NODE_NAME = "the_layer"


def value_infos(specs: Sequence[Spec]) -> list[onnx.ValueInfoProto]:
    """Tensor value infos of (name, element type, shape) triples, for graph inputs and
    outputs (also of subgraphs such as loop bodies)."""
    return [helper.make_tensor_value_info(name, elem, shape) for name, elem, shape in specs]


def save_model(
    directory: Path,
    nodes: Sequence[onnx.NodeProto],
    inputs: Mapping[str, np.ndarray | None] | Sequence[Spec],
    outputs: Sequence[str | Spec] = ("y",),
    *,
    initializers: Mapping[str, np.ndarray] | None = None,
    opset: int = 22,
    domains: Mapping[str, int] | None = None,
) -> Path:
    """A model of `nodes` saved as `directory`/model.onnx (replacing an earlier one), the
    file synapc and the reference implementations read, so that a test states only what
    it is about; returns its path.

    `inputs` are the graph inputs: example arrays by name (each input typed and shaped
    like its array; None entries are skipped, as absent optional inputs) or specs.
    `outputs` are the graph outputs: specs, or names whose type and shape are left to
    inference. `initializers` are constants by name. `opset` is the default domain's
    version, `domains` the versions of other domains (such as ai.onnx.preview)."""
    if isinstance(inputs, Mapping):
        graph_inputs = [
            helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape
            )
            for name, array in inputs.items()
            if array is not None
        ]
    else:
        graph_inputs = value_infos(inputs)
    graph_outputs = value_infos(
        [(o, TensorProto.UNDEFINED, None) if isinstance(o, str) else o for o in outputs]
    )
    graph = helper.make_graph(
        list(nodes),
        "g",
        graph_inputs,
        graph_outputs,
        [numpy_helper.from_array(a, n) for n, a in (initializers or {}).items()],
    )
    opsets = [helper.make_opsetid("", opset)]
    opsets += [helper.make_opsetid(d, v) for d, v in (domains or {}).items()]
    path = directory / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=opsets), str(path))
    return path


def save_node_model(
    directory: Path,
    op_type: str,
    inputs: Mapping[str, np.ndarray | None],
    constants: Collection[str] = (),
    *,
    outputs: Sequence[str | Spec] = ("y",),
    opset: int = 22,
    domains: Mapping[str, int] | None = None,
    **attributes: Any,
) -> Path:
    """A saved model of one `op_type` node named `NODE_NAME` with `attributes`, the
    common shape of an operator test.

    The node reads `inputs` in order: those named in `constants` become initializers
    (their arrays the values), None an absent optional input (an empty name), the others
    graph inputs typed and shaped like their arrays. The node's outputs are `outputs`
    (as in `save_model`)."""
    names = ["" if array is None else name for name, array in inputs.items()]
    node_outputs = [o if isinstance(o, str) else o[0] for o in outputs]
    node = helper.make_node(op_type, names, node_outputs, name=NODE_NAME, **attributes)
    graph_inputs = {n: a for n, a in inputs.items() if n not in constants}
    initializers = {n: a for n, a in inputs.items() if n in constants and a is not None}
    return save_model(
        directory,
        [node],
        graph_inputs,
        outputs,
        initializers=initializers,
        opset=opset,
        domains=domains,
    )


def reference_outputs(
    path: Path, feeds: Mapping[str, np.ndarray], reference: Reference = "onnx"
) -> list[np.ndarray]:
    """The outputs of the model at `path` on `feeds` by ONNX's reference implementation,
    or by ONNX Runtime on the CPU (the test is skipped without onnxruntime)."""
    if reference == "onnxruntime":
        import pytest

        ort = pytest.importorskip("onnxruntime")
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return [np.asarray(out) for out in session.run(None, dict(feeds))]
    from onnx.reference import ReferenceEvaluator

    with np.errstate(all="ignore"):
        return [np.asarray(out) for out in ReferenceEvaluator(str(path)).run(None, feeds)]


def _comparable(array: np.ndarray) -> np.ndarray:
    """`array` in a type numpy's assertions compare: float32 for ml_dtypes' types
    (float8, int4, int2, ...), which it holds exactly."""
    return array if array.dtype.kind in "biuf" else array.astype(np.float32)


def check_against_reference(
    path: Path,
    feeds: Mapping[str, np.ndarray],
    *,
    rtol: float = 1e-4,
    atol: float | None = None,
    exact: bool = False,
    same_dtype: bool = True,
    reference: Reference = "onnx",
) -> synapc.Model:
    """synapc's GENERIC outputs of the model at `path` on `feeds` match the reference
    implementation's, output by output; returns the imported model (for further checks
    of its IR or signature).

    The reference is the oracle of an operator test, so every output is compared: its
    shape, its element type (with `same_dtype`) and its values. Boolean and integer
    outputs, and all outputs when `exact`, are equal (without `same_dtype` the
    reference's integers are first cast to synapc's type, wrapping as synapc's
    arithmetic does); floating-point ones within `rtol` and `atol` (None: `rtol`)."""
    model = synapc.import_model(path)
    got = synapc.compile(model, "GENERIC").run([feeds[i.name] for i in model.inputs])
    want = reference_outputs(path, feeds, reference)
    assert len(got) == len(want), (len(got), len(want))
    for ours, theirs in zip(got, want, strict=True):
        ours = np.asarray(ours)
        assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
        if same_dtype:
            assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
        if exact or theirs.dtype.kind in "biu":
            if not same_dtype and theirs.dtype.kind in "biu":
                theirs = theirs.astype(ours.dtype)
            np.testing.assert_array_equal(_comparable(ours), _comparable(theirs))
        else:
            tolerance = rtol if atol is None else atol
            np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=tolerance)
    return model


def assert_refused(
    path: Path,
    *needles: str,
    node: str | None = NODE_NAME,
    operator: str | None = None,
    target: str | None = None,
    limits: Mapping[str, int] | None = None,
) -> str:
    """Importing the model at `path` (then compiling it for `target`, when given, under
    `limits`) is refused with a one-line `SynapcError` naming `node` (None: any node),
    its `operator` when given, and holding each of `needles`; returns the message.

    A refusal is what users see of an unsupported model: it must say which node and
    operator, and why, in one line."""
    import pytest

    with use_limits(**(limits or {})), pytest.raises(synapc.SynapcError) as caught:
        model = synapc.import_model(path)
        if target is not None:
            synapc.compile(model, target)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message, message
    if node is not None and operator is not None:
        named = f"node '{node}' ({operator}, opset"
    elif node is not None:
        named = f"node '{node}'"
    else:
        named = "" if operator is None else f"({operator}, opset"
    assert named in message, message
    for needle in needles:
        assert needle in message, message
    return message
