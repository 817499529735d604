"""TFLite importer: a `.tflite` flatbuffer becomes a `synapc.Model` in the synap dialect.

Tensors keep their TFLite types: quantized tensors become `!quant.uniform` element types
(per-tensor or per-axis), constant buffers become WeightStore arrays viewed straight out
of the file bytes (no copy). Operators are converted by one small function each, listed in
`CONVERTERS`; an operator not listed fails with a message naming it, its index and its
output tensor. TFLite has no layer names, so each op takes its first output tensor's name
as `layer_name` and the operator index as `layer_index`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import tflite
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import activation as act
from synapc.dialects.synap import conv, conversion, data_movement, elementwise, pool, reduce
from synapc.dialects.synap import resize as resize_ops
from synapc.dialects.synap.attributes import (
    Activation,
    CoordinateMode,
    NearestRounding,
    PadMode,
    ResizeMode,
)
from synapc.dialects.synap.base import SynapOp, shape_of
from synapc.dtypes import element_type_for
from synapc.errors import SynapcError
from synapc.model import Model, TensorInfo
from synapc.weights import WeightStore

_NUMPY_TYPES: dict[int, np.dtype] = {
    tflite.TensorType.FLOAT32: np.dtype(np.float32),
    tflite.TensorType.FLOAT16: np.dtype(np.float16),
    tflite.TensorType.FLOAT64: np.dtype(np.float64),
    tflite.TensorType.INT32: np.dtype(np.int32),
    tflite.TensorType.UINT8: np.dtype(np.uint8),
    tflite.TensorType.INT64: np.dtype(np.int64),
    tflite.TensorType.BOOL: np.dtype(np.bool_),
    tflite.TensorType.INT16: np.dtype(np.int16),
    tflite.TensorType.INT8: np.dtype(np.int8),
    tflite.TensorType.UINT16: np.dtype(np.uint16),
}
_STORAGE = {
    "int8": "i8",
    "uint8": "u8",
    "int16": "i16",
    "uint16": "u16",
    "int32": "i32",
    "int64": "i64",
}
_OPCODE_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if k.isupper()}
_TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if k.isupper()}
_ACTIVATIONS = {
    tflite.ActivationFunctionType.NONE: Activation.NONE,
    tflite.ActivationFunctionType.RELU: Activation.RELU,
    tflite.ActivationFunctionType.RELU6: Activation.RELU6,
    tflite.ActivationFunctionType.RELU_N1_TO_1: Activation.RELU_N1_TO_1,
}


class _Op:
    """One TFLite operator as the converters see it."""

    def __init__(self, importer: _Importer, index: int, raw: Any, name: str):
        self.importer = importer
        self.index = index
        self.raw = raw
        self.name = name
        self.inputs = [int(i) for i in _as_list(raw.InputsAsNumpy())]
        self.outputs = [int(o) for o in _as_list(raw.OutputsAsNumpy())]

    def options(self, options_class: type) -> Any:
        """The builtin options table, decoded as `options_class` (None if absent)."""
        table = self.raw.BuiltinOptions()
        if table is None:
            return None
        options = options_class()
        options.Init(table.Bytes, table.Pos)
        return options

    def input(self, i: int) -> int | None:
        """Tensor index of input `i`, or None when absent (-1) or past the end."""
        if i >= len(self.inputs) or self.inputs[i] < 0:
            return None
        return self.inputs[i]

    @property
    def source(self) -> dict[str, Any]:
        """`layer_name` / `layer_index` keyword arguments for `SynapOp.make`."""
        return {
            "layer_name": self.importer.tensor_name(self.outputs[0]),
            "layer_index": self.index,
        }

    def fail(self, message: str) -> SynapcError:
        """An error naming this operator, its index and its output tensor."""
        out = self.importer.tensor_name(self.outputs[0]) if self.outputs else "?"
        return SynapcError(
            f"{self.importer.path}: operator {self.index} ({self.name}, output '{out}'): "
            f"{message}"
        )


def _as_list(value: Any) -> list[int]:
    # flatbuffers returns 0 instead of an empty array for absent vectors
    return [] if isinstance(value, int) else value.tolist()


class _Importer:
    """State of one import: tensors seen so far and the ops emitted."""

    def __init__(self, path: Path, data: bytes):
        self.path = path
        self.data = data
        self.model = tflite.Model.GetRootAs(data, 0)
        if self.model.SubgraphsLength() < 1:
            raise SynapcError(f"{path}: the model has no subgraph")
        self.graph = self.model.Subgraphs(0)
        self.weights = WeightStore()
        self.values: dict[int, SSAValue] = {}
        self.ops: list[Operation] = []

    # -- tensors ---------------------------------------------------------------------
    def tensor_name(self, t: int) -> str:
        """The TFLite name of tensor `t`."""
        name = self.graph.Tensors(t).Name()
        return name.decode("utf-8", "replace") if name else f"tensor_{t}"

    def shape(self, t: int) -> tuple[int, ...]:
        """The static shape of tensor `t` (dynamic dimensions read as their stored size)."""
        tensor = self.graph.Tensors(t)
        return tuple(int(d) for d in _as_list(tensor.ShapeAsNumpy()))

    def numpy_dtype(self, t: int) -> np.dtype:
        """The numpy dtype of tensor `t`'s values."""
        code = self.graph.Tensors(t).Type()
        if code not in _NUMPY_TYPES:
            kind = _TYPE_NAMES.get(code, str(code))
            raise SynapcError(
                f"{self.path}: tensor '{self.tensor_name(t)}' has unsupported type {kind}"
            )
        return _NUMPY_TYPES[code]

    def element_type(self, t: int) -> Attribute:
        """The IR element type of tensor `t` (quantized when it has scales)."""
        dtype = self.numpy_dtype(t)
        q = self.graph.Tensors(t).Quantization()
        if q is None or q.ScaleLength() == 0 or dtype.kind not in "iu":
            return element_type_for(dtype)
        storage = _STORAGE.get(dtype.name)
        if storage is None:
            raise SynapcError(
                f"{self.path}: tensor '{self.tensor_name(t)}' is quantized "
                f"with unsupported type {dtype}"
            )
        scales = q.ScaleAsNumpy().astype(np.float64)
        zero_points = (
            q.ZeroPointAsNumpy() if q.ZeroPointLength() else np.zeros(len(scales), np.int64)
        ).astype(np.int64)
        if len(scales) == 1:
            return UniformQuantizedType.per_tensor(
                storage, float(scales[0]), int(zero_points[0])
            )
        if len(zero_points) == 1:
            zero_points = np.full(len(scales), zero_points[0], np.int64)
        return UniformQuantizedType.per_axis(
            storage, q.QuantizedDimension(), scales, zero_points
        )

    def tensor_type(self, t: int) -> TensorType[Attribute]:
        """The IR tensor type of tensor `t`."""
        return TensorType(self.element_type(t), self.shape(t))

    def constant_array(self, t: int) -> np.ndarray | None:
        """A constant tensor's values viewed in the file bytes; None if not constant."""
        buffer_index = self.graph.Tensors(t).Buffer()
        if buffer_index <= 0:
            return None
        buffer = self.model.Buffers(buffer_index)
        if buffer.Offset() > 1:  # large models keep buffers after the flatbuffer
            raw = np.frombuffer(self.data, np.uint8, buffer.Size(), buffer.Offset())
        elif buffer.DataLength() > 0:
            raw = buffer.DataAsNumpy()
        else:
            return None
        dtype = self.numpy_dtype(t)
        shape = self.shape(t)
        count = int(np.prod(shape, dtype=np.int64))
        if raw.size != count * dtype.itemsize:
            raise SynapcError(
                f"{self.path}: buffer of tensor '{self.tensor_name(t)}' has "
                f"{raw.size} bytes, its shape {list(shape)} of {dtype} needs "
                f"{count * dtype.itemsize}"
            )
        return raw.view(dtype).reshape(shape)

    def const_ints(self, op: _Op, i: int, what: str) -> list[int]:
        """Input `i` of `op`, which must be a constant integer tensor, as Python ints."""
        t = op.input(i)
        array = None if t is None else self.constant_array(t)
        if array is None and t is not None and 0 in self.shape(t):
            return []  # no elements, so no data in the file either (empty reduce axes)
        if array is None:
            raise op.fail(f"{what} (input {i}) must be a constant")
        return [int(v) for v in array.reshape(-1)]

    def value(self, t: int) -> SSAValue:
        """The SSA value of tensor `t`, emitting a constant op for constant tensors."""
        if t in self.values:
            return self.values[t]
        array = self.constant_array(t)
        if array is None:
            raise SynapcError(
                f"{self.path}: tensor '{self.tensor_name(t)}' is used before it is computed"
            )
        op = self.weights.constant(array, self.tensor_name(t), self.tensor_type(t))
        self.ops.append(op)
        self.values[t] = op.results[0]
        return op.results[0]

    # -- emitting --------------------------------------------------------------------
    def emit(self, op: SynapOp, *outputs: int) -> SynapOp:
        """Append `op` and bind its results to the TFLite tensors `outputs`."""
        self.ops.append(op)
        for t, result in zip(outputs, op.results, strict=False):
            self.values[t] = result
        return op

    def run(self) -> Model:
        """Convert the whole main subgraph."""
        inputs = [int(t) for t in _as_list(self.graph.InputsAsNumpy())]
        outputs = [int(t) for t in _as_list(self.graph.OutputsAsNumpy())]
        input_types = [self.tensor_type(t) for t in inputs]
        func = FuncOp("main", (input_types, []))
        for t, arg in zip(inputs, func.body.block.args, strict=True):
            self.values[t] = arg
        for index in range(self.graph.OperatorsLength()):
            raw = self.graph.Operators(index)
            name = self._opcode_name(raw.OpcodeIndex())
            op = _Op(self, index, raw, name)
            converter = CONVERTERS.get(name)
            if converter is None:
                raise op.fail("operator is not supported")
            try:
                converter(self, op)
            except SynapcError:
                raise
            except Exception as error:  # a verifier or shape rule rejected the layer
                raise op.fail(str(error).splitlines()[0]) from None
        results = [self.value(t) for t in outputs]
        func.body.block.add_ops([*self.ops, ReturnOp(*results)])
        func.function_type = FunctionType.from_lists(input_types, [r.type for r in results])
        module = ModuleOp([func])
        module.verify()
        return Model(
            module=module,
            weights=self.weights,
            inputs=[
                TensorInfo(self.tensor_name(t), self.shape(t), self.element_type(t))
                for t in inputs
            ],
            outputs=[
                TensorInfo(self.tensor_name(t), tuple(shape_of(r)), r.type.element_type)
                for t, r in zip(outputs, results, strict=True)
            ],
            source=str(self.path),
        )

    def _opcode_name(self, opcode_index: int) -> str:
        code = self.model.OperatorCodes(opcode_index)
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if builtin == tflite.BuiltinOperator.CUSTOM:
            custom = code.CustomCode()
            return custom.decode("utf-8", "replace") if custom else "CUSTOM"
        return _OPCODE_NAMES.get(builtin, f"BUILTIN_{builtin}")


