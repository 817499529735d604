"""synapc side by side with what a user would switch from: LiteRT (`.tflite`), ONNX
Runtime (`.onnx`), onnxruntime's quantizer and the vendor's published NPU times, for every
real model of the test set (`synapc.testing.real_models`), in one run.

Per model:

1. steady-state inference: synapc's compiled program (float, ``--target``, default
   GENERIC: float32 on this CPU) against LiteRT's default interpreter (XNNPACK) or ONNX
   Runtime's CPU provider, in this process, interleaved (`benchmarks.speed.measure`);
2. first inference: a new process importing synapc, loading the VS680 package
   (`synapc.Network`) and predicting once with an empty JAX cache
   (`benchmarks.speed.first_answer`), against a new process importing LiteRT / ONNX
   Runtime, loading the model and invoking it once (both on zeros);
3. conversion: `synapc.convert` for VS680 in a new process, into a fresh folder, with
   the persistent JAX cache off (the wall clock of the call, the import not included);
4. memory: synapc's planned arena (`benchmarks.memory_plan.measure`: the plan-memory
   pass) against the arena LiteRT really allocates (`tflite_arena`: the address extent
   of its activation tensors after ``allocate_tensors``, reference resolver without
   XNNPACK); ONNX models: n/a;
5. post-training quantization of every model: synapc int8 per-channel min/max against
   onnxruntime's `quantize_static` MinMax per-channel QDQ int8 (`.onnx` models; TFLite
   models are synapc only), SQNR of each output against the float model and PTQ time
   as `benchmarks/ptq.py` defines them. The models `benchmarks/ptq.py` knows
   (`benchmarks.ptq.run_model`) are calibrated and evaluated on disjoint crops of real
   photos (``--photos``, `benchmarks/get_photos.py`; synthetic images when there are
   none, which the report says); the others on synthetic inputs of their own kind
   (`synthetic_quantization`: `load_real_model`'s inputs for 16 calibration and 16
   other evaluation seeds). The table's data column says which; a model a tool cannot
   quantize (or whose quantized model its runtime refuses) has ``error: ...`` there;
6. the NPU cost model: its estimated VS680 time of each real model (the conversion's
   ``model_info.txt``) and its leave-one-model-out error on the models with published
   VS680 times (`benchmarks.cost_model`; the real models have none).

A column that fails for a model says ``error: ...`` in its cell; the run goes on.

    python -m benchmarks.compare [--only NAME ...] [--rounds 5] [--calls 20]
        [--target GENERIC] [--photos photos] [--quick] [--out compare.md] [--chart FILE.svg]

Prints the Markdown report and writes it to --out (default ``compare.md``) and the
chart of the speed ratios (SVG, log scale) to --chart (default: --out's name, ``.svg``).
``--quick`` is a smoke run (one round of few calls, a few PTQ crops and seeds, no
cost-model fit).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np

import synapc
from benchmarks import cost_model, memory_plan, ptq, speed
from benchmarks.get_photos import PHOTOS, find_photo
from benchmarks.ptq_onnx_tools import ort_quantize_feeds
from synapc.model import Model
from synapc.testing.models import TFLITE_DYNAMIC_MODELS, model_path
from synapc.testing.onnx_quantization import fixed_shapes_model
from synapc.testing.real_models import REAL_MODELS, load_real_model

#: A new process converting a model for VS680: argv = model, output folder, metafile
#: (or ""); prints the seconds of the `synapc.convert` call and what it wrote.
CONVERT_CHILD = """
import json, sys, time
import synapc
start = time.perf_counter()
done = synapc.convert(sys.argv[1], "VS680", sys.argv[2], sys.argv[3] or None)
print(json.dumps({"seconds": time.perf_counter() - start, "package": str(done.package),
                  "model_info": str(done.model_info), "cached": done.cached}))
"""

#: A new process's first answer from LiteRT (default interpreter: XNNPACK) or ONNX
#: Runtime (CPU provider): argv = suffix, model, threads, JSON [[shape, dtype], ...] of
#: the inputs; zeros in.
REFERENCE_CHILD = """
import json, sys, time
start = time.perf_counter()
import numpy as np
suffix, path, threads, specs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
specs = json.loads(specs)
if suffix == ".tflite":
    from ai_edge_litert.interpreter import Interpreter
    imported = time.perf_counter()
    interpreter = Interpreter(model_path=path, num_threads=threads)
    details = interpreter.get_input_details()
    for detail, (shape, _) in zip(details, specs, strict=True):
        if list(detail["shape"]) != shape:
            interpreter.resize_tensor_input(detail["index"], shape, strict=True)
    interpreter.allocate_tensors()
    loaded = time.perf_counter()
    for detail, (shape, dtype) in zip(details, specs, strict=True):
        interpreter.set_tensor(detail["index"], np.zeros(shape, dtype))
    interpreter.invoke()
else:
    import onnxruntime
    imported = time.perf_counter()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(path, options,
                                           providers=["CPUExecutionProvider"])
    loaded = time.perf_counter()
    feeds = {i.name: np.zeros(shape, dtype)
             for i, (shape, dtype) in zip(session.get_inputs(), specs, strict=True)}
    session.run(None, feeds)
first = time.perf_counter()
print(json.dumps({"import": imported - start, "load": loaded - imported,
                  "first": first - imported}))
