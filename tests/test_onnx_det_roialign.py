"""ONNX Det and RoiAlign beyond the conformance cases: batched and pivoting
determinants, RoiAlign over two images with an adaptive grid per box (constant boxes:
one `synap.roi_align` per grid, put back in box order), a scaled max-mode RoiAlign,
against ONNX's reference implementation; and the refusals, each one line naming node
and operator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synapc.testing.onnx_cases import (
    assert_refused,
    check_against_reference,
    save_node_model,
)

_RNG = np.random.default_rng(2)


def test_det_batched_and_pivoting(tmp_path: Path) -> None:
    """[2, 3, 5, 5] random matrices, one with a zero leading pivot; 1x1 matrices."""
    x = _RNG.standard_normal((2, 3, 5, 5)).astype(np.float32)
    x[0, 0, 0, 0] = 0.0
    check_against_reference(save_node_model(tmp_path, "Det", {"x": x}), {"x": x})
    one = _RNG.standard_normal((4, 1, 1)).astype(np.float32)
    check_against_reference(save_node_model(tmp_path, "Det", {"x": one}), {"x": one})


_IMAGES = _RNG.standard_normal((2, 3, 12, 10)).astype(np.float32)
_BOXES = np.array(
    [[0, 0, 9, 11], [2, 3, 4, 5], [1.5, 0.5, 8, 6], [3, 3, 3.5, 9]], np.float32
)
_BATCH = np.array([1, 0, 1, 0], np.int64)


def test_roialign_adaptive_grid_with_constant_boxes(tmp_path: Path) -> None:
    """sampling_ratio 0 gives each box its own grid: constant boxes of different sizes
    over two images, half_pixel."""
    inputs = {"x": _IMAGES, "rois": _BOXES, "batch": _BATCH}
    path = save_node_model(
        tmp_path, "RoiAlign", inputs, ("rois",), output_height=3, output_width=2
    )
    check_against_reference(path, {"x": _IMAGES, "batch": _BATCH})


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_roialign_adaptive_grid_empty_boxes(tmp_path: Path, mode: str) -> None:
    """With half_pixel, a zero-size box (the zero padding [0, 0, 0, 0]) or an inverted
    one has an empty adaptive grid: ONNX samples nothing and outputs zeros for it."""
    boxes = np.concatenate([_BOXES[:2], [[3, 3, 2, 2], [0, 0, 0, 0]]]).astype(np.float32)
    inputs = {"x": _IMAGES, "rois": boxes, "batch": _BATCH}
    path = save_node_model(
        tmp_path, "RoiAlign", inputs, ("rois",), output_height=2, mode=mode
    )
    check_against_reference(path, {"x": _IMAGES, "batch": _BATCH})
    only_empty = {"x": _IMAGES, "rois": boxes[2:], "batch": _BATCH[2:]}
    path = save_node_model(tmp_path, "RoiAlign", only_empty, ("rois",), mode=mode)
    check_against_reference(path, {"x": _IMAGES, "batch": _BATCH[2:]})


def test_roialign_max_mode_scaled_runtime_boxes(tmp_path: Path) -> None:
    """Run-time boxes at spatial scale 0.5, max mode, a 3x3 sampling grid."""
    inputs = {"x": _IMAGES, "rois": _BOXES * 2, "batch": _BATCH}
    path = save_node_model(
        tmp_path,
        "RoiAlign",
        inputs,
        mode="max",
        spatial_scale=0.5,
        sampling_ratio=3,
        output_height=2,
        output_width=4,
        coordinate_transformation_mode="output_half_pixel",
    )
    check_against_reference(path, inputs)


def test_refusals(tmp_path: Path) -> None:
    """Non-square and integer Det inputs, an adaptive grid over run-time boxes and an
    unknown pooling mode are refused by name."""
    assert_refused(
        save_node_model(tmp_path, "Det", {"x": np.zeros((2, 3), np.float32)}),
        "Det",
        "square",
    )
    assert_refused(
        save_node_model(tmp_path, "Det", {"x": np.zeros((2, 2), np.int32)}), "Det", "float"
    )
    inputs = {"x": _IMAGES, "rois": _BOXES, "batch": _BATCH}
    assert_refused(
        save_node_model(tmp_path, "RoiAlign", inputs), "RoiAlign", "sampling_ratio", "rois"
    )
    assert_refused(
        save_node_model(tmp_path, "RoiAlign", inputs, sampling_ratio=2, mode="min"),
        "RoiAlign",
        "mode",
    )
