"""Print synapc's ONNX conformance: per-operator node test pass counts (operator, passed,
excluded, total), the overall passed / total, and each model set's pass rate with its
failure reasons. ``python benchmarks/onnx_conformance.py [--all-operators] [--op Conv]``.
"""

from __future__ import annotations

import sys

from synapc.testing.onnx_conformance import main

if __name__ == "__main__":
    sys.exit(main())
