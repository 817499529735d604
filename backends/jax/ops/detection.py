"""Kernel of `dialects/synap/detection.py`: TFLite's `TFLite_Detection_PostProcess`.

Pure JAX under `jit` (fixed shapes, so the program exports like any other), reproducing
LiteRT's reference kernel (tensorflow/lite/kernels/detection_postprocess.cc) exactly:

* Inputs are dequantized to float32 (``(q - zero_point) * scale``); float inputs are cast
  to float32, so on NPU targets the op still computes in float32 (it is a CPU op).
* Box decoding runs in float64 and rounds the centre and half extent to float32, then
  ``ymin = yc - half_h`` etc. in float32, as TFLite does.
* A candidate needs ``score >= nms_score_threshold``; candidates are visited in descending
  score order, equal scores in index order (TFLite's `std::stable_sort`); a kept box
  suppresses a later one when their float32 IoU is ``> nms_iou_threshold``; IoU is 0 when
  either box has an area ``<= 0``. Greedy NMS is a `lax.while_loop` over the kept boxes.
* Fast NMS ranks each anchor's classes with `std::partial_sort` when it keeps more than
  one class per anchor: equal class scores come out in the order of libstdc++'s heap-based
  `partial_sort`, which this kernel replays step by step (vectorised over anchors). One
  class per anchor is `ArgMaxVector`: the first maximum.
* Regular NMS keeps up to ``min(detections_per_class, max_detections)`` boxes per class
  and merges the classes stably (equal scores: lower class first, then selection order).
* Rows past the detections are zero. (LiteRT zeroes them in regular NMS and leaves them
  unwritten, i.e. arbitrary, in fast NMS and past `max_detections` rows.)

Not reproduced: LiteRT fails the invocation when a decoded box has ``ymin > ymax`` or
``xmin > xmax`` (negative anchor sizes); this kernel returns its result anyway. NaN scores
are never candidates (as in TFLite), but a NaN class score may rank differently in the
per-anchor class sort.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    computes_float32,
    kernel,
    real_valued,
)
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.base import element_of
from synapc.dialects.synap.detection import DetectionPostProcessOp

F32 = jnp.float32
I32 = jnp.int32
Heap = tuple[jax.Array, jax.Array]  # (class indices, their scores), [N, k] each


def _dequantize(x: jax.Array, element: Any) -> jax.Array:
    """Real values of `x` in float32 (TFLite: ``(float(q) - zero_point) * scale``)."""
    if isinstance(element, UniformQuantizedType):
        if element.is_per_axis:
            raise UnsupportedOpError(
                "detection post-processing needs per-tensor quantized operands"
            )
        zero_point = np.float32(element.zero_point)
        return (x.astype(F32) - zero_point) * np.float32(element.scale)
    return x.astype(F32)


def decode_boxes(
    encodings: jax.Array, anchors: jax.Array, scales: tuple[float, float, float, float]
) -> jax.Array:
    """Centre-size encodings [N, 4] (y, x, h, w) against anchors [N, 4] (y, x, h, w) ->
    corner boxes [N, 4] (ymin, xmin, ymax, xmax), with TFLite's float64 intermediates."""
    y_scale, x_scale, h_scale, w_scale = (np.float64(np.float32(s)) for s in scales)
    with jax.enable_x64(True):
        e = encodings.astype(jnp.float64)
        a = anchors.astype(jnp.float64)
        yc = (e[:, 0] / y_scale * a[:, 2] + a[:, 0]).astype(F32)
        xc = (e[:, 1] / x_scale * a[:, 3] + a[:, 1]).astype(F32)
        half_h = (0.5 * jnp.exp(e[:, 2] / h_scale) * a[:, 2]).astype(F32)
        half_w = (0.5 * jnp.exp(e[:, 3] / w_scale) * a[:, 3]).astype(F32)
    return jnp.stack([yc - half_h, xc - half_w, yc + half_h, xc + half_w], axis=1)


def box_areas(boxes: jax.Array) -> jax.Array:
    """``(ymax - ymin) * (xmax - xmin)`` of corner boxes [N, 4], in float32."""
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def iou_with(
    box: jax.Array, area: jax.Array, boxes: jax.Array, areas: jax.Array
) -> jax.Array:
    """IoU of one box with each of `boxes`, as TFLite's ComputeIntersectionOverUnion."""
    height = jnp.minimum(box[2], boxes[:, 2]) - jnp.maximum(box[0], boxes[:, 0])
    width = jnp.minimum(box[3], boxes[:, 3]) - jnp.maximum(box[1], boxes[:, 1])
    intersection = jnp.maximum(height, F32(0)) * jnp.maximum(width, F32(0))
    iou = intersection / (area + areas - intersection)
    return jnp.where((area <= 0) | (areas <= 0), F32(0), iou)


