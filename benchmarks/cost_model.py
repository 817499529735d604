"""Issue 20's latency-model check: the NPU cost model (`synapc.backends.targets.latency`)
fitted to the vendor's published offline NPU times, with its leave-one-model-out error
per SoC.

Calibration models are built here with the architecture of published rows (weights do
not change latency; the vendor's tables are ``benchmarks/data/published_latency_ms.csv``):

- mobilenet_v1_0.25_224_quant, mobilenet_v2_1.0_224_quant, inception_v4_299_quant:
  `synapc.testing.mobilenet_v2` and `synapc.testing.inception_v4` builders, quantized
  to uint8 on random data (asymmetric affine, as the vendor's ``_quant`` models are);
- convert_nv12@1920x1080_rgb@224x224 / @640x360 / @1920x1080: preprocessing-only models
  (`synapc preprocess`'s pass-through model with an NV12 1920x1080 input).

For each SoC the four constants of `latency.Calibration` are fitted (least squares of
log times, a coarse grid then coordinate refinement); each model is then predicted by
the constants fitted on the others. Prints the table of predicted and published times
and the median absolute percentage error (goal <= 25 %), and the constants fitted on
every model (what `latency.CALIBRATIONS` holds).

    python -m benchmarks.cost_model
"""

from __future__ import annotations

import argparse
import csv
import itertools
import statistics
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
PUBLISHED = REPO / "benchmarks" / "data" / "published_latency_ms.csv"
SOCS = ("VS680", "VS640")
MODELS = (
    "mobilenet_v1_0.25_224_quant",
    "mobilenet_v2_1.0_224_quant",
    "inception_v4_299_quant",
    "convert_nv12@1920x1080_rgb@224x224",
    "convert_nv12@1920x1080_rgb@640x360",
    "convert_nv12@1920x1080_rgb@1920x1080",
)


def published_ms(column: str = "offline_npu_infer") -> dict[tuple[str, str], float]:
    """(soc, model) -> the published time of `column` in ms (the first row of a model
    the tables list twice)."""
    times: dict[tuple[str, str], float] = {}
    with PUBLISHED.open() as f:
        for row in csv.DictReader(f):
            if row[column]:
                times.setdefault((row["soc"], row["model"]), float(row[column]))
    return times


def _quantized_onnx(model) -> object:
    """An ONNX model as synapc compiles it for the NPU: imported, optimized and
    quantized to uint8 on random data."""
    import tempfile

    import onnx

    import synapc

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.onnx"
        onnx.save(model, path)
        imported = synapc.optimize(synapc.import_model(str(path)))
    return synapc.quantize(
        imported, "random", data_type="uint8", scheme="asymmetric_affine"
    )


def _float_onnx(model) -> object:
    """An ONNX model imported and optimized, float."""
    import tempfile

    import onnx

    import synapc

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.onnx"
        onnx.save(model, path)
        return synapc.optimize(synapc.import_model(str(path)))


def _preprocessing(height: int, width: int) -> object:
    """The NV12 1920x1080 -> RGB preprocessing-only model at height x width."""
    import argparse as _argparse

    from synapc.convert.pipeline import run_pipeline
    from synapc.mlir_io import parse_module
    from synapc.model import Model
    from synapc.tools.preprocess_model import model_text, pipeline
    from synapc.weights import WeightStore

    args = _argparse.Namespace(
        type="nv12", size=[1080, 1920], crop=False, color_range="limited",
        color_matrix="bt601", resize="bilinear",
    )  # fmt: skip
    weights = WeightStore()
    text = model_text("rgb", [1, height, width, 3], "nhwc")
    model = Model.from_module(parse_module(text, weights), weights)
    return run_pipeline(model, pipeline(args))


