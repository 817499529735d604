"""`synapc`: the command line for people coming from `synap convert`.

Subcommands grow with the compiler; `synapc opt ...` is `synapc-opt ...`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import version


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `synapc`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="synapc", description=__doc__)
    parser.add_argument(
        "--version",
        action="version",
        version=f"synapc {version('synapc')} (xdsl {version('xdsl')})",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "opt", help="run passes on MLIR files (same as synapc-opt)", add_help=False
    )
    if argv[:1] == ["opt"]:
        from synapc.opt import main as opt_main

        return opt_main(argv[1:])
    parser.parse_args(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