def _descending_order(values: jax.Array, valid: jax.Array) -> jax.Array:
    """Positions of `valid` values by descending value, equal values (+0 == -0) in
    position order, invalid positions last: `std::stable_sort` with ``a > b``."""
    key = jnp.where(values == 0, F32(0), values)
    positions = jnp.arange(values.shape[0], dtype=I32)
    *_, order = lax.sort(((~valid).astype(I32), -key, positions), num_keys=3)
    return order


def greedy_nms(
    boxes: jax.Array,
    areas: jax.Array,
    scores: jax.Array,
    limit: int,
    score_threshold: np.float32,
    iou_threshold: np.float32,
) -> tuple[jax.Array, jax.Array]:
    """TFLite's NonMaxSuppressionSingleClassHelper: (selected anchor indices [limit],
    -1 past the count, in selection order; the count)."""
    keep = scores >= score_threshold
    order = _descending_order(scores, keep)
    kept = jnp.sum(keep.astype(I32))
    output_size = jnp.minimum(kept, limit)
    sorted_boxes, sorted_areas = boxes[order], areas[order]
    active = jnp.arange(scores.shape[0]) < kept

    def more(state: tuple[jax.Array, jax.Array, jax.Array]) -> jax.Array:
        active, _, count = state
        return (count < output_size) & jnp.any(active)

    def select(
        state: tuple[jax.Array, jax.Array, jax.Array],
    ) -> tuple[jax.Array, jax.Array, jax.Array]:
        active, selected, count = state
        i = jnp.argmax(active)  # the best remaining candidate
        selected = selected.at[count].set(order[i])
        iou = iou_with(sorted_boxes[i], sorted_areas[i], sorted_boxes, sorted_areas)
        active = active.at[i].set(False) & ~(iou > iou_threshold)
        return active, selected, count + 1

    state = (active, jnp.full((limit,), -1, I32), jnp.zeros((), I32))
    _, selected, count = lax.while_loop(more, select, state)
    return selected, count


# -- libstdc++'s std::partial_sort(first, first + k, last, greater) on every row at once --
# The heap is the first k entries of each row: `Heap` holds their class indices and
# scores [N, k]. The helpers mirror the libstdc++ functions of the same names
# (bits/stl_heap.h, bits/stl_algo.h) with `first` at 0; positions that depend on the data
# are per-row vectors, `on` masks the rows a step applies to, and each data-dependent
# loop runs bit_length(k) masked steps (enough for a heap of k entries).
def _get(a: jax.Array, position: jax.Array) -> jax.Array:
    """``a[row, position[row]]`` for each row (elementwise selects: k is small)."""
    value = a[:, 0]
    for column in range(1, a.shape[1]):
        value = jnp.where(position == column, a[:, column], value)
    return value


def _put(a: jax.Array, position: jax.Array, value: jax.Array, on: jax.Array) -> jax.Array:
    """``a[row, position[row]] = value[row]`` for the rows `on`."""
    hit = (jnp.arange(a.shape[1]) == position[:, None]) & on[:, None]
    return jnp.where(hit, value[:, None], a)


def _move(heap: Heap, to: jax.Array, source: jax.Array, on: jax.Array) -> Heap:
    """``*(first + to) = *(first + source)`` on the rows `on`."""
    indices, values = heap
    indices = _put(indices, to, _get(indices, source), on)
    return indices, _put(values, to, _get(values, source), on)


def _push_heap(
    heap: Heap, hole: jax.Array, top: jax.Array, item: Heap, on: jax.Array
) -> Heap:
    def climb(_: int, state: tuple[Heap, jax.Array]) -> tuple[Heap, jax.Array]:
        heap, hole = state
        parent = jnp.maximum(hole - 1, 0) // 2  # C++ truncation: 0 for hole 0
        up = on & (hole > top) & (_get(heap[1], parent) > item[1])
        return _move(heap, hole, parent, up), jnp.where(up, parent, hole)

    steps = heap[0].shape[1].bit_length()
    heap, hole = lax.fori_loop(0, steps, climb, (heap, hole))
    return _put(heap[0], hole, item[0], on), _put(heap[1], hole, item[1], on)


