"""Every fuzzer of benchmarks/fuzz/ on a fixed-seed subset of its cases: no input may end
in a traceback, a hang, a memory blow-up or a crash (the 10,000-case campaigns run from
`python benchmarks/fuzz/run.py`). Each campaign runs in a new process: the harness forks
a child per case, which is only safe from a process that has not started XLA, as a test
worker may have."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FUZZ = REPO / "benchmarks" / "fuzz"
TARGETS = sorted(
    path.stem
    for path in FUZZ.glob("*.py")
    if any(line.startswith("TARGET = ") for line in path.read_text().splitlines())
)
#: Cases per target in the suite, unless the target module sets TEST_CASES.
DEFAULT_CASES = 200


def test_every_file_synapc_reads_has_a_fuzzer() -> None:
    assert {"metafile", "package", "tflite", "onnx", "compile"} <= set(TARGETS)


@pytest.mark.parametrize("name", TARGETS)
def test_fuzzer_finds_nothing(name: str, tmp_path: Path) -> None:
    count = getattr(importlib.import_module(f"benchmarks.fuzz.{name}"), "TEST_CASES", None)
    command = [sys.executable, str(FUZZ / "run.py"), "--target", name, "--seed", "1"]
    command += ["--cases", str(count or DEFAULT_CASES), "--workers", "1"]
    command += ["--timeout", "60", "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{count or DEFAULT_CASES} cases" in done.stdout


def _sleep_forever(path: Path) -> None:
    """A check that hangs: it waits on a read that never comes."""
    import time

    while True:
        time.sleep(1)


def test_harness_reports_a_hang_with_the_frames_it_hung_in(tmp_path: Path) -> None:
    """A case over the time limit is a hang, and its finding names where the child was
    (its stack, dumped on SIGUSR1 before the kill), so a load-induced time-out can be
    told from a real deadlock."""
    from benchmarks.fuzz.harness import Case, run_campaign

    report = run_campaign(
        "demo", [Case("slow", b"", ".bin")], _sleep_forever, timeout_s=1.0
    )
    assert report.counts["hang"] == 1
    (finding,) = report.findings
    assert "_sleep_forever" in finding.message and "test_fuzz.py" in finding.message


def _return_at_once(path: Path) -> None:
    """A check that accepts every case at once."""


def test_a_case_that_ended_is_not_a_hang_however_slow_the_next_case_is_drawn() -> None:
    """Drawing a metafile case took up to 16 s (a long list dumped by PyYAML); a child
    that had long ended was then past the time limit and reported as a hang, with no
    stack (the 5-6 metafile "hangs" per 10,000 cases that never reproduced)."""
    import time

    from benchmarks.fuzz.harness import Case, run_campaign

    def cases() -> Iterator[Case]:
        yield Case("quick", b"", ".bin")
        time.sleep(1.5)  # longer than the time limit, with "quick" still listed
        yield Case("drawn-slowly", b"", ".bin")

    report = run_campaign("demo", cases(), _return_at_once, timeout_s=1.0, workers=2)
    assert (report.counts["ok"], report.bad) == (2, 0), report.findings
