"""Build `tiny_cnn.mlir`: a small MobileNet-style classifier in the synap dialect.

The example the README's first command runs. Weights are random (seeded) and stored in
the file's `{-# dialect_resources #-}` section, so the file is a complete model.
Run: python examples/make_tiny_cnn.py [output.mlir]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp

from synapc.dialects.synap.activation import SoftmaxOp
from synapc.dialects.synap.attributes import Activation
from synapc.dialects.synap.conv import Conv2DOp, DepthwiseConv2DOp, FullyConnectedOp
from synapc.dialects.synap.data_movement import ReshapeOp
from synapc.dialects.synap.reduce import ReduceMeanOp
from synapc.mlir_io import write_module
from synapc.weights import WeightStore


def build(store: WeightStore) -> ModuleOp:
    """conv 3x3/2 + relu6, depthwise 3x3 + relu6, conv 1x1, mean, fc, softmax."""
    rng = np.random.default_rng(2026)
    image = TensorType(f32, [1, 32, 32, 3])
    func = FuncOp("main", ([image], []))
    ops = []

    def weight(shape: tuple[int, ...], name: str):
        op = store.constant((rng.standard_normal(shape) * 0.2).astype(np.float32), name)
        ops.append(op)
        return op

    def add(op):
        ops.append(op)
        return op

    x = func.body.block.args[0]
    x = add(
        Conv2DOp.make(
            x,
            weight((16, 3, 3, 3), "conv1_w"),
            weight((16,), "conv1_b"),
            strides=(2, 2),
            pad=(0, 1, 0, 1),
            activation=Activation.RELU6,
            layer_name="conv1",
            layer_index=0,
        )
    )
    x = add(
        DepthwiseConv2DOp.make(
            x,
            weight((1, 3, 3, 16), "dw2_w"),
            weight((16,), "dw2_b"),
            pad=(1, 1, 1, 1),
            activation=Activation.RELU6,
            layer_name="dw2",
            layer_index=1,
        )
    )
    x = add(
        Conv2DOp.make(
            x,
            weight((32, 1, 1, 16), "pw3_w"),
            weight((32,), "pw3_b"),
            activation=Activation.RELU,
            layer_name="pw3",
            layer_index=2,
        )
    )
    x = add(
        ReduceMeanOp.make(x, axes=(1, 2), keep_dims=True, layer_name="pool4", layer_index=3)
    )
    x = add(
        ReshapeOp.make(
            x, result_types=[TensorType(f32, [1, 32])], layer_name="flatten5", layer_index=4
        )
    )
    x = add(
        FullyConnectedOp.make(
            x,
            weight((10, 32), "fc6_w"),
            weight((10,), "fc6_b"),
            layer_name="fc6",
            layer_index=5,
        )
    )
    x = add(SoftmaxOp.make(x, layer_name="prob", layer_index=6))
    func.body.block.add_ops([*ops, ReturnOp(x.results[0])])
    func.function_type = FunctionType.from_lists([image], [x.results[0].type])
    module = ModuleOp([func])
    module.verify()
    return module


def main() -> None:
    """Write the example to the path given, or next to this script."""
    target = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).with_name("tiny_cnn.mlir")
    )
    store = WeightStore()
    write_module(build(store), target, store)
    print(f"wrote {target} ({store.nbytes} weight bytes)")


if __name__ == "__main__":
    main()