def _adjust_heap(
    heap: Heap, start: jax.Array, length: jax.Array, item: Heap, on: jax.Array
) -> Heap:
    last = heap[0].shape[1] - 1

    def descend(_: int, state: tuple[Heap, jax.Array]) -> tuple[Heap, jax.Array]:
        heap, hole = state  # libstdc++'s __secondChild is the hole here
        down = on & (hole < (length - 1) // 2)
        right = jnp.minimum(2 * (hole + 1), last)
        pick = jnp.where(_get(heap[1], right) > _get(heap[1], right - 1), right - 1, right)
        return _move(heap, hole, pick, down), jnp.where(down, pick, hole)

    hole = jnp.broadcast_to(start, on.shape)
    steps = heap[0].shape[1].bit_length()
    heap, hole = lax.fori_loop(0, steps, descend, (heap, hole))
    tail = on & (length % 2 == 0) & (hole == (length - 2) // 2)
    left = jnp.minimum(2 * hole + 1, last)
    heap = _move(heap, hole, left, tail)
    hole = jnp.where(tail, left, hole)
    return _push_heap(heap, hole, start, item, on)


def _top_classes(scores: jax.Array, k: int) -> jax.Array:
    """TFLite's DecreasingPartialArgSort of each anchor's class scores [N, C]: the first
    `k` class indices [N, k] in the order libstdc++'s ``std::partial_sort`` leaves them
    (ties included); the first maximum for k = 1 (ArgMaxVector).

    partial_sort is __make_heap (adjust each parent, last to first), __heap_select
    (pop_heap of each later class that beats the heap's top into its place) and
    __sort_heap (pop_heap to positions k-1 .. 1): a sequence of __adjust_heap calls,
    run here as one loop so the program stays small whatever k is."""
    if k == 1:
        return jnp.argmax(scores, axis=1).astype(I32)[:, None]
    rows, count = scores.shape
    parents, later = (k - 2) // 2 + 1, count - k
    every = jnp.ones((rows,), bool)
    heap: Heap = (jnp.broadcast_to(jnp.arange(k, dtype=I32), (rows, k)), scores[:, :k])

    def step(t: jax.Array, heap: Heap) -> Heap:
        making, selecting = t < parents, (t >= parents) & (t < parents + later)
        # __make_heap: adjust_heap(parent, k, *parent)
        parent = (k - 2) // 2 - t
        # __heap_select: if scores[i] > *first: pop_heap(0, k, i)
        i = jnp.clip(k + t - parents, k, count - 1)
        value = lax.dynamic_index_in_dim(scores, i, axis=1, keepdims=False)
        # __sort_heap: pop_heap(0, last, last)
        last = jnp.maximum(k - 1 - (t - parents - later), 1)
        spot = jnp.where(making, parent, last)
        item = (
            jnp.where(selecting, i, _get(heap[0], spot)),
            jnp.where(selecting, value, _get(heap[1], spot)),
        )
        sorting = ~making & ~selecting
        first = jnp.zeros((rows,), I32)
        heap = _move(heap, first + last, first, every & sorting)
        start = jnp.where(making, parent, 0)
        length = jnp.where(sorting, last, k)
        on = jnp.where(selecting, value > heap[1][:, 0], every)
        return _adjust_heap(heap, start, length, item, on)

    heap = lax.fori_loop(0, parents + later + k - 1, step, heap)
    return heap[0]


# -- the two NMS flavours ----------------------------------------------------------------
def fast_nms(
    boxes: jax.Array, scores: jax.Array, p: dict[str, Any]
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Per anchor its top classes, one class-agnostic NMS on each anchor's best score;
    rows [M * K] with K = max_classes_per_detection (NonMaxSuppressionMultiClassFast)."""
    per_detection = p["max_classes_per_detection"]
    k = min(per_detection, scores.shape[1])
    top = _top_classes(scores, k)
    best = jnp.take_along_axis(scores, top[:, :1], axis=1)[:, 0]
    selected, count = greedy_nms(
        boxes,
        box_areas(boxes),
        best,
        p["max_detections"],
        np.float32(p["nms_score_threshold"]),
        np.float32(p["nms_iou_threshold"]),
    )
    valid = jnp.arange(p["max_detections"]) < count
    anchor = jnp.where(valid, selected, 0)
    classes = top[anchor]  # [M, k]
    out_scores = jnp.take_along_axis(scores[anchor], classes, axis=1)
    out_boxes = jnp.broadcast_to(boxes[anchor][:, None, :], (*classes.shape, 4))
    out_boxes = jnp.where(valid[:, None, None], out_boxes, F32(0))
    out_classes = jnp.where(valid[:, None], classes.astype(F32), F32(0))
    out_scores = jnp.where(valid[:, None], out_scores, F32(0))
    if k < per_detection:  # the rows TFLite leaves unwritten
        pad = per_detection - k
        out_boxes = jnp.pad(out_boxes, ((0, 0), (0, pad), (0, 0)))
        out_classes = jnp.pad(out_classes, ((0, 0), (0, pad)))
        out_scores = jnp.pad(out_scores, ((0, 0), (0, pad)))
    return (
        out_boxes.reshape(-1, 4),
        out_classes.reshape(-1),
        out_scores.reshape(-1),
        count,
    )


def regular_nms(
    boxes: jax.Array, scores: jax.Array, p: dict[str, Any]
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """NMS per class, then the best max_detections of all classes; rows [M * K]
    (NonMaxSuppressionMultiClassRegular).

    LiteRT keeps up to ``min(detections_per_class, max_detections)`` boxes per class and
    merges each class into the running top list with `std::inplace_merge` (stable:
    earlier classes first on equal scores), truncating to max_detections. That equals
    the first max_detections of a stable descending sort of all classes' selections in
    class order, which is what runs here, with the per-class NMS vectorised over classes.
    """
    count, classes = scores.shape
    limit = p["max_detections"]
    per_class = min(p["detections_per_class"], limit, count)
    areas = box_areas(boxes)
    score_threshold = np.float32(p["nms_score_threshold"])
    iou_threshold = np.float32(p["nms_iou_threshold"])

    def one_class(column: jax.Array) -> tuple[jax.Array, jax.Array]:
        return greedy_nms(boxes, areas, column, per_class, score_threshold, iou_threshold)

    selected, found = jax.vmap(one_class, in_axes=1)(scores)  # [C, P], [C]
    valid = jnp.arange(per_class)[None, :] < found[:, None]
    labels = jnp.broadcast_to(jnp.arange(classes, dtype=I32)[:, None], valid.shape)
    anchors = jnp.maximum(selected, 0)
    candidates = jnp.where(valid, scores[anchors, labels], F32(0)).reshape(-1)
    order = _descending_order(candidates, valid.reshape(-1))[:limit]
    kept = jnp.minimum(jnp.sum(found), limit)
    rows = jnp.arange(order.shape[0]) < kept
    anchor = jnp.where(rows, anchors.reshape(-1)[order], 0)
    out_boxes = jnp.where(rows[:, None], boxes[anchor], F32(0))
    out_classes = jnp.where(rows, labels.reshape(-1)[order].astype(F32), F32(0))
    out_scores = jnp.where(rows, candidates[order], F32(0))
    # rows past max_detections (and past every class's selections) stay zero
    pad = limit * p["max_classes_per_detection"] - order.shape[0]
    return (
        jnp.pad(out_boxes, ((0, pad), (0, 0))),
        jnp.pad(out_classes, (0, pad)),
        jnp.pad(out_scores, (0, pad)),
        kept,
    )


real_valued(DetectionPostProcessOp)


computes_float32(DetectionPostProcessOp)


@kernel(DetectionPostProcessOp)
def detection_postprocess(
    op: DetectionPostProcessOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Decode, NMS (fast or regular), and the four float32 results."""
    p = op.props()
    encodings = _dequantize(args[0], element_of(op.box_encodings))[0, :, :4]
    predictions = _dequantize(args[1], element_of(op.class_predictions))[0]
    anchors = _dequantize(args[2], element_of(op.anchors))
    scores = predictions[:, predictions.shape[1] - p["num_classes"] :]
    rows = p["max_detections"] * p["max_classes_per_detection"]
    if rows == 0:
        out = (jnp.zeros((0, 4), F32), jnp.zeros((0,), F32), jnp.zeros((0,), F32), 0)
    else:
        scales = (p["y_scale"], p["x_scale"], p["h_scale"], p["w_scale"])
        boxes = decode_boxes(encodings, anchors, scales)
        nms = regular_nms if p["use_regular_nms"] else fast_nms
        out = nms(boxes, scores, p)
    out_boxes, out_classes, out_scores, count = out
    return [
        out_boxes[None],
        out_classes[None],
        out_scores[None],
        jnp.asarray(count, F32).reshape(1),
    ]
