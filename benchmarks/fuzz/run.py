"""Run a fuzzing campaign against one target and print its table.

    python benchmarks/fuzz/run.py --target tflite --cases 10000 --seed 0 --out findings/

Targets are the modules of this folder that define `TARGET`; every case that ends in a
traceback, hang, over-memory or crash is written under `--out` as a reproducer. Exit
code 1 when any did.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

# the repository root instead of this script's folder, whose tflite.py and onnx.py would
# hide the real packages of those names
sys.path[0] = str(Path(__file__).resolve().parents[2])

from benchmarks.fuzz.harness import run_campaign  # noqa: E402

TARGETS = ("tflite", "onnx", "metafile", "package", "compile")


def main() -> int:
    """Parse the options, run the campaign, print the table and the findings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True, choices=TARGETS)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--timeout",
        type=float,
        help="seconds per case (default: the target's TIMEOUT, else 20)",
    )
    parser.add_argument("--memory-mb", type=int, default=3072, help="RSS cap per case")
    parser.add_argument("--out", type=Path, default=Path("fuzz-findings"))
    args = parser.parse_args()
    module = importlib.import_module(f"benchmarks.fuzz.{args.target}")
    report = run_campaign(
        module.TARGET,
        module.cases(args.seed, args.cases),
        module.check,
        timeout_s=args.timeout or getattr(module, "TIMEOUT", 20.0),
        memory_mb=args.memory_mb,
        workers=args.workers,
        reproducers=args.out,
    )
    print(report.table())
    for finding in report.findings[:50]:
        print(f"  {finding.outcome}: {finding.case}: {finding.message[:300]}")
    return 1 if report.bad else 0


if __name__ == "__main__":
    sys.exit(main())
