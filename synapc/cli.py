"""`synapc`: the command line for people coming from `synap convert`.

`synapc import MODEL -o OUT.mlir` writes a model's synap IR (with its weights as an MLIR
resource section, or handles only with --no-weights) for `synapc-opt`; `synapc opt ...`
is `synapc-opt ...`. Bad input is one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path


def _import(args: argparse.Namespace) -> int:
    import synapc

    model = synapc.import_model(args.model, _input_shapes(args.input_shape))
    if args.output is None:
        synapc.write_module(model.module, sys.stdout, model.weights, not args.no_weights)
        return 0
    target = Path(args.output)
    # write to a temporary name in the same folder, then rename: never a half-written file
    handle, temporary = tempfile.mkstemp(
        dir=target.parent or ".", prefix=f".{target.name}."
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            synapc.write_module(model.module, stream, model.weights, not args.no_weights)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    return 0


def _input_shapes(specs: list[str] | None) -> dict[str, list[int]] | None:
    """``NAME=1,3,224,224`` options as an `input_shapes` mapping."""
    if not specs:
        return None
    from synapc.errors import SynapcError

    shapes = {}
    for spec in specs:
        name, _, dims = spec.rpartition("=")
        try:
            shapes[name] = [int(d) for d in dims.split(",")]
        except ValueError:
            raise SynapcError(
                f"--input-shape '{spec}': expected NAME=D0,D1,... with integer sizes"
            ) from None
        if not name:
            raise SynapcError(f"--input-shape '{spec}': expected NAME=D0,D1,...")
    return shapes


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `synapc`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["opt"]:
        from synapc.opt import main as opt_main

        return opt_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="synapc",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"synapc {version('synapc')} (xdsl {version('xdsl')})",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    imp = commands.add_parser("import", help="write a model's synap IR as MLIR")
    imp.add_argument("model", help="model file (.tflite, .onnx, .pt/.pth/.torchscript)")
    imp.add_argument(
        "--input-shape",
        action="append",
        metavar="NAME=D0,D1,...",
        help="static shape of a model input with dynamic dimensions (repeatable)",
    )
    imp.add_argument("-o", "--output", help="output .mlir file (default: stdout)")
    imp.add_argument(
        "--no-weights",
        action="store_true",
        help="print weight handles only, without the resource section",
    )
    commands.add_parser("opt", help="run passes on MLIR files (same as synapc-opt)")
    args = parser.parse_args(argv)
    from synapc.errors import SynapcError

    try:
        return _import(args)
    except SynapcError as error:
        print(f"synapc: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"synapc: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
