"""TFLite's `TFLite_Detection_PostProcess` custom operator end to end: the importer reads
its FlexBuffer options into `synap.detection_postprocess`, the JAX kernel runs it, and the
outputs are compared with LiteRT's reference kernels (`OpResolverType.BUILTIN_REF`).

Boxes and scores must agree within 1e-5 relative, classes and num_detections exactly.
LiteRT writes only some rows: fast NMS leaves rows past the detections unwritten (and,
when max_classes_per_detection exceeds num_classes, the surplus rows of each detection),
regular NMS zeroes rows up to max_detections and leaves the rest unwritten. Unwritten rows
hold whatever the arena held, so `compare` checks the rows LiteRT writes and requires
synapc's other rows to be zero; cases where LiteRT writes every row also go through the
oracle's own `check_case`.

On VS680 float model inputs and constants reach the op in float16 (the NPU's float type),
but the op itself computes in float32: with inputs that float16 represents exactly the
results equal LiteRT's float32 ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import synapc
from synapc.dialects.synap.detection import DetectionPostProcessOp
from synapc.errors import SynapcError
from synapc.testing.oracle import (
    F32,
    Case,
    CaseGraph,
    build_case,
    check_case,
    reference_resolver,
    run_litert,
)
from synapc.testing.tflite_builder import ModelBuilder, Quant, flexbuffer_options

pytest.importorskip("ai_edge_litert.interpreter")

OP = "TFLite_Detection_PostProcess"
OPTIONS: dict[str, Any] = {
    "max_detections": 6,
    "max_classes_per_detection": 1,
    "detections_per_class": 4,
    "use_regular_nms": False,
    "nms_score_threshold": 0.3,
    "nms_iou_threshold": 0.5,
    "num_classes": 3,
    "y_scale": 10.0,
    "x_scale": 10.0,
    "h_scale": 5.0,
    "w_scale": 5.0,
}


def anchors_for(count: int, clusters: int = 0, seed: int = 7) -> np.ndarray:
    """[count, 4] centre-size anchors (y, x, h, w); with `clusters`, anchors jitter around
    that many centres so their boxes overlap and NMS has work to do."""
    rng = np.random.default_rng(seed)
    if clusters:
        centres = rng.uniform(0.25, 0.75, (clusters, 2))[rng.integers(0, clusters, count)]
        centres = centres + rng.uniform(-0.03, 0.03, (count, 2))
    else:
        centres = rng.uniform(0.1, 0.9, (count, 2))
    sizes = rng.uniform(0.1, 0.4, (count, 2))
    return np.concatenate([centres, sizes], axis=1).astype(F32)


def detection(
    g: CaseGraph, boxes: int, scores: int, anchors: int, options: dict[str, Any]
) -> list[int]:
    """Add the custom operator with `options`; its outputs become the model outputs."""
    rows = options["max_detections"] * options["max_classes_per_detection"]
    b = g.builder
    outputs = [
        b.tensor("detection_boxes", [1, rows, 4], F32),
        b.tensor("detection_classes", [1, rows], F32),
        b.tensor("detection_scores", [1, rows], F32),
        b.tensor("num_detections", [1], F32),
    ]
    b.custom_op(OP, [boxes, scores, anchors], outputs, options=flexbuffer_options(options))
    g.output(*outputs)
    return outputs


Detection = tuple[Case, dict[str, Any]]  # a case and its operator options


def float_case(
    count: int,
    columns: int,
    *,
    clusters: int = 0,
    levels: int = 0,
    f16: bool = False,
    **options: Any,
) -> Detection:
    """Float box encodings [1, count, 4] in [-2, 2), class scores [1, count, columns] in
    [0, 1) (drawn from `levels` values when given, to force equal scores) and constant
    anchors, all rounded to values float16 holds with `f16`; OPTIONS updated by
    `options`."""
    opts = {**OPTIONS, **options}

    def values(array: np.ndarray) -> np.ndarray:
        return array.astype(np.float16).astype(F32) if f16 else array.astype(F32)

    def case(g: CaseGraph) -> None:
        boxes = g.input([1, count, 4], value=values(g.rng.uniform(-2, 2, (1, count, 4))))
        shape = (1, count, columns)
        if levels:
            drawn = g.rng.integers(0, levels, shape) / levels
        else:
            drawn = g.rng.uniform(0, 1, shape)
        scores = g.input(shape, value=values(drawn))
        table = anchors_for(count, clusters)
        detection(g, boxes, scores, g.const(values(table)), opts)

    return case, opts


def quantized_case(
    count: int, columns: int, *, dtype: type = np.uint8, **options: Any
) -> Detection:
    """Quantized box encodings, class scores (few levels: many equal scores) and anchors:
    uint8, or int8 holding the same real values (zero points 128 lower)."""
    opts = {**OPTIONS, **options}
    shift = 128 if dtype == np.int8 else 0
    box_q = Quant(0.05, 128 - shift)
    score_q = Quant(1 / 64, -shift)
    anchor_q = Quant(1 / 256, -shift)

    def case(g: CaseGraph) -> None:
        boxes = g.input([1, count, 4], -2.0, 2.0, dtype=dtype, quant=box_q)
        scores = g.input([1, count, columns], 0.0, 0.5, dtype=dtype, quant=score_q)
        anchors = g.const(anchors_for(count, 3), dtype, quant=anchor_q)
        detection(g, boxes, scores, anchors, opts)

    return case, opts


def written_rows(options: dict[str, Any], found: int) -> np.ndarray:
    """Which result rows LiteRT writes (see the module docstring)."""
    limit, per_detection = options["max_detections"], options["max_classes_per_detection"]
    rows = np.zeros((limit, per_detection), bool)
    if options["use_regular_nms"]:
        rows.reshape(-1)[:limit] = True
    else:
        rows[:found, : min(per_detection, options["num_classes"])] = True
    return rows.reshape(-1)


def compare(got: list[np.ndarray], expected: list[np.ndarray], options: dict) -> None:
    """synapc's outputs against LiteRT's on the rows LiteRT writes; the other rows of
    synapc's outputs must be zero."""
    assert len(got) == len(expected) == 4
    for i, (out, ref) in enumerate(zip(got, expected, strict=True)):
        assert out.shape == ref.shape, f"output {i}: {out.shape} != {ref.shape}"
        assert out.dtype == ref.dtype == np.float32, f"output {i}"
    np.testing.assert_array_equal(got[3], expected[3], err_msg="num_detections")
    written = written_rows(options, int(expected[3][0]))
    for i, what in ((0, "boxes"), (1, "classes"), (2, "scores")):
        out, ref = got[i][0][written], expected[i][0][written]
        if what == "classes":
            np.testing.assert_array_equal(out, ref, err_msg=what)
        else:
            np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6, err_msg=what)
        assert not np.any(got[i][0][~written]), f"{what}: rows LiteRT leaves are not 0"