def import_tflite(path: str | Path) -> Model:
    """Import a `.tflite` file; a corrupt or unsupported file raises `SynapcError`."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SynapcError(f"{path}: cannot read: {error.strerror}") from None
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise SynapcError(f"{path}: not a TFLite model (no TFL3 file identifier)")
    try:
        return _Importer(path, data).run()
    except SynapcError:
        raise
    except Exception as error:  # truncated or corrupt flatbuffer
        raise SynapcError(
            f"{path}: corrupt TFLite model ({type(error).__name__}: {error})"
        ) from None


# ======================================================================================
# Converters: one function per TFLite operator.
# ======================================================================================
Converter = Callable[[_Importer, _Op], None]
CONVERTERS: dict[str, Converter] = {}


def converts(*names: str) -> Callable[[Converter], Converter]:
    """Register a converter for the TFLite operators `names`."""

    def register(function: Converter) -> Converter:
        for name in names:
            CONVERTERS[name] = function
        return function

    return register


def _activation(op: _Op, code: int) -> Activation:
    if code not in _ACTIVATIONS:
        raise op.fail(f"fused activation {code} is not supported")
    return _ACTIVATIONS[code]


def _same_padding(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """TensorFlow's SAME padding: output ceil(size / stride), extra padding at the end."""
    effective = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def _padding(
    op: _Op,
    code: int,
    hw: tuple[int, int],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int],
) -> tuple[int, ...]:
    if code == tflite.Padding.VALID:
        return (0, 0, 0, 0)
    if code != tflite.Padding.SAME:
        raise op.fail(f"padding {code} is not supported")
    top, bottom = _same_padding(hw[0], kernel[0], strides[0], dilations[0])
    left, right = _same_padding(hw[1], kernel[1], strides[1], dilations[1])
    return (top, bottom, left, right)


