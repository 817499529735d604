"""Inference speed of synapc against the runtimes people would pick instead (issue 22).

Steady state, in one process, interleaved: every model's synapc program and its reference
take turns, round after round (synapc, reference, synapc, ...), and each figure is the
median of all its calls; the ratio is synapc over the reference. The references run with
the same thread count as XLA's CPU client (the machine's cores, 2 on CI):

* float `.tflite` models: LiteRT's default interpreter (XNNPACK);
* float `.onnx` models: ONNX Runtime's CPU provider;
* quantized `.tflite` models (int8 / uint8): LiteRT with XNNPACK's int8 kernels, against
  synapc's exact integers on VS680 (bit-exact with LiteRT's reference kernels, which
  XNNPACK is not);
* quantized `.onnx` models (ONNX Runtime's own quantizer, QDQ, per channel): ONNX
  Runtime, against synapc's exact integers on VS680.

Models: every real model of the test set (`synapc.testing.real_models`), float on
GENERIC and on VS680 (float16); the fully quantized MobileNets of
`synapc.testing.tflite_mobilenet` and the int8 wake-word models of `pymicro_wakeword` on
VS680; the ONNX image models quantized; a 20-op elementwise graph (per-call overhead).

First inference: each float model converted for VS680 (`synapc.convert`), then a new
process that imports synapc and jax and times `synapc.Network` load plus the first
`predict`, with an empty JAX cache (cold) and again with the cache that run filled
(warm); the import time is measured in the same process.

    python -m benchmarks.speed [--rounds 5] [--calls 10] [--only NAME ...] [--out FILE]

Prints the Markdown tables and writes them to --out (default: none).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

import synapc
from synapc.testing.models import (
    ONNX_MODELS,
    ONNX_SIGNAL_MODELS,
    TFLITE_DYNAMIC_MODELS,
    model_path,
)
from synapc.testing.real_models import REAL_MODELS, load_real_model
from synapc.testing.tflite_mobilenet import build_quantized_mobilenet

THREADS = os.cpu_count() or 1

#: The fully quantized MobileNets: name -> build_quantized_mobilenet arguments.
MOBILENETS = {
    "mobilenet_v2_1.0_224_int8": {"version": 2, "width": 1.0, "resolution": 224},
    "mobilenet_v1_0.25_224_uint8": {
        "version": 1,
        "width": 0.25,
        "resolution": 224,
        "dtype": np.uint8,
    },
    "mobilenet_v2_0.35_96_int8": {"version": 2, "width": 0.35, "resolution": 96},
}

Call = Callable[[], Any]


@dataclass
class Row:
    """One model in one configuration: synapc's and the reference's call, their
    per-call times (seconds) and what went wrong, if anything."""

    model: str
    config: str
    reference: str
    synapc: Call | None = None
    other: Call | None = None
    synapc_times: list[float] = field(default_factory=list)
    other_times: list[float] = field(default_factory=list)
    error: str = ""

    def cells(self) -> list[str]:
        if self.error:
            return [self.model, self.config, self.reference, "-", "-", self.error]
        ours = statistics.median(self.synapc_times) * 1e3
        theirs = statistics.median(self.other_times) * 1e3
        return [self.model, self.config, self.reference, f"{ours:.2f}", f"{theirs:.2f}",
                f"{ours / theirs:.2f}x"]  # fmt: skip


# -- the references --------------------------------------------------------------------


def litert_call(path: Path, feeds: Sequence[np.ndarray], shapes=None) -> Call:
    """LiteRT's default interpreter (XNNPACK) on `feeds`, `THREADS` threads."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path), num_threads=THREADS)
    details = interpreter.get_input_details()
    if shapes is not None:
        for detail, shape in zip(details, shapes, strict=True):
            interpreter.resize_tensor_input(detail["index"], list(shape), strict=True)
    interpreter.allocate_tensors()

    def call() -> None:
        for detail, x in zip(details, feeds, strict=True):
            interpreter.set_tensor(detail["index"], x)
        interpreter.invoke()

    return call


def onnxruntime_call(path: Path, feeds: dict[str, np.ndarray]) -> Call:
    """ONNX Runtime's CPU provider on `feeds`, `THREADS` intra-op threads."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = THREADS
    session = onnxruntime.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"]
    )
    return lambda: session.run(None, feeds)


def synapc_call(model: synapc.Model, target: str, inputs: Sequence[np.ndarray]) -> Call:
    """synapc's compiled program (the default pipeline, `Executable.run`)."""
    executable = synapc.compile(model, target)
    return lambda: executable.run(list(inputs))


# -- the rows ----------------------------------------------------------------------------


def _onnx_feeds(name: str, model: synapc.Model, inputs: list[np.ndarray]) -> dict:
    return {info.name: x for info, x in zip(model.inputs, inputs, strict=True)}