def build_models() -> dict[str, object]:
    """Each calibration model by its published name."""
    from synapc.testing.inception_v4 import build_inception_v4
    from synapc.testing.mobilenet_v2 import build_mobilenet_v1, build_mobilenet_v2

    return {
        "mobilenet_v1_0.25_224_quant": _quantized_onnx(build_mobilenet_v1(0.25, 224)),
        "mobilenet_v2_1.0_224_quant": _quantized_onnx(build_mobilenet_v2(1.0, 224)),
        "inception_v4_299_quant": _quantized_onnx(build_inception_v4()),
        "convert_nv12@1920x1080_rgb@224x224": _preprocessing(224, 224),
        "convert_nv12@1920x1080_rgb@640x360": _preprocessing(360, 640),
        "convert_nv12@1920x1080_rgb@1920x1080": _preprocessing(1080, 1920),
        GPU_MODEL: _float_onnx(build_mobilenet_v2(1.0, 224)),
    }


def features(model, soc: str) -> np.ndarray:
    """Per NPU layer of `model` on `soc`: (engine index NN/TP/PPU, seconds of its
    work at the engine's peak, seconds of its traffic at the full bandwidth)."""
    from synapc.backends.targets import get_target
    from synapc.backends.targets.latency import npu_terms
    from synapc.backends.targets.support import layer_support

    target = get_target(soc)
    rows = []
    for op in model.main.body.block.ops:
        if not op.name.startswith("synap.") or op.name == "synap.constant":
            continue
        engine = layer_support(op, target).engine
        if engine is None:
            raise SystemExit(f"{soc}: {op.name} does not run on the NPU")
        rows.append((ENGINES.index(engine), *npu_terms(op, target, engine)))
    return np.array(rows)


ENGINES = ("NN", "TP", "PPU")
#: The search grid of each constant (`latency.Calibration`'s fields, in order).
GRID = (
    np.geomspace(1e-6, 1e-3, 10),  # overhead_s
    np.geomspace(0.01, 1.0, 9),  # mac_efficiency (of a published peak: at most 1)
    np.geomspace(0.001, 10.0, 13),  # tp_efficiency (of an assumed peak: a scale)
    np.geomspace(0.001, 10.0, 13),  # ppu_efficiency (of an assumed peak: a scale)
    np.geomspace(0.05, 20.0, 11),  # bandwidth_efficiency (of an assumed bandwidth)
)
#: Upper bounds of the constants during refinement (None: unbounded).
BOUNDS = (None, 1.0, None, None, None)


def predicted_ms(feats: np.ndarray, constants: np.ndarray) -> np.ndarray:
    """Milliseconds for each calibration in `constants` (rows of the five
    `latency.Calibration` fields) of a model with `feats`."""
    overhead, nn, tp, ppu, bw = (constants[:, k : k + 1] for k in range(5))
    efficiency = np.where(feats[:, 0] == 0, nn, np.where(feats[:, 0] == 1, tp, ppu))
    per_layer = np.maximum(feats[:, 1] / efficiency, feats[:, 2] / bw)
    return 1000 * (overhead[:, 0] * len(feats) + per_layer.sum(axis=1))


def fit(feats: dict[str, np.ndarray], times: dict[str, float]) -> np.ndarray:
    """The constants minimizing the squared log error over the models `feats`: the
    grid's best, then refined coordinate by coordinate."""
    grid = np.array(list(itertools.product(*GRID)))

    def losses(candidates: np.ndarray) -> np.ndarray:
        return sum(
            (np.log(predicted_ms(f, candidates)) - np.log(times[n])) ** 2
            for n, f in feats.items()
        )

    best = grid[int(np.argmin(losses(grid)))]
    for step in (2.0, 1.41, 1.19, 1.09):
        for _ in range(3):
            trials = np.repeat(best[None], 11, axis=0)
            for k in range(5):
                trials[2 * k + 1, k] *= step
                trials[2 * k + 2, k] /= step
            trials[:, 1] = np.minimum(trials[:, 1], BOUNDS[1])
            best = trials[int(np.argmin(losses(trials)))]
    return best


#: The published CPU rows fitted (quantized models: the TFLite CPU delegate in int8) and
#: the GPU row (a float model: the only buildable one).
CPU_MODELS = (
    "mobilenet_v1_0.25_224_quant",
    "mobilenet_v2_1.0_224_quant",
    "inception_v4_299_quant",
)
GPU_MODEL = "mobilenet_v2_float"


