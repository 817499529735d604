"""Fuzzer of the TFLite importer: mutated `.tflite` files through `synapc.import_model`.

Four kinds of case, all deterministic for a seed:

- spec (about half): a small random model built with `synapc.testing.tflite_builder`
  from one of the operator templates below (float or int8), whose recorded tensors,
  buffers, operators, opcodes, options and quantization are then changed before it is
  serialised: shapes with 0, -1, 2**31 - 1 or a lost dimension, unknown types, buffer
  and tensor indices out of range or -1, unknown or swapped opcodes, options fields set
  to 0 / -1 / huge / NaN, options tables of the wrong type or missing, scale arrays
  empty, mismatched, zero, negative or NaN, quantized dimensions out of range;
- patch (a quarter): a real model (MediaPipe's, when installed) or a built one with a
  few fields overwritten in place, found through the flatbuffer's own vtables: shape
  and index entries, types, buffer and opcode indices, options fields, scales, vector
  lengths, vtable entries and table offsets;
- layout: a built model serialised with zero or two subgraphs, or without its operator
  codes, buffers, tensors or operators;
- bytes (the rest): `mutate.mutate_bytes` on a built or real model.

`check(path)` imports the file, as `synapc import` and `synapc convert` do first.
"""

from __future__ import annotations

import dataclasses
import importlib
import struct
from collections.abc import Callable, Iterator
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
import tflite

from benchmarks.fuzz.harness import Case
from benchmarks.fuzz.mutate import INTERESTING_INTS, mutate_bytes
from synapc.testing import tflite_builder as tb
from synapc.testing.tflite_builder import ModelBuilder, Quant, flexbuffer_options

# Loaded here, once: the harness forks a child per case from this process.
importlib.import_module("synapc.importers.tflite")

_Sparsity = importlib.import_module("tflite.SparsityParameters")

TARGET = "tflite"
#: cases tests/test_fuzz.py runs
TEST_CASES = 300

#: Real models used as seeds (the small ones of synapc.testing.models).
REAL_SEEDS = ("face_detection_short_range", "selfie_segmentation")

F32, I8, I32 = np.float32, np.int8, np.int32
#: int32 values for shapes and indices (the vectors are int32).
INT32_VALUES = tuple(
    v for v in (*INTERESTING_INTS, 7, 3, 100, 4096) if -(2**31) <= v < 2**31
)
FLOAT_VALUES = (0.0, -1.0, float("nan"), float("inf"), -float("inf"), 1e-45, 1e38, 0.5)


def check(path: Path) -> None:
    """Import the model file, as every synapc command does first."""
    import synapc

    synapc.import_model(path)