def _out_type(imp: _Importer, op: _Op, i: int = 0) -> TensorType[Attribute]:
    return imp.tensor_type(op.outputs[i])


def _emit(
    imp: _Importer, op: _Op, op_class: type[SynapOp], *operands: Any, **props: Any
) -> SynapOp:
    """Emit `op_class` of `operands` (all of `op`'s inputs when none are given), typed
    like `op`'s first output, carrying its source layer, and bound to that output."""
    if not operands:
        operands = tuple(imp.value(t) for t in op.inputs)
    result_type = _out_type(imp, op)
    return imp.emit(
        op_class.make(*operands, result_types=[result_type], **props, **op.source),
        op.outputs[0],
    )


def _with_activation(
    imp: _Importer, op: _Op, build: Callable[[TensorType[Any]], SynapOp], code: int
) -> None:
    """Emit `build(result type)`, then a clamp for a fused activation the op cannot hold."""
    activation = _activation(op, code)
    if activation == Activation.NONE:
        imp.emit(build(_out_type(imp, op)), op.outputs[0])
        return
    inner = imp.emit(build(_out_type(imp, op)))
    low, high = activation.bounds
    bounds = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
    _emit(imp, op, act.ClampOp, inner, **bounds)


@converts("CONV_2D")
def _conv2d(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.Conv2DOptions)
    x, w = op.inputs[0], op.inputs[1]
    bias = op.input(2)
    in_shape, w_shape = imp.shape(x), imp.shape(w)
    strides, dilations = (
        (o.StrideH(), o.StrideW()),
        (o.DilationHFactor(), o.DilationWFactor()),
    )
    pad = _padding(op, o.Padding(), in_shape[1:3], w_shape[1:3], strides, dilations)
    _emit(
        imp,
        op,
        conv.Conv2DOp,
        imp.value(x),
        imp.value(w),
        None if bias is None else imp.value(bias),
        strides=strides,
        dilations=dilations,
        pad=pad,
        groups=in_shape[3] // w_shape[3],
        activation=_activation(op, o.FusedActivationFunction()),
    )


