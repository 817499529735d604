"""Reading a `.tflite` flatbuffer: tensors, constants, the operator loop, the converter
registry. The converters themselves live in the sibling modules, one per synap op module.

`flatbuffer.read_model` first reads the file into plain records, checking every offset
against the file; `Importer` then checks the records against each other before it
converts anything (tensor, buffer and operator-code indices in range, shapes within
`synapc.limits`), so every refusal is a `SynapcError` that names the file and the
operator (index and opcode name), tensor (index and name) or buffer and what is wrong
with it::

    model.tflite: operator 3 (CONV_2D): input 1 is tensor 57, but the subgraph has 40
    tensors

Tensors keep their TFLite types: quantized tensors become `!quant.uniform` element types
(per-tensor or per-axis), constant buffers become WeightStore arrays viewed straight out
of the file bytes (no copy). Operators are converted by one small function each, listed in
`CONVERTERS` with the number of inputs and outputs they take; an operator not listed fails
with a message naming it, its index and its output tensor. TFLite has no layer names, so
each op takes its first output tensor's name as `layer_name` and the operator index as
`layer_index`.

Shapes: a model whose tensors all have static shapes is imported with the shapes the file
states. When a `shape_signature` holds -1 (a dimension unknown at conversion time, such as
the number of audio frames), the file's `shape` holds only a placeholder there, so the
input shapes are resolved first (`inputs.resolve_input_shapes`: from `input_shapes`, or
the signature) and every other tensor's shape is then worked out from its operator as
LiteRT's Prepare does after `ResizeInputTensor` (`shape_rules`), with the integer shape
arithmetic between them (SHAPE, STRIDED_SLICE, PACK, ...) folded to constants
(`folding`).

Resource variables (streaming models: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE,
CALL_ONCE) become model state, extra inputs and outputs listed in `Model.state`
(`variables`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tflite
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from synapc.dialects.quant import STORAGE_TYPES, UniformQuantizedType
from synapc.dialects.synap.base import SynapOp, shape_of
from synapc.dialects.synap.shapes import ShapeError
from synapc.dtypes import element_type_for, numpy_dtype
from synapc.errors import SynapcError
from synapc.importers.cut import ancestors, check_requested, unknown_output
from synapc.importers.tflite.flatbuffer import (
    ModelFile,
    Operator,
    Tensor,
    display,
    read_model,
)
from synapc.io_attributes import describe_io
from synapc.limits import check_count, check_tensor, limits
from synapc.model import Model, StateInfo, TensorInfo
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
_OPCODE_NAMES = {
    v: k
    for k, v in vars(tflite.BuiltinOperator).items()
    if k.isupper() and "_FOR_" not in k
}
_TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if k.isupper()}
_OPTIONS_TAGS = {
    k: v
    for k, v in vars(tflite.BuiltinOptions).items()
    if isinstance(v, int) and k[0] != "_"
}
_OPTIONS_NAMES = {v: k for k, v in _OPTIONS_TAGS.items()}


class _CheckedOptions:
    """An options table read through its generated class: a field whose bytes are not in
    the file (a table at the very end of a corrupt file) raises a `SynapcError` naming
    the operator and field instead of `struct.error`."""

    def __init__(self, op: TfliteOp, table: Any):
        self._op = op
        self._table = table

    def __getattr__(self, name: str) -> Any:
        getter = getattr(self._table, name)
        if not callable(getter):
            return getter

        def read(*args: Any) -> Any:
            try:
                return getter(*args)
            except Exception:  # struct.error / ValueError from the generated reader
                table = type(self._table).__name__
                raise self._op.fail(
                    f"corrupt TFLite model: {table}.{name} lies outside the file"
                ) from None

        return read


class TfliteOp:
    """One TFLite operator as the converters see it."""

    def __init__(self, importer: Importer, record: Operator, name: str):
        self.importer = importer
        self.index = record.index
        self.record = record
        self.name = name
        self.inputs = list(record.inputs)
        self.outputs = list(record.outputs)
        #: the raw custom options bytes (None when the operator has none)
        self.custom_options = record.custom_options

    def options(self, options_class: type, *, required: bool = False) -> Any:
        """The builtin options table, decoded as `options_class` (None if absent; an
        error if absent and `required`, or if the table is another options type)."""
        wanted = options_class.__name__
        record = self.record
        if record.options_pos is None or record.options_type == 0:
            if required:
                raise self.fail(f"the {wanted} table (builtin_options) is missing")
            return None
        if record.options_type != _OPTIONS_TAGS.get(wanted):
            found = _OPTIONS_NAMES.get(record.options_type, str(record.options_type))
            raise self.fail(
                f"builtin_options is a {display(found)} table, but {self.name} "
                f"takes {wanted}"
            )
        options = options_class()
        options.Init(self.importer.data, record.options_pos)
        return _CheckedOptions(self, options)

    def input(self, i: int) -> int | None:
        """Tensor index of input `i`, or None when absent (-1) or past the end."""
        if i >= len(self.inputs) or self.inputs[i] < 0:
            return None
        return self.inputs[i]

    @property
    def source(self) -> dict[str, Any]:
        """`layer_name` / `layer_index` keyword arguments for `SynapOp.make`. Inside an
        inlined subgraph (IF / WHILE, see `control_flow`) the name is prefixed with the
        calling op's and the index is the calling op's in subgraph 0."""
        imp = self.importer
        return {
            "layer_name": imp.layer_prefix + imp.tensor_name(self.outputs[0]),
            "layer_index": self.index if imp.caller_index is None else imp.caller_index,
        }

    @property
    def label(self) -> str:
        """`operator 3 (CONV_2D, output 'y')` for messages."""
        out = ""
        tensors = self.importer.graph.tensors
        if self.outputs and 0 <= self.outputs[0] < len(tensors):
            out = f", output '{display(self.importer.tensor_name(self.outputs[0]))}'"
        return f"operator {self.index} ({display(self.name)}{out})"

    def fail(self, message: str) -> SynapcError:
        """An error naming this operator, its index and its output tensor."""
        return SynapcError(f"{self.importer.path}: {self.label}: {message}")

    # -- checks the converters share -------------------------------------------------
    def axis(self, value: int, rank: int, what: str = "axis") -> int:
        """`value` as an axis in [0, rank); TFLite allows [-rank, rank)."""
        if not -rank <= value < rank:
            raise self.fail(f"{what} {value} is out of range for rank {rank}")
        return value % rank

    def positive(self, what: str, values: Sequence[int]) -> None:
        """Refuse `values` (strides, dilations, kernel or block sizes) unless all >= 1."""
        if any(v < 1 for v in values):
            raise self.fail(f"{what} must be positive, got {list(values)}")

    def rank(self, t: int, rank: int, what: str) -> tuple[int, ...]:
        """The shape of tensor `t` (`what`: "input", "weights", ...), which must have
        `rank` dimensions."""
        shape = self.importer.shape(t)
        if len(shape) != rank:
            raise self.fail(
                f"{what} {self.importer.label(t)} must have rank {rank}, "
                f"got shape {list(shape)}"
            )
        return shape


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


class Importer:
    """State of one import: tensors seen so far and the ops emitted.

    `outputs` (TFLite tensor names) cuts the graph: the model returns those tensors, in
    that order, and only the operators they depend on are converted."""

    def __init__(
        self,
        path: Path,
        data: bytes,
        outputs: Sequence[str] | None = None,
        input_shapes: InputShapes = None,
        *,
        infer_all_shapes: bool = False,
    ):
        self.path = path
        self.data = data
        self.file: ModelFile = read_model(path, data)
        self.graph = self.file.main
        self.weights = WeightStore()
        self.values: dict[int, SSAValue] = {}
        self.ops: list[Operation] = []
        self.requested = outputs
        #: the operator being converted: errors about its tensors name it
        self.current: TfliteOp | None = None
        self._element_types: dict[int, Attribute] = {}
        self._constant_bytes = 0
        self._check_references()
        self.input_shapes = input_shapes
        #: whether tensor shapes are worked out from the operators instead of read from
        #: the file: when some shape_signature has an unknown (-1) dimension, or when
        #: asked (tests check the rules against static models this way)
        self.resolving = infer_all_shapes or any(
            -1 in t.shape_signature for t in self.graph.tensors
        )
        #: shapes known better than the file's: model inputs, tensors whose shapes were
        #: inferred (while `resolving`) and folded constants
        self.shapes: dict[int, tuple[int, ...]] = {}
        #: integer tensors computed at import (shape arithmetic), by tensor index
        self.folded: dict[int, np.ndarray] = {}
        #: how deep in inlined subgraphs (IF / WHILE bodies, see `control_flow`) this is
        self.nesting = 0
        #: inside an inlined subgraph: what its layer names start with, and the index of
        #: the operator of subgraph 0 that calls it (the layers' index)
        self.layer_prefix = ""
        self.caller_index: int | None = None

    # -- checks ----------------------------------------------------------------------
    def fail(self, message: str) -> SynapcError:
        """An error in the context of the operator being converted, if any."""
        if self.current is not None:
            return self.current.fail(message)
        return SynapcError(f"{self.path}: {message}")

    def label(self, t: int) -> str:
        """`tensor 5 ('conv/weights')` for messages."""
        return f"tensor {t} ('{display(self.tensor_name(t))}')"

    def _check_references(self) -> None:
        """Every index the records hold points at something that exists, and every
        shape is within the limits, before anything is converted."""
        path, graph = self.path, self.graph
        count = len(graph.tensors)
        buffers = len(self.file.buffers)
        for tensor in graph.tensors:
            if tensor.buffer >= buffers:
                raise SynapcError(
                    f"{path}: {self.label(tensor.index)}: buffer {tensor.buffer} does "
                    f"not exist (the model has {buffers} buffers)"
                )
            dtype = _NUMPY_TYPES.get(tensor.type)
            check_tensor(
                tensor.shape,
                1 if dtype is None else dtype.itemsize,
                f"{path}: {self.label(tensor.index)}",
            )
        for role, tensors in (("input", graph.inputs), ("output", graph.outputs)):
            for i, t in enumerate(tensors):
                if not 0 <= t < count:
                    raise SynapcError(
                        f"{path}: model {role} {i} is tensor {t}, but the subgraph has "
                        f"{count} tensors"
                    )
        codes = len(self.file.operator_codes)
        for op in graph.operators:
            if op.opcode_index >= codes:
                raise SynapcError(
                    f"{path}: operator {op.index}: opcode_index {op.opcode_index} does not "
                    f"exist (the model has {codes} operator codes)"
                )
            where = f"{path}: operator {op.index} ({display(self.opcode_name(op))})"
            for role, tensors, low in (("input", op.inputs, -1), ("output", op.outputs, 0)):
                for i, t in enumerate(tensors):
                    if not low <= t < count:
                        raise SynapcError(
                            f"{where}: {role} {i} is tensor {t}, but the subgraph has "
                            f"{count} tensors"
                        )

    def _check_arity(self, op: TfliteOp) -> None:
        (low, high), (out_low, out_high) = ARITY[op.name]
        for role, tensors, lo, hi in (
            ("inputs", op.inputs, low, high),
            ("outputs", op.outputs, out_low, out_high),
        ):
            if len(tensors) < lo or (hi is not None and len(tensors) > hi):
                wanted = (
                    f"{lo}" if lo == hi else f"{lo} or more" if hi is None else f"{lo}-{hi}"
                )
                noun = role[:-1] if wanted == "1" else role
                raise op.fail(f"expected {wanted} {noun}, got {len(tensors)}")
        for i in range(low):
            if op.inputs[i] < 0:
                raise op.fail(f"input {i} is absent (-1), but {op.name} requires it")

    # -- cutting ---------------------------------------------------------------------
    def _cut(
        self, names: Sequence[str], inputs: Sequence[int]
    ) -> tuple[list[int], set[int]]:
        """The tensor indices of the requested output `names` and the indices of the
        operators they depend on. A name shared by several tensors means the computed
        one (an operator output or a model input) when exactly one is."""
        names = check_requested(self.path, names)
        operators = self.graph.operators
        producer: dict[int, int] = {}
        for op in operators:
            for t in op.outputs:
                producer[t] = op.index
        by_name: dict[str, list[int]] = {}
        for t in range(len(self.graph.tensors)):
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
        kept = ancestors(
            targets, producer, lambda k: [t for t in operators[k].inputs if t >= 0]
        )
        return targets, kept

    # -- tensors ---------------------------------------------------------------------
    def tensor(self, t: int) -> Tensor:
        """The record of tensor `t`; -1 (an absent optional input) is refused."""
        if not 0 <= t < len(self.graph.tensors):
            if t == -1:
                raise self.fail("a required input is absent (tensor index -1)")
            raise self.fail(
                f"tensor {t} does not exist (the subgraph has "
                f"{len(self.graph.tensors)} tensors)"
            )
        return self.graph.tensors[t]

    def tensor_name(self, t: int) -> str:
        """The TFLite name of tensor `t`."""
        return self.tensor(t).name or f"tensor_{t}"

    def shape(self, t: int) -> tuple[int, ...]:
        """The static shape of tensor `t`: resolved for model inputs, inferred from the
        operators for computed tensors of a model with unknown dimensions, else the
        file's."""
        known = self.shapes.get(t)
        return self.tensor(t).shape if known is None else known

    def fixed_dims(self, t: int) -> tuple[int, ...]:
        """Tensor `t`'s shape as the converter knew it: its shape_signature when that
        has unknown (-1) dimensions, else its shape (LiteRT allocates `shape`)."""
        tensor = self.tensor(t)
        signature = tensor.shape_signature
        return signature if -1 in signature else tensor.shape

    def numpy_dtype(self, t: int) -> np.dtype:
        """The numpy dtype of tensor `t`'s values."""
        code = self.tensor(t).type
        if code not in _NUMPY_TYPES:
            kind = _TYPE_NAMES.get(code, f"code {code}")
            raise self.fail(f"{self.label(t)} has unsupported type {kind}")
        return _NUMPY_TYPES[code]

    def element_type(self, t: int) -> Attribute:
        """The IR element type of tensor `t` (quantized when it has scales)."""
        if t not in self._element_types:
            self._element_types[t] = self._element_type(t)
        return self._element_types[t]

    def _element_type(self, t: int) -> Attribute:
        dtype = self.numpy_dtype(t)
        tensor = self.tensor(t)
        q = tensor.quantization
        if q is None or q.scale.size == 0 or dtype.kind not in "iu":
            return element_type_for(dtype)
        where = f"{self.label(t)}: quantization"
        storage = _STORAGE.get(dtype.name)
        if storage is None:
            raise self.fail(f"{self.label(t)} is quantized with unsupported type {dtype}")
        scales = q.scale.astype(np.float64)
        zero_points = q.zero_point if q.zero_point.size else np.zeros(1, np.int64)
        if zero_points.size not in (1, scales.size):
            raise self.fail(
                f"{where} has {scales.size} scales but {zero_points.size} zero points"
            )
        bad = ~(np.isfinite(scales) & (scales > 0))
        if bad.any():
            index = int(np.argmax(bad))
            raise self.fail(
                f"{where} scale {index} is {scales[index]}; scales must be positive and "
                "finite"
            )
        _, low, high = STORAGE_TYPES[storage]
        outside = (zero_points < low) | (zero_points > high)
        if outside.any():
            value = int(zero_points[int(np.argmax(outside))])
            raise self.fail(
                f"{where} zero point {value} is outside the {dtype} range [{low}, {high}]"
            )
        if scales.size == 1:
            return UniformQuantizedType.per_tensor(
                storage, float(scales[0]), int(zero_points[0])
            )
        axis, shape = q.quantized_dimension, tensor.shape
        if not 0 <= axis < len(shape):
            raise self.fail(
                f"{where} quantized_dimension {axis} is not an axis of shape {list(shape)}"
            )
        if shape[axis] != scales.size:
            raise self.fail(
                f"{where} has {scales.size} scales for quantized_dimension {axis} of "
                f"size {shape[axis]}"
            )
        zero_points = np.broadcast_to(zero_points, scales.shape).astype(np.int64)
        return UniformQuantizedType.per_axis(storage, axis, scales, zero_points)

    def tensor_type(self, t: int) -> TensorType[Attribute]:
        """The IR tensor type of tensor `t`."""
        return TensorType(self.element_type(t), self.shape(t))

    def constant_array(self, t: int) -> np.ndarray | None:
        """A constant tensor's values viewed in the file bytes (or computed at import,
        see `folding`); None if not constant."""
        if t in self.folded:
            return self.folded[t]
        tensor = self.tensor(t)
        if tensor.buffer == 0:
            return None
        buffer = self.file.buffers[tensor.buffer]
        if buffer.size == 0:
            return None
        if tensor.sparse:  # sparse constant weights are densified at import
            from synapc.importers.tflite.sparsity import densify_tensor

            return densify_tensor(self, t)
        dtype = self.numpy_dtype(t)
        shape = tensor.shape
        count = math.prod(shape)
        if buffer.size != count * dtype.itemsize:
            raise self.fail(
                f"{self.label(t)}: buffer {buffer.index} has {buffer.size:,} bytes, but "
                f"shape {list(shape)} of {dtype} needs {count * dtype.itemsize:,}"
            )
        return np.frombuffer(self.data, dtype, count, buffer.start).reshape(shape)

    def const_ints(self, op: TfliteOp, i: int, what: str) -> list[int]:
        """Input `i` of `op`, which must be a constant integer tensor, as Python ints."""
        t = op.input(i)
        array = None if t is None else self.constant_array(t)
        if array is None and t is not None and 0 in self.shape(t):
            return []  # no elements, so no data in the file either (empty reduce axes)
        if array is None:
            raise op.fail(f"{what} (input {i}) must be a constant")
        if array.dtype.kind not in "iu":
            raise op.fail(f"{what} (input {i}) must be integers, got {array.dtype}")
        # axes, permutations, paddings, begin / end / strides: a few per dimension, so a
        # large constant here is a mistake, not a list to turn into Python ints
        most = 2 * limits().max_tensor_rank
        if array.size > most:
            raise op.fail(
                f"{what} (input {i}) has {array.size:,} values; at most {most} are "
                "expected, two per dimension (SYNAPC_MAX_TENSOR_RANK raises it)"
            )
        return [int(v) for v in array.reshape(-1).tolist()]

    def const_int(self, op: TfliteOp, i: int, what: str) -> int:
        """Input `i` of `op`, which must be a constant holding one integer."""
        values = self.const_ints(op, i, what)
        if len(values) != 1:
            raise op.fail(f"{what} (input {i}) must hold one value, got {len(values)}")
        return values[0]

    def value(self, t: int) -> SSAValue:
        """The SSA value of tensor `t`, emitting a constant op for constant tensors."""
        if t in self.values:
            return self.values[t]
        array = self.constant_array(t)
        if array is None:
            raise self.fail(
                f"{self.label(t)} is used before it is computed (no earlier operator "
                "writes it, and it is neither a model input nor a constant)"
            )
        self._constant_bytes += array.nbytes
        check_count(
            self._constant_bytes, "max_constant_bytes", f"{self.path}: constants (bytes)"
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
        inputs = list(self.graph.inputs)
        outputs = list(self.graph.outputs)
        kept: set[int] | None = None
        if self.requested is not None:
            outputs, kept = self._cut(self.requested, inputs)
        from synapc.importers.tflite.inputs import resolve_input_shapes
        from synapc.importers.tflite.variables import Variables

        resolve_input_shapes(self, inputs)
        #: resource variables: the state inputs and outputs (see `variables`)
        self.variables = Variables(self)
        states = self.variables.states
        if kept is not None:
            kept |= self.variables.operators_to_keep()
        input_types = [self.tensor_type(t) for t in inputs]
        state_types = [v.type for v in states]
        func = FuncOp("main", ([*input_types, *state_types], []))
        args = list(func.body.block.args)
        for t, arg in zip(inputs, args, strict=False):
            self.values[t] = arg
        self.variables.bind(args[len(inputs) :])
        for record in self.graph.operators:
            if kept is not None and record.index not in kept:
                continue
            self._convert(TfliteOp(self, record, self.opcode_name(record)))
        results = []
        for i, t in enumerate(outputs):
            if t not in self.values and self.constant_array(t) is None:
                raise self.fail(
                    f"model output {i} is {self.label(t)}, which no operator computes"
                )
            results.append(self.value(t))
        state_results = self.variables.results()
        func.body.block.add_ops([*self.ops, ReturnOp(*results, *state_results)])
        func.function_type = FunctionType.from_lists(
            [*input_types, *state_types], [r.type for r in [*results, *state_results]]
        )
        # the user-visible names and TFLite's channels-last layout, in the IR
        describe_io(
            func,
            [*(self.tensor_name(t) for t in inputs), *(v.name for v in states)],
            [*(self.tensor_name(t) for t in outputs), *(v.name for v in states)],
            "nhwc",
        )
        module = ModuleOp([func])
        try:
            module.verify()
        except VerifyException as error:
            raise SynapcError(f"{self.path}: {_first_line(error)}") from None
        state_infos = [
            TensorInfo(v.name, tuple(shape_of(r)), r.type.element_type)
            for v, r in zip(states, state_results, strict=True)
        ]
        return Model(
            module=module,
            weights=self.weights,
            inputs=[
                *(
                    TensorInfo(self.tensor_name(t), self.shape(t), self.element_type(t))
                    for t in inputs
                ),
                *state_infos,
            ],
            outputs=[
                *(
                    TensorInfo(self.tensor_name(t), tuple(shape_of(r)), r.type.element_type)
                    for t, r in zip(outputs, results, strict=True)
                ),
                *state_infos,
            ],
            source=str(self.path),
            state=[
                StateInfo(v.name, len(inputs) + i, len(outputs) + i, v.initial)
                for i, v in enumerate(states)
                if v.initial is not None
            ],
        )

    def _convert(self, op: TfliteOp) -> None:
        """Convert one operator (or fold it, see `folding`); every error names it."""
        from synapc.importers.tflite.folding import fold
        from synapc.importers.tflite.shape_rules import infer_output_shapes

        converter = CONVERTERS.get(op.name)
        self.current = op
        start = len(self.ops)
        try:
            if fold(self, op):
                return
            if converter is None:
                code = self.file.operator_codes[op.record.opcode_index].builtin_code
                if code not in _OPCODE_NAMES:
                    raise op.fail(
                        f"builtin operator code {code} is not in the TFLite schema synapc "
                        "knows"
                    )
                raise op.fail("operator is not supported")
            self._check_arity(op)
            if self.resolving:
                infer_output_shapes(self, op)
            converter(self, op)
            for new in self.ops[start:]:
                self._check_results(op, new)
                new.verify()
        except (SynapcError, MemoryError, RecursionError):
            raise
        except (VerifyException, ShapeError) as error:  # a verifier or shape rule
            raise op.fail(_first_line(error)) from None
        except Exception as error:  # a check missing from the converter: a bug
            raise op.fail(
                f"cannot be converted ({type(error).__name__}: {_first_line(error)})"
            ) from None
        finally:
            self.current = None

    def _check_results(self, op: TfliteOp, new: Operation) -> None:
        """Refuse a result type beyond the limits: ops whose shapes follow from options
        or constants (detection outputs, intermediate reshapes) have no TFLite tensor
        whose shape was checked on reading."""
        for i, result in enumerate(new.results):
            if not isinstance(result.type, TensorType):
                continue
            try:
                itemsize = numpy_dtype(result.type.element_type).itemsize
            except TypeError:
                itemsize = 1
            check_tensor(
                result.type.get_shape(),
                itemsize,
                f"{self.path}: {op.label}: result {i} of {new.name}",
            )

    def opcode_name(self, record: Operator) -> str:
        """The operator's name: the builtin operator's (`CONV_2D`), a custom operator's
        code, or `BUILTIN_<code>` for a code the installed schema does not know."""
        code = self.file.operator_codes[record.opcode_index]
        if code.builtin_code == tflite.BuiltinOperator.CUSTOM:
            return code.custom_code or "CUSTOM"
        return _OPCODE_NAMES.get(code.builtin_code, f"BUILTIN_{code.builtin_code}")


def import_tflite(
    path: str | Path,
    outputs: Sequence[str] | None = None,
    input_shapes: InputShapes = None,
) -> Model:
    """Import a `.tflite` file; a corrupt or unsupported file raises `SynapcError`.
    `outputs` (TFLite tensor names) cuts the graph there: the model returns those
    tensors in that order, only the operators they depend on are converted, and every
    model input stays an input.

    `input_shapes` (by input name or in input order) gives the sizes of the unknown
    (-1) dimensions of the inputs' shape_signature, as LiteRT's `ResizeInputTensorStrict`
    takes them; the other dimensions must be the signature's. An unknown dimension
    nothing gives is refused, except a leading (batch) one of an input of rank 2 or
    more, which is 1 (see `inputs.resolve_input_shapes`)."""
    path = Path(path)
    data = read_tflite_file(path)
    try:
        return Importer(path, data, outputs, input_shapes).run()
    except (SynapcError, MemoryError, RecursionError):
        raise
    except Exception as error:  # a check missing from the reader: a bug
        raise SynapcError(
            f"{path}: corrupt TFLite model ({type(error).__name__}: {_first_line(error)})"
        ) from None


def read_tflite_file(path: Path) -> bytes:
    """The bytes of the `.tflite` file `path`, within `max_model_file_bytes` and with
    TFLite's file identifier; anything else raises `SynapcError`."""
    limit = limits().max_model_file_bytes
    try:
        size = path.stat().st_size
        check_count(size, "max_model_file_bytes", f"{path}: file size (bytes)")
        with path.open("rb") as file:
            data = file.read(limit + 1)  # the file may have grown since stat
    except OSError as error:
        raise SynapcError(f"{path}: cannot read: {error.strerror}") from None
    check_count(len(data), "max_model_file_bytes", f"{path}: file size (bytes)")
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise SynapcError(f"{path}: not a TFLite model (no TFL3 file identifier)")
    return data


Converter = Callable[[Importer, TfliteOp], None]
#: `input_shapes`: shapes by input name, or in input order
InputShapes = Mapping[str, Sequence[int]] | Sequence[Sequence[int]] | None
Arity = tuple[int, int | None]
CONVERTERS: dict[str, Converter] = {}
#: operator name -> ((fewest, most) inputs, (fewest, most) outputs); None: no maximum.
#: Inputs up to the fewest must be present (not -1).
ARITY: dict[str, tuple[Arity, Arity]] = {}


def converts(
    *names: str, inputs: Arity, outputs: Arity = (1, 1)
) -> Callable[[Converter], Converter]:
    """Register a converter for the TFLite operators `names`, which take `inputs` and
    `outputs` tensors (fewest, most; most None for no limit). The counts are checked
    before the converter runs, so it may index `op.inputs` up to the fewest."""

    def register(function: Converter) -> Converter:
        for name in names:
            CONVERTERS[name] = function
            ARITY[name] = (inputs, outputs)
        return function

    return register