# --------------------------------------------------------------------------------------
# Building random models
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class RawQuant(Quant):
    """Quantization written as given: scales and zero points of any length."""

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The scale and zero-point vectors, unchecked."""
        return (
            np.asarray(self.scale, np.float32).reshape(-1),
            np.asarray(self.zero_point, np.int64).reshape(-1),
        )


class FuzzBuilder(ModelBuilder):
    """A `ModelBuilder` whose `build` can also write what it never would: no or two
    subgraphs; missing operator codes, buffers, tensors or operators; buffers stored
    after the flatbuffer (`external`: buffer index -> (file offset, size), as models over
    2 GiB do) and sparse tensors (`sparse`: tensor indices, an empty SparsityParameters
    table each)."""

    subgraphs = 1
    drop: frozenset[str] = frozenset()

    def __init__(self, description: str = "synapc fuzzer") -> None:
        super().__init__(description)
        self.external: dict[int, tuple[int, int]] = {}
        self.sparse: set[int] = set()

    def _buffer(self, fb: flatbuffers.Builder, index: int, data: bytes) -> int:
        if index not in self.external:
            return self._write_buffer(fb, data)
        offset, size = self.external[index]
        tb._Buffer.BufferStart(fb)
        tb._Buffer.BufferAddOffset(fb, offset)
        tb._Buffer.BufferAddSize(fb, size)
        return tb._Buffer.BufferEnd(fb)

    def _tensor(self, fb: flatbuffers.Builder, index: int, tensor: Any) -> int:
        if index not in self.sparse:
            return self._write_tensor(fb, tensor)
        _Sparsity.SparsityParametersStart(fb)
        sparsity = _Sparsity.SparsityParametersEnd(fb)
        name = fb.CreateString(tensor.name)
        shape = tb._int32_vector(fb, tensor.shape)
        tb._Tensor.TensorStart(fb)
        tb._Tensor.TensorAddShape(fb, shape)
        tb._Tensor.TensorAddType(fb, tensor.type)
        tb._Tensor.TensorAddBuffer(fb, tensor.buffer)
        tb._Tensor.TensorAddName(fb, name)
        tb._Tensor.TensorAddSparsity(fb, sparsity)
        return tb._Tensor.TensorEnd(fb)

    def build(self, *, validate: bool = False) -> bytes:
        """Serialise without validating, honouring `subgraphs`, `drop`, `external` and
        `sparse`."""
        fb = flatbuffers.Builder(1024 + sum(len(b) for b in self._buffers))
        buffers = [self._buffer(fb, i, data) for i, data in enumerate(self._buffers)]
        tensors = [self._tensor(fb, i, t) for i, t in enumerate(self._tensors)]
        operators = [self._write_operator(fb, op) for op in self._operators]
        opcodes = [self._write_opcode(fb, *key) for key in self._opcodes]
        tensors_vec = tb._offset_vector(fb, tensors)
        inputs_vec = tb._int32_vector(fb, self._inputs)
        outputs_vec = tb._int32_vector(fb, self._outputs)
        operators_vec = tb._offset_vector(fb, operators)
        name = fb.CreateString("main")
        tb._SubGraph.SubGraphStart(fb)
        if "tensors" not in self.drop:
            tb._SubGraph.SubGraphAddTensors(fb, tensors_vec)
        if "inputs" not in self.drop:
            tb._SubGraph.SubGraphAddInputs(fb, inputs_vec)
        if "outputs" not in self.drop:
            tb._SubGraph.SubGraphAddOutputs(fb, outputs_vec)
        if "operators" not in self.drop:
            tb._SubGraph.SubGraphAddOperators(fb, operators_vec)
        tb._SubGraph.SubGraphAddName(fb, name)
        subgraph = tb._SubGraph.SubGraphEnd(fb)
        opcodes_vec = tb._offset_vector(fb, opcodes)
        subgraphs_vec = tb._offset_vector(fb, [subgraph] * self.subgraphs)
        buffers_vec = tb._offset_vector(fb, buffers)
        tb._Model.ModelStart(fb)
        tb._Model.ModelAddVersion(fb, 3)
        if "operator_codes" not in self.drop:
            tb._Model.ModelAddOperatorCodes(fb, opcodes_vec)
        if "subgraphs" not in self.drop:
            tb._Model.ModelAddSubgraphs(fb, subgraphs_vec)
        if "buffers" not in self.drop:
            tb._Model.ModelAddBuffers(fb, buffers_vec)
        fb.Finish(tb._Model.ModelEnd(fb), file_identifier=b"TFL3")
        return bytes(fb.Output())


class Net:
    """A template under construction: the builder, the rng and whether it is int8."""

    def __init__(self, rng: np.random.Generator, quantized: bool):
        self.b = FuzzBuilder()
        self.rng = rng
        self.q = quantized
        self.count = 0

    def _name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}_{self.count}"

    def act_quant(self) -> Quant | None:
        """A per-tensor activation quantization when int8."""
        if not self.q:
            return None
        return Quant(float(self.rng.uniform(0.01, 0.2)), int(self.rng.integers(-20, 20)))

    @property
    def dtype(self) -> Any:
        """The activation dtype."""
        return I8 if self.q else F32

    def input(self, shape: list[int]) -> int:
        """A model input."""
        return self.b.input(self._name("x"), shape, self.dtype, quant=self.act_quant())

    def tensor(self, shape: list[int], dtype: Any = None, like: int | None = None) -> int:
        """An activation tensor (quantized like tensor `like` if given)."""
        dtype = dtype or self.dtype
        quant = self.act_quant() if np.dtype(dtype) == np.int8 else None
        if like is not None:
            quant = self.b._tensors[like].quant
        return self.b.tensor(self._name("t"), shape, dtype, quant=quant)

    def weights(self, shape: list[int], axis: int = 0) -> int:
        """A weights constant (int8 per-channel along `axis` when quantized)."""
        data = self.rng.standard_normal(shape).astype(F32)
        if not self.q:
            return self.b.constant(self._name("w"), data)
        scales = self.rng.uniform(0.001, 0.05, shape[axis])
        values = self.rng.integers(-127, 128, shape).astype(I8)
        return self.b.constant(
            self._name("w"),
            values,
            quant=Quant(scales, 0, axis if len(scales) > 1 else None),
        )

    def bias(self, n: int, x_scale: float = 0.05) -> int:
        """A bias constant (int32 when quantized)."""
        if not self.q:
            return self.b.constant(self._name("b"), self.rng.standard_normal(n).astype(F32))
        return self.b.constant(
            self._name("b"),
            self.rng.integers(-1000, 1000, n).astype(I32),
            quant=Quant(np.full(n, x_scale * 0.01), 0, 0 if n > 1 else None),
        )

    def ints(self, values: list[int]) -> int:
        """An int32 constant."""
        return self.b.constant(self._name("c"), np.asarray(values, I32))


def _activation(rng: np.random.Generator) -> str:
    return str(rng.choice(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]))


def _conv(n: Net) -> int:
    r = n.rng
    c, o, k = int(r.integers(1, 5)), int(r.integers(1, 5)), int(r.integers(1, 4))
    s, h = int(r.integers(1, 3)), int(r.integers(k, 9))
    pad = str(r.choice(["SAME", "VALID"]))
    x = n.input([1, h, h, c])
    out = -(-h // s) if pad == "SAME" else (h - k) // s + 1
    y = n.tensor([1, out, out, o])
    w = n.weights([o, k, k, c])
    n.b.op(
        "CONV_2D",
        [x, w, n.bias(o)],
        [y],
        padding=pad,
        stride_w=s,
        stride_h=s,
        fused_activation_function=_activation(r),
    )
    return y


def _depthwise(n: Net) -> int:
    r = n.rng
    c, k, h = int(r.integers(1, 5)), int(r.integers(1, 4)), int(r.integers(4, 9))
    x = n.input([1, h, h, c])
    y = n.tensor([1, h, h, c])
    w = n.weights([1, k, k, c], axis=3)
    n.b.op(
        "DEPTHWISE_CONV_2D",
        [x, w, n.bias(c)],
        [y],
        padding="SAME",
        stride_w=1,
        stride_h=1,
        depth_multiplier=1,
    )
    return y


def _fully_connected(n: Net) -> int:
    r = n.rng
    k, m = int(r.integers(1, 9)), int(r.integers(1, 9))
    x = n.input([1, 2, k] if r.random() < 0.3 else [2, k])
    y = n.tensor([2, m])
    n.b.op("FULLY_CONNECTED", [x, n.weights([m, k]), n.bias(m)], [y])
    return y


def _binary(n: Net) -> int:
    r = n.rng
    name = str(r.choice(["ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "POW"]))
    if n.q and name in ("DIV", "POW"):
        name = "ADD"
    shape = [1, int(r.integers(1, 5)), int(r.integers(1, 5))]
    x, y = n.input(shape), n.tensor(shape)
    other = n.input(shape) if r.random() < 0.5 else n.weights([shape[-1]])
    options = {"fused_activation_function": "RELU"} if name in ("ADD", "MUL") else {}
    n.b.op(name, [x, other], [y], **options)
    return y


def _pool(n: Net) -> int:
    r = n.rng
    h, c, k = int(r.integers(2, 9)), int(r.integers(1, 4)), int(r.integers(1, 3))
    x = n.input([1, h, h, c])
    y = n.tensor([1, (h - k) // k + 1, (h - k) // k + 1, c])
    name = str(r.choice(["AVERAGE_POOL_2D", "MAX_POOL_2D"]))
    n.b.op(
        name,
        [x],
        [y],
        padding="VALID",
        stride_w=k,
        stride_h=k,
        filter_width=k,
        filter_height=k,
    )
    return y


def _reshape(n: Net) -> int:
    r = n.rng
    a, b = int(r.integers(1, 5)), int(r.integers(1, 5))
    x = n.input([1, a, b])
    kind = str(r.choice(["RESHAPE", "SQUEEZE", "EXPAND_DIMS"]))
    if kind == "RESHAPE":
        y = n.tensor([a * b], like=x)
        n.b.op("RESHAPE", [x, n.ints([a * b])], [y], new_shape=[a * b])
    elif kind == "SQUEEZE":
        y = n.tensor([a, b], like=x)
        n.b.op("SQUEEZE", [x], [y], squeeze_dims=[0])
    else:
        y = n.tensor([1, a, b, 1], like=x)
        n.b.op("EXPAND_DIMS", [x, n.ints([3])], [y])
    return y


def _concat(n: Net) -> int:
    r = n.rng
    axis = int(r.integers(0, 3))
    shape = [1, 2, 3]
    out = list(shape)
    out[axis] *= 2
    x1, x2, y = n.input(shape), n.input(shape), n.tensor(out)
    if n.q:  # concat of int8 inputs needs matching parameters; share them
        n.b._tensors[x2].quant = n.b._tensors[x1].quant
        n.b._tensors[y].quant = n.b._tensors[x1].quant
    n.b.op("CONCATENATION", [x1, x2], [y], axis=axis)
    return y


def _unary(n: Net) -> int:
    r = n.rng
    name = str(
        r.choice(
            ["SOFTMAX", "LOGISTIC", "TANH", "RELU", "RELU6", "HARD_SWISH", "LEAKY_RELU"]
        )
    )
    shape = [1, int(r.integers(1, 9))]
    x, y = n.input(shape), n.tensor(shape)
    options = {"beta": 1.0} if name == "SOFTMAX" else {}
    if name == "LEAKY_RELU":
        options = {"alpha": 0.2}
    n.b.op(name, [x], [y], **options)
    return y


def _strided_slice(n: Net) -> int:
    x = n.input([1, 6, 4])
    y = n.tensor([1, 3, 4], like=x)
    n.b.op(
        "STRIDED_SLICE",
        [x, n.ints([0, 0, 0]), n.ints([1, 6, 4]), n.ints([1, 2, 1])],
        [y],
    )
    return y


def _pad(n: Net) -> int:
    name = str(n.rng.choice(["PAD", "PADV2", "MIRROR_PAD"]))
    x = n.input([1, 3, 3, 2])
    y = n.tensor([1, 5, 5, 2], like=x)
    inputs = [x, n.ints([[0, 0], [1, 1], [1, 1], [0, 0]])]
    options: dict[str, Any] = {}
    if name == "PADV2":
        value = np.zeros(1, I8 if n.q else F32)
        inputs.append(n.b.constant(n._name("v"), value, quant=n.b._tensors[x].quant))
    if name == "MIRROR_PAD":
        options["mode"] = "REFLECT"
    n.b.op(name, inputs, [y], **options)
    return y


def _reduce(n: Net) -> int:
    name = str(n.rng.choice(["MEAN", "SUM", "REDUCE_MAX", "ARG_MAX"]))
    x = n.input([1, 4, 3])
    if name == "ARG_MAX":
        y = n.tensor([1, 4], I32)
        n.b.op(name, [x, n.ints([2])], [y], output_type="INT32")
    else:
        y = n.tensor([1, 4, 1])
        n.b.op(name, [x, n.ints([2])], [y], keep_dims=True)
    return y


def _transpose(n: Net) -> int:
    x = n.input([1, 2, 3])
    y = n.tensor([1, 3, 2], like=x)
    n.b.op("TRANSPOSE", [x, n.ints([0, 2, 1])], [y])
    return y


def _gather(n: Net) -> int:
    x = n.input([5, 3])
    y = n.tensor([2, 3], like=x)
    n.b.op("GATHER", [x, n.ints([4, 0])], [y], axis=0)
    return y


def _split(n: Net) -> int:
    kind = str(n.rng.choice(["SPLIT", "SPLIT_V", "UNPACK", "PACK"]))
    if kind == "PACK":
        x1, x2, y = n.input([2, 3]), n.input([2, 3]), n.tensor([2, 2, 3])
        if n.q:
            n.b._tensors[x2].quant = n.b._tensors[y].quant = n.b._tensors[x1].quant
        n.b.op("PACK", [x1, x2], [y], values_count=2, axis=1)
        return y
    x = n.input([1, 4, 2])
    quant = n.b._tensors[x].quant
    if kind == "UNPACK":
        outs = [n.b.tensor(n._name("u"), [1, 2], n.dtype, quant=quant) for _ in range(4)]
        n.b.op("UNPACK", [x], outs, num=4, axis=1)
    else:
        outs = [n.b.tensor(n._name("s"), [1, 2, 2], n.dtype, quant=quant) for _ in range(2)]
        if kind == "SPLIT":
            n.b.op("SPLIT", [n.ints([1]), x], outs, num_splits=2)
        else:
            n.b.op("SPLIT_V", [x, n.ints([2, 2]), n.ints([1])], outs, num_splits=2)
    return outs[0]


def _resize(n: Net) -> int:
    name = str(n.rng.choice(["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"]))
    x = n.input([1, 2, 2, 3])
    y = n.tensor([1, 4, 4, 3])
    if n.q:
        n.b._tensors[y].quant = n.b._tensors[x].quant
    n.b.op(name, [x, n.ints([4, 4])], [y], half_pixel_centers=bool(n.rng.random() < 0.5))
    return y


def _transpose_conv(n: Net) -> int:
    x = n.input([1, 3, 3, 2])
    y = n.tensor([1, 6, 6, 4])
    w = n.weights([4, 2, 2, 2])
    if n.rng.random() < 0.5 and not n.q:
        n.b.custom_op(
            "Convolution2DTransposeBias",
            [x, w, n.bias(4)],
            [y],
            options=np.asarray([2, 2, 2], "<i4").tobytes(),
        )
    else:
        n.b.op(
            "TRANSPOSE_CONV",
            [n.ints([1, 6, 6, 4]), w, x, n.bias(4)],
            [y],
            padding="SAME",
            stride_w=2,
            stride_h=2,
        )
    return y


def _matmul(n: Net) -> int:
    x, w = n.input([1, 2, 3]), n.input([1, 3, 4])
    y = n.tensor([1, 2, 4])
    n.b.op("BATCH_MATMUL", [x, w], [y])
    return y


def _space(n: Net) -> int:
    if n.rng.random() < 0.5:
        x, y = n.input([1, 2, 2, 4]), n.tensor([1, 4, 4, 1])
        name = "DEPTH_TO_SPACE"
    else:
        x, y = n.input([1, 4, 4, 1]), n.tensor([1, 2, 2, 4])
        name = "SPACE_TO_DEPTH"
    if n.q:
        n.b._tensors[y].quant = n.b._tensors[x].quant
    n.b.op(name, [x], [y], block_size=2)
    return y


def _quantize(n: Net) -> int:
    if n.rng.random() < 0.5:  # float16 weights, mediapipe style
        w = n.b.constant(n._name("h"), n.rng.standard_normal((2, 3)).astype(np.float16))
        x = n.b.input(n._name("x"), [2, 3], F32)
        d = n.b.tensor(n._name("d"), [2, 3], F32)
        y = n.b.tensor(n._name("y"), [2, 3], F32)
        n.b.op("DEQUANTIZE", [w], [d])
        n.b.op("ADD", [x, d], [y])
        return y
    x = n.b.input(n._name("x"), [1, 4], F32)
    q = n.b.tensor(n._name("q"), [1, 4], I8, quant=Quant(0.05, 3))
    y = n.b.tensor(n._name("y"), [1, 4], F32)
    n.b.op("QUANTIZE", [x], [q])
    n.b.op("DEQUANTIZE", [q], [y])
    return y


def _detection(n: Net) -> int:
    b = n.b
    boxes = b.input("boxes", [1, 6, 4], F32)
    scores = b.input("scores", [1, 6, 4], F32)
    anchors = b.constant("anchors", np.abs(n.rng.standard_normal((6, 4))).astype(F32))
    results = [
        b.tensor("detection_boxes", [1, 1, 4], F32),
        b.tensor("detection_classes", [1, 1], F32),
        b.tensor("detection_scores", [1, 1], F32),
        b.tensor("num_detections", [1], F32),
    ]
    options = {
        "max_detections": 6,
        "max_classes_per_detection": 1,
        "nms_score_threshold": 0.3,
        "nms_iou_threshold": 0.5,
        "num_classes": 3,
        "y_scale": 10.0,
        "x_scale": 10.0,
        "h_scale": 5.0,
        "w_scale": 5.0,
    }
    if n.rng.random() < 0.5:  # a value of the wrong kind or out of range
        key = str(n.rng.choice(sorted(options)))
        options[key] = _pick(n.rng, (0, -1, 2**40, "x", float("nan")))
    b.custom_op(
        "TFLite_Detection_PostProcess",
        [boxes, scores, anchors],
        results,
        options=flexbuffer_options(options),
    )
    b.output(*results[1:])
    return results[0]


def _network(n: Net) -> int:
    """conv -> pool -> reshape -> fully connected -> softmax."""
    x = n.input([1, 6, 6, 2])
    c = n.tensor([1, 6, 6, 3])
    n.b.op(
        "CONV_2D",
        [x, n.weights([3, 3, 3, 2]), n.bias(3)],
        [c],
        padding="SAME",
        stride_w=1,
        stride_h=1,
        fused_activation_function="RELU",
    )
    p = n.tensor([1, 3, 3, 3])
    n.b.op(
        "MAX_POOL_2D",
        [c],
        [p],
        padding="VALID",
        stride_w=2,
        stride_h=2,
        filter_width=2,
        filter_height=2,
    )
    f = n.tensor([1, 27], like=p)
    n.b.op("RESHAPE", [p, n.ints([1, 27])], [f], new_shape=[1, 27])
    d = n.tensor([1, 5])
    n.b.op("FULLY_CONNECTED", [f, n.weights([5, 27]), n.bias(5)], [d])
    y = n.tensor([1, 5])
    n.b.op("SOFTMAX", [d], [y], beta=1.0)
    return y


TEMPLATES: tuple[Callable[[Net], int], ...] = (
    _conv,
    _depthwise,
    _fully_connected,
    _binary,
    _pool,
    _reshape,
    _concat,
    _unary,
    _strided_slice,
    _pad,
    _reduce,
    _transpose,
    _gather,
    _split,
    _resize,
    _transpose_conv,
    _matmul,
    _space,
    _quantize,
    _detection,
    _network,
)


def random_net(rng: np.random.Generator) -> tuple[Net, str]:
    """A model of one template (int8 for a third of them), not serialised yet."""
    template = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
    net = Net(rng, quantized=rng.random() < 0.35)
    y = template(net)
    net.b.output(y)
    return net, template.__name__.strip("_")


# --------------------------------------------------------------------------------------
# Mutating the recorded model (before serialisation)
# --------------------------------------------------------------------------------------


def _pick(rng: np.random.Generator, values: Any) -> Any:
    return values[int(rng.integers(len(values)))]


def _int32(rng: np.random.Generator) -> int:
    if rng.random() < 0.3:
        return int(rng.integers(-3, 10))
    return int(_pick(rng, INT32_VALUES))


def _mutate_shape(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[int, ...]:
    dims = list(shape)
    kind = int(rng.integers(4))
    if kind == 0 and dims:
        dims[int(rng.integers(len(dims)))] = _int32(rng)
    elif kind == 1 and dims:
        del dims[int(rng.integers(len(dims)))]
    elif kind == 2:
        dims.insert(int(rng.integers(len(dims) + 1)), _pick(rng, (0, 1, 2, -1, 2**31 - 1)))
    else:
        dims = [
            _pick(rng, (0, 1, 65536, 2**31 - 1, -1)) for _ in range(int(rng.integers(6)))
        ]
    return tuple(dims)


def _mutate_quant(rng: np.random.Generator, rank: int) -> Quant | None:
    kind = int(rng.integers(6))
    if kind == 0:
        return None
    scales: list[float] = [
        float(_pick(rng, FLOAT_VALUES)) for _ in range(int(rng.integers(4)))
    ]
    zero_points = [
        int(_pick(rng, (0, 1, -1, 127, 128, -129, 2**40))) for _ in range(len(scales))
    ]
    if kind == 1:  # mismatched lengths
        zero_points = [*zero_points, 0, 0]
    if kind == 2:
        scales = []
    axis = int(_pick(rng, (0, rank - 1, rank, -1, 2**31 - 1))) if kind >= 3 else None
    return RawQuant(scales, zero_points, axis)


def _mutate_options(rng: np.random.Generator, spec: Any) -> None:
    kind = int(rng.integers(4))
    if kind == 0 or spec.table is None:  # another operator's options table
        other = options_of(str(_pick(rng, OPTION_OPS)))
        spec.table, spec.options = other, []
        return
    if kind == 1:
        spec.table, spec.options = None, []
        return
    fields = [f for f in spec.table.fields.values() if f.kind in ("scalar", "vector")]
    if not fields:
        return
    field = _pick(rng, fields)
    if field.kind == "vector":
        value: Any = np.asarray(
            [_int32(rng) for _ in range(int(rng.integers(4)))], dtype=np.int64
        ).astype(field.dtype)
    elif field.dtype.kind == "f":
        value = float(_pick(rng, FLOAT_VALUES))
    elif field.dtype.kind == "b":
        value = bool(rng.integers(2))
    else:
        bits = field.dtype.itemsize * 8
        raw = _int32(rng) & ((1 << bits) - 1)
        value = int(np.asarray(raw, dtype=f"u{field.dtype.itemsize}").view(field.dtype))
    spec.options = [(f, v) for f, v in spec.options if f is not field] + [(field, value)]


#: Operators whose options tables a mutation may put on another operator.
OPTION_OPS = ("CONV_2D", "ADD", "RESHAPE", "SOFTMAX", "CONCATENATION", "GATHER", "PACK")


@cache
def options_of(name: str) -> Any:
    """The options table description of builtin operator `name`."""
    return tb.options_table(name)


def _mutate_values(rng: np.random.Generator, b: ModelBuilder) -> None:
    """Overwrite values of an int32 constant (axes, perms, paddings, begin / end /
    strides, shapes, multiples) or a float one, keeping its size."""
    constants = [
        t for t in b._tensors if 0 < t.buffer < len(b._buffers) and b._buffers[t.buffer]
    ]
    if not constants:
        return
    tensor = _pick(rng, constants)
    data = bytearray(b._buffers[tensor.buffer])
    if tensor.type == tb.tensor_type(np.int32) and len(data) >= 4 and len(data) % 4 == 0:
        values = np.frombuffer(bytes(data), "<i4").copy()
        for _ in range(int(rng.integers(1, 3))):
            values[int(rng.integers(len(values)))] = _int32(rng)
        b._buffers[tensor.buffer] = values.tobytes()
    elif (
        tensor.type == tb.tensor_type(np.float32) and len(data) >= 4 and len(data) % 4 == 0
    ):
        values = np.frombuffer(bytes(data), "<f4").copy()
        values[int(rng.integers(len(values)))] = _pick(rng, FLOAT_VALUES)
        b._buffers[tensor.buffer] = values.tobytes()
    else:
        data[int(rng.integers(len(data)))] = int(rng.integers(256))
        b._buffers[tensor.buffer] = bytes(data)


def mutate_spec(rng: np.random.Generator, net: Net) -> str:
    """Change one to three recorded fields of the model; returns what was changed."""
    b = net.b
    done = []
    for _ in range(int(rng.integers(1, 4))):
        kind = str(
            _pick(
                rng,
                (
                    "shape",
                    "type",
                    "buffer",
                    "data",
                    "values",
                    "values",
                    "op-input",
                    "op-output",
                    "opcode",
                    "opcode-index",
                    "options",
                    "options",
                    "quant",
                    "io",
                    "custom",
                    "external",
                    "sparse",
                ),
            )
        )
        tensor = _pick(rng, b._tensors)
        op = _pick(rng, b._operators) if b._operators else None
        if kind == "shape":
            tensor.shape = _mutate_shape(rng, tensor.shape)
        elif kind == "type":
            tensor.type = int(_pick(rng, (0, 1, 2, 3, 5, 6, 8, 9, 13, 17, 18, 99, -1)))
        elif kind == "buffer":
            tensor.buffer = int(
                _pick(rng, (0, len(b._buffers), len(b._buffers) - 1, 2**32 - 1, 1))
            )
        elif kind == "data" and len(b._buffers) > 1:
            i = int(rng.integers(1, len(b._buffers)))
            data = b._buffers[i]
            b._buffers[i] = _pick(
                rng, (data[:-1], data + b"\0" * 4, b"", data[: len(data) // 2])
            )
        elif kind == "values":
            _mutate_values(rng, b)
        elif kind in ("op-input", "op-output") and op is not None:
            field = "inputs" if kind == "op-input" else "outputs"
            values = list(getattr(op, field))
            change = int(rng.integers(4))
            if change == 0 and values:
                values[int(rng.integers(len(values)))] = _pick(
                    rng, (-1, -2, len(b._tensors), 2**31 - 1, 0)
                )
            elif change == 1 and values:
                values.pop()
            elif change == 2:
                values.append(int(rng.integers(-1, len(b._tensors) + 2)))
            else:
                values = values * 2
            setattr(op, field, tuple(values))
        elif kind == "opcode" and b._opcodes:
            key = _pick(rng, list(b._opcodes))
            index = b._opcodes.pop(key)
            code = int(_pick(rng, (0, 3, 9, 22, 25, 32, 127, 150, 205, 250, 1000, -5)))
            custom = str(_pick(rng, ("", "Custom\nOp", "TFLite_Detection_PostProcess")))
            b._opcodes[(code, custom if code == 32 else "", key[2])] = index
            b._opcodes = dict(sorted(b._opcodes.items(), key=lambda item: item[1]))
        elif kind == "opcode-index" and op is not None:
            op.opcode = int(_pick(rng, (len(b._opcodes), 2**32 - 1, 0)))
        elif kind == "options" and op is not None:
            _mutate_options(rng, op)
        elif kind == "quant":
            tensor.quant = _mutate_quant(rng, len(tensor.shape))
        elif kind == "io":
            target = b._inputs if rng.random() < 0.5 else b._outputs
            target.append(int(_pick(rng, (-1, len(b._tensors), 0, 2**31 - 1))))
        elif kind == "external" and len(b._buffers) > 1:
            size = int(_pick(rng, (0, 4, 24, 2**20, 2**63)))
            offset = int(_pick(rng, (2, 64, 2**32, 2**63, 2**64 - 1 - size)))
            b.external[int(rng.integers(1, len(b._buffers)))] = (offset, size)
        elif kind == "sparse":
            b.sparse.add(b._tensors.index(tensor))
        elif kind == "custom" and op is not None:
            op.custom_options = bytes(
                rng.integers(0, 256, int(rng.integers(0, 40)), np.uint8)
            )
        done.append(kind)
    return "+".join(done)


def mutate_layout(rng: np.random.Generator, net: Net) -> str:
    """Serialise with no or two subgraphs, or without one of the model's vectors."""
    b = net.b
    if rng.random() < 0.4:
        b.subgraphs = int(_pick(rng, (0, 2)))
        return f"subgraphs{b.subgraphs}"
    dropped = str(
        _pick(
            rng, ("operator_codes", "buffers", "tensors", "operators", "inputs", "outputs")
        )
    )
    b.drop = frozenset({dropped, *(["subgraphs"] if rng.random() < 0.1 else [])})
    return "drop-" + "-".join(sorted(b.drop))


