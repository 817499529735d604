"""Calibration and evaluation images for `benchmarks/ptq.py`: crops of real photos (see
`benchmarks/get_photos.py`), calibration and evaluation cut from DIFFERENT photos so
that no evaluation pixel was seen during calibration (`check_disjoint`).

Each photo gives several crops: a random box of the model input's aspect ratio (its
shorter side a random fraction of the photo's shorter side, 35-100 % by default; a box
wider or taller than the photo is shrunk, keeping its aspect), resized bilinearly to the
input's size and, unless the model reads text lines, turned by a random multiple of 90
degrees (the orientation classifier's four classes all occur). The crops are seeded:
every run and every tool sees the same pixels.

Photo sets: the default ones (`CALIBRATION_PHOTOS`, `EVALUATION_PHOTOS`) hold mostly
photos without text; the OCR models calibrate on `OCR_CALIBRATION_PHOTOS` (text and
ordinary photos) and are evaluated on `OCR_EVALUATION_PHOTOS` (a scanned page of printed
text), so that their outputs are not ~0 on every evaluation image.
"""

from __future__ import annotations

import math
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
#: The OCR models' calibration photos: text-bearing first (``--quick`` takes the first
#: two), then ordinary photos.
OCR_CALIBRATION_PHOTOS = ("text.png", "bw_text.png", "astronaut.png", "rocket.jpg")
#: The OCR models' evaluation photo: a scanned page of printed text (many crops of it).
OCR_EVALUATION_PHOTOS = ("page.png",)
#: The default crop size: 35-100 % of the photo's shorter side.
DEFAULT_SCALE = (0.35, 1.0)


def check_disjoint(calibration: Sequence[str], evaluation: Sequence[str]) -> None:
    """Raise ValueError if a photo is in both `calibration` and `evaluation` (an
    evaluation pixel seen during calibration would flatter every tool)."""
    shared = sorted(set(calibration) & set(evaluation))
    if shared:
        raise ValueError(f"calibration and evaluation photos overlap: {', '.join(shared)}")


def _crops(
    photo: Image.Image,
    count: int,
    size: tuple[int, int],
    rng: np.random.Generator,
    rotate: bool,
    scale: tuple[float, float],
) -> list[np.ndarray]:
    """`count` random crops of `photo` as ``(H, W, 3)`` uint8 arrays of `size` (H, W),
    each turned by a random multiple of 90 degrees if `rotate`."""
    height, width = size
    out = []
    for _ in range(count):
        side = rng.uniform(*scale) * min(photo.width, photo.height)
        box_w = side * max(1.0, width / height)
        box_h = side * max(1.0, height / width)
        # a box larger than the photo shrinks as a whole: the aspect stays the input's
        fit = min(1.0, photo.width / box_w, photo.height / box_h)
        box_w, box_h = box_w * fit, box_h * fit
        left = rng.uniform(0, photo.width - box_w)
        top = rng.uniform(0, photo.height - box_h)
        turns = int(rng.integers(4)) if rotate else 0
        # a quarter turn swaps the sides: resize to the turned size first
        target = (width, height) if turns % 2 == 0 else (height, width)
        crop = photo.resize(
            target, Image.Resampling.BILINEAR, box=(left, top, left + box_w, top + box_h)
        )
        out.append(np.rot90(np.asarray(crop), turns))
    return out


def photo_crops(
    folder: Path,
    names: Sequence[str],
    count: int,
    size: tuple[int, int],
    seed: int,
    rotate: bool = True,
    scale: tuple[float, float] = DEFAULT_SCALE,
) -> np.ndarray:
    """``(count, H, W, 3)`` uint8 crops of the photos `names` in `folder`, the same
    number from each (``ceil(count / len(names))``, the last photo's cut short if they
    do not divide evenly); turned if `rotate`, their shorter side a fraction `scale` of
    the photo's. A missing photo is an error naming `benchmarks/get_photos.py`."""
    rng = np.random.default_rng(seed)
    per_photo = math.ceil(count / len(names))
    crops: list[np.ndarray] = []
    for name in names:
        path = folder / name
        if not path.is_file():
            raise SystemExit(
                f"photo {path} missing: python benchmarks/get_photos.py --to {folder}"
            )
        with Image.open(path) as photo:
            crops += _crops(photo.convert("RGB"), per_photo, size, rng, rotate, scale)
    return np.stack(crops[:count])
