"""Build `tiny_classifier.onnx`: the small image classifier the README's first command
converts for VS680, exported the way PyTorch exports CNNs (NCHW, batch norm after each
convolution, explicit ReLU / ReLU6 nodes, a max pool, global average pool, Gemm, Softmax).

Weights are random (seeded), so the file is byte-identical on every run.
Run: python examples/make_tiny_classifier.py [output.onnx]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

#: Input image: 1 x 3 x 64 x 64 RGB; ten classes.
INPUT_SHAPE = (1, 3, 64, 64)
CLASSES = 10


def build() -> onnx.ModelProto:
    """conv 3x3/2 + BN + ReLU, max pool, depthwise 3x3 + BN + ReLU6, conv 1x1 + BN +
    ReLU, global average pool, flatten, fully connected, softmax."""
    rng = np.random.default_rng(680)
    initializers: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, array: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv_bn(
        name: str, x: str, cin: int, cout: int, k: int, stride: int, group: int
    ) -> str:
        w = const(
            f"{name}.weight",
            rng.normal(0, (2 / (k * k * cin / group)) ** 0.5, (cout, cin // group, k, k)),
        )
        nodes.append(
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
        bn = [
            const(f"{name}.bn.{p}", v)
            for p, v in (
                ("scale", rng.uniform(0.5, 1.5, cout)),
                ("bias", rng.normal(0, 0.1, cout)),
                ("mean", rng.normal(0, 0.1, cout)),
                ("var", rng.uniform(0.5, 1.5, cout)),
            )
        ]
        nodes.append(
            helper.make_node(
                "BatchNormalization",
                [f"{name}.conv", *bn],
                [f"{name}.bn"],
                name=f"{name}.bn",
                epsilon=1e-5,
            )
        )
        return f"{name}.bn"

    x = conv_bn("conv1", "image", 3, 16, 3, 2, 1)
    nodes.append(helper.make_node("Relu", [x], ["relu1"], name="relu1"))
    nodes.append(
        helper.make_node(
            "MaxPool",
            ["relu1"],
            ["pool1"],
            name="pool1",
            kernel_shape=[2, 2],
            strides=[2, 2],
        )
    )
    x = conv_bn("dw2", "pool1", 16, 16, 3, 1, 16)
    low, high = const("relu6.min", np.array(0.0)), const("relu6.max", np.array(6.0))
    nodes.append(helper.make_node("Clip", [x, low, high], ["relu2"], name="relu2"))
    x = conv_bn("pw3", "relu2", 16, 32, 1, 1, 1)
    nodes.append(helper.make_node("Relu", [x], ["relu3"], name="relu3"))
    nodes.append(helper.make_node("GlobalAveragePool", ["relu3"], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    w = const("fc.weight", rng.normal(0, 0.2, (CLASSES, 32)))
    b = const("fc.bias", rng.normal(0, 0.1, CLASSES))
    nodes.append(helper.make_node("Gemm", ["flat", w, b], ["logits"], name="fc", transB=1))
    nodes.append(
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1)
    )
    graph = helper.make_graph(
        nodes,
        "tiny_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, list(INPUT_SHAPE))],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, CLASSES])],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 13)],
        ir_version=8,
        producer_name="synapc examples/make_tiny_classifier.py",
    )
    onnx.checker.check_model(model)
    return model


def main() -> None:
    """Write the model next to this script, or to the path given."""
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_suffix("")
    if target.suffix != ".onnx":
        target = target.with_name("tiny_classifier.onnx")
    onnx.save(build(), target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
