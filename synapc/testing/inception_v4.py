"""Inception-v4 (Szegedy et al. 2016, the TF-slim layout) as an ONNX graph with random
weights: the architecture of the vendor's published inception_v4_299_quant timings, for
the latency model's calibration (`benchmarks/cost_model.py`). 299x299 input, 42.7 M
parameters, 12.3 G multiply-adds."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class _Builder:
    """Nodes and initializers of the graph being built; every conv is followed by a
    ReLU (batch norm folded into the random weights)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.count = 0

    def _name(self, kind: str) -> str:
        self.count += 1
        return f"{kind}{self.count}"

    def conv(
        self,
        x: str,
        cin: int,
        cout: int,
        kernel: tuple[int, int],
        stride: int = 1,
        same: bool = True,
    ) -> str:
        name = self._name("conv")
        kh, kw = kernel
        w = (self.rng.normal(0, (2 / (kh * kw * cin)) ** 0.5, (cout, cin, kh, kw))).astype(
            np.float32
        )
        b = np.zeros(cout, np.float32)
        self.initializers += [
            numpy_helper.from_array(w, f"{name}.w"),
            numpy_helper.from_array(b, f"{name}.b"),
        ]
        pads = [kh // 2, kw // 2, kh // 2, kw // 2] if same else [0, 0, 0, 0]
        self.nodes.append(
            helper.make_node(
                "Conv",
                [x, f"{name}.w", f"{name}.b"],
                [f"{name}.y"],
                name=name,
                kernel_shape=[kh, kw],
                strides=[stride] * 2,
                pads=pads,
            )
        )
        self.nodes.append(helper.make_node("Relu", [f"{name}.y"], [f"{name}.r"]))
        return f"{name}.r"

    def pool(self, x: str, kind: str, stride: int, same: bool) -> str:
        name = self._name(kind.lower())
        pads = [1, 1, 1, 1] if same else [0, 0, 0, 0]
        attrs = {"count_include_pad": 0} if kind == "AveragePool" else {}
        self.nodes.append(
            helper.make_node(
                kind,
                [x],
                [name],
                kernel_shape=[3, 3],
                strides=[stride] * 2,
                pads=pads,
                **attrs,
            )
        )
        return name

    def concat(self, parts: list[str]) -> str:
        name = self._name("concat")
        self.nodes.append(helper.make_node("Concat", parts, [name], axis=1))
        return name


def _stem(g: _Builder) -> str:
    x = g.conv("image", 3, 32, (3, 3), 2, same=False)
    x = g.conv(x, 32, 32, (3, 3), same=False)
    x = g.conv(x, 32, 64, (3, 3))
    x = g.concat([g.pool(x, "MaxPool", 2, False), g.conv(x, 64, 96, (3, 3), 2, False)])
    a = g.conv(g.conv(x, 160, 64, (1, 1)), 64, 96, (3, 3), same=False)
    b = g.conv(x, 160, 64, (1, 1))
    b = g.conv(g.conv(b, 64, 64, (1, 7)), 64, 64, (7, 1))
    b = g.conv(b, 64, 96, (3, 3), same=False)
    x = g.concat([a, b])
    return g.concat([g.conv(x, 192, 192, (3, 3), 2, False), g.pool(x, "MaxPool", 2, False)])


def _block_a(g: _Builder, x: str) -> str:
    b0 = g.conv(x, 384, 96, (1, 1))
    b1 = g.conv(g.conv(x, 384, 64, (1, 1)), 64, 96, (3, 3))
    b2 = g.conv(g.conv(g.conv(x, 384, 64, (1, 1)), 64, 96, (3, 3)), 96, 96, (3, 3))
    b3 = g.conv(g.pool(x, "AveragePool", 1, True), 384, 96, (1, 1))
    return g.concat([b0, b1, b2, b3])


def _reduction_a(g: _Builder, x: str) -> str:
    b0 = g.conv(x, 384, 384, (3, 3), 2, False)
    b1 = g.conv(g.conv(g.conv(x, 384, 192, (1, 1)), 192, 224, (3, 3)), 224, 256, (3, 3),
                2, False)  # fmt: skip
    return g.concat([b0, b1, g.pool(x, "MaxPool", 2, False)])


def _block_b(g: _Builder, x: str) -> str:
    b0 = g.conv(x, 1024, 384, (1, 1))
    b1 = g.conv(g.conv(g.conv(x, 1024, 192, (1, 1)), 192, 224, (1, 7)), 224, 256, (7, 1))
    b2 = g.conv(x, 1024, 192, (1, 1))
    for cin, cout, k in ((192, 192, (7, 1)), (192, 224, (1, 7)), (224, 224, (7, 1)),
                         (224, 256, (1, 7))):  # fmt: skip
        b2 = g.conv(b2, cin, cout, k)
    b3 = g.conv(g.pool(x, "AveragePool", 1, True), 1024, 128, (1, 1))
    return g.concat([b0, b1, b2, b3])


def _reduction_b(g: _Builder, x: str) -> str:
    b0 = g.conv(g.conv(x, 1024, 192, (1, 1)), 192, 192, (3, 3), 2, False)
    b1 = g.conv(g.conv(x, 1024, 256, (1, 1)), 256, 256, (1, 7))
    b1 = g.conv(g.conv(b1, 256, 320, (7, 1)), 320, 320, (3, 3), 2, False)
    return g.concat([b0, b1, g.pool(x, "MaxPool", 2, False)])


def _block_c(g: _Builder, x: str) -> str:
    b0 = g.conv(x, 1536, 256, (1, 1))
    b1 = g.conv(x, 1536, 384, (1, 1))
    b1 = g.concat([g.conv(b1, 384, 256, (1, 3)), g.conv(b1, 384, 256, (3, 1))])
    b2 = g.conv(g.conv(g.conv(x, 1536, 384, (1, 1)), 384, 448, (3, 1)), 448, 512, (1, 3))
    b2 = g.concat([g.conv(b2, 512, 256, (1, 3)), g.conv(b2, 512, 256, (3, 1))])
    b3 = g.conv(g.pool(x, "AveragePool", 1, True), 1536, 256, (1, 1))
    return g.concat([b0, b1, b2, b3])


def build_inception_v4(classes: int = 1001, seed: int = 4) -> onnx.ModelProto:
    """Inception-v4 with input ``image`` [1, 3, 299, 299] and output ``logits``."""
    g = _Builder(seed)
    x = _stem(g)
    for _ in range(4):
        x = _block_a(g, x)
    x = _reduction_a(g, x)
    for _ in range(7):
        x = _block_b(g, x)
    x = _reduction_b(g, x)
    for _ in range(3):
        x = _block_c(g, x)
    g.nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"]))
    g.nodes.append(helper.make_node("Flatten", ["pool"], ["flat"]))
    w = (g.rng.normal(0, 0.01, (classes, 1536))).astype(np.float32)
    g.initializers += [
        numpy_helper.from_array(w, "fc.w"),
        numpy_helper.from_array(np.zeros(classes, np.float32), "fc.b"),
    ]
    g.nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], transB=1))
    graph = helper.make_graph(
        g.nodes,
        "inception_v4",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 299, 299])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])],
        g.initializers,
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8
    )
