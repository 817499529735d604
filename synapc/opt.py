"""`synapc-opt`: run synap passes on MLIR files, the pass-debugging tool.

Built on xDSL's opt driver: ``-p 'canonicalize,cse'`` pipelines with options in braces,
``--split-input-file``, ``--verify-diagnostics``, ``--print-op-generic``, plus
``--print-ir-after-all`` (MLIR's spelling: the IR after every pass, on stderr) and weight
handling: a `{-# dialect_resources #-}` section in the input is read into a WeightStore
and written back after the passes unless ``--elide-weights`` is given.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from io import StringIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from synapc.context import make_context
from synapc.mlir_io import ResourceError, read_stream, write_module
from synapc.passes.registry import PASSES
from synapc.weights import WeightStore


class SynapOptMain(xDSLOptMain):
    """xDSL's opt driver with synapc's dialects, passes and weight store."""

    version_format = "synapc-opt (xDSL {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        self.weights = WeightStore()
        super().__init__(description="synapc pass driver", args=args)

    def register_all_dialects(self) -> None:
        self.ctx = make_context(self.weights)

    def register_all_passes(self) -> None:
        for name, factory in PASSES.items():
            self.register_pass(name, factory)

    def register_all_frontends(self) -> None:
        def parse_mlir(stream: IO[bytes]) -> ModuleOp:
            return read_stream(stream, self.weights, self.ctx, self.get_input_name())

        self.available_frontends["mlir"] = parse_mlir

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        # Every input is MLIR text, whatever its file name ends with (lit's %t.1, .ir).
        stream, _ = super().get_input_stream()
        return stream, "mlir"

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--print-ir-after-all",
            action="store_true",
            help="print the IR after every pass to stderr, as mlir-opt does",
        )
        arg_parser.add_argument(
            "--elide-weights",
            action="store_true",
            help="print weight handles only, without the dialect_resources section",
        )

    def setup_pipeline(self) -> None:
        timer = time.perf_counter()

        def callback(
            previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
        ) -> None:
            nonlocal timer
            if self.args.time_passes and previous is not None:
                print(f"Pass {previous.name} took {time.perf_counter() - timer} seconds")
            if not self.args.disable_verify:
                module.verify()
            if previous is not None and self.args.print_ir_after_all:
                sys.stderr.write(f"// -----// IR Dump After {previous.name} //----- //\n")
                Printer(stream=sys.stderr).print_op(module)
                sys.stderr.write("\n\n")
            elif previous and following and self.args.print_between_passes:
                print(f"IR after {previous.name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n\n\n")
            timer = time.perf_counter()

        self.pipeline = PassPipeline.parse_spec(
            self.available_passes, self.args.passes, callback
        )

    def output_resulting_program(self, prog: ModuleOp) -> str:
        if self.args.target != "mlir":
            return super().output_resulting_program(prog)
        output = StringIO()
        write_module(
            prog,
            output,
            self.weights,
            not self.args.elide_weights,
            print_generic=self.args.print_op_generic,
        )
        return output.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `synapc-opt`; bad input is one message on stderr and exit 1."""
    tool = None
    try:
        tool = SynapOptMain(args=argv)
        tool.run()
    except (DiagnosticException, ParseError, ResourceError) as error:
        where = f"{tool.get_input_name()}: " if tool is not None else ""
        print(f"synapc-opt: {where}{error}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as error:
        print(f"synapc-opt: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
