"""`synapc`: the command line for people coming from `synap convert`.

`synapc convert --model M [--meta X.yaml] --target VS680 --out-dir D` writes
`D/model.synap`, `D/model_info.txt` and `D/cache/` with the vendor's flags;
`synapc benchmark --model D/model.synap` times it like TFLite's `benchmark_model`;
`synapc import MODEL -o OUT.mlir` writes a model's synap IR (with its weights as an MLIR
resource section, or handles only with --no-weights) for `synapc-opt`; `synapc opt ...`
is `synapc-opt ...`. Bad input is one line on stderr and a non-zero exit; Ctrl-C is the
line `interrupted` and exit code 130, and leaves no half-written file.
"""

from __future__ import annotations

import _thread
import argparse
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from importlib import import_module
from importlib.metadata import version
from pathlib import Path
from typing import IO

import synapc

#: The exit code of a command ended by Ctrl-C: 128 + SIGINT, as shells report it.
INTERRUPTED = 128 + signal.SIGINT


def run_interruptible(work: Callable[[], int], exit_now: bool) -> int:
    """Run the command `work` and return its exit code; Ctrl-C (KeyboardInterrupt) ends
    it with the one line ``interrupted`` on stderr and `INTERRUPTED`, no traceback.

    `exit_now` is for a process that is the command (the console scripts): there, an
    interrupted command ends the process at once (`os._exit`, after flushing stdout and
    stderr) instead of going through the interpreter's shutdown, which would wait for,
    or abort in, threads still running (a JAX export), and a Ctrl-C after the command
    finished is ignored rather than shown as a traceback during the shutdown.
    """
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _redeliver_interrupts(previous_hook)
    try:
        try:
            code = work()
        finally:
            sys.unraisablehook = previous_hook
    except KeyboardInterrupt:
        while True:
            try:
                return _interrupted(exit_now)
            except KeyboardInterrupt:  # pressed again before the report was made
                continue
    if exit_now:
        _ignore_interrupts()
    return code


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) during the block and deliver it when the block ends:
    for work that must not be cut in the middle (a cleanup, a set of renames, the
    initialization of jaxlib's native modules). Outside the main thread (where Python
    handles signals) or under a handler Python did not install, a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is None:
        yield
        return
    received: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            signal.raise_signal(signal.SIGINT)  # to the handler just restored


def import_jax() -> None:
    """Import JAX, and the jaxlib native module a conversion loads later, with Ctrl-C
    held back: a KeyboardInterrupt raised while jaxlib's C++ modules initialize aborts
    the process (std::terminate) or crashes it."""
    with deferred_interrupts():
        import_module("jax")
        with suppress(ImportError):  # jaxlib's layout is not an API
            import_module("jaxlib.mlir.dialects.mhlo")


#: How long after a swallowed Ctrl-C it is delivered again, in seconds.
_REDELIVERY_DELAY = 0.01


def _redeliver_interrupts(
    previous: Callable[[sys.UnraisableHookArgs], object],
) -> Callable[[sys.UnraisableHookArgs], None]:
    """An unraisable hook that delivers a Ctrl-C again: one that arrived while Python
    ran a garbage-collection callback or a finalizer is swallowed there (it would be
    printed as "Exception ignored in ..."). It is raised again shortly after, from
    another thread, so that it lands in the command's code rather than in this hook."""

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            previous(unraisable)
            return
        with suppress(RuntimeError):  # no new threads once the interpreter shuts down
            # a bare thread: threading.Thread.start() would wait here, interruptibly
            _thread.start_new_thread(_interrupt_main_later, ())

    return hook


def _interrupt_main_later() -> None:
    time.sleep(_REDELIVERY_DELAY)
    _thread.interrupt_main()


def _ignore_interrupts() -> None:
    with suppress(ValueError):  # only the main thread sets signal handlers
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _interrupted(exit_now: bool) -> int:
    """Report an interrupted command; with `exit_now`, end the process."""
    if exit_now:
        _ignore_interrupts()  # a second Ctrl-C must not cut the report short
    with suppress(Exception):
        sys.stdout.flush()
    with suppress(Exception):
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
    if exit_now:
        os._exit(INTERRUPTED)
    return INTERRUPTED


