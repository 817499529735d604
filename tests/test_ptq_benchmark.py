"""The pure helpers of `benchmarks/ptq.py` / `benchmarks/ptq_data.py`: disjoint photo
sets and the top-1 agreement of classifiers and sequence models."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.ptq import HALF, MODELS, BenchModel, top1_agreement
from benchmarks.ptq_data import check_disjoint


def test_check_disjoint_names_the_shared_photos() -> None:
    """A photo in both sets is refused, by name; disjoint sets pass."""
    check_disjoint(("a.png", "b.png"), ("c.png",))
    with pytest.raises(ValueError, match=r"b\.png"):
        check_disjoint(("a.png", "b.png"), ("b.png", "c.png"))


def test_bench_model_refuses_overlapping_photo_sets() -> None:
    """A `BenchModel` whose calibration photos include an evaluation photo is an error;
    every model of the benchmark has disjoint sets."""
    with pytest.raises(ValueError, match=r"page\.png"):
        BenchModel(
            "ppocr_v4_rec", (1, 3, 48, 320), True, HALF, HALF,
            calibration_photos=("text.png", "page.png"), evaluation_photos=("page.png",),
        )  # fmt: skip
    for bench in MODELS.values():
        assert not set(bench.calibration_photos) & set(bench.evaluation_photos)


def test_sequence_agreement_is_per_timestep() -> None:
    """A sequence model's agreement counts every timestep of every image: one of the
    2 x 3 positions changed gives 5/6; a classifier's is per image over its whole
    output."""
    reference = np.zeros((2, 3, 4))
    reference[..., 1] = 1.0
    actual = reference.copy()
    actual[1, 2] = [0.0, 0.0, 0.0, 2.0]
    assert top1_agreement(reference, actual, "sequence") == pytest.approx(5 / 6)
    # as a classifier: image 1's overall argmax moves from position 0 to position 2
    assert top1_agreement(reference, actual, "classifier") == pytest.approx(1 / 2)
    classes = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    flipped = classes[:, ::-1]
    assert top1_agreement(classes, classes, "classifier") == 1.0
    assert top1_agreement(classes, flipped, "classifier") == 0.0
    with pytest.raises(ValueError):
        top1_agreement(classes, classes, "detector")