@converts("DEPTHWISE_CONV_2D")
def _depthwise(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.DepthwiseConv2DOptions)
    x, w = op.inputs[0], op.inputs[1]
    bias = op.input(2)
    strides, dilations = (
        (o.StrideH(), o.StrideW()),
        (o.DilationHFactor(), o.DilationWFactor()),
    )
    pad = _padding(
        op, o.Padding(), imp.shape(x)[1:3], imp.shape(w)[1:3], strides, dilations
    )
    _emit(
        imp,
        op,
        conv.DepthwiseConv2DOp,
        imp.value(x),
        imp.value(w),
        None if bias is None else imp.value(bias),
        strides=strides,
        dilations=dilations,
        pad=pad,
        activation=_activation(op, o.FusedActivationFunction()),
    )


@converts("TRANSPOSE_CONV")
def _transpose_conv(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.TransposeConvOptions)
    code = o.FusedActivationFunction()
    _emit_transpose_conv(
        imp,
        op,
        op.inputs[2],
        op.inputs[1],
        op.input(3),
        (o.StrideH(), o.StrideW()),
        o.Padding(),
        _activation(op, code),
    )


@converts("Convolution2DTransposeBias")
def _mediapipe_transpose_conv(imp: _Importer, op: _Op) -> None:
    """MediaPipe's custom transposed convolution: inputs (input, weights, bias); custom
    options are TfLiteTransposeConvParams as raw int32s (padding, stride_w, stride_h),
    padding 1 = SAME, 2 = VALID (TfLitePadding)."""
    raw = op.raw.CustomOptionsAsNumpy()
    if isinstance(raw, int) or raw.size < 12:
        raise op.fail("custom options must hold padding, stride_width, stride_height")
    padding, stride_w, stride_h = (int(v) for v in raw[:12].view("<i4"))
    codes = {1: tflite.Padding.SAME, 2: tflite.Padding.VALID}
    if padding not in codes:
        raise op.fail(f"unknown padding {padding} in custom options")
    _emit_transpose_conv(
        imp,
        op,
        op.inputs[0],
        op.inputs[1],
        op.input(2),
        (stride_h, stride_w),
        codes[padding],
        Activation.NONE,
    )


