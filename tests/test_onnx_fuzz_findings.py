"""ONNX models the fuzzer found that made the importer hang or run out of memory: each
is refused on one line, naming the node, before anything large is allocated."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest

import synapc

FINDINGS = Path(__file__).resolve().parent / "data" / "fuzz"


@pytest.mark.parametrize(
    ("name", "operator"),
    [
        ("hang-2612-03121-hannwindow.onnx", "HannWindow"),
        ("over-memory-2612-04097-blackmanwindow.onnx", "BlackmanWindow"),
        ("over-memory-2612-06684-col2im.onnx", "Col2Im"),
    ],
)
def test_finding_is_refused_quickly_and_small(name: str, operator: str) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    with pytest.raises(synapc.SynapcError) as caught:
        synapc.import_model(FINDINGS / name)
    seconds = time.perf_counter() - start
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    message = str(caught.value)
    assert "\n" not in message and f"({operator}, opset" in message, message
    assert seconds < 10 and grown_mb < 500, (seconds, grown_mb)
