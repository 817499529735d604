"""`synapc`: the command line for people coming from `synap convert`.

`synapc convert --model M [--meta X.yaml] --target VS680 --out-dir D` writes
`D/model.synap`, `D/model_info.txt` and `D/cache/` with the vendor's flags;
`synapc convert ... --print-pipeline` prints the pass pipeline it runs, which
`synapc-opt -p` replays on the imported IR; `synapc benchmark --model D/model.synap`
times it like TFLite's `benchmark_model`; `synapc report D/model.synap` (or `convert
--report`) writes `D/report.html`, the compiled graph, memory plan, per-layer estimated
times and SQNR on one self-contained page;
`synapc import MODEL -o OUT.mlir` writes a model's synap IR (with its weights as an MLIR
resource section, or handles only with --no-weights) for `synapc-opt`; `synapc opt ...`
is `synapc-opt ...`; `synapc image-to-raw IMAGE --type nv12 --out-dir D` and
`synapc image-from-raw --type nv12 --size H W PLANES... --out IMAGE` convert images to and
from the raw planes of a preprocessed input; `synapc preprocess --type nv12 --size 1080
1920 --to rgb --shape 1 224 224 3 --out-dir D` builds a model that is only that
conversion. Bad input is one line on stderr and a non-zero exit; Ctrl-C is the line
`interrupted` and exit code 130, and leaves no half-written file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import version

import synapc
from synapc.files import replacing
from synapc.interrupts import import_jax, run_interruptible


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
    from synapc.errors import SynapcError

    if args.print_pipeline:
        from synapc.convert.convert import conversion_pipeline

        print(conversion_pipeline(args.model, args.meta, args.target))
        return 0
    if args.out_dir is None:
        raise SynapcError("convert: --out-dir is required (except with --print-pipeline)")
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
            or message.startswith("calibration:")
            or message.startswith("[")  # a step of the conversion (not on a terminal)
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
        progress=not args.silent,
        report=args.report,
    )
    return 0


def _report(args: argparse.Namespace) -> int:
    from synapc.report import write_report

    written = write_report(args.package, args.output)
    if not args.silent:
        print(f"wrote {written}")
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
        help="static shape of a model input with dynamic dimensions (ONNX symbolic, "
        "TFLite -1 in shape_signature; repeatable)",
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
    conv.add_argument("--out-dir", help="output folder (required to convert)")
    conv.add_argument("--out-format", default="synap", help="synap (default)")
    conv.add_argument(
        "--profiling", action="store_true", help="also export each layer, for profiling"
    )
    conv.add_argument(
        "--preserve", action="store_true", help="keep the IR after each stage"
    )
    conv.add_argument(
        "--report",
        action="store_true",
        help="also write report.html: the compiled graph, memory plan, per-layer times "
        "and SQNR on one self-contained page",
    )
    conv.add_argument(
        "--print-pipeline",
        action="store_true",
        help="print the pass pipeline the conversion runs (a synapc-opt -p spec) and "
        "exit without converting",
    )
    talk = conv.add_mutually_exclusive_group()
    talk.add_argument("--verbose", action="store_true", help="print every stage")
    talk.add_argument("--silent", action="store_true", help="print nothing but errors")
    report = commands.add_parser(
        "report", help="write the HTML report of a model.synap package"
    )
    report.add_argument("package", help="model.synap package (written by synapc convert)")
    report.add_argument(
        "-o", "--output", help="report file (default: report.html next to the package)"
    )
    report.add_argument("--silent", action="store_true", help="print nothing but errors")
    bench = commands.add_parser(
        "benchmark", help="time a model.synap package (like benchmark_model)"
    )
    from synapc.tools.benchmark import add_arguments

    add_arguments(bench)
    from synapc.tools import image_files

    image_files.add_to_raw_arguments(
        commands.add_parser(
            "image-to-raw", help="write the raw planes of an image for a preprocess type"
        )
    )
    image_files.add_from_raw_arguments(
        commands.add_parser(
            "image-from-raw", help="write an image from the raw planes of a preprocess type"
        )
    )
    from synapc.tools import preprocess_model

    preprocess_model.add_arguments(
        commands.add_parser(
            "preprocess", help="build a model that is only a preprocessing conversion"
        )
    )
    from synapc.tools import support

    support.add_arguments(
        commands.add_parser(
            "support", help="which NPU engine runs each layer, or why the CPU does"
        )
    )
    args = parser.parse_args(argv)
    from synapc.errors import SynapcError

    try:
        if args.command == "convert":
            return _convert(args)
        if args.command == "benchmark":
            return _benchmark(args)
        if args.command == "report":
            return _report(args)
        if args.command == "image-to-raw":
            return image_files.to_raw(args)
        if args.command == "image-from-raw":
            return image_files.from_raw(args)
        if args.command == "support":
            return support.run(args)
        if args.command == "preprocess":
            import_jax()
            return preprocess_model.run(args)
        return _import(args)
    except SynapcError as error:
        print(f"synapc: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"synapc: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
