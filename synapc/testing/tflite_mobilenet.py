"""Fully quantized MobileNets as `.tflite` files, with random weights: the int8 and uint8
models people deploy on VS680 / VS640 (`mobilenet_v2_1.0_224_quant`,
`mobilenet_v1_0.25_224_quant`), for benchmarks that compare synapc's exact integer
kernels with LiteRT's (XNNPACK's int8 path) without a download or TensorFlow.

Laid out as the TFLite converter writes them: NHWC, SAME padding, RELU6 fused into the
convolutions, int32 biases at ``s_in * s_w``; int8 models have per-channel symmetric
weights and asymmetric activations, uint8 models per-tensor weights with a zero point.
Activation scales are fixed per layer kind (a ReLU6 output spans [0, 6], a linear
bottleneck about [-8, 8]) instead of calibrated: the arithmetic, not the accuracy, is
what these models are for.
"""

from __future__ import annotations

import numpy as np

from synapc.testing.mobilenet_v2 import _BLOCKS, _channels
from synapc.testing.tflite_builder import ModelBuilder, Quant

#: MobileNetV1's (output channels, stride) of its 13 depthwise-separable blocks.
_V1_BLOCKS = (
    *((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)),
    *((512, 1),) * 5,
    *((1024, 2), (1024, 1)),
)


