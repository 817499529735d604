"""Calibration and evaluation images for `benchmarks/ptq.py`: crops of real photos (see
`benchmarks/get_photos.py`), calibration and evaluation cut from DIFFERENT photos so
that no evaluation pixel was seen during calibration.

Each photo gives several crops: a random box (35-100 % of the shorter side, the model
input's aspect ratio), resized bilinearly to the input's size and turned by a random
multiple of 90 degrees (the orientation classifier's four classes all occur). The
crops are seeded: every run and every tool sees the same pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

#: Photos the calibration crops come from.
CALIBRATION_PHOTOS = ("astronaut.png", "chelsea.png", "rocket.jpg", "text.png")
#: Photos the evaluation crops come from (none of them calibrates).
EVALUATION_PHOTOS = (
    "coffee.png",
    "camera.png",
    "hubble_deep_field.jpg",
    "retina.jpg",
    "brick.png",
    "gravel.png",
    "grass.png",
    "clock_motion.png",
)


def _crops(
    photo: Image.Image, count: int, size: tuple[int, int], rng: np.random.Generator
) -> list[np.ndarray]:
    """`count` random crops of `photo` as ``(H, W, 3)`` uint8 arrays of `size` (H, W)."""
    height, width = size
    out = []
    for _ in range(count):
        side = rng.uniform(0.35, 1.0) * min(photo.width, photo.height)
        box_w = min(photo.width, side * max(1.0, width / height))
        box_h = min(photo.height, side * max(1.0, height / width))
        left = rng.uniform(0, photo.width - box_w)
        top = rng.uniform(0, photo.height - box_h)
        turns = int(rng.integers(4))
        # a quarter turn swaps the sides: resize to the turned size first
        target = (width, height) if turns % 2 == 0 else (height, width)
        crop = photo.resize(
            target, Image.Resampling.BILINEAR, box=(left, top, left + box_w, top + box_h)
        )
        out.append(np.rot90(np.asarray(crop), turns))
    return out


def photo_crops(
    folder: Path, names: Sequence[str], per_photo: int, size: tuple[int, int], seed: int
) -> np.ndarray:
    """``(len(names) * per_photo, H, W, 3)`` uint8 crops of the photos `names` in
    `folder`; a missing photo is an error naming `benchmarks/get_photos.py`."""
    rng = np.random.default_rng(seed)
    crops: list[np.ndarray] = []
    for name in names:
        path = folder / name
        if not path.is_file():
            raise SystemExit(
                f"photo {path} missing: python benchmarks/get_photos.py --to {folder}"
            )
        with Image.open(path) as photo:
            crops += _crops(photo.convert("RGB"), per_photo, size, rng)
    return np.stack(crops)
