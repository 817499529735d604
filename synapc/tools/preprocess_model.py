"""`synapc preprocess`: a model that is only a preprocessing conversion, like the vendor's
``convert_nv12@1920x1080_rgb@224x224`` benchmark models.

``synapc preprocess --type nv12 --size 1080 1920 --to rgb --shape 1 224 224 3
[--crop] [--color-range R] [--color-matrix M] [--resize bilinear|nearest] [--layout
nhwc|nchw] [--out-dir D] [--target VS680]`` writes ``D/model.synap``: its inputs are the
planes of `--type` (and with `--crop` the four crop scalars), its output the uint8 image
of `--shape` in the channel order `--to` (rgb, bgr, or gray for a 1-channel shape). The
model is one uint8 tensor passed through, with `insert-preprocess` in front of it, then
`optimize`; so it runs exactly what a converted model's preprocessing runs.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Callable
from pathlib import Path

from synapc.errors import SynapcError

#: The output channel orders `--to` takes.
OUTPUTS = ("rgb", "bgr", "gray")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `synapc preprocess`."""
    parser.add_argument("--type", required=True, help="input type (nv12, yuv420, rgb...)")
    parser.add_argument(
        "--size", type=int, nargs=2, metavar=("H", "W"), help="incoming image size"
    )
    parser.add_argument("--to", default="rgb", help="output channels: rgb, bgr or gray")
    parser.add_argument(
        "--shape", type=int, nargs=4, required=True, metavar="D", help="output shape"
    )
    parser.add_argument("--layout", default="nhwc", help="output layout: nhwc or nchw")
    parser.add_argument("--crop", action="store_true", help="add the crop scalar inputs")
    parser.add_argument("--color-range", default="limited", help="limited or full")
    parser.add_argument("--color-matrix", default="bt601", help="bt601 or bt709")
    parser.add_argument("--resize", default="bilinear", help="bilinear or nearest")
    parser.add_argument("--out-dir", default="out", help="output folder (default: out)")
    parser.add_argument("--target", default="VS680", help="VS680 (default), VS640...")


def model_text(to: str, shape: list[int], layout: str) -> str:
    """The pass-through model whose input the preprocessing replaces."""
    if to not in OUTPUTS:
        raise SynapcError(f"--to {to!r}: expected one of {', '.join(OUTPUTS)}")
    if layout not in ("nhwc", "nchw"):
        raise SynapcError(f"--layout {layout!r}: expected nhwc or nchw")
    if any(d < 1 for d in shape):
        raise SynapcError(f"--shape {' '.join(map(str, shape))}: sizes must be positive")
    tensor = f"tensor<{'x'.join(map(str, shape))}xui8>"
    attrs = f'synap.layout = "{layout}", synap.format = "{to}"'
    return (
        f'func.func @main(%x: {tensor} {{synap.name = "image", {attrs}}}) -> '
        f'({tensor} {{synap.name = "output", {attrs}}}) {{\n'
        f"  func.return %x : {tensor}\n}}\n"
    )


def pipeline(args: argparse.Namespace) -> str:
    """The ``-p`` spec that inserts the preprocessing (`synapc convert`'s step; the
    channel order comes from the model's input format, `--to`) and optimizes."""
    from synapc.convert.pipeline import preprocess_step
    from synapc.metafile.model import PreprocessSpec

    spec = PreprocessSpec(
        type=args.type,
        size=None if args.size is None else (args.size[0], args.size[1]),
        crop=bool(args.crop),
        color_range=args.color_range,
        color_matrix=args.color_matrix,
        resize=args.resize,
    )
    return f"{preprocess_step(0, spec)},optimize"


def build(args: argparse.Namespace, say: Callable[[str], None] | None = None) -> Path:
    """Build, compile and write the preprocessing model into ``--out-dir`` with the
    output-folder protocol of `synapc convert` (`synapc.convert.output`: locked, all or
    nothing, cached by the options); the package's path. Bad options are a
    `SynapcError` before the folder is touched."""
    from importlib.metadata import version

    from synapc.backends.targets import get_target
    from synapc.convert.convert import package_files, write_output
    from synapc.convert.model_info import layer_names
    from synapc.convert.output import PACKAGE, output_state
    from synapc.convert.pipeline import run_pipeline
    from synapc.mlir_io import parse_module
    from synapc.model import Model
    from synapc.weights import WeightStore

    say = say or (lambda message: None)
    out = Path(args.out_dir)
    before = output_state(out)
    spec = get_target(args.target)
    text = model_text(args.to, list(args.shape), args.layout)
    passes = pipeline(args)
    name = _model_name(args)
    fields = {
        # the pass-through model and the pipeline determine the conversion
        "model": hashlib.sha256(f"{text}\n{passes}".encode()).hexdigest(),
        "metafile": passes,
        "target": spec.name,
        "profiling": str(False),
        "synapc": version("synapc"),
    }

    def make() -> dict[str, bytes]:
        weights = WeightStore()
        model = Model.from_module(parse_module(text, weights, name=name), weights, name)
        converted = run_pipeline(model, passes)
        return package_files(
            converted, spec.name, name, fields, layer_names(model.main), {}, False, say
        )

    write_output(out, before, fields, make, say)
    return out / PACKAGE


def _model_name(args: argparse.Namespace) -> str:
    """``convert_nv12@1920x1080_rgb@224x224``, as the vendor names these models."""
    size = f"@{args.size[1]}x{args.size[0]}" if args.size else ""
    shape = list(args.shape)
    h, w = (shape[2], shape[3]) if args.layout == "nchw" else (shape[1], shape[2])
    return f"convert_{args.type}{size}_{args.to}@{w}x{h}"


def run(args: argparse.Namespace) -> int:
    """`synapc preprocess`: build the model and say where it is."""
    path = build(args, _warn)
    print(f"wrote {path}")
    return 0


def _warn(message: str) -> None:
    """Print the output folder's warnings and waits to stderr (not the progress)."""
    if message.startswith(("warning", "waiting", "using the cached")):
        print(message, file=sys.stderr)
