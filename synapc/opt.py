"""`synapc-opt`: run synap passes on MLIR files, the pass-debugging tool.

Built on xDSL's opt driver: ``-p 'canonicalize,cse'`` pipelines with options in braces,
``--split-input-file``, ``--verify-diagnostics``, ``--print-op-generic``, plus
``--print-ir-after-all`` (MLIR's spelling: the IR after every pass, on stderr) and weight
handling: a `{-# dialect_resources #-}` section in the input is read into a WeightStore
and written back after the passes unless ``--elide-weights`` is given.

The IR is the only thing on stdout: ``--time-passes`` and ``--print-between-passes`` write
to stderr. ``-t`` offers MLIR text only (xDSL's other targets need lower-level dialects).
``-o FILE`` is replaced whole at the end, never left half-written; Ctrl-C is the line
``interrupted`` and exit code 130.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from io import StringIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

import synapc
from synapc.context import make_context
from synapc.errors import SynapcError
from synapc.files import replacing
from synapc.interrupts import run_interruptible
from synapc.mlir_io import MLIRTextError, read_stream, write_module
from synapc.passes.registry import PASSES
from synapc.weights import WeightStore


class TargetError(Exception):
    """A ``-t/--target`` that synapc-opt does not offer (not a ValueError, which
    argparse would turn into a usage message)."""


class SynapOptMain(xDSLOptMain):
    """xDSL's opt driver with synapc's dialects, passes and weight store."""

    version_format = f"synapc-opt {synapc.__version__} (xDSL {{xdsl_version}})"

    def __init__(self, args: Sequence[str] | None = None):
        self.weights = WeightStore()
        self.outputs = ExitStack()
        super().__init__(description="synapc pass driver", args=args)

    def register_all_targets(self) -> None:
        """MLIR text only: xDSL's other targets (LLVM IR, assembly, CSL, WGSL, ...)
        expect lower-level dialects, and fail on or print nothing for synap IR."""
        self.available_targets["mlir"] = lambda: MLIRTarget

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
        for action in arg_parser._actions:  # xDSL's -t/--target: check it when parsed
            if "--target" in action.option_strings:
                action.type = self._target
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

    def _target(self, spec: str) -> str:
        """The ``-t/--target`` value, checked against the targets offered."""
        if parse_spec(spec).name not in self.available_targets:
            raise TargetError(
                f"-t/--target {spec}: not a target for synap IR "
                f"(available: {', '.join(self.available_targets)})"
            )
        return spec

    def setup_pipeline(self) -> None:
        timer = time.perf_counter()

        def callback(
            previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
        ) -> None:
            # diagnostics go to stderr: stdout holds the resulting IR alone
            nonlocal timer
            if self.args.time_passes and previous is not None:
                seconds = time.perf_counter() - timer
                print(f"Pass {previous.name} took {seconds} seconds", file=sys.stderr)
            if not self.args.disable_verify:
                module.verify()
            if previous is not None and self.args.print_ir_after_all:
                sys.stderr.write(f"// -----// IR Dump After {previous.name} //----- //\n")
                Printer(stream=sys.stderr).print_op(module)
                sys.stderr.write("\n\n")
            elif previous and following and self.args.print_between_passes:
                sys.stderr.write(f"IR after {previous.name}:\n")
                Printer(stream=sys.stderr).print_op(module)
                sys.stderr.write("\n\n\n\n")
            timer = time.perf_counter()

        self.pipeline = PassPipeline.parse_spec(
            self.available_passes, self.args.passes, callback
        )

    def run(self) -> None:
        """Run the tool; ``-o FILE`` is replaced only once the run succeeded."""
        with self.outputs:
            super().run()

    def prepare_output(self) -> IO[str]:
        """stdout, or a stream that replaces ``-o FILE`` when `run` succeeds."""
        if self.args.output_file is None:
            return sys.stdout
        return self.outputs.enter_context(replacing(self.args.output_file))

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
    """Entry point of `synapc-opt` (`argv` None: the process's arguments, and the
    process is the command); Ctrl-C is ``interrupted`` on stderr and exit code 130."""
    return run_interruptible(lambda: run(argv), exit_now=argv is None)


def run(argv: Sequence[str] | None = None) -> int:
    """Run `synapc-opt` with the arguments `argv` and return its exit code: bad input
    is one message on stderr and exit 1, a target it does not offer exit 2."""
    tool = None
    try:
        tool = SynapOptMain(args=argv)
        tool.run()
    except TargetError as error:
        print(f"synapc-opt: error: {error}", file=sys.stderr)
        return 2
    except ArgSpecParseError as error:  # a BaseException: -p/-t 'name{' ...
        print(f"synapc-opt: error: {error}", file=sys.stderr)
        return 1
    except MLIRTextError as error:  # names the input itself
        print(f"synapc-opt: {error}", file=sys.stderr)
        return 1
    except (DiagnosticException, ParseError) as error:
        where = f"{tool.get_input_name()}: " if tool is not None else ""
        print(f"synapc-opt: {where}{error}", file=sys.stderr)
        return 1
    except (OSError, ValueError, SynapcError) as error:  # SynapcError: a pass refused
        print(f"synapc-opt: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