def host_features(model, soc: str, host: str) -> tuple[int, float]:
    """(layers, seconds of all their work at the processor's peak) of `model`."""
    from synapc.backends.targets import get_target
    from synapc.backends.targets.latency import HostCalibration, host_time

    target = get_target(soc)
    ones = HostCalibration(0.0, 1.0, 1.0)
    ops = [o for o in model.main.body.block.ops if o.name.startswith("synap.")]
    ops = [o for o in ops if o.name != "synap.constant"]
    return len(ops), sum(host_time(o, target, host, ones) for o in ops)


def host_fit(rows: list[tuple[int, float, float]]) -> tuple[float, float]:
    """(overhead s, efficiency) minimizing the squared log error of ``layers *
    overhead + work / efficiency`` against the published ms of `rows`."""
    overheads = np.geomspace(1e-6, 1e-3, 61)
    efficiencies = np.geomspace(0.005, 1.0, 81)
    o, e = np.meshgrid(overheads, efficiencies, indexing="ij")
    loss = sum((np.log(1000 * (n * o + w / e)) - np.log(ms)) ** 2 for n, w, ms in rows)
    i, j = np.unravel_index(int(np.argmin(loss)), loss.shape)
    return float(overheads[i]), float(efficiencies[j])


def host_report(models: dict[str, object]) -> None:
    """The CPU's leave-one-model-out table and the host constants of each SoC."""
    cpu_ms, gpu_ms = published_ms("online_cpu"), published_ms("online_gpu")
    print("\n| SoC | CPU model | published ms | predicted ms (left out) | error |")
    print("|---|---|---|---|---|")
    for soc in SOCS:
        rows = {
            n: (*host_features(models[n], soc, "cpu"), cpu_ms[(soc, n)]) for n in CPU_MODELS
        }
        errors = []
        for left_out in CPU_MODELS:
            overhead, eff = host_fit([r for n, r in rows.items() if n != left_out])
            layers, work, ms = rows[left_out]
            guess = 1000 * (layers * overhead + work / eff)
            errors.append(abs(guess - ms) / ms)
            error = f"{100 * errors[-1]:.0f} %"
            print(f"| {soc} | {left_out} | {ms:.2f} | {guess:.2f} | {error} |")
        print(f"| {soc} | median absolute percentage error | | | "
              f"{100 * statistics.median(errors):.0f} % |")  # fmt: skip
        overhead, cpu = host_fit(list(rows.values()))
        layers, work = host_features(models[GPU_MODEL], soc, "gpu")
        gpu_row = gpu_ms[(soc, GPU_MODEL)]
        gpu = work / (gpu_row / 1000 - layers * overhead)
        print(f"{soc}: HostCalibration({overhead:.3g}, {cpu:.3g}, {gpu:.3g}) (GPU from "
              f"{GPU_MODEL}'s {gpu_row} ms alone)")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Build, fit per SoC, print the leave-one-model-out table and the constants."""
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    models = build_models()
    published = published_ms()
    print("| SoC | model | published ms | predicted ms (left out) | error |")
    print("|---|---|---|---|---|")
    fitted = {}
    for soc in SOCS:
        feats = {n: features(models[n], soc) for n in MODELS}
        times = {n: published[(soc, n)] for n in MODELS}
        errors = []
        for left_out in MODELS:
            constants = fit({n: f for n, f in feats.items() if n != left_out}, times)
            guess = float(predicted_ms(feats[left_out], constants[None])[0])
            error = abs(guess - times[left_out]) / times[left_out]
            errors.append(error)
            print(
                f"| {soc} | {left_out} | {times[left_out]:.2f} | {guess:.2f} | "
                f"{100 * error:.0f} % |"
            )
        print(f"| {soc} | median absolute percentage error | | | "
              f"{100 * statistics.median(errors):.0f} % |")  # fmt: skip
        fitted[soc] = fit(feats, times)
    for soc, constants in fitted.items():
        values = ", ".join(f"{v:.3g}" for v in constants)
        print(f"{soc}: fitted on every model: Calibration({values})")
    host_report(models)


if __name__ == "__main__":
    main()