def run_both(
    tmp_path: Path, case: Case, target: str = "GENERIC"
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(synapc's outputs on `target`, LiteRT's) for `case`."""
    resolver = reference_resolver()
    data, feeds = build_case(case, resolver)
    interpreter = run_litert(data, feeds, resolver)
    expected = [
        interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()
    ]
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    got = synapc.compile(synapc.import_model(path), target=target).run(feeds)
    return got, expected


# ======================================================================================
# Fast NMS (use_regular_nms = false) and regular NMS (true) against LiteRT
# ======================================================================================
CASES: list[Any] = [
    # -- fast NMS
    pytest.param(float_case(30, 2, num_classes=1), id="fast-1-class"),
    pytest.param(float_case(30, 4), id="fast-3-classes-background"),
    pytest.param(
        float_case(40, 3, max_classes_per_detection=2), id="fast-3-classes-2-per-box"
    ),
    pytest.param(
        float_case(24, 91, num_classes=90, max_classes_per_detection=2),
        id="fast-90-classes-2-per-box",
    ),
    pytest.param(
        float_case(40, 4, clusters=4, nms_iou_threshold=0.05, max_detections=10),
        id="fast-overlap-low-iou-padding",
    ),
    pytest.param(
        float_case(40, 4, clusters=3, nms_iou_threshold=1.0), id="fast-iou-1-keeps-all"
    ),
    pytest.param(
        float_case(40, 4, nms_score_threshold=0.93, max_detections=10),
        id="fast-score-threshold-filters-most",
    ),
    pytest.param(
        float_case(12, 3, num_classes=2, max_classes_per_detection=3),
        id="fast-more-per-box-than-classes",
    ),
    pytest.param(
        float_case(30, 7, levels=4, num_classes=6, max_classes_per_detection=3),
        id="fast-equal-class-scores-partial-sort-order",
    ),
    pytest.param(
        float_case(30, 4, levels=3, clusters=3, max_detections=8),
        id="fast-equal-scores-stable-nms-order",
    ),
    pytest.param(
        quantized_case(30, 4, max_classes_per_detection=2), id="fast-uint8-2-per-box"
    ),
    # -- regular NMS
    pytest.param(
        float_case(30, 2, num_classes=1, use_regular_nms=True), id="regular-1-class"
    ),
    pytest.param(
        float_case(30, 4, clusters=3, use_regular_nms=True),
        id="regular-3-classes-background",
    ),
    pytest.param(
        float_case(
            24,
            90,
            num_classes=90,
            detections_per_class=2,
            max_detections=12,
            use_regular_nms=True,
        ),
        id="regular-90-classes-no-background",
    ),
    pytest.param(
        float_case(
            40,
            4,
            clusters=4,
            nms_iou_threshold=0.1,
            detections_per_class=10,
            use_regular_nms=True,
        ),
        id="regular-low-iou-more-per-class-than-max-detections",
    ),
    pytest.param(
        float_case(
            40,
            4,
            clusters=3,
            nms_iou_threshold=0.9,
            detections_per_class=1,
            use_regular_nms=True,
        ),
        id="regular-high-iou-one-per-class",
    ),
    pytest.param(
        float_case(
            30, 4, nms_score_threshold=0.95, max_detections=10, use_regular_nms=True
        ),
        id="regular-score-threshold-zero-padding",
    ),
    pytest.param(
        float_case(20, 4, max_classes_per_detection=2, use_regular_nms=True),
        id="regular-2-per-box-rows-past-max-detections",
    ),
    pytest.param(
        float_case(
            30,
            5,
            levels=3,
            clusters=3,
            num_classes=4,
            max_detections=10,
            use_regular_nms=True,
        ),
        id="regular-equal-scores-across-classes",
    ),
    pytest.param(
        quantized_case(30, 4, max_detections=10, use_regular_nms=True),
        id="regular-uint8",
    ),
]


@pytest.mark.parametrize("detection_case", CASES)
def test_detection_postprocess_matches_litert(
    tmp_path: Path, detection_case: Detection
) -> None:
    case, options = detection_case
    got, expected = run_both(tmp_path, case)
    compare(got, expected, options)


# ======================================================================================
# Boundaries, through the oracle's own check (LiteRT writes every row in these cases)
# ======================================================================================
# Zero encodings decode to the anchors themselves: A [0, 0, 1, 1]; B [0, 0, 1, 0.5] and
# C [0, 0.5, 1, 1] each have IoU exactly 0.5 with A; D has no area (IoU 0 with anything);
# E lies inside A (IoU 0.04).
BOUNDARY_ANCHORS = np.array(
    [
        [0.5, 0.5, 1.0, 1.0],
        [0.5, 0.25, 1.0, 0.5],
        [0.5, 0.75, 1.0, 0.5],
        [0.5, 0.5, 0.0, 0.0],
        [0.2, 0.2, 0.2, 0.2],
    ],
    F32,
)
# Score threshold 0.5: C's score equals it (kept: `>=`), E's is below.
BOUNDARY_SCORES = np.array([[[0.9], [0.8], [0.5], [0.7], [0.49]]], F32)


def boundary_case(**options: Any) -> Case:
    """The five anchors above, one class, zero box encodings."""
    opts = {**OPTIONS, "num_classes": 1, "nms_score_threshold": 0.5, **options}

    def case(g: CaseGraph) -> None:
        boxes = g.input([1, 5, 4], value=np.zeros((1, 5, 4), F32))
        scores = g.input([1, 5, 1], value=BOUNDARY_SCORES)
        detection(g, boxes, scores, g.const(BOUNDARY_ANCHORS), opts)

    return case


@pytest.mark.parametrize(
    ("iou", "count"),
    [
        pytest.param(0.5, 4, id="iou-equal-to-threshold-is-not-suppressed"),
        pytest.param(0.4999, 2, id="iou-above-threshold-is-suppressed"),
    ],
)
def test_regular_nms_boundaries(tmp_path: Path, iou: float, count: int) -> None:
    """IoU must exceed the threshold to suppress, a score equal to the threshold is a
    candidate, a box without area suppresses nothing; rows past the detections are 0."""
    case = boundary_case(use_regular_nms=True, nms_iou_threshold=iou, max_detections=5)
    check_case(tmp_path, case, target="GENERIC")
    got, _ = run_both(tmp_path, case)
    assert got[3][0] == count


def test_fast_nms_boundaries(tmp_path: Path) -> None:
    """As above in fast NMS: A, B, D and C in score order, every row written."""
    case = boundary_case(max_detections=4, nms_iou_threshold=0.5)
    check_case(tmp_path, case, target="GENERIC")
    got, _ = run_both(tmp_path, case)
    np.testing.assert_array_equal(got[2][0], np.float32([0.9, 0.8, 0.7, 0.5]))


def test_fast_nms_all_rows_through_the_oracle(tmp_path: Path) -> None:
    """A fast-NMS case where LiteRT fills every row, compared by `check_case`."""
    case, options = float_case(40, 4, max_classes_per_detection=2, nms_score_threshold=0.1)
    check_case(tmp_path, case, target="GENERIC")
    got, _ = run_both(tmp_path, case)
    assert got[3][0] == options["max_detections"]


# ======================================================================================
# int8 (LiteRT 2.3 refuses it; synapc dequantizes like uint8) and VS680
# ======================================================================================
@pytest.mark.parametrize("regular", [False, True], ids=["fast", "regular"])
def test_int8_inputs_match_litert_on_the_same_uint8_values(
    tmp_path: Path, regular: bool
) -> None:
    """LiteRT's kernel takes float32 or uint8 only; an int8 model with the same real
    values gives synapc the results LiteRT gives for the uint8 model."""
    options = {"max_detections": 8, "max_classes_per_detection": 2}
    int8, opts = quantized_case(30, 4, dtype=np.int8, use_regular_nms=regular, **options)
    uint8, _ = quantized_case(30, 4, use_regular_nms=regular, **options)
    graph, same = CaseGraph(), CaseGraph()  # the cases state every shape: no LiteRT run
    int8(graph)
    uint8(same)
    for a, b in zip(graph.feeds, same.feeds, strict=True):
        np.testing.assert_array_equal(a.astype(np.int32) + 128, b)
    data = graph.builder.build()
    with pytest.raises(RuntimeError, match="failed to invoke"):
        run_litert(data, graph.feeds, reference_resolver())
    path = tmp_path / "int8.tflite"
    path.write_bytes(data)
    got = synapc.compile(synapc.import_model(path), target="GENERIC").run(graph.feeds)
    _, expected = run_both(tmp_path, uint8)
    compare(got, expected, opts)


VS680: list[Any] = [
    pytest.param(
        float_case(40, 4, clusters=3, f16=True, max_classes_per_detection=2), id="fast"
    ),
    pytest.param(
        float_case(
            40, 91, num_classes=90, f16=True, use_regular_nms=True, max_detections=10
        ),
        id="regular-90-classes",
    ),
    pytest.param(quantized_case(30, 4, use_regular_nms=True), id="regular-uint8"),
]


@pytest.mark.parametrize("detection_case", VS680)
def test_vs680_computes_the_op_in_float32(
    tmp_path: Path, detection_case: Detection
) -> None:
    """On VS680 float model inputs and constants arrive in float16 (the NPU's float type),
    but the CPU op computes in float32: with inputs float16 holds exactly, the results
    equal LiteRT's float32 results within the same tolerance as on GENERIC."""
    case, options = detection_case
    got, expected = run_both(tmp_path, case, target="VS680")
    compare(got, expected, options)


# ======================================================================================
# Import: options, defaults, errors
# ======================================================================================
def _model(
    tmp_path: Path, options: dict[str, Any], outputs: int = 4, columns: int = 4
) -> Path:
    """A model of one detection operator with custom options `options` (raw bytes when
    given as bytes)."""
    b = ModelBuilder()
    boxes = b.input("boxes", [1, 6, 4], F32)
    scores = b.input("scores", [1, 6, columns], F32)
    anchors = b.constant("anchors", anchors_for(6))
    results = [
        b.tensor("detection_boxes", [1, 1, 4], F32),
        b.tensor("detection_classes", [1, 1], F32),
        b.tensor("detection_scores", [1, 1], F32),
        b.tensor("num_detections", [1], F32),
    ][:outputs]
    raw = options if isinstance(options, bytes) else flexbuffer_options(options)
    b.custom_op(OP, [boxes, scores, anchors], results, options=raw)
    b.output(*results)
    path = tmp_path / "detection.tflite"
    path.write_bytes(b.build())
    return path


def test_import_reads_options_and_fills_defaults(tmp_path: Path) -> None:
    """Absent detections_per_class and use_regular_nms take TFLite's defaults (100,
    false); results get the shapes LiteRT's Prepare sets, whatever the file says."""
    defaults = ("detections_per_class", "use_regular_nms")
    options = {k: v for k, v in OPTIONS.items() if k not in defaults}
    model = synapc.import_model(
        _model(tmp_path, {**options, "max_classes_per_detection": 2})
    )
    ops = [op for op in model.module.walk() if isinstance(op, DetectionPostProcessOp)]
    assert len(ops) == 1
    props = ops[0].props()
    assert props["detections_per_class"] == 100 and props["use_regular_nms"] is False
    assert props["max_detections"] == 6 and props["max_classes_per_detection"] == 2
    assert np.float32(props["nms_score_threshold"]) == np.float32(0.3)
    assert ops[0].layer_name is not None and ops[0].layer_name.data == "detection_boxes"
    assert [tuple(o.shape) for o in model.outputs] == [(1, 12, 4), (1, 12), (1, 12), (1,)]


@pytest.mark.parametrize(
    "key",
    [
        "max_detections",
        "max_classes_per_detection",
        "nms_score_threshold",
        "nms_iou_threshold",
        "num_classes",
        "y_scale",
        "x_scale",
        "h_scale",
        "w_scale",
    ],
)
def test_import_names_a_missing_option(tmp_path: Path, key: str) -> None:
    options = {k: v for k, v in OPTIONS.items() if k != key}
    with pytest.raises(SynapcError, match=f"custom option '{key}' is missing"):
        synapc.import_model(_model(tmp_path, options))


@pytest.mark.parametrize(
    ("options", "outputs", "columns", "message"),
    [
        pytest.param(b"", 4, 4, "custom options are missing", id="no-options"),
        pytest.param(b"\x01\x02\x03", 4, 4, "not a FlexBuffer map", id="corrupt-options"),
        pytest.param(OPTIONS, 3, 4, "expected 4 outputs, got 3", id="three-outputs"),
        pytest.param(
            OPTIONS,
            4,
            6,
            "class predictions have 6 classes, num_classes is 3",
            id="classes",
        ),
        pytest.param(
            {**OPTIONS, "nms_iou_threshold": 0.0}, 4, 4, "nms_iou_threshold", id="iou-0"
        ),
    ],
)
def test_import_errors_name_the_problem(
    tmp_path: Path, options: Any, outputs: int, columns: int, message: str
) -> None:
    with pytest.raises(SynapcError, match=message) as error:
        synapc.import_model(_model(tmp_path, options, outputs, columns))
    assert OP in str(error.value)