# --------------------------------------------------------------------------------------
# Patching fields of a serialised model in place
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Site:
    """A field of a serialised model: byte position, struct format, what it is."""

    pos: int
    fmt: str
    what: str


def _vector_sites(tab: Any, slot: int, fmt: str, what: str) -> list[Site]:
    offset = tab.Offset(slot)
    if not offset:
        return []
    start = tab.Vector(offset)
    count = tab.VectorLen(offset)
    size = struct.calcsize(fmt)
    sites = [Site(start - 4, "<I", f"{what}.length")]
    sites += [Site(start + i * size, fmt, f"{what}[{i}]") for i in range(min(count, 8))]
    return sites


def _scalar_site(tab: Any, slot: int, fmt: str, what: str) -> list[Site]:
    offset = tab.Offset(slot)
    return [Site(tab.Pos + offset, fmt, what)] if offset else []


def _table_sites(tab: Any, what: str) -> list[Site]:
    """The table's own offset to its vtable and its vtable entries."""
    vtable = tab.Pos - struct.unpack_from("<i", tab.Bytes, tab.Pos)[0]
    size = struct.unpack_from("<H", tab.Bytes, vtable)[0]
    sites = [Site(tab.Pos, "<i", f"{what}.vtable")]
    sites += [Site(vtable + e, "<H", f"{what}.vtable[{e}]") for e in range(0, size, 2)]
    return sites