"""

#: The repository (the working folder of the child processes that import benchmarks).
REPO = Path(__file__).resolve().parents[1]
#: A new process running `probe_tflite` on argv.
PROBE_CHILD = (
    "import sys\nfrom benchmarks.compare import probe_tflite\nprobe_tflite(*sys.argv[1:])"
)

#: synapc's PTQ configuration and onnxruntime's, like with like: int8 weights per
#: channel, int8 activations per tensor, ranges from the calibration minimum / maximum.
SYNAPC_PTQ = ("int8", "perchannel_symmetric_affine", "standard", ptq.SCHEMES["int8-pc"][2])
ORT_PTQ = ("MinMax", True)
#: Calibration and evaluation samples of a model benchmarks/ptq.py does not know: inputs
#: of `load_real_model` for as many seeds each (`synthetic_plan`).
SYNTHETIC_SAMPLES = 16
#: The PTQ table's data column: real photos (benchmarks/ptq.py's models), synthetic
#: stand-ins for them (no photos found), `load_real_model`'s seeded inputs (the others).
PHOTOS_DATA, SYNTHETIC_PHOTOS_DATA = "photos", "synthetic images (no photos found)"
SYNTHETIC_DATA = "synthetic (load_real_model seeds)"
#: A float output whose root mean square on the evaluation inputs is below this is
#: noted as ~0 there (its SQNR then weighs a few values against almost no signal).
NEAR_ZERO = 1e-3

#: TFLite builtin operator codes whose output TFLite computes once, at prepare, into
#: memory outside its activation arena: DEQUANTIZE / DENSIFY of weights (float16 and
#: sparse weights) and SHAPE (the shape of a tensor whose shape is known by then);
#: synapc folds all three into constants.
_DEQUANTIZE, _DENSIFY, _SHAPE = 6, 124, 77


def error_cell(error: BaseException) -> str:
    """An exception as a one-line Markdown table cell: ``error: Type: message``
    (for a failed child process, the last exception line of its standard error)."""
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, subprocess.CalledProcessError):  # the child's exception
        lines = (error.stderr or "").strip().splitlines()
        raised = [line for line in lines if re.match(r"\w+(Error|Exception): ", line)]
        text = (raised or lines or [f"child process: exit status {error.returncode}"])[-1]
    return f"error: {' '.join(text.split()).replace('|', '/')[:150]}"


def guarded(what: str, make: Callable[[], Any]) -> Any:
    """`make()`, or its error as `error_cell` text (a failing column for one model is
    reported in its cell, not fatal); the error also goes to standard error."""
    try:
        return make()
    except (Exception, SystemExit) as error:  # a photo_crops SystemExit included
        cell = error_cell(error)
        print(f"  {what}: {cell}", file=sys.stderr, flush=True)
        return cell


def ratio_cell(value: float | None) -> str:
    """A synapc / reference ratio as ``0.53x`` (``-`` when there is none)."""
    return "-" if value is None else f"{value:.2f}x"


@dataclass
class ModelResult:
    """Everything measured for one model: the numbers of each column, or the error
    text of the column that failed."""

    name: str
    suffix: str
    reference: str
    steady: tuple[float, float] | str = "not run"
    first: dict[str, float] | str = "not run"
    convert: dict[str, Any] | str = "not run"
    estimate_ms: float | str = "not run"
    memory: dict[str, float | str] = field(default_factory=dict)
    ptq: list[ptq.Row] | str = "not run"
    ptq_data: str = "-"

    @property
    def steady_ratio(self) -> float | None:
        """synapc's steady-state median over the reference's, or None."""
        if isinstance(self.steady, str):
            return None
        return self.steady[0] / self.steady[1]

    @property
    def first_ratio(self) -> float | None:
        """synapc's import + load + first predict over the reference's, or None."""
        if isinstance(self.first, str):
            return None
        return self.first["synapc"] / self.first["reference"]


# -- 1. steady state -----------------------------------------------------------------------


def steady_state(
    results: dict[str, ModelResult], target: str, rounds: int, calls: int
) -> None:
    """Medians of synapc's and the reference's per-call times (ms) of every model, all
    models interleaved in one process (`speed.float_rows` on `target`, `speed.measure`)."""
    rows: list[speed.Row] = []
    for name, result in results.items():
        print(f"steady state: loading {name}", file=sys.stderr, flush=True)
        made = guarded(name, lambda name=name: speed.float_rows(name, (target,)))
        if isinstance(made, str):
            result.steady = made
        else:
            rows += made
    print(f"steady state: {rounds} rounds of {calls} calls", file=sys.stderr, flush=True)
    speed.measure(rows, rounds, calls)
    for row in rows:
        result = results[row.model]
        if row.error:
            result.steady = f"error: {row.error.replace('|', '/')}"
            continue
        ours = statistics.median(row.synapc_times) * 1e3
        theirs = statistics.median(row.other_times) * 1e3
        result.steady = (ours, theirs)


# -- 2, 3, 6. conversion, first inference, the cost model's estimate -----------------------


def convert_in_child(name: str, work: Path) -> dict[str, Any]:
    """`synapc.convert` of real model `name` for VS680 into a fresh folder under
    `work`, in a new process with the persistent JAX cache off: seconds of the call,
    the package and model_info.txt paths."""
    meta = speed.real_model_metafile(name, work)
    env = dict(os.environ, SYNAPC_JAX_CACHE_MAX_BYTES="0")
    command = [sys.executable, "-c", CONVERT_CHILD, str(model_path(name)),
               str(work / "out"), "" if meta is None else str(meta)]  # fmt: skip
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    if answer["cached"]:
        raise RuntimeError("the conversion was served from a cache")
    return answer


def input_specs(name: str) -> list[tuple[list[int], str]]:
    """(shape, dtype) of each input of real model `name`, as the tests give them."""
    _, inputs = load_real_model(name)
    return [(list(x.shape), x.dtype.str) for x in inputs]


def reference_first(name: str) -> dict[str, float]:
    """A new process's import, load and first invoke of real model `name` in LiteRT
    (XNNPACK) or ONNX Runtime (seconds)."""
    path = model_path(name)
    command = [sys.executable, "-c", REFERENCE_CHILD, path.suffix, str(path),
               str(speed.THREADS), json.dumps(input_specs(name))]  # fmt: skip
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def estimated_ms(model_info: Path) -> float:
    """The latency model's estimated time (ms) that the conversion's model_info.txt
    states (``Subgraphs (estimated X ms on VS680``)."""
    found = re.search(r"estimated ([0-9.]+) ms on VS680", model_info.read_text())
    if found is None:
        raise ValueError(f"{model_info.name} states no estimated VS680 time")
    return float(found.group(1))


def first_inference(result: ModelResult, folder: Path) -> None:
    """Convert `result`'s model for VS680 in a new process, then time the first answer
    of synapc's package and of the reference, each in a new process (cold)."""
    work = folder / result.name
    work.mkdir()
    converted = guarded(
        f"{result.name} convert", lambda: convert_in_child(result.name, work)
    )
    result.convert = converted
    if isinstance(converted, str):
        result.first = result.estimate_ms = "no package (conversion failed)"
        return
    package = Path(converted["package"])
    result.estimate_ms = guarded(
        f"{result.name} estimate", lambda: estimated_ms(Path(converted["model_info"]))
    )
    ours = guarded(
        f"{result.name} synapc first inference",
        lambda: speed.first_answer(package, work / "cold-cache"),
    )
    theirs = guarded(f"{result.name} reference first", lambda: reference_first(result.name))
    if isinstance(ours, str) or isinstance(theirs, str):
        result.first = ours if isinstance(ours, str) else f"reference {theirs}"
        return
    result.first = {
        "synapc_import": ours["import"],
        "synapc": ours["import"] + ours["first"],
        "reference_import": theirs["import"],
        "reference": theirs["import"] + theirs["first"],
        "package_mb": package.stat().st_size / 1e6,
    }


# -- 4. memory -----------------------------------------------------------------------------


def _weight_derived(path: Path) -> tuple[np.ndarray, np.ndarray, set[int], int]:
    """Of subgraph 0 of the `.tflite` file `path`: which tensors are weights, computed
    from weights only by DEQUANTIZE / DENSIFY or shapes computed by SHAPE (what TFLite
    computes at prepare outside its arena and synapc folds into constants), which are
    variables, the subgraph's inputs and outputs, and how many subgraphs the model
    has."""
    from ai_edge_litert import schema_py_generated as schema

    fb = schema.Model.GetRootAs(path.read_bytes(), 0)
    graph = fb.Subgraphs(0)
    count = graph.TensorsLength()
    weights = np.zeros(count, bool)
    variables = np.zeros(count, bool)
    for i in range(count):
        tensor = graph.Tensors(i)
        buffer = fb.Buffers(tensor.Buffer())
        has_data = buffer is not None and (buffer.DataLength() > 0 or buffer.Size() > 0)
        weights[i] = tensor.Buffer() > 0 and has_data
        variables[i] = tensor.IsVariable()
    for k in range(graph.OperatorsLength()):
        op = graph.Operators(k)
        code = fb.OperatorCodes(op.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        inputs = op.InputsAsNumpy() if op.InputsLength() else np.zeros(0, int)
        inputs = inputs[inputs >= 0]
        folded = builtin in (_DEQUANTIZE, _DENSIFY) and weights[inputs].all()
        if builtin == _SHAPE or (folded and inputs.size):
            weights[op.OutputsAsNumpy()] = True
    io = {*graph.InputsAsNumpy().tolist(), *graph.OutputsAsNumpy().tolist()}
    return weights, variables, io, fb.SubgraphsLength()


def _extent(spans: np.ndarray) -> int:
    """Bytes from the lowest start to the highest end of ``(start, nbytes)`` rows."""
    return int((spans[:, 0] + spans[:, 1]).max() - spans[:, 0].min()) if len(spans) else 0


def _union(spans: np.ndarray) -> int:
    """Bytes covered by the ``(start, nbytes)`` rows (overlapping ones counted once)."""
    if not len(spans):
        return 0
    spans = spans[np.argsort(spans[:, 0])]
    ends = spans[:, 0] + spans[:, 1]
    covered = np.concatenate([[spans[0, 0]], np.maximum.accumulate(ends)[:-1]])
    return int(np.maximum(ends - np.maximum(spans[:, 0], covered), 0).sum())


def _spans(interpreter: Any, indices: Sequence[int]) -> tuple[np.ndarray, list[int], int]:
    """``(index, data address, nbytes)`` rows of the tensors `indices` of `interpreter`
    that have data (empty ones left out), the indices without data yet (dynamic: TFLite
    allocates them at invoke) and how many are 0-d (numpy gives a scalar, no address)."""
    rows, dynamic, scalars = [], [], 0
    for i in indices:
        try:
            view = interpreter.tensor(i)()
        except ValueError:  # "Tensor data is null": allocated at invoke
            dynamic.append(i)
            continue
        if not isinstance(view, np.ndarray):
            scalars += 1
        elif view.nbytes:
            rows.append((i, view.ctypes.data, view.nbytes))
        del view  # no view of the interpreter's buffers may outlive this loop
    return np.array(rows, dtype=np.int64).reshape(-1, 3), dynamic, scalars


def probe_tflite(path: str, shapes: str, inputs: str) -> None:
    """Print, as JSON lines, where LiteRT places `path`'s tensors (run in a child
    process by `tflite_arena`: reading some kernel temporaries crashes LiteRT 2.3.0).

    The interpreter has the builtin kernels and no default delegate (XNNPACK would keep
    the tensors it takes in buffers of its own); its inputs are resized to `shapes`
    (JSON, or ``null``) and `allocate_tensors()` runs. Activation tensors without data
    then are dynamic (TFLite allocates them on the heap at invoke): if there are any,
    the model is invoked once on `inputs` (an ``.npz``; the arena is planned again
    then). First line: ``spans`` (index, address, bytes) of the activation tensors in
    the arena, ``heap`` (the same of the dynamic ones), ``scalars`` (0-d tensors: numpy
    gives no address); then one line per kernel temporary (index, its spans)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    weights, variables, _, _ = _weight_derived(Path(path))
    interpreter = Interpreter(
        model_path=path,
        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    )
    details = interpreter.get_input_details()
    for detail, shape in zip(details, json.loads(shapes) or [], strict=False):
        interpreter.resize_tensor_input(detail["index"], shape, strict=True)
    interpreter.allocate_tensors()
    activations = np.flatnonzero(~weights & ~variables).tolist()
    spans, dynamic, scalars = _spans(interpreter, activations)
    heap = np.zeros((0, 3), np.int64)
    if dynamic:
        with np.load(inputs) as feeds:
            for k, detail in enumerate(details):
                interpreter.set_tensor(detail["index"], feeds[f"x{k}"])
        interpreter.invoke()
        spans, _, _ = _spans(interpreter, [i for i in activations if i not in dynamic])
        heap, _, _ = _spans(interpreter, dynamic)
    line = {"spans": spans.tolist(), "heap": heap.tolist(), "scalars": scalars}
    print(json.dumps(line), flush=True)
    for i in range(len(weights), interpreter._interpreter.NumTensors(0)):
        rows, _, _ = _spans(interpreter, [i])
        print(json.dumps({"temporary": i, "spans": rows.tolist()}), flush=True)


def tflite_arena(
    path: Path,
    shapes: Sequence[Sequence[int]] | None,
    inputs: Sequence[np.ndarray],
    folder: Path,
) -> dict[str, float | str]:
    """The activation memory LiteRT really allocates for `path` (`probe_tflite`, in a
    child process): the address extent (lowest start to highest end) of subgraph 0's
    activation tensors, those without buffer data, not computed at prepare (DEQUANTIZE
    / DENSIFY of weights, SHAPE: `_weight_derived`) and not variables.
    ``intermediates``: without the model's inputs and outputs; ``with_io``: with them;
    both plus the bytes of the intermediates TFLite allocates on the heap at invoke
    (shapes it knows only then). ``scratch``: bytes of the kernels' own temporaries
    (im2col and the like) inside the extent (overlapping ones counted once)."""
    weights, _, io, subgraphs = _weight_derived(path)
    feeds = folder / f"{path.stem}_inputs.npz"
    np.savez(feeds, **{f"x{k}": x for k, x in enumerate(inputs)})
    command = [sys.executable, "-c", PROBE_CHILD, str(path),
               json.dumps(None if shapes is None else [list(s) for s in shapes]),
               str(feeds)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    if not lines or "spans" not in lines[0] or not lines[0]["spans"]:
        raise subprocess.CalledProcessError(done.returncode, command, "", done.stderr)
    first, temporaries = lines[0], lines[1:]
    spans = np.array(first["spans"], np.int64).reshape(-1, 3)
    heap = int(np.array(first["heap"], np.int64).reshape(-1, 3)[:, 2].sum())
    temps = np.array([r for t in temporaries for r in t["spans"]], np.int64).reshape(-1, 3)
    low, high = spans[:, 1].min(), (spans[:, 1] + spans[:, 2]).max()
    inside = temps[(temps[:, 1] >= low) & (temps[:, 1] < high)]
    notes = []
    if done.returncode != 0:
        crashed = temporaries[-1]["temporary"] + 1 if temporaries else len(weights)
        notes.append(
            f"LiteRT crashed (exit {done.returncode}) reading kernel temporary tensor "
            f"{crashed}: the scratch figure leaves it and those after it out"
        )
    # one arena: its extent cannot exceed every tensor in it end to end, aligned
    scratch = _union(inside[:, 1:])
    bound = spans[:, 2].sum() + scratch + 64 * (len(spans) + len(inside) + 64)
    if high - low > bound:
        raise RuntimeError(
            f"activation tensors span {(high - low) / 1024:.0f} KiB > {bound / 1024:.0f} "
            f"KiB of tensors: not one arena{'; ' + notes[0] if notes else ''}"
        )
    middle = spans[~np.isin(spans[:, 0], sorted(io))]
    if heap:
        notes.append(
            f"{len(first['heap'])} tensors allocated at invoke on the heap, outside the "
            f"arena: {heap / 1024:.1f} KiB, added to both figures"
        )
    if first["scalars"]:
        notes.append(f"{first['scalars']} 0-d tensors (no address) left out")
    if subgraphs > 1:
        notes.append(f"subgraph 0 of {subgraphs}")
    return {
        "intermediates": float(_extent(middle[:, 1:]) + heap),
        "with_io": float(high - low + heap),
        "scratch": float(scratch),
        "note": "; ".join(notes),
    }


def _io_bytes(name: str) -> int:
    """Bytes of real model `name`'s inputs and outputs (float32 as the model has them:
    what synapc's GENERIC plan places apart from its arena)."""
    model, inputs = load_real_model(name)
    outputs = sum(math.prod(o.shape) * o.dtype.itemsize for o in model.outputs)
    return sum(x.nbytes for x in inputs) + outputs


def memory(result: ModelResult, folder: Path) -> None:
    """synapc's planned arena on VS680 and GENERIC (`memory_plan.measure`) and, for a
    `.tflite` model, LiteRT's measured arena (`tflite_arena`; its input file in
    `folder`)."""
    name = result.name
    figures: dict[str, float | str] = {}
    for target in ("VS680", "GENERIC"):
        planned = guarded(
            f"{name} plan {target}", lambda t=target: memory_plan.measure(name, t)["arena"]
        )
        figures[target] = planned
    figures["io"] = guarded(f"{name} I/O bytes", lambda: float(_io_bytes(name)))
    if result.suffix == ".tflite":
        shapes = TFLITE_DYNAMIC_MODELS[name][2] if name in TFLITE_DYNAMIC_MODELS else None
        arena = guarded(
            f"{name} TFLite arena",
            lambda: tflite_arena(
                model_path(name), shapes, load_real_model(name)[1], folder
            ),
        )
        if isinstance(arena, str):
            figures["tflite"] = arena
        else:
            figures.update({f"tflite_{k}": v for k, v in arena.items()})
    else:
        figures["tflite"] = "n/a (no TFLite arena)"
    result.memory = figures


# -- 5. post-training quantization ---------------------------------------------------------


def synthetic_photos(folder: Path) -> None:
    """Deterministic stand-ins for every photo of `benchmarks/get_photos.py`: smooth
    random colour fields (bilinear up-sampling of 6x6 random colours) with fine noise,
    384x512, each seeded by its place among the sorted names."""
    from PIL import Image

    for k, name in enumerate(sorted(PHOTOS)):
        rng = np.random.default_rng(1000 + k)
        coarse = Image.fromarray(rng.integers(0, 256, (6, 6, 3), dtype=np.uint8))
        smooth = np.asarray(coarse.resize((512, 384), Image.Resampling.BILINEAR), float)
        noisy = np.clip(smooth + rng.normal(0, 12, smooth.shape), 0, 255).astype(np.uint8)
        # PNG data under every name (a few are .jpg): Pillow reads the content's format
        Image.fromarray(noisy).save(folder / name, format="PNG")


def calibration_photos(given: Path, folder: Path) -> tuple[Path, str, str]:
    """The photo folder PTQ calibrates and evaluates on, a sentence saying where its
    photos came from and their kind for the PTQ table's data column (`PHOTOS_DATA`,
    `SYNTHETIC_PHOTOS_DATA`): `given` (get_photos.py's folder) if it holds them all, else
    those of the installed scikit-image (`get_photos.find_photo`) copied into `folder`,
    else synthetic images (`synthetic_photos`) written there."""
    missing = [n for n in PHOTOS if not (given / n).is_file()]
    if not missing:
        return given, f"real photos from {given} (scikit-image sample data)", PHOTOS_DATA
    print(f"--photos {given} lacks {', '.join(missing)}", file=sys.stderr)
    found = {name: find_photo(name, None) for name in PHOTOS}
    if all(data is not None for data in found.values()):
        for name, data in found.items():
            (folder / name).write_bytes(data)  # type: ignore[arg-type]
        source = "real photos from the installed scikit-image's sample data"
        return folder, source, PHOTOS_DATA
    synthetic_photos(folder)
    source = (
        "**SYNTHETIC** images (seeded smooth random colour fields with noise): no photos "
        "were found (give --photos DIR, see benchmarks/get_photos.py), so these SQNR "
        "figures do not describe real inputs"
    )
    return folder, source, SYNTHETIC_PHOTOS_DATA


def ptq_plan(quick: bool) -> ptq.Plan:
    """`SYNAPC_PTQ` against `ORT_PTQ` on benchmarks/ptq.py's full run's 32 calibration
    and 64 evaluation crops (4 and 4 with `quick`) spread over each model's photos."""
    full = ptq.full_plan()
    calibration, evaluation = (4, 4) if quick else (full.calibration_images,
                                                    full.evaluation_images)  # fmt: skip
    return ptq.Plan(None, None, calibration, evaluation, (SYNAPC_PTQ,), (ORT_PTQ,),
                    nncf=False, mixed_precision=False)  # fmt: skip


@dataclass(frozen=True)
class SyntheticPlan:
    """The `load_real_model` seeds a model benchmarks/ptq.py does not know is
    calibrated on and evaluated on (disjoint sets)."""

    calibration: tuple[int, ...]
    evaluation: tuple[int, ...]


def synthetic_plan(quick: bool) -> SyntheticPlan:
    """`SYNTHETIC_SAMPLES` calibration seeds from 1000 and as many evaluation seeds from
    2000 (4 and 4 with `quick`): disjoint, and neither is the tests' seed 0."""
    count = 4 if quick else SYNTHETIC_SAMPLES
    return SyntheticPlan(tuple(range(1000, 1000 + count)), tuple(range(2000, 2000 + count)))


def synthetic_samples(
    name: str, seeds: Sequence[int]
) -> tuple[Model, list[list[np.ndarray]]]:
    """Real model `name` as `load_real_model` imports it and its inputs (in model
    order) for every seed of `seeds`."""
    model, first = load_real_model(name, seeds[0])
    return model, [first, *(load_real_model(name, seed)[1] for seed in seeds[1:])]


def save_samples(samples: Sequence[Sequence[np.ndarray]], folder: Path) -> list[str]:
    """`samples` as ``.npy`` files, one folder per input (``input0/000.npy``, ...):
    the dataset `synapc.quantize` takes, one glob per input (sample k: the k-th file
    of each)."""
    globs = []
    for i in range(len(samples[0])):
        where = folder / f"input{i}"
        where.mkdir(parents=True)
        for k, sample in enumerate(samples):
            np.save(where / f"{k:03d}.npy", sample[i])
        globs.append(str(where / "*.npy"))
    return globs


def synapc_runs(
    model: Model, samples: Sequence[Sequence[np.ndarray]], target: str
) -> list[np.ndarray]:
    """`model` compiled for `target` and run on every sample (its inputs in model
    order; quantized as a quantized input takes them); the outputs as real numbers,
    stacked per output (`ptq.synapc_outputs` for models of any number of inputs)."""
    executable = synapc.compile(model, target)
    runs = []
    for sample in samples:
        inputs = zip(model.inputs, sample, strict=True)
        raw = executable.run([ptq._device_input(info, x) for info, x in inputs])
        outputs = zip(model.outputs, raw, strict=True)
        runs.append([ptq._real_output(info, np.asarray(y)) for info, y in outputs])
    return [np.stack(outs) for outs in zip(*runs, strict=True)]


def ort_runs(
    path: Path, feeds: Sequence[dict[str, np.ndarray]], outputs: Sequence[str]
) -> list[np.ndarray]:
    """ONNX model `path` run by ONNX Runtime's CPU provider on every feed; the
    `outputs` (by name), stacked per output."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    runs = [session.run(list(outputs), feed) for feed in feeds]
    return [np.stack(outs) for outs in zip(*runs, strict=True)]


def check_quantized(path: Path) -> None:
    """Raise if `quantize_static`'s output `path` has no QuantizeLinear in its main
    graph: it then quantized nothing (it leaves the subgraphs of If / Loop / Scan
    float), and its SQNR would be that of the float model."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    if any(node.op_type == "QuantizeLinear" for node in graph.node):
        return
    control = sorted({n.op_type for n in graph.node if n.op_type in ("If", "Loop", "Scan")})
    why = (
        f": the model's layers are in {'/'.join(control)} subgraphs, which it leaves float"
        if control
        else ""
    )
    raise RuntimeError(f"quantize_static inserted no QuantizeLinear{why}")


def ort_run_error(error: Exception) -> RuntimeError:
    """ONNX Runtime's refusal of a quantized model, shortened for a table cell (its
    error-code prefix, the long node name and the error kind left out: ``Op:
    message``)."""
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", str(error))
    text = re.sub(r"Node \(.*?\) Op \((\w+)\) \[\w+\] ", r"\1: ", text)
    return RuntimeError(f"ONNX Runtime cannot load the quantized model: {text}")


def ort_quantize_error(error: Exception) -> RuntimeError:
    """A failure inside `quantize_static`, said with the onnxruntime function it
    happened in (``module.function``: the innermost frame in onnxruntime's code, not
    counting special methods such as ``__setitem__``)."""
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    inside = [f for f in frames if f"{os.sep}onnxruntime{os.sep}" in f.filename
              and not f.name.startswith("__")]  # fmt: skip
    where = f" in {Path(inside[-1].filename).stem}.{inside[-1].name}" if inside else ""
    return RuntimeError(f"quantize_static failed{where}: {type(error).__name__}: {error}")


def _row(what: str, make: Callable[[], ptq.Row], fallback: ptq.Row) -> ptq.Row:
    """`make()`, or `fallback` with the error (`error_cell`) as its note."""
    made = guarded(what, make)
    if isinstance(made, str):
        fallback.note = made
        return fallback
    return made


def synthetic_quantization(
    name: str, suffix: str, plan: SyntheticPlan, folder: Path
) -> list[ptq.Row]:
    """benchmarks/ptq.py's comparison on a model it does not know, calibrated and
    evaluated on `load_real_model`'s inputs for `plan`'s seeds: synapc `SYNAPC_PTQ`
    run on VS680 and, for an ONNX model, onnxruntime `ORT_PTQ`; SQNR of every output
    against the float model as ptq.py takes it (ONNX Runtime on the pre-processed
    model for `.onnx`, synapc GENERIC for `.tflite`), PTQ time as ptq.py times it."""
    model, calibration = synthetic_samples(name, plan.calibration)
    _, evaluation = synthetic_samples(name, plan.evaluation)
    globs = save_samples(calibration, folder / "calibration")
    names = [i.name for i in model.inputs]
    outputs = [o.name for o in model.outputs]
    fixed = None
    if suffix == ".onnx":
        shapes = {i.name: tuple(i.shape) for i in model.inputs}
        fixed = fixed_shapes_model(model_path(name), shapes, folder / "fixed.onnx")
    start = time.perf_counter()
    synapc.optimize(model)
    float_seconds = time.perf_counter() - start
    evaluation_feeds = [dict(zip(names, s, strict=True)) for s in evaluation]
    reference = (
        synapc_runs(model, evaluation, "GENERIC")
        if fixed is None
        else ort_runs(fixed, evaluation_feeds, outputs)
    )
    data_type, scheme, algorithm, label = SYNAPC_PTQ

    quiet = "; ".join(
        f"float output {o} is ~0 on these inputs (RMS {rms:.1e}, largest magnitude "
        f"{np.abs(r).max():.1e}): its SQNR weighs few values"
        for o, r in zip(outputs, reference, strict=True)
        if (rms := float(np.sqrt(np.mean(np.square(r))))) < NEAR_ZERO
    )

    def scored(row: ptq.Row, outs: Sequence[np.ndarray]) -> ptq.Row:
        row.sqnr = [ptq.sqnr_db(r, o) for r, o in zip(reference, outs, strict=True)]
        row.note = quiet
        return row

    def ours() -> ptq.Row:
        row = ptq.Row(name, "synapc", f"{label}, {algorithm}")
        start = time.perf_counter()
        quantized = synapc.quantize(model, globs, data_type=data_type, scheme=scheme,
                                    algorithm=algorithm)  # fmt: skip
        row.seconds = time.perf_counter() - start - float_seconds
        return scored(row, synapc_runs(quantized, evaluation, "VS680"))

    method, per_channel = ORT_PTQ
    ort_label = f"{method}, {'per-channel' if per_channel else 'per-tensor'}, QDQ int8"

    def theirs() -> ptq.Row:
        assert fixed is not None
        row = ptq.Row(name, "onnxruntime", ort_label)
        out = folder / "ort.onnx"
        calibration_feeds = [dict(zip(names, s, strict=True)) for s in calibration]
        try:
            row.seconds = ort_quantize_feeds(
                fixed, calibration_feeds, method, per_channel, out
            )
        except Exception as error:  # onnxruntime's quantizer fails on this model
            raise ort_quantize_error(error) from error
        check_quantized(out)
        try:
            outs = ort_runs(out, evaluation_feeds, outputs)
        except Exception as error:  # ONNX Runtime refuses what its quantizer wrote
            raise ort_run_error(error) from error
        return scored(row, outs)

    rows = [_row(f"{name} synapc PTQ", ours, ptq.Row(name, "synapc", label))]
    if fixed is not None:
        rows.append(
            _row(f"{name} onnxruntime PTQ", theirs, ptq.Row(name, "onnxruntime", ort_label))
        )
    return rows


@dataclass(frozen=True)
class PtqSetup:
    """What the PTQ column runs: `plan` on benchmarks/ptq.py's models, calibrated on
    the photos in `photos` (`photos_data`: their kind, for the table's data column),
    `synthetic`'s seeds on the other models."""

    plan: ptq.Plan
    synthetic: SyntheticPlan
    photos: Path
    photos_data: str


def quantization(result: ModelResult, setup: PtqSetup, folder: Path) -> None:
    """`ptq.run_model` with `setup`'s plan and photos on `result`'s model if
    benchmarks/ptq.py knows it, else `synthetic_quantization` with its seeds; its rows
    (or the error) and the kind of its calibration data go into `result`."""
    rows: list[ptq.Row] = []
    work = folder / f"ptq_{result.name}"
    work.mkdir()
    if result.name in ptq.MODELS:
        result.ptq_data = setup.photos_data
        done = guarded(
            f"{result.name} PTQ",
            lambda: ptq.run_model(ptq.MODELS[result.name], setup.plan, setup.photos,
                                  work, False, rows.append),
        )  # fmt: skip
    else:
        result.ptq_data = SYNTHETIC_DATA
        done = guarded(
            f"{result.name} PTQ",
            lambda: rows.extend(
                synthetic_quantization(result.name, result.suffix, setup.synthetic, work)
            ),
        )
    result.ptq = done if isinstance(done, str) else rows


def cold_quantization(results: Sequence[ModelResult], setup: PtqSetup, folder: Path) -> str:
    """`quantization` of every model with synapc's persistent JAX cache off (as
    benchmarks/ptq.py turns it off: calibration would otherwise load its compiled
    program from an earlier run's cache); the environment is restored afterwards. Says
    whether the cache was off (it stays on if this process turned it on before)."""
    from synapc.runtime import cache

    saved = os.environ.get(cache.MAX_BYTES_VARIABLE)
    os.environ[cache.MAX_BYTES_VARIABLE] = "0"
    try:
        settings = cache.configure()  # the process's first decision holds
        for result in results:
            print(f"PTQ: {result.name}", file=sys.stderr, flush=True)
            quantization(result, setup, folder)
    finally:
        if saved is None:
            del os.environ[cache.MAX_BYTES_VARIABLE]
        else:
            os.environ[cache.MAX_BYTES_VARIABLE] = saved
    if settings.directory is None:
        return "PTQ times are cold: synapc's persistent JAX cache was off."
    return (
        f"PTQ times may be WARM: synapc's persistent JAX cache ({settings.directory}) was "
        "turned on in this process before the benchmark."
    )


# -- 6. the cost model's error on published times ------------------------------------------


def cost_model_error() -> tuple[list[tuple[str, float, float]], str]:
    """`cost_model.leave_one_out` on VS680 (published ms, predicted ms per calibration
    model) and a sentence with its median and largest absolute percentage error."""
    models = cost_model.build_models()
    published = cost_model.published_ms()
    times = {n: published[("VS680", n)] for n in (*cost_model.MODELS,
                                                  *cost_model.BATCH_MODELS)}  # fmt: skip
    rows = cost_model.leave_one_out(cost_model.npu_features(models, "VS680"), times)
    errors = np.array([abs(guess - ms) / ms for _, ms, guess in rows])
    worst = rows[int(errors.argmax())][0]
    return rows, (
        f"Cost model error on the {len(rows)} models with a published VS680 time "
        "(leave-one-model-out as benchmarks/cost_model.py fits it, its two batch rows "
        "left out as there; uint8 models and NV12 preprocessing, not the float real "
        f"models above): median {100 * np.median(errors):.0f} %, max "
        f"{100 * errors.max():.0f} % ({worst})."
    )


# -- the report ----------------------------------------------------------------------------


def _kib(value: float | str | None) -> str:
    """Bytes as KiB with one decimal, or the error text."""
    if value is None:
        return "-"
    return value if isinstance(value, str) else f"{value / 1024:.1f}"


def _sqnr(row: ptq.Row | None) -> str:
    """A PTQ row's SQNR per output (``a / b``) or its note (a failure as ``error:``)."""
    if row is None:
        return "-"
    if not row.sqnr:
        note = (row.note or "-").replace("|", "/")  # a table cell
        failed = "failed: "  # benchmarks/ptq.py's failed row
        return f"error: {note[len(failed) :]}" if note.startswith(failed) else note
    return " / ".join(f"{s:.1f}" for s in row.sqnr)


def _headline(row: ptq.Row | None) -> str:
    """`_sqnr` for the overview: a failure only as ``error`` (its reason is in the PTQ
    table)."""
    cell = _sqnr(row)
    return "error" if cell.startswith("error: ") else cell


def _short_data(result: ModelResult) -> str:
    """The kind of `result`'s PTQ data in short: ``photos``, ``synthetic images`` (no
    photos found) or ``synthetic`` (`load_real_model`'s inputs)."""
    short = {PHOTOS_DATA: "photos", SYNTHETIC_PHOTOS_DATA: "synthetic images"}
    return short.get(result.ptq_data, "synthetic")


def _ptq_rows(result: ModelResult) -> tuple[ptq.Row | None, ptq.Row | None]:
    """`result`'s synapc and onnxruntime PTQ rows (None where there is none: a TFLite
    model has no onnxruntime row)."""
    if isinstance(result.ptq, str):
        return None, None
    ours = next((r for r in result.ptq if r.tool == "synapc"), None)
    theirs = next((r for r in result.ptq if r.tool == "onnxruntime"), None)
    return ours, None if result.suffix == ".tflite" else theirs


def _arena_ratio(memory: dict[str, float | str]) -> str:
    """synapc's GENERIC arena over TFLite's intermediates, or why there is none."""
    ours, theirs = memory.get("GENERIC"), memory.get("tflite_intermediates")
    if isinstance(ours, float | int) and isinstance(theirs, float | int) and theirs > 0:
        return ratio_cell(ours / theirs)
    reason = memory.get("tflite", ours if isinstance(ours, str) else "-")
    return str(reason)


def _estimate(result: ModelResult) -> str:
    """The cost model's estimate (ms) or why there is none."""
    value = result.estimate_ms
    return value if isinstance(value, str) else f"{value:.2f}"


def overview_table(results: Sequence[ModelResult]) -> str:
    """One row per model with the headline figure of every column."""
    rows = []
    for r in results:
        ours, theirs = _ptq_rows(r)
        ptq_cell = (
            r.ptq
            if isinstance(r.ptq, str)
            else f"{_headline(ours)} vs {_headline(theirs) if theirs else 'n/a'} "
            f"({_short_data(r)})"
        )
        convert = _convert_cell(r)
        estimate = _estimate(r)
        rows.append([
            r.name, r.suffix, r.reference,
            ratio_cell(r.steady_ratio) if r.steady_ratio is not None else str(r.steady),
            ratio_cell(r.first_ratio) if r.first_ratio is not None else str(r.first),
            convert, _arena_ratio(r.memory), ptq_cell, estimate,
        ])  # fmt: skip
    return speed.table(
        ["model", "format", "reference", "steady state synapc / ref",
         "first inference synapc / ref", "synapc convert s", "arena synapc / TFLite",
         "PTQ SQNR dB synapc vs onnxruntime (data)", "est. VS680 ms"], rows,
    )  # fmt: skip


def _convert_cell(result: ModelResult) -> str:
    """The conversion's seconds, or its error."""
    done = result.convert
    return done if isinstance(done, str) else f"{done['seconds']:.1f}"


def steady_table(results: Sequence[ModelResult], target: str) -> str:
    """The steady-state medians and their ratio."""
    rows = []
    for r in results:
        if isinstance(r.steady, str):
            rows.append([r.name, r.reference, "-", "-", r.steady])
            continue
        ours, theirs = r.steady
        rows.append([r.name, r.reference, f"{ours:.2f}", f"{theirs:.2f}",
                     ratio_cell(r.steady_ratio)])  # fmt: skip
    return speed.table(
        ["model", "reference", f"synapc {target} ms", "reference ms", "synapc / ref"], rows
    )


def first_table(results: Sequence[ModelResult]) -> str:
    """Conversion time and the first answer of a new process, synapc and reference."""
    rows = []
    for r in results:
        convert = _convert_cell(r)
        if isinstance(r.first, str):
            rows.append([r.name, convert, "-", "-", "-", r.reference, "-", "-", r.first])
            continue
        f = r.first
        rows.append([
            r.name, convert, f"{f['package_mb']:.1f}", f"{f['synapc_import'] * 1e3:.0f}",
            f"{f['synapc'] * 1e3:.0f}", r.reference, f"{f['reference_import'] * 1e3:.0f}",
            f"{f['reference'] * 1e3:.0f}", ratio_cell(r.first_ratio),
        ])  # fmt: skip
    return speed.table(
        ["model", "synapc convert s", "model.synap MB", "synapc import ms",
         "synapc import + load + 1st predict ms", "reference", "reference import ms",
         "reference import + load + 1st invoke ms", "synapc / ref"], rows,
    )  # fmt: skip


def memory_table(results: Sequence[ModelResult]) -> str:
    """synapc's planned arenas against TFLite's measured one (KiB)."""
    rows = []
    for r in results:
        m = r.memory
        generic = m.get("GENERIC")
        io = m.get("io")
        with_io = (
            generic + io
            if isinstance(generic, float | int) and isinstance(io, float | int)
            else None
        )
        tflite = m.get("tflite")  # why there is no TFLite figure: said once
        other = None if tflite is None else "n/a" if str(tflite).startswith("n/a") else "-"
        rows.append([
            r.name, _kib(m.get("VS680")), _kib(generic),
            _kib(m.get("tflite_intermediates", tflite)),
            _arena_ratio(m) if tflite is None else other, _kib(with_io),
            _kib(m.get("tflite_with_io", other)), _kib(m.get("tflite_scratch", other)),
            str(m.get("tflite_note", "")),
        ])  # fmt: skip
    return speed.table(
        ["model", "synapc arena VS680 (float16) KiB", "synapc arena GENERIC (float32) KiB",
         "TFLite intermediates KiB", "synapc GENERIC / TFLite",
         "synapc GENERIC arena + inputs + outputs KiB", "TFLite incl. inputs, outputs KiB",
         "TFLite kernel scratch inside KiB", "TFLite note"], rows,
    )  # fmt: skip


def ptq_table(results: Sequence[ModelResult]) -> str:
    """synapc's PTQ against onnxruntime's on every model, with the kind of data each
    was calibrated and evaluated on."""
    rows = []
    for r in results:
        if isinstance(r.ptq, str):
            rows.append([r.name, r.ptq_data, r.ptq, "-", "-", "-", "-", "-", "-"])
            continue
        ours, theirs = _ptq_rows(r)

        def seconds(row: ptq.Row | None) -> str:
            if row is None or row.seconds is None:
                return "-"
            return f"{row.seconds:.1f}" if row.seconds >= 1 else f"{row.seconds:.2f}"

        def top1(row: ptq.Row | None) -> str:
            return "-" if row is None or row.top1 is None else f"{row.top1:.0%}"

        other = "n/a (TFLite model)" if r.suffix == ".tflite" else _sqnr(theirs)
        note = ours.note.replace("|", "/") if ours and ours.sqnr else ""
        rows.append([r.name, r.ptq_data, _sqnr(ours), seconds(ours), top1(ours), other,
                     seconds(theirs), top1(theirs), note])  # fmt: skip
    return speed.table(
        ["model", "data", "synapc SQNR dB", "synapc PTQ s", "synapc top-1",
         "onnxruntime SQNR dB", "onnxruntime PTQ s", "onnxruntime top-1", "note"], rows,
    )  # fmt: skip


def legend(
    target: str,
    rounds: int,
    calls: int,
    plan: ptq.Plan,
    synthetic: SyntheticPlan,
    photos: str,
) -> str:
    """What each column means and how it was measured."""
    return f"""\
Legend (ratios are synapc over the reference: below 1.00x synapc is faster / smaller):

- **steady state**: median per-call time in this process, synapc's compiled program
  (`synapc.compile(model, "{target}")`, float) against LiteRT's default interpreter
  (XNNPACK) for `.tflite` and ONNX Runtime's CPU provider for `.onnx`, both with
  {speed.THREADS} threads, on the inputs the tests give each model; rounds: {rounds},
  calls per round: {calls}, every model's synapc and reference calls interleaved round after
  round, after two untimed calls (`benchmarks/speed.py`).
- **first inference**: a new Python process, timed from its first import to the first
  answer: synapc imports numpy, synapc and jax, loads the VS680 package
  (`synapc.Network`) with an empty JAX cache (cold) and predicts once on zeros; the
  reference imports numpy and LiteRT / ONNX Runtime, loads the model and invokes it
  once on zeros. Python's own start-up is in neither.
- **synapc convert s**: wall clock of `synapc.convert(model, "VS680", fresh folder)` in
  a new process (the import not included), the persistent JAX cache off.
- **memory**: synapc's arena is the plan-memory pass's planned DDR arena
  (`benchmarks/memory_plan.py`: intermediates only; inputs, outputs and weights are
  placed apart; alignment 64 B) on VS680 (float tensors in float16 on the NPU) and on
  GENERIC (float32, like TFLite's). TFLite's is measured: LiteRT's interpreter with
  `OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES` (builtin kernels, no XNNPACK),
  `allocate_tensors()`, then the address extent (lowest `tensor(i)().ctypes.data` to
  highest data + nbytes) of subgraph 0's activation tensors: tensors with no buffer
  data that are neither variables nor computed once at prepare outside the arena (the
  DEQUANTIZE / DENSIFY of float16 weights and SHAPE outputs, which synapc folds into
  constants). "intermediates" leaves the model's inputs and outputs out of the extent
  (like synapc's arena; the extent may still hold them if they lie inside); "incl.
  inputs, outputs" takes them in (compared with synapc's arena plus its separately
  placed inputs and outputs). A model whose shapes TFLite knows only at invoke also
  has intermediates on the heap, outside the arena: their bytes are added to both
  figures (TFLite note). TFLite's kernels' scratch tensors (im2col and the like) are
  not taken for the extent's ends but may lie inside it (their bytes inside are
  shown); synapc's plan has no such tensors (XLA keeps its own scratch). The ratio is
  synapc GENERIC over TFLite intermediates. ONNX models: n/a (ONNX Runtime exposes no
  arena to measure).
- **PTQ**: every model. Data "{PHOTOS_DATA}": `benchmarks/ptq.py`'s models, each with its
  own disjoint calibration and evaluation photo sets ({plan.calibration_images}
  calibration and {plan.evaluation_images} evaluation crops; {photos}). Data
  "{SYNTHETIC_DATA}": the other models, calibrated on the inputs
  `synapc.testing.real_models.load_real_model(name, seed)` gives for seeds
  {synthetic.calibration[0]}-{synthetic.calibration[-1]} and evaluated on those of seeds
  {synthetic.evaluation[0]}-{synthetic.evaluation[-1]}: uniform [0, 1) values for the
  image models (no normalisation), for the signal models their test feeds (audio: one
  fixed chirp plus seeded noise, so the samples differ only by the noise; bytes: random
  bytes with padding; recurrent state: seeded small normal values; scalars such as a
  sample rate or a pitch range: fixed). These SQNR figures say how the tools compare on
  the same inputs, not how accurate either is on real data. synapc: `synapc.quantize`
  {SYNAPC_PTQ[3]}, {SYNAPC_PTQ[2]} (min / max) ranges, run on VS680's exact integer
  kernels; onnxruntime: `quantize_static` {ORT_PTQ[0]}, per-channel, QDQ int8 (int8
  activations and weights) of the model with its input shapes fixed and ONNX Runtime's
  quantization pre-processing applied, run by ONNX Runtime. SQNR: each output (in
  model order) against the float model over the evaluation inputs, `10 log10(sum x^2 /
  sum (x - x_q)^2)`, dB (higher is better); the float model: ONNX Runtime on the same
  pre-processed float model for `.onnx`, synapc's float program on GENERIC for
  `.tflite` (as benchmarks/ptq.py). PTQ s: synapc's `quantize` minus its float
  `optimize`, onnxruntime's `quantize_static` call (calibration included). top-1:
  benchmarks/ptq.py's classifier / sequence models only. TFLite models: synapc only.
- **est. VS680 ms**: the NPU cost model's estimate for the converted package
  (`synapc.backends.targets.latency`, the total in the conversion's model_info.txt).
  These models have no published VS680 time, so no error can be stated for them; the
  cost model's error on the models that have one (uint8 networks and preprocessing:
  the float16 layers of these float models are an extrapolation) is stated below the
  latency table.
"""


def chart(results: Sequence[ModelResult], path: Path) -> None:
    """An SVG bar chart of the steady-state and first-inference ratios per model, log
    scale, a line at 1.0 (``rect`` bars of class ``steady`` / ``first`` with the
    model's name in ``data-model``; a failed figure is a text mark of class
    ``missing``)."""
    ratios = [x for r in results for x in (r.steady_ratio, r.first_ratio) if x]
    low = math.floor(math.log10(min([1.0, *ratios])))
    high = math.ceil(math.log10(max([1.0, *ratios])))
    high = max(high, low + 1)
    left, width, row, top = 210, 560, 34, 56
    height = top + row * len(results) + 50

    def x_of(value: float) -> float:
        return left + width * (math.log10(value) - low) / (high - low)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" '
        f'height="{height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{left + width + 90}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="20" font-size="14">synapc time / reference time '
        "(log scale; left of 1.0: synapc faster)</text>",
        f'<rect x="{left}" y="30" width="12" height="10" fill="#4878d0"/>'
        f'<text x="{left + 16}" y="39">steady state</text>',
        f'<rect x="{left + 120}" y="30" width="12" height="10" fill="#ee854a"/>'
        f'<text x="{left + 136}" y="39">first inference (new process)</text>',
    ]
    bottom = top + row * len(results)
    for power in range(low, high + 1):
        x = x_of(10.0**power)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" '
                   'stroke="#ddd"/>')  # fmt: skip
        out.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">'
                   f"{10.0**power:g}</text>")  # fmt: skip
        for minor in (2, 5) if power < high else ():
            x = x_of(minor * 10.0**power)
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" '
                       'stroke="#f0f0f0"/>')  # fmt: skip
    for k, r in enumerate(results):
        y = top + row * k
        out.append(f'<text x="{left - 8}" y="{y + 20}" text-anchor="end">'
                   f"{escape(r.name)}</text>")  # fmt: skip
        for j, (kind, value, colour) in enumerate(
            (("steady", r.steady_ratio, "#4878d0"), ("first", r.first_ratio, "#ee854a"))
        ):
            bar_y = y + 4 + 13 * j
            if value is None:
                out.append(f'<text class="missing" data-model={quoteattr(r.name)} '
                           f'x="{x_of(1.0) + 4:.1f}" y="{bar_y + 10}" fill="#c00">'
                           f"{kind}: error</text>")  # fmt: skip
                continue
            start, end = sorted((x_of(1.0), x_of(value)))
            out.append(
                f'<rect class="{kind}" data-model={quoteattr(r.name)} '
                f'data-ratio="{value:.4g}" x="{start:.1f}" y="{bar_y}" '
                f'width="{max(end - start, 1.0):.1f}" height="11" fill="{colour}"/>'
            )
            # the figure beyond the bar's far end: left of a bar below 1.0
            label_x, anchor = (start - 3, "end") if value < 1 else (end + 3, "start")
            out.append(f'<text x="{label_x:.1f}" y="{bar_y + 10}" font-size="10" '
                       f'text-anchor="{anchor}">{value:.2f}</text>')  # fmt: skip
    one = x_of(1.0)
    out.append(f'<line class="unity" x1="{one:.1f}" y1="{top - 4}" x2="{one:.1f}" '
               f'y2="{bottom}" stroke="black" stroke-width="1.5"/>')  # fmt: skip
    out.append(f'<text x="{left + width / 2}" y="{bottom + 34}" text-anchor="middle">'
               "synapc / reference (1.0 = same time)</text>")  # fmt: skip
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


