"""Real ONNX models whose inputs are not images -- audio, raw bytes, recurrent state --
through synapc against ONNX Runtime: each input is made by its kind (`make_feeds`), the
model is imported with those static shapes, compiled for a target and compared with ONNX
Runtime on the same feeds (`tests/test_onnx_signal_models.py`)."""

from __future__ import annotations

import numpy as np

import synapc
from synapc.testing.models import ONNX_SIGNAL_MODELS, model_path


def make_feeds(
    feeds: dict[str, tuple[tuple[int, ...], str, float]], seed: int = 0
) -> dict[str, np.ndarray]:
    """The input arrays of `feeds` (input -> (shape, kind, value)), reproducible from
    `seed`. Kinds: ``audio`` (a chirp plus noise in [-1, 1]), ``bytes`` (int32 byte
    values 0..255, the last eighth the padding token 256, as after a short file),
    ``state`` (a recurrent state: small random values), ``value`` (`value` everywhere),
    ``int`` (`value` everywhere, int64: a sample rate)."""
    rng = np.random.default_rng(seed)
    arrays: dict[str, np.ndarray] = {}
    for name, (shape, kind, value) in feeds.items():
        size = int(np.prod(shape, dtype=np.int64))
        if kind == "audio":
            t = np.linspace(0.0, 1.0, size, dtype=np.float64)
            chirp = 0.5 * np.sin(2 * np.pi * (110 * t + 400 * t * t))
            array = (chirp + 0.05 * rng.standard_normal(size)).astype(np.float32)
        elif kind == "bytes":
            array = rng.integers(0, 256, size, dtype=np.int32)
            array[-(size // 8) :] = 256  # the padding token after a short file
        elif kind == "state":
            array = (0.5 * rng.standard_normal(size)).astype(np.float32)
        elif kind == "value":
            array = np.full(size, value, np.float32)
        elif kind == "int":
            array = np.full(size, value, np.int64)
        else:
            raise ValueError(f"input '{name}': unknown feed kind '{kind}'")
        arrays[name] = array.reshape(shape)
    return arrays


def signal_model_error(name: str, target: str = "GENERIC") -> float:
    """max over outputs of max |synapc - onnxruntime| / max(1, max |onnxruntime|) of
    model `name` of `ONNX_SIGNAL_MODELS` on its feeds."""
    import onnxruntime as ort

    path = model_path(name)
    feeds = make_feeds(ONNX_SIGNAL_MODELS[name][2])
    shapes = {k: v.shape for k, v in feeds.items()}
    model = synapc.import_model(path, input_shapes=shapes)
    executable = synapc.compile(model, target)
    by_name = {i.name: i for i in model.inputs}
    ours = executable.run([feeds[n] for n in by_name])
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    theirs = session.run([o.name for o in model.outputs], feeds)
    errors = []
    for out, ref in zip(ours, theirs, strict=True):
        out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
        if out.shape != ref.shape:
            raise AssertionError(f"{name}: output shape {out.shape}, expected {ref.shape}")
        errors.append(float(np.abs(out - ref).max() / max(1.0, float(np.abs(ref).max()))))
    return max(errors)
