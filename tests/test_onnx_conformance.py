"""ONNX backend conformance through synapc (GENERIC): every node test case of every
operator the ONNX importer claims, and the models of the `light`, `simple`,
`pytorch-converted` and `pytorch-operator` sets shipped in the onnx wheel. A case must
match ONNX's expected outputs (rtol 1e-3, atol 1e-5) or be listed with its reason in
`synapc.testing.onnx_conformance.EXCLUDED` / `MODEL_EXCLUDED` (and it is still run)."""

from __future__ import annotations

import pytest

from synapc.importers.onnx import CONVERTERS
from synapc.testing import onnx_conformance as conformance

#: Collected once per session (building the ~2000 node models takes a few seconds).
NODE_CASES = conformance.claimed_node_cases(CONVERTERS)
MODEL_CASES = [c for kind in conformance.MODEL_SETS for c in conformance.model_cases(kind)]


@pytest.mark.parametrize("case", NODE_CASES, ids=[c.name for c in NODE_CASES])
def test_node_case(case: conformance.NodeCase) -> None:
    """The node case passes, or fails for the reason its exclusion documents (an
    excluded case that passes is a stale exclusion)."""
    result = conformance.run_node_case(case)
    assert result.status != "fail", f"{case.name} ({case.operator}): {result.reason}"
    if case.name in conformance.EXCLUDED:
        assert result.status == "excluded", f"{case.name} passes: drop its exclusion"


@pytest.mark.parametrize(
    "case", MODEL_CASES, ids=[f"{c.kind}/{c.name}" for c in MODEL_CASES]
)
def test_model_case(case: conformance.ModelCase) -> None:
    """The model-set model passes, or fails for the reason its exclusion documents (an
    excluded model that passes is a stale exclusion)."""
    result = conformance.run_model_case(case)
    assert result.status != "fail", f"{case.kind}/{case.name}: {result.reason}"
    if case.name in conformance.MODEL_EXCLUDED:
        assert result.status == "excluded", f"{case.name} passes: drop its exclusion"


def test_exclusions_name_real_cases() -> None:
    """Every exclusion names an existing case with a reason (no stale or empty rows)."""
    node_names = {c.name for c in conformance.node_cases()}
    model_names = {c.name for c in MODEL_CASES}
    assert set(conformance.EXCLUDED) <= node_names
    assert set(conformance.MODEL_EXCLUDED) <= model_names
    reasons = [*conformance.EXCLUDED.values(), *conformance.MODEL_EXCLUDED.values()]
    assert all(len(reason.split()) >= 4 for reason in reasons)


def test_every_claimed_operator_has_cases() -> None:
    """The operator table covers the ops the importer claims that ONNX tests by node."""
    operators = {c.operator for c in NODE_CASES}
    for op in ("Conv", "Gemm", "MatMul", "Resize", "Softmax", "LayerNormalization"):
        assert op in operators


def test_onnxruntime_reference_column() -> None:
    """The benchmark's reference column runs the same cases through onnxruntime, with
    run-time inputs (synapc cannot read string tensors; onnxruntime can), and counts its
    passes per operator beside synapc's."""
    names = {"test_relu", "test_equal_string"}
    cases = [c for c in conformance.node_cases() if c.name in names]
    ours = {c.name: conformance.run_node_case(c) for c in cases}
    theirs = {c.name: conformance.run_node_case_onnxruntime(c) for c in cases}
    assert theirs["test_relu"].status == ours["test_relu"].status == "pass"
    assert theirs["test_equal_string"].status == "pass"
    assert ours["test_equal_string"].status != "pass"
    table = conformance.format_operator_table(list(ours.values()), list(theirs.values()))
    assert "| Relu | 1 | 0 | 1 | 1 |" in table
    assert "| Equal | 0 |" in table and "| 1 | 1 |" in table


def test_every_unclaimed_operator_has_a_reason() -> None:
    """docs/onnx_conformance.md lists each operator the importer leaves with the reason
    in `UNCLAIMED`; a claimed operator is not listed there."""
    suite = {case.operator for case in conformance.node_cases()}
    assert suite - set(CONVERTERS) <= set(conformance.UNCLAIMED)
    assert not set(conformance.UNCLAIMED) & set(CONVERTERS)