class _QuantizedGraph:
    """Tensors and operators of a quantized MobileNet under construction."""

    def __init__(self, dtype: type, seed: int) -> None:
        self.b = ModelBuilder("synapc.testing.tflite_mobilenet")
        self.rng = np.random.default_rng(seed)
        self.dtype = np.dtype(dtype)
        self.count = 0

    def activation(self, low: float, high: float) -> Quant:
        """The quantization of an activation spanning [low, high]."""
        info = np.iinfo(self.dtype)
        scale = (high - low) / (info.max - info.min)
        return Quant(scale, round(info.min - low / scale))

    def _name(self, what: str) -> str:
        self.count += 1
        return f"{what}_{self.count}"

    def _weights(
        self, shape: tuple[int, ...], axis: int, fan_in: int
    ) -> tuple[int, np.ndarray]:
        """Random He-initialized weights stored in the model's scheme; their scales."""
        real = self.rng.normal(0.0, (2.0 / fan_in) ** 0.5, shape)
        if self.dtype == np.uint8:  # per tensor, with a zero point
            scale = float(2 * np.abs(real).max() / 255)
            q = np.clip(np.round(real / scale) + 128, 0, 255).astype(np.uint8)
            tensor = self.b.constant(self._name("w"), q, quant=Quant(scale, 128))
            return tensor, np.full(shape[axis], scale)
        reduce = tuple(i for i in range(len(shape)) if i != axis)
        scales = np.maximum(np.abs(real).max(axis=reduce), 1e-6) / 127
        view = [1] * len(shape)
        view[axis] = -1
        q = np.clip(np.round(real / scales.reshape(view)), -127, 127).astype(np.int8)
        tensor = self.b.constant(self._name("w"), q, quant=Quant(scales, 0, axis=axis))
        return tensor, scales

    def _bias(self, channels: int, scales: np.ndarray) -> int:
        real = self.rng.normal(0.0, 0.1, channels)
        q = np.round(real / scales).astype(np.int32)
        quant = (
            Quant(scales, 0, axis=0)
            if scales.size > 1 and self.dtype != np.uint8
            else Quant(float(scales[0]), 0)
        )
        return self.b.constant(self._name("b"), q, quant=quant)

    def layer(
        self,
        kind: str,
        x: int,
        x_quant: Quant,
        shape: tuple[int, ...],
        cout: int,
        k: int,
        stride: int,
        relu6: bool,
    ) -> tuple[int, Quant, tuple[int, ...]]:
        """A CONV_2D or DEPTHWISE_CONV_2D layer on `x` (NHWC `shape`): its output tensor,
        quantization and shape."""
        n, h, w, cin = shape
        if kind == "DEPTHWISE_CONV_2D":
            weights, w_scales = self._weights((1, k, k, cout), 3, k * k)
            options = {"depth_multiplier": cout // cin}
        else:
            weights, w_scales = self._weights((cout, k, k, cin), 0, k * k * cin)
            options = {}
        bias = self._bias(cout, float(np.asarray(x_quant.scale)) * w_scales)
        out_shape = (n, -(-h // stride), -(-w // stride), cout)
        quant = self.activation(0.0, 6.0) if relu6 else self.activation(-8.0, 8.0)
        y = self.b.tensor(self._name("act"), out_shape, self.dtype, quant=quant)
        self.b.op(kind, [x, weights, bias], [y], padding="SAME", stride_h=stride,
                  stride_w=stride, fused_activation_function="RELU6" if relu6 else "NONE",
                  **options)  # fmt: skip
        return y, quant, out_shape

    def depthwise(
        self, x: int, x_quant: Quant, shape: tuple[int, ...], stride: int
    ) -> tuple[int, Quant, tuple[int, ...]]:
        """A 3x3 depthwise layer with RELU6."""
        return self.layer("DEPTHWISE_CONV_2D", x, x_quant, shape, shape[3], 3, stride, True)

    def pointwise(
        self, x: int, x_quant: Quant, shape: tuple[int, ...], cout: int, relu6: bool = True
    ) -> tuple[int, Quant, tuple[int, ...]]:
        """A 1x1 convolution to `cout` channels."""
        return self.layer("CONV_2D", x, x_quant, shape, cout, 1, 1, relu6)

    def add(self, a: int, b: int, shape: tuple[int, ...]) -> tuple[int, Quant]:
        quant = self.activation(-12.0, 12.0)
        y = self.b.tensor(self._name("add"), shape, self.dtype, quant=quant)
        self.b.op("ADD", [a, b], [y])
        return y, quant

    def classifier(
        self, x: int, x_quant: Quant, shape: tuple[int, ...], classes: int
    ) -> int:
        """Global average pool, fully connected logits, softmax."""
        n, h, w, c = shape
        pooled = self.b.tensor(self._name("pool"), (n, 1, 1, c), self.dtype, quant=x_quant)
        self.b.op("AVERAGE_POOL_2D", [x], [pooled], padding="VALID", stride_h=1,
                  stride_w=1, filter_height=h, filter_width=w)  # fmt: skip
        flat = self.b.tensor(self._name("flat"), (n, c), self.dtype, quant=x_quant)
        self.b.op("RESHAPE", [pooled, self.b.constant(self._name("shape"),
                  np.array([n, c], np.int32))], [flat], new_shape=[n, c])  # fmt: skip
        weights, w_scales = self._weights((classes, c), 0, c)
        bias = self._bias(classes, float(np.asarray(x_quant.scale)) * w_scales)
        logits_quant = self.activation(-16.0, 16.0)
        logits = self.b.tensor(
            self._name("logits"), (n, classes), self.dtype, quant=logits_quant
        )
        self.b.op("FULLY_CONNECTED", [flat, weights, bias], [logits])
        info = np.iinfo(self.dtype)
        probs = self.b.tensor(self._name("probs"), (n, classes), self.dtype,
                              quant=Quant(1 / 256, int(info.min)))  # fmt: skip
        self.b.op("SOFTMAX", [logits], [probs], beta=1.0)
        return probs


def build_quantized_mobilenet(
    version: int = 2,
    width: float = 1.0,
    resolution: int = 224,
    dtype: type = np.int8,
    classes: int = 1001,
    seed: int = 0,
) -> bytes:
    """A fully quantized MobileNet `version` (1 or 2) at `width` and `resolution` with
    `dtype` (int8 or uint8) activations, as the bytes of a `.tflite` file."""
    if version not in (1, 2) or np.dtype(dtype) not in (
        np.dtype(np.int8),
        np.dtype(np.uint8),
    ):
        raise ValueError("version must be 1 or 2 and dtype int8 or uint8")
    g = _QuantizedGraph(dtype, seed)
    shape: tuple[int, ...] = (1, resolution, resolution, 3)
    x_quant = g.activation(-1.0, 1.0)
    x = g.b.input("input", shape, g.dtype, quant=x_quant)
    stem = _channels(32 * width) if version == 2 else max(8, int(32 * width))
    x, x_quant, shape = g.layer("CONV_2D", x, x_quant, shape, stem, 3, 2, True)
    if version == 1:
        for cout, stride in _V1_BLOCKS:
            x, x_quant, shape = g.depthwise(x, x_quant, shape, stride)
            x, x_quant, shape = g.pointwise(x, x_quant, shape, max(8, int(cout * width)))
    else:
        for t, c, n, s in _BLOCKS:
            cout = _channels(c * width)
            for i in range(n):
                stride = s if i == 0 else 1
                block_in, block_shape = x, shape
                if t != 1:
                    x, x_quant, shape = g.pointwise(x, x_quant, shape, shape[3] * t)
                x, x_quant, shape = g.depthwise(x, x_quant, shape, stride)
                x, x_quant, shape = g.pointwise(x, x_quant, shape, cout, relu6=False)
                if stride == 1 and block_shape == shape:
                    x, x_quant = g.add(block_in, x, shape)
        last = _channels(1280 * max(1.0, width))
        x, x_quant, shape = g.pointwise(x, x_quant, shape, last)
    g.b.output(g.classifier(x, x_quant, shape, classes))
    return g.b.build()
