"""The default optimization pipeline (`synapc.optimize`, the `optimize` pass) on real
models and on a generated 1,000-op model.

For each model: op count before / after (constants and the return not counted), fused
layers formed (layers that took over an activation, conv + max pool layers, recognised
activations such as hard-swish), transposes before / after and how many of those are
inside the graph (not reading a model input or feeding a model output), the time
`synapc.optimize` takes, and the error against the reference runtime (LiteRT for TFLite,
ONNX Runtime for ONNX, the stored outputs for ONNX's `light` models) of the model run
without and with the pipeline on GENERIC: max |out - ref| / max(1, max |ref|).
Then the pipeline's time on a generated NCHW-style model of 1,000 ops (target: < 2 s).

Run: python benchmarks/optimize_pipeline.py [--no-light] [--ops 1000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from xdsl.dialects.func import FuncOp, ReturnOp

import synapc
from synapc.backends.targets import get_target
from synapc.compiler import Executable
from synapc.dialects.synap.attributes import Activation
from synapc.dialects.synap.constant import ConstantOp
from synapc.testing.models import ONNX_MODELS, TFLITE_MODELS, model_path
from synapc.testing.pass_check import model_from_text

FUSED_OPS = ("synap.conv2d_pool", "synap.hard_swish", "synap.swish", "synap.gelu",
             "synap.layer_norm")  # fmt: skip


def graph_ops(model: synapc.Model) -> list:
    """The ops of `@main` that compute (no constants, no return)."""
    return [
        op for op in model.main.body.block.ops if not isinstance(op, ConstantOp | ReturnOp)
    ]


def fused_count(model: synapc.Model) -> int:
    """Layers carrying a fused activation, plus fused and recognised ops."""
    count = 0
    for op in graph_ops(model):
        activation = op.props().get("activation") if hasattr(op, "props") else None
        if activation not in (None, Activation.NONE):
            count += 1
        if op.name in FUSED_OPS:
            count += 1
    return count


def transposes(model: synapc.Model) -> tuple[int, int]:
    """(all transposes, transposes inside the graph)."""
    main: FuncOp = model.main
    arguments = set(main.body.block.args)
    returned = set(main.body.block.last_op.operands)
    total = inner = 0
    for op in graph_ops(model):
        if op.name != "synap.transpose":
            continue
        total += 1
        if op.operands[0] not in arguments and op.results[0] not in returned:
            inner += 1
    return total, inner


def error(outputs: list[np.ndarray], reference: list[np.ndarray]) -> float:
    """max |out - ref| / max(1, max |ref|) over the outputs."""
    worst = 0.0
    for out, ref in zip(outputs, reference, strict=True):
        ref = np.asarray(ref, np.float64)
        diff = np.abs(np.asarray(out, np.float64) - ref).max(initial=0.0)
        worst = max(worst, float(diff / max(1.0, float(np.abs(ref).max(initial=0.0)))))
    return worst


def tflite_reference(path: Path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Random inputs in [-1, 1] and LiteRT's outputs for them."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path))
    interpreter.allocate_tensors()
    rng = np.random.default_rng(0)
    inputs = [
        rng.uniform(-1, 1, d["shape"]).astype(d["dtype"])
        for d in interpreter.get_input_details()
    ]
    for d, x in zip(interpreter.get_input_details(), inputs, strict=True):
        interpreter.set_tensor(d["index"], x)
    interpreter.invoke()
    outputs = [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]
    return inputs, outputs


def onnx_reference(path: Path, shape: tuple[int, ...]) -> tuple[list, list]:
    """An image-like input and ONNX Runtime's outputs for it."""
    from synapc.testing.onnx_models import onnxruntime_outputs
    from synapc.testing.onnx_quantization import image_like

    x = image_like(shape, 100)
    return [x], onnxruntime_outputs(path, x)


def row(name: str, load: Callable[[], synapc.Model], inputs: list, reference: list) -> str:
    """One table row for a model."""
    model = load()
    start = time.perf_counter()
    optimized = synapc.optimize(model)
    seconds = time.perf_counter() - start
    generic = get_target("GENERIC")
    before = Executable(model, generic).run(inputs)
    after = Executable(optimized, generic).run(inputs)
    t0, t1 = transposes(model), transposes(optimized)
    return (
        f"{name:<30} {len(graph_ops(model)):>5} {len(graph_ops(optimized)):>5} "
        f"{fused_count(optimized) - fused_count(model):>5} "
        f"{t0[0]:>3}/{t0[1]:<3} {t1[0]:>3}/{t1[1]:<3} {seconds:>6.2f} "
        f"{error(before, reference):>9.1e} {error(after, reference):>9.1e}"
    )


