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


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


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
    """The ``-p`` spec that inserts the preprocessing and optimizes."""
    options = [
        f"type={_quoted(args.type)}",
        f"crop={'true' if args.crop else 'false'}",
        f"color_range={_quoted(args.color_range)}",
        f"color_matrix={_quoted(args.color_matrix)}",
        f"resize={_quoted(args.resize)}",
        f"bgr={'true' if args.to == 'bgr' else 'false'}",
    ]
    if args.size is not None:
        options.append(f"size={args.size[0]},{args.size[1]}")
    return f"insert-preprocess{{{' '.join(options)}}},optimize"


def build(args: argparse.Namespace) -> Path:
    """Build, compile and write the preprocessing model; the package's path."""
    from importlib.metadata import version

    from synapc.backends.package import build_package
    from synapc.backends.targets import get_target
    from synapc.convert import signature
    from synapc.convert.executable import build_subgraph
    from synapc.convert.pipeline import run_pipeline
    from synapc.mlir_io import parse_module
    from synapc.model import Model
    from synapc.passes.insert_preprocess import package_metadata
    from synapc.weights import WeightStore

    spec = get_target(args.target)
    text = model_text(args.to, list(args.shape), args.layout)
    weights = WeightStore()
    name = _model_name(args)
    model = Model.from_module(parse_module(text, weights, name=name), weights, name)
    converted = run_pipeline(model, pipeline(args))
    inputs = signature.input_specs(converted)
    outputs = signature.output_specs(converted)
    subgraph = build_subgraph(converted, spec, inputs, outputs)
    package = build_package(
        target=spec.name,
        source={
            "model": name,
            "sha256": hashlib.sha256(text.encode()).hexdigest(),
            "synapc": version("synapc"),
        },
        inputs=inputs,
        outputs=outputs,
        output_refs=[(0, j) for j in range(len(outputs))],
        subgraphs=[subgraph],
        metadata=package_metadata(converted.main),
    )
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model.synap"
    temporary = out / ".model.synap.partial"
    temporary.write_bytes(package)
    temporary.replace(path)
    return path


def _model_name(args: argparse.Namespace) -> str:
    """``convert_nv12@1920x1080_rgb@224x224``, as the vendor names these models."""
    size = f"@{args.size[1]}x{args.size[0]}" if args.size else ""
    shape = list(args.shape)
    h, w = (shape[2], shape[3]) if args.layout == "nchw" else (shape[1], shape[2])
    return f"convert_{args.type}{size}_{args.to}@{w}x{h}"


def run(args: argparse.Namespace) -> int:
    """`synapc preprocess`: build the model and say where it is."""
    path = build(args)
    print(f"wrote {path}")
    return 0