# -- main ----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every column for every chosen model, print the report and write it and
    the chart."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=REAL_MODELS,
                        help="real models to include (default: all)")  # fmt: skip
    parser.add_argument("--rounds", type=int, help="steady-state rounds (default 5)")
    parser.add_argument("--calls", type=int, help="calls per round (default 20)")
    parser.add_argument("--target", default="GENERIC", choices=("GENERIC", "VS680"),
                        help="synapc's steady-state target")  # fmt: skip
    parser.add_argument("--photos", type=Path, default=Path("photos"),
                        help="get_photos.py's folder (default: photos)")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--out", type=Path, default=Path("compare.md"))
    parser.add_argument("--chart", type=Path, help="the SVG (default: --out as .svg)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 5)
    calls = args.calls or (3 if args.quick else 20)
    chart_path = args.chart or args.out.with_suffix(".svg")
    started = time.perf_counter()
    names = [n for n in REAL_MODELS if not args.only or n in args.only]
    results = {}
    for name in names:
        suffix = model_path(name).suffix
        reference = "LiteRT XNNPACK" if suffix == ".tflite" else "ONNX Runtime"
        results[name] = ModelResult(name, suffix, reference)
    plan = ptq_plan(args.quick)
    synthetic = synthetic_plan(args.quick)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "photos").mkdir()
        photos, photo_source, photos_data = calibration_photos(
            args.photos, folder / "photos"
        )
        setup = PtqSetup(plan, synthetic, photos, photos_data)
        # PTQ first: no program of these models is compiled in this process yet, so its
        # times are as cold as benchmarks/ptq.py's
        cache_note = cold_quantization(list(results.values()), setup, folder)
        steady_state(results, args.target, rounds, calls)
        for result in results.values():
            print(f"first inference / conversion: {result.name}", file=sys.stderr,
                  flush=True)  # fmt: skip
            first_inference(result, folder)
        for result in results.values():
            print(f"memory: {result.name}", file=sys.stderr, flush=True)
            memory(result, folder)
    if args.quick:
        error_line = "Cost model error on published times: not computed with --quick."
        published: list[tuple[str, float, float]] = []
    else:
        print("cost model: leave-one-model-out fit", file=sys.stderr, flush=True)
        fitted = guarded("cost model", cost_model_error)
        published, error_line = (
            ([], f"Cost model: {fitted}") if isinstance(fitted, str) else fitted
        )
    ordered = list(results.values())
    latency_rows = [[r.name, _estimate(r)] for r in ordered]
    published_rows = [
        [n, f"{ms:.2f}", f"{guess:.2f}", f"{100 * abs(guess - ms) / ms:.0f} %"]
        for n, ms, guess in published
    ]
    minutes = (time.perf_counter() - started) / 60
    report = [
        "# synapc compared with LiteRT / ONNX Runtime / onnxruntime's quantizer",
        "",
        f"Machine: {speed.machine()}",
        "",
        f"Run: {len(ordered)} models, {minutes:.1f} min wall time"
        + (" (--quick: smoke-run settings, figures not meaningful)" if args.quick else ""),
        "",
        "## Overview",
        "",
        overview_table(ordered),
        "",
        f"## Steady-state inference (median ms per call, synapc on {args.target})",
        "",
        steady_table(ordered, args.target),
        "",
        "## Conversion and first inference in a new process (VS680 package, cold)",
        "",
        first_table(ordered),
        "",
        "## Memory: activation arena (KiB)",
        "",
        memory_table(ordered),
        "",
        "## Post-training quantization: synapc vs onnxruntime quantize_static",
        "",
        f"Calibration data (column data): benchmarks/ptq.py's models: {photo_source}; "
        f"the other models: `load_real_model`'s synthetic inputs of seeds "
        f"{synthetic.calibration[0]}-{synthetic.calibration[-1]}, evaluated on seeds "
        f"{synthetic.evaluation[0]}-{synthetic.evaluation[-1]}. {cache_note}",
        "",
        ptq_table(ordered),
        "",
        "## NPU latency model (VS680)",
        "",
        speed.table(["model", "estimated VS680 ms (no published time)"], latency_rows),
        "",
        error_line,
    ]
    if published_rows:
        report += [
            "",
            speed.table(
                ["published model", "published ms", "predicted ms (left out)", "error"],
                published_rows,
            ),
        ]
    report += ["", legend(args.target, rounds, calls, plan, synthetic, photo_source)]
    text = "\n".join(report)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    chart(ordered, chart_path)
    print(f"wrote {args.out} and {chart_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
