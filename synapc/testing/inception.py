"""Inception-v3 and Inception-v4 (Szegedy et al. 2015 and 2016, the TF-slim layouts) as
ONNX graphs with random weights: the architectures of the vendor's published
inception_v3_quant and inception_v4_299_quant timings, for the latency model's
calibration (`benchmarks/cost_model.py`). 299x299 input; Inception-v4 has 42.7 M
parameters and 12.3 G multiply-adds, Inception-v3 23.8 M and 5.7 G."""

from __future__ import annotations

import onnx

from synapc.testing.onnx_graph_builder import OnnxGraphBuilder as _Builder


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
    logits = g.classifier(x, 1536, classes)
    return g.model("inception_v4", [1, 3, 299, 299], {"logits": logits})


def _v3_stem(g: _Builder) -> str:
    x = g.conv("image", 3, 32, (3, 3), 2, same=False)
    x = g.conv(x, 32, 32, (3, 3), same=False)
    x = g.pool(g.conv(x, 32, 64, (3, 3)), "MaxPool", 2, False)
    x = g.conv(g.conv(x, 64, 80, (1, 1)), 80, 192, (3, 3), same=False)
    return g.pool(x, "MaxPool", 2, False)


def _v3_block_a(g: _Builder, x: str, cin: int, pool_channels: int) -> str:
    b0 = g.conv(x, cin, 64, (1, 1))
    b1 = g.conv(g.conv(x, cin, 48, (1, 1)), 48, 64, (5, 5))
    b2 = g.conv(g.conv(g.conv(x, cin, 64, (1, 1)), 64, 96, (3, 3)), 96, 96, (3, 3))
    b3 = g.conv(g.pool(x, "AveragePool", 1, True), cin, pool_channels, (1, 1))
    return g.concat([b0, b1, b2, b3])


def _v3_reduction_a(g: _Builder, x: str) -> str:
    b0 = g.conv(x, 288, 384, (3, 3), 2, False)
    b1 = g.conv(g.conv(g.conv(x, 288, 64, (1, 1)), 64, 96, (3, 3)), 96, 96, (3, 3),
                2, False)  # fmt: skip
    return g.concat([b0, b1, g.pool(x, "MaxPool", 2, False)])


def _v3_block_b(g: _Builder, x: str, c7: int) -> str:
    b0 = g.conv(x, 768, 192, (1, 1))
    b1 = g.conv(g.conv(g.conv(x, 768, c7, (1, 1)), c7, c7, (1, 7)), c7, 192, (7, 1))
    b2 = g.conv(x, 768, c7, (1, 1))
    for cout, k in ((c7, (7, 1)), (c7, (1, 7)), (c7, (7, 1)), (192, (1, 7))):
        b2 = g.conv(b2, c7, cout, k)
    b3 = g.conv(g.pool(x, "AveragePool", 1, True), 768, 192, (1, 1))
    return g.concat([b0, b1, b2, b3])


def _v3_reduction_b(g: _Builder, x: str) -> str:
    b0 = g.conv(g.conv(x, 768, 192, (1, 1)), 192, 320, (3, 3), 2, False)
    b1 = g.conv(g.conv(g.conv(x, 768, 192, (1, 1)), 192, 192, (1, 7)), 192, 192, (7, 1))
    b1 = g.conv(b1, 192, 192, (3, 3), 2, False)
    return g.concat([b0, b1, g.pool(x, "MaxPool", 2, False)])


def _v3_block_c(g: _Builder, x: str, cin: int) -> str:
    b0 = g.conv(x, cin, 320, (1, 1))
    b1 = g.conv(x, cin, 384, (1, 1))
    b1 = g.concat([g.conv(b1, 384, 384, (1, 3)), g.conv(b1, 384, 384, (3, 1))])
    b2 = g.conv(g.conv(x, cin, 448, (1, 1)), 448, 384, (3, 3))
    b2 = g.concat([g.conv(b2, 384, 384, (1, 3)), g.conv(b2, 384, 384, (3, 1))])
    b3 = g.conv(g.pool(x, "AveragePool", 1, True), cin, 192, (1, 1))
    return g.concat([b0, b1, b2, b3])


def build_inception_v3(classes: int = 1001, seed: int = 3) -> onnx.ModelProto:
    """Inception-v3 with input ``image`` [1, 3, 299, 299] and output ``logits``."""
    g = _Builder(seed)
    x = _v3_stem(g)
    for cin, pool_channels in ((192, 32), (256, 64), (288, 64)):
        x = _v3_block_a(g, x, cin, pool_channels)
    x = _v3_reduction_a(g, x)
    for c7 in (128, 160, 160, 192):
        x = _v3_block_b(g, x, c7)
    x = _v3_reduction_b(g, x)
    for cin in (1280, 2048):
        x = _v3_block_c(g, x, cin)
    logits = g.classifier(x, 2048, classes)
    return g.model("inception_v3", [1, 3, 299, 299], {"logits": logits})
