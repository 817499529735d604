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


def published_ms() -> dict[tuple[str, str], float]:
    """(soc, model) -> the published offline NPU inference time in ms."""
    with PUBLISHED.open() as f:
        return {
            (row["soc"], row["model"]): float(row["offline_npu_infer"])
            for row in csv.DictReader(f)
            if row["offline_npu_infer"]
        }


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


def main(argv: list[str] | None = None) -> None:
    """Build, fit per SoC, print the leave-one-model-out table and the constants."""
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    models = build_models()
    published = published_ms()
    print("| SoC | model | published ms | predicted ms (left out) | error |")
    print("|---|---|---|---|---|")
    fitted = {}
    for soc in SOCS:
        feats = {n: features(m, soc) for n, m in models.items()}
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


if __name__ == "__main__":
    main()
