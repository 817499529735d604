"""lit configuration: every .mlir file under lit_tests/ is a golden test whose RUN lines
call synapc-opt and filecheck from the Python environment that runs lit."""

import os
import sys

import lit.formats

config.name = "synapc"  # noqa: F821 (lit injects `config`)
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["Inputs", "lit.cfg.py"]  # noqa: F821

# The venv's bin folder (from sys.executable, not its realpath, which would leave the venv).
bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")  # noqa: F821