def float_rows(name: str, targets: Sequence[str] = ("GENERIC", "VS680")) -> list[Row]:
    """`name` float on each of `targets` against its framework's runtime."""
    path = model_path(name)
    model, inputs = load_real_model(name)
    tflite = path.suffix == ".tflite"
    if tflite:
        shapes = TFLITE_DYNAMIC_MODELS[name][2] if name in TFLITE_DYNAMIC_MODELS else None
        other = litert_call(path, inputs, shapes)
        reference = "LiteRT XNNPACK"
    else:
        other = onnxruntime_call(path, _onnx_feeds(name, model, inputs))
        reference = "ONNX Runtime"
    return [
        Row(name, f"float {target}", reference, synapc_call(model, target, inputs), other)
        for target in targets
    ]


def quantized_tflite_rows(folder: Path) -> list[Row]:
    """The quantized MobileNets and wake-word models, exact on VS680, against XNNPACK."""
    models = {}
    for name, arguments in MOBILENETS.items():
        path = folder / f"{name}.tflite"
        path.write_bytes(build_quantized_mobilenet(**arguments))
        models[name] = path
    spec = importlib.util.find_spec("pymicro_wakeword")
    if spec is not None and spec.submodule_search_locations:
        wake = Path(next(iter(spec.submodule_search_locations))) / "models"
        models.update({f"wakeword_{p.stem}": p for p in sorted(wake.glob("*.tflite"))})
    rows = []
    rng = np.random.default_rng(0)
    for name, path in models.items():
        # a streaming model's state stays inside both runtimes: only its other inputs
        executable = synapc.compile(synapc.import_model(str(path)), "VS680")
        inputs = []
        for info in executable.inputs:
            bounds = np.iinfo(info.dtype)
            inputs.append(rng.integers(bounds.min, bounds.max, info.shape, endpoint=True)
                          .astype(info.dtype))  # fmt: skip
        config = f"{executable.inputs[0].dtype} VS680"
        call = lambda e=executable, x=inputs: e.run(x)  # noqa: E731
        rows.append(
            Row(name, config, "LiteRT XNNPACK int8", call, litert_call(path, inputs))
        )
    return rows


def quantized_onnx_rows(folder: Path) -> list[Row]:
    """The ONNX image models quantized by ONNX Runtime, exact on VS680."""
    from synapc.testing.onnx_models import quantized_model
    from synapc.testing.onnx_quantization import image_like

    rows = []
    for name, (_, _, shape) in ONNX_MODELS.items():
        path = quantized_model(name, "QDQ", True, folder)
        model = synapc.import_model(str(path))
        inputs = [image_like(shape, 7)]
        other = onnxruntime_call(path, _onnx_feeds(name, model, inputs))
        rows.append(Row(f"{name} (QDQ)", "uint8 VS680", "ONNX Runtime",
                        synapc_call(model, "VS680", inputs), other))  # fmt: skip
    return rows


def toy_rows(folder: Path) -> list[Row]:
    """A 20-op elementwise graph on 64 values: what remains is per-call overhead."""
    nodes, x = [], "x"
    for k in range(20):
        op = ("Add", "Mul", "Relu", "Sigmoid")[k % 4]
        inputs = [x, "c"] if op in ("Add", "Mul") else [x]
        nodes.append(helper.make_node(op, inputs, [f"t{k}"]))
        x = f"t{k}"
    graph = helper.make_graph(
        nodes,
        "toy20",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor("c", TensorProto.FLOAT, [], [0.5])],
    )
    path = folder / "toy20.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    model = synapc.import_model(str(path))
    inputs = [np.linspace(-1, 1, 64, dtype=np.float32).reshape(1, 64)]
    other = onnxruntime_call(path, {"x": inputs[0]})
    return [Row("toy_20_ops", "float GENERIC", "ONNX Runtime",
                synapc_call(model, "GENERIC", inputs), other)]  # fmt: skip


def measure(rows: list[Row], rounds: int, calls: int) -> None:
    """Interleaved timing: per round, each row's synapc call then its reference, `calls`
    times each, after two untimed calls of each."""
    for row in rows:
        if row.error:
            continue
        try:
            for _ in range(2):
                row.synapc()
                row.other()
        except Exception as error:  # a runtime's refusal: reported, not fatal
            row.error = f"{type(error).__name__}: {' '.join(str(error).split())[:120]}"
    for _ in range(rounds):
        for row in rows:
            if row.error:
                continue
            for call, times in (
                (row.synapc, row.synapc_times),
                (row.other, row.other_times),
            ):
                for _ in range(calls):
                    start = time.perf_counter()
                    call()
                    times.append(time.perf_counter() - start)


# -- first inference ----------------------------------------------------------------------