@lru_cache(maxsize=8)
def patch_sites(data: bytes) -> tuple[Site, ...]:
    """The fields of a valid model that patches overwrite."""
    model = tflite.Model.GetRootAs(data, 0)
    sites: list[Site] = [Site(0, "<I", "root")]
    sites += _table_sites(model._tab, "model")
    for slot, name in ((6, "operator_codes"), (8, "subgraphs"), (12, "buffers")):
        sites += _vector_sites(model._tab, slot, "<I", name)
    for c in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(c)
        sites += _scalar_site(code._tab, 4, "<b", f"code{c}.deprecated")
        sites += _scalar_site(code._tab, 10, "<i", f"code{c}.builtin")
    for k in range(model.BuffersLength()):
        buffer = model.Buffers(k)
        if buffer.DataLength():
            start = buffer._tab.Vector(buffer._tab.Offset(4))
            sites.append(Site(start - 4, "<I", f"buffer{k}.length"))
        sites += _table_sites(buffer._tab, f"buffer{k}")
    graph = model.Subgraphs(0)
    sites += _table_sites(graph._tab, "subgraph")
    for slot, name in ((4, "tensors"), (6, "inputs"), (8, "outputs"), (10, "operators")):
        sites += _vector_sites(graph._tab, slot, "<I" if slot in (4, 10) else "<i", name)
    for t in range(graph.TensorsLength()):
        tensor = graph.Tensors(t)
        sites += _vector_sites(tensor._tab, 4, "<i", f"tensor{t}.shape")
        sites += _scalar_site(tensor._tab, 6, "<b", f"tensor{t}.type")
        sites += _scalar_site(tensor._tab, 8, "<I", f"tensor{t}.buffer")
        sites += _table_sites(tensor._tab, f"tensor{t}")
        quant = tensor.Quantization()
        if quant is not None:
            sites += _vector_sites(quant._tab, 8, "<f", f"tensor{t}.scale")
            sites += _vector_sites(quant._tab, 10, "<q", f"tensor{t}.zero_point")
            sites += _scalar_site(quant._tab, 16, "<i", f"tensor{t}.quantized_dimension")
    for k in range(graph.OperatorsLength()):
        op = graph.Operators(k)
        sites += _scalar_site(op._tab, 4, "<I", f"op{k}.opcode_index")
        sites += _vector_sites(op._tab, 6, "<i", f"op{k}.inputs")
        sites += _vector_sites(op._tab, 8, "<i", f"op{k}.outputs")
        sites += _scalar_site(op._tab, 10, "<B", f"op{k}.options_type")
        sites += _table_sites(op._tab, f"op{k}")
        options = op.BuiltinOptions()
        if options is not None:
            vtable = options.Pos - struct.unpack_from("<i", data, options.Pos)[0]
            size = struct.unpack_from("<H", data, vtable)[0]
            for entry in range(4, size, 2):
                offset = struct.unpack_from("<H", data, vtable + entry)[0]
                if offset:
                    fmt = str(_OPTION_FORMATS[(entry + offset) % len(_OPTION_FORMATS)])
                    sites.append(Site(options.Pos + offset, fmt, f"op{k}.options@{offset}"))
            sites += _table_sites(options, f"op{k}.options")
    return tuple(sites)


