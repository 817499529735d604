"""``synapc support``: where each layer of a model runs on a target's NPU (engine), or
why it cannot and falls back to the CPU, as one table per model."""

from __future__ import annotations

import argparse
from collections import Counter

from xdsl.dialects.func import FuncOp

from synapc.backends.targets import Target, get_target
from synapc.backends.targets.support import layer_support, type_class
from synapc.convert.convert import converted_model
from synapc.convert.executable import layer_ops
from synapc.convert.model_info import shorten, source_layers, text_table

#: What the engine column says of a layer the NPU cannot run.
CPU_FALLBACK = "CPU"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command line of ``synapc support``."""
    parser.add_argument("model", help="model file (.tflite, .onnx, .pt...)")
    parser.add_argument(
        "--target", required=True, help="VS680 (alias VS680A0, DOLPHIN), VS640 or GENERIC"
    )
    parser.add_argument(
        "--meta",
        help="conversion metafile: the model is read (and quantized) as convert would",
    )


def _types(op) -> str:
    """The op's data types as the vendor table classes them: input -> output."""
    classes = [
        type_class(v.type.element_type)
        for v in (op.operands[:1] + op.results[:1])
        if hasattr(v.type, "element_type")
    ]
    return "->".join(classes) or "-"


def support_table(func: FuncOp, target: Target) -> str:
    """The per-layer table (layer, op, types, engine or CPU fallback, reason) of the
    compiled function `func` on `target`, with a summary line."""
    rows = []
    engines: Counter[str] = Counter()
    for index, op in enumerate(layer_ops(func)):
        support = layer_support(op, target)
        engine = support.engine or CPU_FALLBACK
        engines[engine] += 1
        names = source_layers(op)
        rows.append(
            (
                index,
                shorten(names[0]) if names else "-",
                op.name.removeprefix("synap."),
                _types(op),
                engine,
                support.reason,
            )
        )
    lines = text_table(("#", "layer", "op", "types", "engine", "reason"), rows)
    counts = ", ".join(
        f"{engines[e]} on {e}" for e in ("NN", "TP", "PPU", CPU_FALLBACK) if engines[e]
    )
    lines.append("")
    lines.append(f"{target.name}: {len(rows)} layers: {counts or 'none'}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """``synapc support``: print the table."""
    target = get_target(args.target)
    model = converted_model(args.model, args.meta, target.name)
    print(support_table(model.main, target))
    return 0
