"""Reading a `.tflite` flatbuffer: tensors, constants, the operator loop, the converter
registry. The converters themselves live in the sibling modules, one per synap op module.

Tensors keep their TFLite types: quantized tensors become `!quant.uniform` element types
(per-tensor or per-axis), constant buffers become WeightStore arrays viewed straight out
of the file bytes (no copy). Operators are converted by one small function each, listed in
`CONVERTERS`; an operator not listed fails with a message naming it, its index and its
output tensor. TFLite has no layer names, so each op takes its first output tensor's name
as `layer_name` and the operator index as `layer_index`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tflite
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.base import SynapOp, shape_of
from synapc.dtypes import element_type_for
from synapc.errors import SynapcError
from synapc.importers.cut import ancestors, check_requested, unknown_output
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


class TfliteOp:
    """One TFLite operator as the converters see it."""

    def __init__(self, importer: Importer, index: int, raw: Any, name: str):
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


class Importer:
    """State of one import: tensors seen so far and the ops emitted.

    `outputs` (TFLite tensor names) cuts the graph: the model returns those tensors, in
    that order, and only the operators they depend on are converted."""

    def __init__(self, path: Path, data: bytes, outputs: Sequence[str] | None = None):
        self.path = path
        self.data = data
        self.model = tflite.Model.GetRootAs(data, 0)
        if self.model.SubgraphsLength() < 1:
            raise SynapcError(f"{path}: the model has no subgraph")
        self.graph = self.model.Subgraphs(0)
        self.weights = WeightStore()
        self.values: dict[int, SSAValue] = {}
        self.ops: list[Operation] = []
        self.requested = outputs

    # -- cutting ---------------------------------------------------------------------
    def _cut(
        self, names: Sequence[str], inputs: Sequence[int]
    ) -> tuple[list[int], set[int]]:
        """The tensor indices of the requested output `names` and the indices of the
        operators they depend on. A name shared by several tensors means the computed
        one (an operator output or a model input) when exactly one is."""
        names = check_requested(self.path, names)
        producer: dict[int, int] = {}
        for k in range(self.graph.OperatorsLength()):
            for t in _as_list(self.graph.Operators(k).OutputsAsNumpy()):
                if t >= 0:
                    producer[int(t)] = k
        by_name: dict[str, list[int]] = {}
        for t in range(self.graph.TensorsLength()):
            by_name.setdefault(self.tensor_name(t), []).append(t)
        targets = []
        for name in names:
            candidates = by_name.get(name)
            if not candidates:
                raise unknown_output(self.path, name, by_name)
            if len(candidates) > 1:
                candidates = [t for t in candidates if t in producer or t in inputs]
            if len(candidates) != 1:
                raise SynapcError(
                    f"{self.path}: output '{name}' names {len(by_name[name])} tensors "
                    "of the model; it must name one"
                )
            targets.append(candidates[0])

        def reads(k: int) -> list[int]:
            return [int(t) for t in _as_list(self.graph.Operators(k).InputsAsNumpy())]

        kept = ancestors(targets, producer, lambda k: [t for t in reads(k) if t >= 0])
        return targets, kept

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

    def const_ints(self, op: TfliteOp, i: int, what: str) -> list[int]:
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
        kept: set[int] | None = None
        if self.requested is not None:
            outputs, kept = self._cut(self.requested, inputs)
        input_types = [self.tensor_type(t) for t in inputs]
        func = FuncOp("main", (input_types, []))
        for t, arg in zip(inputs, func.body.block.args, strict=True):
            self.values[t] = arg
        for index in range(self.graph.OperatorsLength()):
            if kept is not None and index not in kept:
                continue
            raw = self.graph.Operators(index)
            name = self._opcode_name(raw.OpcodeIndex())
            op = TfliteOp(self, index, raw, name)
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


def import_tflite(path: str | Path, outputs: Sequence[str] | None = None) -> Model:
    """Import a `.tflite` file; a corrupt or unsupported file raises `SynapcError`.
    `outputs` (TFLite tensor names) cuts the graph there: the model returns those
    tensors in that order, only the operators they depend on are converted, and every
    model input stays an input."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SynapcError(f"{path}: cannot read: {error.strerror}") from None
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise SynapcError(f"{path}: not a TFLite model (no TFL3 file identifier)")
    try:
        return Importer(path, data, outputs).run()
    except SynapcError:
        raise
    except Exception as error:  # truncated or corrupt flatbuffer
        raise SynapcError(
            f"{path}: corrupt TFLite model ({type(error).__name__}: {error})"
        ) from None


Converter = Callable[[Importer, TfliteOp], None]
CONVERTERS: dict[str, Converter] = {}


def converts(*names: str) -> Callable[[Converter], Converter]:
    """Register a converter for the TFLite operators `names`."""

    def register(function: Converter) -> Converter:
        for name in names:
            CONVERTERS[name] = function
        return function

    return register