_OPTION_FORMATS = ("<b", "<i", "<f", "<B")


def _value_for(rng: np.random.Generator, fmt: str) -> Any:
    if fmt == "<f":
        return float(_pick(rng, FLOAT_VALUES))
    if fmt == "<q":
        return int(_pick(rng, (0, -1, 2**40, -(2**63), 128, -129)))
    bits = struct.calcsize(fmt) * 8
    value = _int32(rng) if rng.random() < 0.8 else int(rng.integers(0, 1 << bits))
    value &= (1 << bits) - 1
    if fmt[-1].islower():  # signed: back into range
        value -= (1 << bits) if value >= 1 << (bits - 1) else 0
    return value


def patch(rng: np.random.Generator, data: bytes) -> tuple[bytes, str]:
    """`data` with one to three fields overwritten by interesting values."""
    sites = patch_sites(data)
    out = bytearray(data)
    done = []
    for _ in range(int(rng.integers(1, 4))):
        site = _pick(rng, sites)
        if site.pos + struct.calcsize(site.fmt) > len(out):
            continue
        struct.pack_into(site.fmt, out, site.pos, _value_for(rng, site.fmt))
        done.append(site.what)
    return bytes(out), "+".join(done)


# --------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------


@cache
def real_seeds() -> tuple[tuple[str, bytes], ...]:
    """The real models installed (none when their packages are missing)."""
    from synapc.testing.models import model_path

    found = []
    for name in REAL_SEEDS:
        try:
            found.append((name, model_path(name).read_bytes()))
        except FileNotFoundError:
            continue
    return tuple(found)


