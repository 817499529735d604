"""Quantized ONNX operator by operator, and the same integers on every instruction set.

Per operator: the quantized nodes of the real models (`ONNX_MODELS`, quantized by ONNX
Runtime's `quantize_static` in every `VARIANTS` combination: QDQ / QOperator, per-tensor /
per-channel weights, uint8 or int8 activations with int8 weights, full-range or
`reduce_range` weights), up to three distinct ones per operator and variant, cut out with
their real scales, zero points and weights (`synapc.testing.onnx_quantized_ops`), run on
VS680 with random inputs over the full storage range and with the real activations of a
reference run: every element within one step of the nearer exact reference (the unfused
graph in float32 by ONNX Runtime, in float64 by onnx's reference evaluator) and at least
99% of each node's elements equal to it.

Instruction sets: a real quantized model run by synapc in two processes, one with XLA
capped to SSE4.2 (`--xla_cpu_max_isa`), one with XLA's default for this CPU, gives the
same bits; the object code XLA dumped shows that the cap was honoured.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from synapc.testing.models import ONNX_MODELS
from synapc.testing.onnx_quantization import image_like
from synapc.testing.onnx_quantized_ops import (
    MAX_ISA_FLAG,
    VARIANTS,
    Variant,
    format_table,
    op_table,
    quantized_variant,
    run_in_process,
    variant_results,
    vector_registers,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("quantized_ops")


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.label)
def test_quantized_ops_match_the_exact_references(folder: Path, variant: Variant) -> None:
    results = variant_results(variant, folder)
    rows = op_table(variant, results)
    ops = {r.op for r in rows}
    core = {"QLinearConv", "QGemm", "QLinearMatMul", "QLinearAdd", "QLinearMul"}
    expected = core if variant.fmt == "QOperator" else {"Conv (QDQ)", "Gemm (QDQ)"}
    assert expected <= ops, f"no cut of {sorted(expected - ops)}"
    bad = [r for r in results if r.max_steps > 1.0 or r.exact < 0.99]
    assert not bad, (
        format_table(rows)
        + "\n"
        + "\n".join(
            f"{r.cut.model} {r.cut.op} -> {r.cut.output} ({r.inputs} inputs): "
            f"{r.max_steps:g} steps, {100 * r.exact:.3f}% exact"
            for r in bad
        )
    )


# -- Bit-identical on every CPU ----------------------------------------------------------


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    match = re.search(r"^flags\s*:(.*)$", text, re.MULTILINE)
    return set(match.group(1).split()) if match else set()


@pytest.fixture(scope="module")
def isa_runs(folder: Path) -> dict[str, tuple[list[np.ndarray], Path]]:
    """The int8 (QDQ, per-channel) text detector run in a process capped to SSE4.2 and
    in one with XLA's default: outputs and the folder of XLA's dumped code."""
    name = "ppocr_v4_det"
    path = quantized_variant(name, Variant("QDQ", True, "uint8", False), folder)
    first = onnx.load(str(path), load_external_data=False).graph.input[0].name
    feeds = {first: image_like(ONNX_MODELS[name][2], 7)}
    runs = {}
    for label, cap in (("sse4_2", f" {MAX_ISA_FLAG}=SSE4_2"), ("default", "")):
        dump = folder / f"xla_dump_{label}"
        outputs = run_in_process(
            path, feeds, folder / f"run_{label}", f"--xla_dump_to={dump}{cap}"
        )
        runs[label] = (outputs, dump)
    return runs


def test_quantized_model_is_bit_identical_across_instruction_sets(isa_runs) -> None:
    capped, default = isa_runs["sse4_2"][0], isa_runs["default"][0]
    assert len(capped) == len(default)
    for a, b in zip(capped, default, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.size > 1000
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs binutils' objdump")
def test_the_instruction_set_cap_is_honoured(isa_runs) -> None:
    """SSE4.2 code uses only the 128-bit xmm registers; XLA's default on a CPU with AVX
    uses wider ones, so the two runs really executed different code."""
    assert vector_registers(isa_runs["sse4_2"][1]) == {"xmm"}
    if "avx" not in _cpu_flags():
        pytest.skip("this CPU has no wider vector unit than SSE4.2 to compare with")
    assert vector_registers(isa_runs["default"][1]) & {"ymm", "zmm"}
