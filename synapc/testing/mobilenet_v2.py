"""MobileNetV2 (Sandler et al. 2018), and V1, as ONNX graphs with random weights, laid
out as PyTorch exports them: the size class of model people deploy on VS680 / VS640, for
benchmarks (first inference, conversion time) that need a realistic model without a
download. ``build_mobilenet_v2(width, resolution)``; width 1.0 at 224 is 3.5 M parameters
and 300 M multiply-adds."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

#: (expansion t, output channels c, repeats n, first stride s) of the paper's Table 2.
_BLOCKS = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def _channels(c: float) -> int:
    """Round to a multiple of 8, as the reference implementation does."""
    rounded = max(8, int(c + 4) // 8 * 8)
    return rounded + 8 if rounded < 0.9 * c else rounded


class _Graph:
    """Nodes and initializers of the graph being built."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def const(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv_bn(
        self,
        name: str,
        x: str,
        cin: int,
        cout: int,
        k: int,
        stride: int,
        group: int,
        relu6: bool,
    ) -> str:
        fan_in = k * k * cin // group
        w = self.const(
            f"{name}.w", self.rng.normal(0, (2 / fan_in) ** 0.5, (cout, cin // group, k, k))
        )
        self.nodes.append(
            helper.make_node(
                "Conv",
                [x, w],
                [f"{name}.conv"],
                name=name,
                kernel_shape=[k, k],
                strides=[stride, stride],
                pads=[k // 2] * 4,
                group=group,
            )
        )
        stats = [
            self.const(f"{name}.bn.scale", self.rng.uniform(0.5, 1.0, cout)),
            self.const(f"{name}.bn.bias", self.rng.normal(0, 0.05, cout)),
            self.const(f"{name}.bn.mean", self.rng.normal(0, 0.05, cout)),
            self.const(f"{name}.bn.var", self.rng.uniform(0.5, 1.5, cout)),
        ]
        out = f"{name}.bn"
        self.nodes.append(
            helper.make_node(
                "BatchNormalization",
                [f"{name}.conv", *stats],
                [out],
                name=out,
                epsilon=1e-5,
            )
        )
        if not relu6:
            return out
        self.nodes.append(
            helper.make_node(
                "Clip", [out, "zero", "six"], [f"{name}.relu6"], name=f"{name}.relu6"
            )
        )
        return f"{name}.relu6"


def _classifier(
    g: _Graph,
    x: str,
    channels: int,
    classes: int,
    name: str,
    resolution: int,
    batch: int = 1,
) -> onnx.ModelProto:
    """The model of the graph so far with a classifier head on `x` (global average
    pool, fully connected to `classes` logits)."""
    g.nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"], name="pool"))
    g.nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], name="flatten"))
    w = g.const("fc.w", g.rng.normal(0, 0.01, (classes, channels)))
    b = g.const("fc.b", np.zeros(classes))
    g.nodes.append(
        helper.make_node("Gemm", ["flat", w, b], ["logits"], name="fc", transB=1)
    )
    graph = helper.make_graph(
        g.nodes,
        name,
        [
            helper.make_tensor_value_info(
                "image", TensorProto.FLOAT, [batch, 3, resolution, resolution]
            )
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, classes])],
        g.initializers,
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8
    )


def build_mobilenet_v2(
    width: float = 1.0,
    resolution: int = 224,
    classes: int = 1000,
    seed: int = 2,
    batch: int = 1,
) -> onnx.ModelProto:
    """MobileNetV2 with input ``image`` [batch, 3, resolution, resolution] and output
    ``logits`` [batch, classes]."""
    g = _Graph(seed)
    g.const("zero", np.array(0.0))
    g.const("six", np.array(6.0))
    cin = _channels(32 * width)
    x = g.conv_bn("stem", "image", 3, cin, 3, 2, 1, True)
    index = 0
    for t, c, n, s in _BLOCKS:
        cout = _channels(c * width)
        for i in range(n):
            name = f"block{index}"
            hidden = cin * t
            y = x if t == 1 else g.conv_bn(f"{name}.expand", x, cin, hidden, 1, 1, 1, True)
            y = g.conv_bn(
                f"{name}.dw", y, hidden, hidden, 3, s if i == 0 else 1, hidden, True
            )
            y = g.conv_bn(f"{name}.project", y, hidden, cout, 1, 1, 1, False)
            if i > 0 and cin == cout:
                g.nodes.append(
                    helper.make_node("Add", [x, y], [f"{name}.add"], name=f"{name}.add")
                )
                y = f"{name}.add"
            x, cin = y, cout
            index += 1
    last = _channels(1280 * max(1.0, width))
    x = g.conv_bn("head", x, cin, last, 1, 1, 1, True)
    return _classifier(g, x, last, classes, "mobilenet_v2", resolution, batch)


#: MobileNetV1's depthwise-separable blocks: (output channels, depthwise stride).
_V1_BLOCKS = (
    (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
    (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1),
)  # fmt: skip


def build_mobilenet_v1(
    width: float = 1.0, resolution: int = 224, classes: int = 1000, seed: int = 1
) -> onnx.ModelProto:
    """MobileNetV1 (Howard et al. 2017) with input ``image`` [1, 3, resolution,
    resolution] and output ``logits`` [1, classes]: the architecture of the vendor's
    published mobilenet_v1_0.25_224 timings at width 0.25."""
    g = _Graph(seed)
    g.const("zero", np.array(0.0))
    g.const("six", np.array(6.0))
    cin = int(32 * width)
    x = g.conv_bn("stem", "image", 3, cin, 3, 2, 1, True)
    for k, (c, s) in enumerate(_V1_BLOCKS):
        cout = int(c * width)
        x = g.conv_bn(f"block{k}.dw", x, cin, cin, 3, s, cin, True)
        x = g.conv_bn(f"block{k}.pw", x, cin, cout, 1, 1, 1, True)
        cin = cout
    return _classifier(g, x, cin, classes, "mobilenet_v1", resolution)