@contextmanager
def replacing(target: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """A text stream whose content replaces the file `target` when the block ends, and
    is thrown away if the block fails or is interrupted: it goes to a new file beside
    `target` (0666 less the umask, like any new file), renamed over `target` at the end,
    so `target` is either the old file or the whole new one, and no temporary file is
    left behind. Through a symlink the file it points to is replaced; a target that is
    not a regular file (a FIFO, /dev/stdout) is written in place."""
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "w", encoding="utf-8") as stream:
            yield stream
        return
    path = Path(os.path.realpath(target))
    temporary = os.fspath(path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp"))
    try:
        # "x": a new file, with the mode the umask gives (mkstemp's would be 0600)
        with open(temporary, "x", encoding="utf-8") as stream:
            yield stream
        os.replace(temporary, path)
    except BaseException as error:
        # whenever it came, the temporary file (if any) is ours, unless its name was
        # taken already
        if not (isinstance(error, FileExistsError) and error.filename == temporary):
            with suppress(OSError):
                os.unlink(temporary)
        if isinstance(error, OSError) and error.filename == temporary:
            # report the file the user named, not the temporary one
            raise type(error)(error.errno, error.strerror, os.fspath(target)) from None
        raise


def _import(args: argparse.Namespace) -> int:
    model = synapc.import_model(args.model, _input_shapes(args.input_shape))
    if args.output is None:
        synapc.write_module(model.module, sys.stdout, model.weights, not args.no_weights)
        return 0
    with replacing(args.output) as stream:
        synapc.write_module(model.module, stream, model.weights, not args.no_weights)
    return 0


def _convert(args: argparse.Namespace) -> int:
    import_jax()
    from synapc.convert import convert

    if args.out_format != "synap":
        from synapc.errors import SynapcError

        raise SynapcError(
            f"--out-format {args.out_format}: synapc writes model.synap packages only "
            "(the vendor's .nb NPU binary format is closed)"
        )
    if args.weights is not None:
        from synapc.errors import SynapcError

        raise SynapcError(
            f"--weights {args.weights}: separate weight files (Caffe) are not supported; "
            "pass a .tflite, .onnx or TorchScript model"
        )

    def log(message: str) -> None:
        if args.silent:
            return
        if (
            args.verbose
            or message.startswith("warning:")
            or message.startswith("converted")
        ):
            print(
                message, file=sys.stderr if message.startswith("warning:") else sys.stdout
            )

    convert(
        args.model,
        args.target,
        args.out_dir,
        args.meta,
        profiling=args.profiling,
        preserve=args.preserve,
        log=log,
    )
    return 0


def _benchmark(args: argparse.Namespace) -> int:
    import_jax()
    from synapc.tools.benchmark import run

    return run(args)


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
    """Entry point of `synapc` (`argv` None: the process's arguments, and the process
    is the command); Ctrl-C is ``interrupted`` on stderr and exit code 130."""
    return run_interruptible(lambda: _main(argv), exit_now=argv is None)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["opt"]:
        from synapc.opt import run

        return run(argv[1:])
    parser = argparse.ArgumentParser(
        prog="synapc",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"synapc {synapc.__version__} (xdsl {version('xdsl')})",
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
    conv = commands.add_parser(
        "convert", help="convert a model into a model.synap package (like synap convert)"
    )
    conv.add_argument("--model", required=True, help="model file (.tflite, .onnx, .pt...)")
    conv.add_argument("--weights", help="separate weights file (not supported)")
    conv.add_argument("--meta", help="conversion metafile (YAML)")
    conv.add_argument(
        "--target",
        required=True,
        help="VS680 (alias VS680A0, DOLPHIN), VS640 (VS640A0, PLATYPUS) or GENERIC",
    )
    conv.add_argument("--out-dir", required=True, help="output folder")
    conv.add_argument("--out-format", default="synap", help="synap (default)")
    conv.add_argument(
        "--profiling", action="store_true", help="also export each layer, for profiling"
    )
    conv.add_argument(
        "--preserve", action="store_true", help="keep the IR after each stage"
    )
    talk = conv.add_mutually_exclusive_group()
    talk.add_argument("--verbose", action="store_true", help="print every stage")
    talk.add_argument("--silent", action="store_true", help="print nothing but errors")
    bench = commands.add_parser(
        "benchmark", help="time a model.synap package (like benchmark_model)"
    )
    from synapc.tools.benchmark import add_arguments

    add_arguments(bench)
    args = parser.parse_args(argv)
    from synapc.errors import SynapcError

    try:
        if args.command == "convert":
            return _convert(args)
        if args.command == "benchmark":
            return _benchmark(args)
        return _import(args)
    except SynapcError as error:
        print(f"synapc: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"synapc: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