CHILD = """
import json, sys, time
start = time.perf_counter()
import numpy as np
import synapc, jax
imported = time.perf_counter()
network = synapc.Network(sys.argv[1])
loaded = time.perf_counter()
for tensor in network.inputs:
    tensor.assign(np.zeros(tensor.shape, tensor.data_type))
network.predict()
first = time.perf_counter()
print(json.dumps({"import": imported - start, "load": loaded - imported,
                  "first": first - imported}))
"""


def _metafile(model: synapc.Model, folder: Path) -> Path:
    lines = ["inputs:"]
    for info in model.inputs:
        lines += [f"  - name: {json.dumps(info.name)}", f"    shape: {list(info.shape)}"]
    path = folder / "meta.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def real_model_metafile(name: str, folder: Path) -> Path | None:
    """A metafile in `folder` giving real model `name` the input shapes the tests give
    it (the models with dynamic dimensions), or None when its file's shapes serve."""
    if name in TFLITE_DYNAMIC_MODELS or name in ONNX_MODELS or name in ONNX_SIGNAL_MODELS:
        return _metafile(load_real_model(name)[0], folder)
    return None


def first_answer(package: Path, cache: Path) -> dict[str, float]:
    """A new process's first answer from `package` with the JAX cache in `cache`
    (seconds): ``import`` (numpy, synapc, jax), ``load`` (`synapc.Network`) and
    ``first`` (load + first `predict` on zeros)."""
    env = dict(os.environ, SYNAPC_JAX_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, "-c", CHILD, str(package)], env=env,
                          check=True, capture_output=True, text=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def first_inference(name: str, folder: Path, path: Path | None = None) -> list[str]:
    """Convert `name` (a real model, or the file `path`) for VS680 and time a new
    process's first answer, cold and warm."""
    work = folder / name
    work.mkdir()
    meta = None
    if path is None:
        path = model_path(name)
        meta = real_model_metafile(name, work)
    package = synapc.convert(path, "VS680", work / "out", meta).package
    cache = work / "cache"
    cold, warm = (first_answer(package, cache) for _ in range(2))
    return [name, f"{package.stat().st_size / 1e6:.1f}", f"{cold['import'] * 1e3:.0f}",
            f"{cold['load'] * 1e3:.0f}", f"{cold['first'] * 1e3:.0f}",
            f"{warm['first'] * 1e3:.0f}"]  # fmt: skip


# -- report --------------------------------------------------------------------------------


def table(header: Sequence[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def machine() -> str:
    """The CPU model and its vector extensions, the thread counts and versions."""
    import jax

    cpu, flags = platform.processor() or "?", ""
    try:
        info = Path("/proc/cpuinfo").read_text()
        cpu = next(line.split(":", 1)[1].strip() for line in info.splitlines()
                   if line.startswith("model name"))  # fmt: skip
        have = set(next(line for line in info.splitlines() if line.startswith("flags"))
                   .split(":", 1)[1].split())  # fmt: skip
        wanted = [
            "avx2",
            "fma",
            "f16c",
            "avx512f",
            "avx512_vnni",
            "avx_vnni",
            "avx512_bf16",
        ]
        flags = " ".join(f for f in wanted if f in have)
    except (OSError, StopIteration):
        pass
    return (f"{cpu}, {os.cpu_count()} CPUs ({flags}); jax/jaxlib {jax.__version__}; "
            f"{THREADS} threads for LiteRT and ONNX Runtime; XLA_FLAGS="
            f"{os.environ.get('XLA_FLAGS', '(none)')}")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Build the rows, time them, time first inferences, print (and write) Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--only", nargs="*", help="real models to include (default all)")
    parser.add_argument("--skip-first-inference", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    names = [n for n in REAL_MODELS if not args.only or n in args.only]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows: list[Row] = toy_rows(folder)
        for name in names:
            try:
                rows += float_rows(name)
            except Exception as error:  # reported in the table
                rows.append(
                    Row(name, "float", "-", error=f"{type(error).__name__}: {error}")
                )
        if not args.only:
            rows += quantized_tflite_rows(folder)
            rows += quantized_onnx_rows(folder)
        measure(rows, args.rounds, args.calls)
        steady = table(["model", "synapc", "reference", "synapc ms", "reference ms",
                        "ratio"], [r.cells() for r in rows])  # fmt: skip
        report = [f"Machine: {machine()}", "", "## Steady state (median per call)", "",
                  steady]  # fmt: skip
        if not args.skip_first_inference:
            first = []
            for name in names:
                try:
                    first.append(first_inference(name, folder))
                except Exception as error:
                    first.append([name, "-", "-", "-", "-", f"{type(error).__name__}"])
            report += ["", "## First inference in a new process, VS680 (ms)", "",
                       table(["model", "model.synap MB", "import synapc, jax",
                              "Network load (cold)", "load + first predict, cold",
                              "load + first predict, warm"], first)]  # fmt: skip
    text = "\n".join(report) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