def generated_model(ops: int) -> synapc.Model:
    """An NCHW-style float model of about `ops` ops: blocks of transpose -> conv ->
    transpose -> mul by a per-channel constant -> add a constant -> clamp(0, 6)."""
    c, hw = 8, 8
    nchw, nhwc = f"tensor<1x{c}x{hw}x{hw}xf32>", f"tensor<1x{hw}x{hw}x{c}xf32>"
    lines = [f"func.func @main(%x0: {nchw}) -> {nchw} {{"]
    blocks = ops // 6
    for i in range(blocks):
        x, y = f"%x{i}", f"%x{i + 1}"
        lines += [
            f"  %t{i} = synap.transpose {x} {{perm = array<i64: 0, 2, 3, 1>}} : "
            f"({nchw}) -> {nhwc}",
            f"  %w{i} = synap.constant dense_resource<w{i}> : tensor<{c}x3x3x{c}xf32>",
            f"  %c{i} = synap.conv2d %t{i}, %w{i} {{pad = array<i64: 1, 1, 1, 1>}} : "
            f"({nhwc}, tensor<{c}x3x3x{c}xf32>) -> {nhwc}",
            f"  %u{i} = synap.transpose %c{i} {{perm = array<i64: 0, 3, 1, 2>}} : "
            f"({nhwc}) -> {nchw}",
            f"  %s{i} = synap.constant dense_resource<s{i}> : tensor<1x{c}x1x1xf32>",
            f"  %m{i} = synap.mul %u{i}, %s{i} : ({nchw}, tensor<1x{c}x1x1xf32>) -> {nchw}",
            f"  %b{i} = synap.constant dense_resource<b{i}> : tensor<1x{c}x1x1xf32>",
            f"  %a{i} = synap.add %m{i}, %b{i} : ({nchw}, tensor<1x{c}x1x1xf32>) -> {nchw}",
            f"  {y} = synap.clamp %a{i} {{min = 0.0 : f32, max = 6.0 : f32}} : "
            f"({nchw}) -> {nchw}",
        ]
    lines += [f"  func.return %x{blocks} : {nchw}", "}"]
    model = model_from_text("\n".join(lines))
    for handle, array in model.weights.items():  # keep activations in a sane range
        model.weights[handle] = (array * 0.1).astype(array.dtype)
    return model


def main() -> None:
    """Print the table, then the 1,000-op timing."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-light", action="store_true")
    parser.add_argument("--ops", type=int, default=1000)
    args = parser.parse_args()
    header = (
        f"{'model':<30} {'ops':>5} {'after':>5} {'fused':>5} {'T all/in':>7} "
        f"{'after':>7} {'opt s':>6} {'err before':>9} {'err after':>9}"
    )
    print(header)
    print("-" * len(header))
    for name in sorted(TFLITE_MODELS):
        path = model_path(name)
        inputs, reference = tflite_reference(path)
        print(row(name, lambda p=path: synapc.import_model(p), inputs, reference))
    for name, (_, _, shape) in sorted(ONNX_MODELS.items()):
        path = model_path(name)
        inputs, reference = onnx_reference(path, shape)
        load = lambda p=path, s=shape: synapc.import_model(p, input_shapes=[s])  # noqa: E731
        print(row(name, load, inputs, reference))
    if not args.no_light:
        from synapc.testing.onnx_conformance import model_cases

        for case in model_cases("light"):
            inputs, reference = case.data_sets[0]
            load = lambda p=case.path: synapc.import_model(p)  # noqa: E731
            try:
                print(row(case.name, load, inputs, reference))
            except synapc.SynapcError as failure:
                print(f"{case.name:<30} not imported: {str(failure)[:60]}")
    model = generated_model(args.ops)
    start = time.perf_counter()
    optimized = synapc.optimize(model)
    seconds = time.perf_counter() - start
    print(
        f"\ngenerated model: {len(graph_ops(model))} ops -> {len(graph_ops(optimized))} "
        f"after the default pipeline in {seconds:.2f} s (target < 2 s); transposes "
        f"{transposes(model)[0]} -> {transposes(optimized)[0]}"
    )


if __name__ == "__main__":
    main()