def _seed_model(rng: np.random.Generator) -> tuple[bytes, str]:
    """A valid model to patch or flip bytes of: real (a third) or built."""
    reals = real_seeds()
    if reals and rng.random() < 0.35:
        name, data = reals[int(rng.integers(len(reals)))]
        return data, name
    net, name = random_net(rng)
    return net.b.build(), name


def make_case(seed: int, index: int) -> Case:
    """Case `index` of the campaign with `seed` (independent of the other cases)."""
    rng = np.random.default_rng([seed, index])
    roll = rng.random()
    if roll < 0.5:
        net, template = random_net(rng)
        what = mutate_spec(rng, net) if rng.random() < 0.93 else "valid"
        kind, data = "spec", net.b.build()
    elif roll < 0.75:
        seed_data, template = _seed_model(rng)
        kind, (data, what) = "patch", patch(rng, seed_data)
    elif roll < 0.82:
        net, template = random_net(rng)
        kind, what = "layout", mutate_layout(rng, net)
        data = net.b.build()
    else:
        seed_data, template = _seed_model(rng)
        kind, what = "bytes", "bytes"
        data = mutate_bytes(seed_data, rng, edits=int(rng.integers(1, 8)))
    name = f"{index:05d}-{kind}-{template}-{what}"
    safe = "".join(c if c.isalnum() or c in "-_+." else "_" for c in name)[:120]
    return Case(safe, data, ".tflite")


def cases(seed: int, count: int) -> Iterator[Case]:
    """`count` mutated models, deterministic for `seed`."""
    for index in range(count):
        yield make_case(seed, index)
