"""Runs the lit golden tests (lit_tests/) as part of the pytest suite, so one command
checks everything; a failure lists the failing tests with lit's output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_lit_golden_tests_pass() -> None:
    lit = Path(sys.executable).parent / "lit"
    result = subprocess.run(
        [str(lit), "-v", "--order=lexical", str(REPO / "lit_tests")],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert "Passed" in result.stdout, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
