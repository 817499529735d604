"""YOLOv5 (Ultralytics, release 6 layout: C3 blocks, SPPF, SiLU) as an ONNX graph with
random weights, up to the three detection convolutions (box decoding is a
post-process): the architecture of the vendor's published yolov5s-640x480 and
yolov5m-640x480 timings, for the latency model's calibration
(`benchmarks/cost_model.py`). ``build_yolov5("s")`` at 640x480 is 7.2 M parameters."""

from __future__ import annotations

import math

import numpy as np
import onnx

from synapc.testing.onnx_graph_builder import OnnxGraphBuilder

#: Depth and width multiples of each size.
SIZES = {"n": (0.33, 0.25), "s": (0.33, 0.5), "m": (0.67, 0.75), "l": (1.0, 1.0)}


class _Yolo(OnnxGraphBuilder):
    """The builder with YOLOv5's modules (convolution + SiLU throughout)."""

    def cbs(
        self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int | None = None
    ) -> str:
        return self.conv(x, cin, cout, (k, k), stride, activation="silu", pad=pad)

    def c3(self, x: str, cin: int, cout: int, n: int, shortcut: bool) -> str:
        hidden = cout // 2
        y = self.cbs(x, cin, hidden, 1)
        for _ in range(n):
            z = self.cbs(self.cbs(y, hidden, hidden, 1), hidden, hidden, 3)
            y = self.node("Add", [y, z]) if shortcut else z
        return self.cbs(self.concat([y, self.cbs(x, cin, hidden, 1)]), 2 * hidden, cout, 1)

    def sppf(self, x: str, cin: int, cout: int) -> str:
        hidden = cin // 2
        y = [self.cbs(x, cin, hidden, 1)]
        for _ in range(3):
            y.append(self.pool(y[-1], "MaxPool", 1, True, kernel=5))
        return self.cbs(self.concat(y), 4 * hidden, cout, 1)

    def upsample(self, x: str) -> str:
        scales = self.constant(self.name("scales"), np.array([1, 1, 2, 2], np.float32))
        return self.node("Resize", [x, "", scales], mode="nearest")


def build_yolov5(
    size: str = "s", height: int = 480, width: int = 640, classes: int = 80, seed: int = 5
) -> onnx.ModelProto:
    """YOLOv5 of `size` (n, s, m, l) with input ``image`` [1, 3, height, width] and
    outputs ``p3``, ``p4``, ``p5``: 3 x (5 + classes) channels at strides 8, 16, 32."""
    depth, widen = SIZES[size]

    def ch(c: int) -> int:
        return math.ceil(c * widen / 8) * 8

    def reps(n: int) -> int:
        return max(round(n * depth), 1)

    g = _Yolo(seed)
    x = g.cbs("image", 3, ch(64), 6, 2, pad=2)
    x = g.c3(g.cbs(x, ch(64), ch(128), 3, 2), ch(128), ch(128), reps(3), True)
    p3 = g.c3(g.cbs(x, ch(128), ch(256), 3, 2), ch(256), ch(256), reps(6), True)
    p4 = g.c3(g.cbs(p3, ch(256), ch(512), 3, 2), ch(512), ch(512), reps(9), True)
    x = g.c3(g.cbs(p4, ch(512), ch(1024), 3, 2), ch(1024), ch(1024), reps(3), True)
    h10 = g.cbs(g.sppf(x, ch(1024), ch(1024)), ch(1024), ch(512), 1)
    x = g.c3(g.concat([g.upsample(h10), p4]), ch(1024), ch(512), reps(3), False)
    h14 = g.cbs(x, ch(512), ch(256), 1)
    out3 = g.c3(g.concat([g.upsample(h14), p3]), ch(512), ch(256), reps(3), False)
    x = g.concat([g.cbs(out3, ch(256), ch(256), 3, 2), h14])
    out4 = g.c3(x, ch(512), ch(512), reps(3), False)
    x = g.concat([g.cbs(out4, ch(512), ch(512), 3, 2), h10])
    out5 = g.c3(x, ch(1024), ch(1024), reps(3), False)
    heads = {
        name: g.conv(out, c, 3 * (5 + classes), (1, 1), activation=None)
        for name, out, c in (("p3", out3, ch(256)), ("p4", out4, ch(512)),
                             ("p5", out5, ch(1024)))
    }  # fmt: skip
    return g.model(f"yolov5{size}", [1, 3, height, width], heads)
