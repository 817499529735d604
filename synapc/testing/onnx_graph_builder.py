"""A small builder of convolutional ONNX graphs with random weights, for the
architecture-equivalent models of the latency model's calibration
(`benchmarks/cost_model.py`): the same architecture has the same latency whatever its
weights, so the published timings of a model apply to its rebuilt twin."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class OnnxGraphBuilder:
    """Nodes and initializers of the graph being built (NCHW). Every convolution has a
    bias (batch norm folded into the random weights) and an optional activation."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.count = 0

    def name(self, kind: str) -> str:
        """A fresh node name starting with `kind`."""
        self.count += 1
        return f"{kind}{self.count}"

    def node(self, op_type: str, inputs: list[str], **attributes: object) -> str:
        """Append one `op_type` node of `inputs`; its output's name."""
        name = self.name(op_type.lower())
        self.nodes.append(
            helper.make_node(op_type, inputs, [name], name=name, **attributes)
        )
        return name

    def constant(self, name: str, array: np.ndarray) -> str:
        """An initializer holding `array`."""
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def conv(
        self,
        x: str,
        cin: int,
        cout: int,
        kernel: tuple[int, int],
        stride: int = 1,
        same: bool = True,
        activation: str | None = "relu",
        pad: int | None = None,
    ) -> str:
        """A convolution of `x` (`cin` to `cout` channels) with ``same`` padding (half
        the kernel on each side), none, or `pad` on every side, then `activation`
        (``relu``, ``silu`` as ``x * sigmoid(x)``, or None)."""
        name = self.name("conv")
        kh, kw = kernel
        std = (2 / (kh * kw * cin)) ** 0.5
        w = self.constant(
            f"{name}.w", self.rng.normal(0, std, (cout, cin, kh, kw)).astype(np.float32)
        )
        b = self.constant(f"{name}.b", np.zeros(cout, np.float32))
        pads = [kh // 2, kw // 2, kh // 2, kw // 2] if same else [0, 0, 0, 0]
        if pad is not None:
            pads = [pad] * 4
        y = self.node(
            "Conv", [x, w, b], kernel_shape=[kh, kw], strides=[stride] * 2, pads=pads
        )
        if activation == "relu":
            return self.node("Relu", [y])
        if activation == "silu":
            return self.node("Mul", [y, self.node("Sigmoid", [y])])
        return y

    def pool(self, x: str, kind: str, stride: int, same: bool, kernel: int = 3) -> str:
        """A `kind` (``MaxPool`` / ``AveragePool``) pooling of `x`."""
        pad = kernel // 2 if same else 0
        attrs = {"count_include_pad": 0} if kind == "AveragePool" else {}
        return self.node(
            kind, [x], kernel_shape=[kernel] * 2, strides=[stride] * 2,
            pads=[pad] * 4, **attrs,
        )  # fmt: skip

    def concat(self, parts: list[str]) -> str:
        """The channel concatenation of `parts`."""
        return self.node("Concat", parts, axis=1)

    def classifier(self, x: str, channels: int, classes: int) -> str:
        """Global average pool, flatten and a fully connected layer to `classes`."""
        flat = self.node("Flatten", [self.node("GlobalAveragePool", [x])])
        w = self.constant(
            "fc.w", self.rng.normal(0, 0.01, (classes, channels)).astype(np.float32)
        )
        b = self.constant("fc.b", np.zeros(classes, np.float32))
        return self.node("Gemm", [flat, w, b], transB=1)

    def model(
        self,
        name: str,
        input_shape: list[int],
        outputs: dict[str, str],
    ) -> onnx.ModelProto:
        """The model of input ``image`` of `input_shape` and `outputs` (output name:
        the value it is), opset 13."""
        for output, value in outputs.items():
            self.nodes.append(helper.make_node("Identity", [value], [output]))
        graph = helper.make_graph(
            self.nodes,
            name,
            [helper.make_tensor_value_info("image", TensorProto.FLOAT, input_shape)],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
            self.initializers,
        )
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8
        )
        return onnx.shape_inference.infer_shapes(model, strict_mode=True)