def _emit_transpose_conv(
    imp: _Importer,
    op: _Op,
    x: int,
    w: int,
    bias: int | None,
    strides: tuple[int, int],
    padding: int,
    activation: Activation,
) -> None:
    """A TFLite transposed convolution: the output shape is the output tensor's; SAME
    padding is computed on the output as for a convolution from output to input."""
    out_shape = imp.shape(op.outputs[0])
    kernel = imp.shape(w)[1:3]
    in_hw = imp.shape(x)[1:3]
    pads: list[int] = []
    for axis in range(2):
        full = (in_hw[axis] - 1) * strides[axis] + kernel[axis]
        before = 0
        if padding == tflite.Padding.SAME:
            before = max(full - out_shape[1 + axis], 0) // 2
        pads += [before, full - out_shape[1 + axis] - before]
    _emit(
        imp,
        op,
        conv.TransposeConv2DOp,
        imp.value(x),
        imp.value(w),
        None if bias is None else imp.value(bias),
        strides=strides,
        pad=pads,
        activation=activation,
    )


@converts("FULLY_CONNECTED")
def _fully_connected(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.FullyConnectedOptions)
    if (
        o is not None
        and o.WeightsFormat() != tflite.FullyConnectedOptionsWeightsFormat.DEFAULT
    ):
        raise op.fail("shuffled weights are not supported")
    x, w = op.inputs[0], op.inputs[1]
    bias = op.input(2)
    value = imp.value(x)
    features = imp.shape(w)[1]
    out_type = _out_type(imp, op)
    in_shape = imp.shape(x)
    keep = o is not None and o.KeepNumDims()
    if not keep and len(in_shape) != 2:
        flat = TensorType(
            imp.element_type(x), [int(np.prod(in_shape)) // features, features]
        )
        value = imp.emit(data_movement.ReshapeOp.make(value, result_types=[flat])).results[
            0
        ]
    activation = _activation(op, o.FusedActivationFunction() if o is not None else 0)
    imp.emit(
        conv.FullyConnectedOp.make(
            value,
            imp.value(w),
            None if bias is None else imp.value(bias),
            activation=activation,
            result_types=[out_type],
            **op.source,
        ),
        op.outputs[0],
    )


@converts("BATCH_MATMUL")
def _batch_matmul(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.BatchMatMulOptions)
    _emit(
        imp,
        op,
        conv.MatMulOp,
        transpose_lhs=bool(o and o.AdjX()),
        transpose_rhs=bool(o and o.AdjY()),
    )


@converts("AVERAGE_POOL_2D", "MAX_POOL_2D")
def _pool(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.Pool2DOptions)
    x = op.inputs[0]
    kernel, strides = (o.FilterHeight(), o.FilterWidth()), (o.StrideH(), o.StrideW())
    pad = _padding(op, o.Padding(), imp.shape(x)[1:3], kernel, strides, (1, 1))
    op_class = pool.AvgPool2DOp if op.name == "AVERAGE_POOL_2D" else pool.MaxPool2DOp
    _emit(
        imp,
        op,
        op_class,
        imp.value(x),
        kernel=kernel,
        strides=strides,
        pad=pad,
        activation=_activation(op, o.FusedActivationFunction()),
    )


_REDUCTIONS = {
    "MEAN": reduce.ReduceMeanOp,
    "SUM": reduce.ReduceSumOp,
    "REDUCE_MAX": reduce.ReduceMaxOp,
    "REDUCE_MIN": reduce.ReduceMinOp,
}


@converts(*_REDUCTIONS)
def _reduce(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.ReducerOptions)
    rank = len(imp.shape(op.inputs[0]))
    axes = sorted({a % rank for a in imp.const_ints(op, 1, "axes")})
    _emit(
        imp,
        op,
        _REDUCTIONS[op.name],
        imp.value(op.inputs[0]),
        axes=axes,
        keep_dims=bool(o and o.KeepDims()),
    )


_BINARY_WITH_ACTIVATION = {
    "ADD": (elementwise.AddOp, tflite.AddOptions),
    "SUB": (elementwise.SubOp, tflite.SubOptions),
    "MUL": (elementwise.MulOp, tflite.MulOptions),
    "DIV": (elementwise.DivOp, tflite.DivOptions),
}


@converts(*_BINARY_WITH_ACTIVATION)
def _binary_with_activation(imp: _Importer, op: _Op) -> None:
    op_class, options_class = _BINARY_WITH_ACTIVATION[op.name]
    o = op.options(options_class)
    code = o.FusedActivationFunction() if o is not None else 0
    _emit(imp, op, op_class, activation=_activation(op, code))


_SIMPLE = {
    "MAXIMUM": elementwise.MaximumOp,
    "MINIMUM": elementwise.MinimumOp,
    "SQUARED_DIFFERENCE": elementwise.SquaredDifferenceOp,
    "POW": elementwise.PowOp,
    "PRELU": elementwise.PReluOp,
    "LOGISTIC": act.SigmoidOp,
    "TANH": act.TanhOp,
    "HARD_SWISH": act.HardSwishOp,
    "ELU": act.EluOp,
    "EXP": act.ExpOp,
    "LOG": act.LogOp,
    "SQRT": act.SqrtOp,
    "RSQRT": act.RsqrtOp,
    "ABS": act.AbsOp,
    "NEG": act.NegOp,
    "SQUARE": act.SquareOp,
    "LOG_SOFTMAX": act.LogSoftmaxOp,
}


@converts(*_SIMPLE)
def _simple(imp: _Importer, op: _Op) -> None:
    _emit(imp, op, _SIMPLE[op.name])


_CLAMPS = {
    "RELU": (0.0, None),
    "RELU6": (0.0, 6.0),
    "RELU_N1_TO_1": (-1.0, 1.0),
    "RELU_0_TO_1": (0.0, 1.0),
}


@converts(*_CLAMPS)
def _clamp(imp: _Importer, op: _Op) -> None:
    low, high = _CLAMPS[op.name]
    bounds = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
    _emit(imp, op, act.ClampOp, **bounds)


@converts("LEAKY_RELU")
def _leaky_relu(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.LeakyReluOptions)
    _emit(imp, op, act.LeakyReluOp, alpha=o.Alpha())


@converts("GELU")
def _gelu(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.GeluOptions)
    _emit(imp, op, act.GeluOp, approximate=bool(o and o.Approximate()))


@converts("SOFTMAX")
def _softmax(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.SoftmaxOptions)
    _emit(imp, op, act.SoftmaxOp, beta=o.Beta() if o else 1.0)


@converts("L2_NORMALIZATION")
def _l2_normalize(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.L2NormOptions)
    code = o.FusedActivationFunction() if o is not None else 0
    # TFLite divides by max(sqrt(sum(x^2)), 1e-6); synap.l2_normalize clamps the sum of
    # squares, so the same floor is epsilon = (1e-6)^2.
    _with_activation(
        imp,
        op,
        lambda t: act.L2NormalizeOp.make(
            imp.value(op.inputs[0]), axis=-1, epsilon=1e-12, result_types=[t], **op.source
        ),
        code,
    )


@converts("CONCATENATION")
def _concat(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.ConcatenationOptions)
    values = [imp.value(t) for t in op.inputs]
    _with_activation(
        imp,
        op,
        lambda t: data_movement.ConcatOp.make(
            values,
            axis=o.Axis() % len(imp.shape(op.inputs[0])),
            result_types=[t],
            **op.source,
        ),
        o.FusedActivationFunction(),
    )


def _emit_split(imp: _Importer, op: _Op, x: int, axis: int) -> None:
    types = [imp.tensor_type(t) for t in op.outputs]
    imp.emit(
        data_movement.SplitOp.make(
            imp.value(x), axis=axis % len(imp.shape(x)), result_types=types, **op.source
        ),
        *op.outputs,
    )


@converts("SPLIT")
def _split(imp: _Importer, op: _Op) -> None:
    _emit_split(imp, op, op.inputs[1], imp.const_ints(op, 0, "axis")[0])


@converts("SPLIT_V")
def _split_v(imp: _Importer, op: _Op) -> None:
    _emit_split(imp, op, op.inputs[0], imp.const_ints(op, 2, "axis")[0])


@converts("SLICE")
def _slice(imp: _Importer, op: _Op) -> None:
    begin = imp.const_ints(op, 1, "begin")
    _emit(imp, op, data_movement.SliceOp, imp.value(op.inputs[0]), start=begin)


@converts("STRIDED_SLICE")
def _strided_slice(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.StridedSliceOptions)
    shape = imp.shape(op.inputs[0])
    begin = imp.const_ints(op, 1, "begin")
    end = imp.const_ints(op, 2, "end")
    strides = imp.const_ints(op, 3, "strides")
    if o is not None and (o.EllipsisMask() or o.NewAxisMask()):
        raise op.fail("ellipsis_mask and new_axis_mask are not supported")
    begin_mask = o.BeginMask() if o else 0
    end_mask = o.EndMask() if o else 0
    shrink = o.ShrinkAxisMask() if o else 0
    offset = bool(o and o.Offset())
    b_out, e_out, s_out = [], [], []
    for d, size in enumerate(shape):
        if d >= len(begin):
            b_out.append(0), e_out.append(size), s_out.append(1)
            continue
        s = strides[d]
        b, e = begin[d], end[d] + (begin[d] if offset else 0)
        if shrink >> d & 1:
            b = b + size if b < 0 else b
            b_out.append(b), e_out.append(b + 1), s_out.append(1)
            continue
        if begin_mask >> d & 1:
            b = 0 if s > 0 else size - 1
        else:
            b = b + size if b < 0 else b
            b = min(max(b, 0), size) if s > 0 else min(max(b, -1), size - 1)
        if end_mask >> d & 1:
            e = size if s > 0 else -1
        else:
            e = e + size if e < 0 else e
            e = min(max(e, 0), size) if s > 0 else min(max(e, -1), size - 1)
        if s < 0 and b < 0:  # begin clamped before the front: nothing to take
            b, e = 0, 0
        b_out.append(b)
        e_out.append(e)
        s_out.append(s)
    value = imp.value(op.inputs[0])
    out_type = _out_type(imp, op)
    sliced = data_movement.StridedSliceOp.make(
        value,
        begin=b_out,
        end=e_out,
        strides=s_out,
        element_type=out_type.element_type,
        **op.source,
    )
    if shape_of(sliced.results[0]) == out_type.get_shape():
        imp.emit(sliced, op.outputs[0])
        return
    imp.emit(sliced)
    imp.emit(data_movement.ReshapeOp.make(sliced, result_types=[out_type]), op.outputs[0])


_UNARY_BY_OUTPUT = {
    "RESHAPE": data_movement.ReshapeOp,
    "SQUEEZE": data_movement.ReshapeOp,
    "EXPAND_DIMS": data_movement.ReshapeOp,
    "BROADCAST_TO": data_movement.BroadcastToOp,
    "CAST": conversion.CastOp,
    "QUANTIZE": conversion.QuantizeOp,
}


@converts(*_UNARY_BY_OUTPUT)
def _unary_by_output(imp: _Importer, op: _Op) -> None:
    """Ops of input 0 alone whose result is fully described by the output tensor's type
    (shape inputs such as RESHAPE's are implied by it)."""
    op_class = _UNARY_BY_OUTPUT[op.name]
    _emit(imp, op, op_class, imp.value(op.inputs[0]))


#: operator -> (op class, the property that constant input 1 becomes)
_WITH_CONSTANT_LIST = {
    "TRANSPOSE": (data_movement.TransposeOp, "perm"),
    "TILE": (data_movement.TileOp, "multiples"),
}


@converts(*_WITH_CONSTANT_LIST)
def _with_constant_list(imp: _Importer, op: _Op) -> None:
    """Ops whose input 1 is a constant integer list that becomes a property."""
    op_class, prop = _WITH_CONSTANT_LIST[op.name]
    values = imp.const_ints(op, 1, prop)
    _emit(imp, op, op_class, imp.value(op.inputs[0]), **{prop: values})


@converts("PAD", "PADV2", "MIRROR_PAD")
def _pad(imp: _Importer, op: _Op) -> None:
    pads = imp.const_ints(op, 1, "paddings")
    props: dict[str, Any] = {"pads": pads}
    if op.name == "MIRROR_PAD":
        o = op.options(tflite.MirrorPadOptions)
        props["mode"] = (
            PadMode.REFLECT
            if o.Mode() == tflite.MirrorPadMode.REFLECT
            else PadMode.SYMMETRIC
        )
    elif op.name == "PADV2" and op.input(2) is not None:
        raw = imp.constant_array(op.inputs[2])
        if raw is None:
            raise op.fail("constant_values (input 2) must be a constant")
        element = imp.element_type(op.inputs[2])
        value = float(raw.reshape(-1)[0])
        if isinstance(element, UniformQuantizedType):
            value = element.scale * (value - element.zero_point)
        props["value"] = value
    _emit(imp, op, data_movement.PadOp, imp.value(op.inputs[0]), **props)


@converts("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR")
def _resize(imp: _Importer, op: _Op) -> None:
    bilinear = op.name == "RESIZE_BILINEAR"
    o = op.options(
        tflite.ResizeBilinearOptions if bilinear else tflite.ResizeNearestNeighborOptions
    )
    align = bool(o and o.AlignCorners())
    half = bool(o and o.HalfPixelCenters())
    if align and half:
        # TensorFlow refuses the pair and LiteRT's bilinear kernel too; its nearest kernel
        # takes round((x + 0.5) * (in - 1) / (out - 1)), which no CoordinateMode spells.
        raise op.fail("align_corners together with half_pixel_centers is not supported")
    coords = (
        CoordinateMode.ALIGN_CORNERS
        if align
        else CoordinateMode.HALF_PIXEL
        if half
        else CoordinateMode.ASYMMETRIC
    )
    rounding = NearestRounding.FLOOR
    if not bilinear and (align or half):
        rounding = NearestRounding.ROUND_PREFER_CEIL
    _emit(
        imp,
        op,
        resize_ops.ResizeOp,
        imp.value(op.inputs[0]),
        mode=ResizeMode.BILINEAR if bilinear else ResizeMode.NEAREST,
        coordinate_mode=coords,
        nearest_rounding=rounding,
    )


@converts("DEPTH_TO_SPACE")
def _depth_to_space(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.DepthToSpaceOptions)
    _emit(imp, op, data_movement.DepthToSpaceOp, block_size=o.BlockSize())


@converts("SPACE_TO_DEPTH")
def _space_to_depth(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.SpaceToDepthOptions)
    _emit(imp, op, data_movement.SpaceToDepthOp, block_size=o.BlockSize())


@converts("GATHER")
def _gather(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.GatherOptions)
    if o is not None and o.BatchDims():
        raise op.fail("batch_dims is not supported")
    rank = len(imp.shape(op.inputs[0]))
    axis = (o.Axis() if o else 0) % rank
    _emit(imp, op, data_movement.GatherOp, axis=axis)


@converts("ARG_MAX", "ARG_MIN")
def _arg_reduce(imp: _Importer, op: _Op) -> None:
    axis = imp.const_ints(op, 1, "axis")[0] % len(imp.shape(op.inputs[0]))
    op_class = reduce.ArgMaxOp if op.name == "ARG_MAX" else reduce.ArgMinOp
    _emit(imp, op, op_class, imp.value(op.inputs[0]), axis=axis)


@converts("PACK")
def _pack(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.PackOptions)
    out_type = _out_type(imp, op)
    axis = o.Axis() % len(out_type.get_shape())
    pieces = []
    for t in op.inputs:
        shape = list(imp.shape(t))
        shape.insert(axis, 1)
        piece_type = TensorType(imp.element_type(t), shape)
        pieces.append(
            imp.emit(
                data_movement.ReshapeOp.make(imp.value(t), result_types=[piece_type])
            ).results[0]
        )
    imp.emit(
        data_movement.ConcatOp.make(
            pieces, axis=axis, result_types=[out_type], **op.source
        ),
        op.outputs[0],
    )


@converts("UNPACK")
def _unpack(imp: _Importer, op: _Op) -> None:
    o = op.options(tflite.UnpackOptions)
    shape = list(imp.shape(op.inputs[0]))
    axis = o.Axis() % len(shape)
    piece_shape = [*shape[:axis], 1, *shape[axis + 1 :]]
    element = imp.element_type(op.inputs[0])
    split = imp.emit(
        data_movement.SplitOp.make(
            imp.value(op.inputs[0]),
            axis=axis,
            result_types=[TensorType(element, piece_shape)] * len(op.outputs),
            **op.source,
        )
    )
    for result, t in zip(split.results, op.outputs, strict=True):
        imp.emit(data_movement.ReshapeOp.make(result, result_types=[imp.tensor_type(t)]), t)


@converts("DEQUANTIZE")
def _dequantize(imp: _Importer, op: _Op) -> None:
    x = op.inputs[0]
    array = imp.constant_array(x)
    if array is not None and array.dtype == np.float16:
        # float16 weights (mediapipe style): fold into float32 weights once, at import.
        t = op.outputs[0]
        folded = imp.weights.constant(
            array.astype(np.float32), imp.tensor_name(t), imp.tensor_type(t)
        )
        imp.ops.append(folded)
        imp.values[t] = folded.results[0]
        return
    op_class = (
        conversion.DequantizeOp
        if isinstance(imp.element_type(x), UniformQuantizedType)
        else conversion.CastOp
    )  # float16 activations are a cast
    _emit(imp, op, op_class, imp.value(x))
