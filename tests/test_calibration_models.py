"""The latency model's calibration architectures (benchmarks/cost_model.py): each builder
gives a valid ONNX graph with the published model's parameter count and output shapes,
so that the published timings it is fitted to belong to the same architecture."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from synapc.testing.inception import build_inception_v3, build_inception_v4
from synapc.testing.mobilenet_v2 import build_mobilenet_v2
from synapc.testing.yolov5 import build_yolov5


def _parameters(model: onnx.ModelProto) -> int:
    return sum(int(np.prod(t.dims)) for t in model.graph.initializer)


def _output_shapes(model: onnx.ModelProto) -> list[list[int]]:
    return [[d.dim_value for d in o.type.tensor_type.shape.dim] for o in model.graph.output]


@pytest.mark.parametrize(
    ("build", "millions", "outputs"),
    [
        # TF-slim's Inception-v3 without its auxiliary head: 23.8 M; Inception-v4: 42.7 M
        (build_inception_v3, 23.8, [[1, 1001]]),
        (build_inception_v4, 42.6, [[1, 1001]]),
        # Ultralytics' yolov5s / yolov5m (release 6): 7.2 M / 21.2 M, 80 classes
        (
            lambda: build_yolov5("s"),
            7.2,
            [[1, 255, 60, 80], [1, 255, 30, 40], [1, 255, 15, 20]],
        ),
        (
            lambda: build_yolov5("m"),
            21.2,
            [[1, 255, 60, 80], [1, 255, 30, 40], [1, 255, 15, 20]],
        ),
        (lambda: build_mobilenet_v2(batch=4), 3.5, [[4, 1000]]),
    ],
    ids=["inception_v3", "inception_v4", "yolov5s", "yolov5m", "mobilenet_v2_b4"],
)
def test_architecture_matches_the_published_model(build, millions, outputs) -> None:
    model = build()
    onnx.checker.check_model(model, full_check=True)
    assert round(_parameters(model) / 1e6, 1) == millions
    assert _output_shapes(model) == outputs
