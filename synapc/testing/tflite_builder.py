"""Write `.tflite` flatbuffers without TensorFlow, so tests can build the models they need.

`ModelBuilder` collects the tensors, constant data and operators of one subgraph and
serialises them with the generated `tflite` schema bindings and `flatbuffers`::

    b = ModelBuilder()
    x = b.input("x", [1, 4], np.float32)
    y = b.tensor("y", [1, 4], np.float32)
    b.op("ADD", [x, b.constant("c", np.ones(4, np.float32))], [y],
         fused_activation_function="RELU")
    b.output(y)
    data = b.build()            # bytes of a valid .tflite file

Operator options are not hand-written per operator. `options_table("CONV_2D")` finds the
options table of a builtin operator (`Conv2DOptions`), its tag in the `BuiltinOptions` or
`BuiltinOptions2` union and the type of every field by reflection over the generated
modules, so every builtin operator of the installed schema takes its options as
snake_case keywords named like the schema fields (`stride_w=2`, `padding="SAME"`,
`new_shape=[1, -1]`). Enum-valued fields take the member name as a string.

What LiteRT (ai_edge_litert 2.3, `OpResolverType.BUILTIN_REF` unless said) does with
these files, as found while writing tests/test_tflite_builder.py:

* An operator that has an options table always gets one, even when no option is given,
  so the schema defaults apply (for example `dilation_w_factor = 1`) instead of the
  zeros LiteRT fills in for a missing table. Schema defaults are not always
  usable: Conv2D and Pool2D strides default to 0 and must be given.
* The opcode `version` is only checked against the range registered for the operator
  (CONV_2D: 1-8; `version=9` fails with "Didn't find op for builtin opcode"). Kernels
  pick their code path from the tensor types, not the version: version 1 ran every case
  tried, including int8 per-channel CONV_2D and the int16-activation x int8-weight
  ("16x8") CONV_2D, FULLY_CONNECTED and ADD, so 1 is the default.
* CONV_2D needs its bias: with two inputs Prepare fails (`has_bias`), and a -1 bias is
  refused ("Tensor at index 2 was optional but was expected"); DEPTHWISE_CONV_2D also
  refuses -1. FULLY_CONNECTED accepts -1. A two-input DEPTHWISE_CONV_2D runs in the
  reference kernels but crashes the process (SIGSEGV) with the optimised
  `OpResolverType.BUILTIN` kernels.
* `AddOptions.pot_scale_int16` defaults to true, yet int16 ADD with scales that are not
  powers of two still gives the general-scale result.
* TFLite_Detection_PostProcess is registered in the reference resolver too.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import flatbuffers
import flatbuffers.flexbuffers
import flatbuffers.number_types
import numpy as np
import tflite
from numpy.typing import DTypeLike

__all__ = [
    "ModelBuilder",
    "OptionField",
    "OptionsTable",
    "Quant",
    "builtin_code",
    "flexbuffer_options",
    "options_table",
    "tensor_type",
]

# TFLite's own file identifier and the schema version LiteRT expects.
_FILE_IDENTIFIER = b"TFL3"
_SCHEMA_VERSION = 3
# Buffers are aligned like the TFLite converter does, so kernels may map them directly.
_BUFFER_ALIGNMENT = 16
# `deprecated_builtin_code` is an int8: codes above this are stored as this placeholder.
_PLACEHOLDER_FOR_GREATER_OP_CODES = 127


def _schema(name: str) -> ModuleType:
    """The generated module `tflite.<name>`.

    `import tflite.Model` is not enough: the package re-exports every class under its
    module's name, so `tflite.Model` is the class and the module-level builder functions
    (`ModelStart`, `ModelAddVersion`, ...) are only reachable through `sys.modules`.
    """
    return importlib.import_module(f"{tflite.__name__}.{name}")


_BuiltinOperator = _schema("BuiltinOperator").BuiltinOperator
_TensorType = _schema("TensorType").TensorType
_CustomOptionsFormat = _schema("CustomOptionsFormat").CustomOptionsFormat
_Model = _schema("Model")
_SubGraph = _schema("SubGraph")
_Tensor = _schema("Tensor")
_Buffer = _schema("Buffer")
_Operator = _schema("Operator")
_OperatorCode = _schema("OperatorCode")
_QuantizationParameters = _schema("QuantizationParameters")
_SparsityParameters = _schema("SparsityParameters")
_DimensionMetadata = _schema("DimensionMetadata")
#: SparseIndexVector member (union tag, generated module) of each index type
_INDEX_VECTORS = {
    "int32": (1, "Int32Vector"),
    "uint16": (2, "Uint16Vector"),
    "uint8": (3, "Uint8Vector"),
}

# The two options unions of `Operator`: (field name in Operator, union enum class).
_UNIONS: tuple[tuple[str, type], ...] = (
    ("BuiltinOptions", _schema("BuiltinOptions").BuiltinOptions),
    ("BuiltinOptions2", _schema("BuiltinOptions2").BuiltinOptions2),
)

# Operators whose options table is not named after the operator (CONV_2D ->
# Conv2DOptions is found by name; these share a table or use an older name). Taken from
# the operator -> options pairing in TFLite's flatbuffer_conversions.cc.
_OPTIONS_ALIASES: dict[str, str] = {
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions",
    "L2_NORMALIZATION": "L2NormOptions",
    "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
    "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions",
    "REDUCE_PROD": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions",
    "REDUCE_ANY": "ReducerOptions",
    "REDUCE_ALL": "ReducerOptions",
    "MAXIMUM": "MaximumMinimumOptions",
    "MINIMUM": "MaximumMinimumOptions",
    "RANDOM_STANDARD_NORMAL": "RandomOptions",
    "RANDOM_UNIFORM": "RandomOptions",
    "MULTINOMIAL": "RandomOptions",
    "CONV_3D_TRANSPOSE": "Conv3DOptions",
}


def _normalize(name: str) -> str:
    """Case- and underscore-insensitive key: "STRIDE_W", "stride_w" and "StrideW" agree."""
    return name.replace("_", "").lower()


# --------------------------------------------------------------------------------------
# Reflection over the generated schema modules
# --------------------------------------------------------------------------------------


class _SlotRecorder:
    """Stands in for `flatbuffers.Builder` so that calling a generated `...Add<Field>`
    function reveals which `Prepend<Type>Slot` it uses, i.e. the field's wire type."""

    def __init__(self) -> None:
        self.method: str | None = None

    def __getattr__(self, name: str) -> Callable[..., None]:
        def record(*_args: Any) -> None:
            self.method = name

        return record


class _ProbeTable:
    """Stands in for `flatbuffers.table.Table` so that calling a generated getter reveals
    whether an offset field is a string, a numeric vector (and its element type) or a
    sub-table."""

    Pos = 0
    Bytes = b""

    def __init__(self) -> None:
        self.kind: str | None = None
        self.flags: Any = None

    def Offset(self, _vtable_offset: int) -> int:
        """Report every field as present so the getter reads it."""
        return 4

    def GetVectorAsNumpy(self, flags: Any, _offset: int) -> None:
        """A numeric vector: remember its element type."""
        self.kind, self.flags = "vector", flags

    def String(self, _offset: int) -> bytes:
        """A string field."""
        self.kind = "string"
        return b""

    def Indirect(self, _offset: int) -> int:
        """A sub-table field."""
        self.kind = "table"
        return 0


@dataclass(frozen=True)
class OptionField:
    """One field of an operator options table, as found by reflection.

    `kind` is "scalar" (`dtype` is its numpy type; enums are their integer type),
    "vector" (a vector of `dtype`), "string", or "unsupported" (sub-tables and vectors of
    tables or strings, which no operator a test needs uses).
    """

    name: str
    kind: str
    dtype: np.dtype | None
    adder: Callable[[flatbuffers.Builder, Any], None]


@dataclass(frozen=True)
class OptionsTable:
    """The options table of a builtin operator: its union tag and fields.

    `union` is "BuiltinOptions" or "BuiltinOptions2" (the field of `Operator` that holds
    it) and `union_type` the table's tag in that union. `fields` is keyed by the
    normalised field name (lower case, no underscores).
    """

    name: str
    union: str
    union_type: int
    fields: dict[str, OptionField]
    start: Callable[[flatbuffers.Builder], None]
    end: Callable[[flatbuffers.Builder], int]

    def resolve(self, values: Mapping[str, Any]) -> list[tuple[OptionField, Any]]:
        """Check and convert keyword option values to what the table's builder takes.

        Done when the operator is added, so a misspelt field or an out-of-range value
        fails at the line that caused it rather than in `build()`.
        """
        resolved = []
        for key, value in values.items():
            option = self.fields.get(_normalize(key))
            if option is None:
                known = ", ".join(sorted(_snake(f.name) for f in self.fields.values()))
                raise ValueError(f"{self.name} has no field '{key}' (fields: {known})")
            resolved.append((option, _convert(self, option, value)))
        return resolved

    def write(
        self, fb: flatbuffers.Builder, values: Sequence[tuple[OptionField, Any]]
    ) -> int:
        """Serialise the table with `values` (from `resolve`); returns its offset."""
        prepared = []
        for option, value in values:
            if option.kind == "vector":
                value = fb.CreateNumpyVector(value)
            elif option.kind == "string":
                value = fb.CreateString(value)
            prepared.append((option, value))
        self.start(fb)
        for option, value in prepared:
            option.adder(fb, value)
        return self.end(fb)


def _snake(camel: str) -> str:
    """`StrideW` -> `stride_w`, for error messages."""
    out = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return out.lstrip("_")


def _option_field(
    table: str, module: ModuleType, name: str, adder: Callable
) -> OptionField:
    """Classify one field of `table` by calling its generated builder and getter on
    stand-ins (see `_SlotRecorder` and `_ProbeTable`)."""
    recorder = _SlotRecorder()
    adder(recorder, 0)
    slot = (recorder.method or "").removeprefix("Prepend").removesuffix("Slot")
    if slot != "UOffsetTRelative":
        flags = getattr(flatbuffers.number_types, f"{slot}Flags")
        return OptionField(name, "scalar", np.dtype(flags.name), adder)
    probe = getattr(module, table)()
    probe._tab = _ProbeTable()
    try:
        if hasattr(module, f"{table}Start{name}Vector"):
            getattr(probe, f"{name}AsNumpy")()
        else:
            getattr(probe, name)()
    except Exception:  # vectors of tables/strings have no AsNumpy; sub-tables need Init
        pass
    kind = probe._tab.kind
    if kind == "vector":
        return OptionField(name, "vector", np.dtype(probe._tab.flags.name), adder)
    if kind == "string":
        return OptionField(name, "string", None, adder)
    return OptionField(name, "unsupported", None, adder)


def _options_from_module(table: str, union: str, union_type: int) -> OptionsTable:
    """Build the `OptionsTable` of the generated module `tflite.<table>`."""
    module = _schema(table)
    prefix = f"{table}Add"
    fields = {
        _normalize(attr[len(prefix) :]): _option_field(
            table, module, attr[len(prefix) :], fn
        )
        for attr, fn in vars(module).items()
        if attr.startswith(prefix) and callable(fn)
    }
    return OptionsTable(
        name=table,
        union=union,
        union_type=union_type,
        fields=fields,
        start=getattr(module, f"{table}Start"),
        end=getattr(module, f"{table}End"),
    )


@functools.cache
def options_table(op_name: str) -> OptionsTable | None:
    """The options table of builtin operator `op_name` ("CONV_2D"), or None if it has none.

    The table is the union member named like the operator in CamelCase plus "Options"
    (compared without case and underscores, so BATCH_MATMUL finds BatchMatMulOptions),
    or the table from `_OPTIONS_ALIASES` for operators that share one (MEAN ->
    ReducerOptions). Both `BuiltinOptions` and `BuiltinOptions2` are searched.
    """
    op_name = op_name.upper()
    wanted = _normalize(_OPTIONS_ALIASES.get(op_name, f"{op_name}Options"))
    for union, enum in _UNIONS:
        for member, tag in vars(enum).items():
            if member != "NONE" and isinstance(tag, int) and _normalize(member) == wanted:
                return _options_from_module(member, union, tag)
    return None


@functools.cache
def _enums() -> dict[str, dict[str, int]]:
    """Every enum of the schema as {enum name: {member: value}}.

    Unions (whose members name tables) and `BuiltinOperator` (whose members would shadow
    the activation names RELU, TANH, ...) are left out.
    """
    classes = {}
    for info in pkgutil.iter_modules(tflite.__path__):
        cls = getattr(_schema(info.name), info.name, None)
        if isinstance(cls, type):
            classes[info.name] = cls
    tables = {name for name, cls in classes.items() if hasattr(cls, "Init")}
    enums = {}
    for name, cls in classes.items():
        members = {
            k: v
            for k, v in vars(cls).items()
            if not k.startswith("_") and isinstance(v, int)
        }
        if name in tables or not members or name == "BuiltinOperator":
            continue
        if all(k == "NONE" or k in tables for k in members):
            continue  # a union
        enums[name] = members
    return enums


def _enum_value(table: OptionsTable, option: OptionField, member: str) -> int:
    """The integer of enum member `member` ("SAME", "RELU6") for `option` of `table`.

    The generated Python does not record a field's enum type, so the member is looked up
    in every schema enum. Member names are nearly unique; where they are not, enums named
    after the table ("LSHProjection" + "Type") or the field are preferred.
    """
    key = member.upper()
    candidates = {name: m[key] for name, m in _enums().items() if key in m}
    stem = table.name.removesuffix("Options")
    for prefer in (lambda e: e.startswith(stem), lambda e: e.endswith(option.name)):
        if len(set(candidates.values())) > 1:
            preferred = {e: v for e, v in candidates.items() if prefer(e)}
            candidates = preferred or candidates
    values = set(candidates.values())
    if len(values) != 1:
        reason = "no schema enum has" if not values else "several enums have"
        raise ValueError(
            f"{table.name}.{_snake(option.name)}: {reason} a member '{member}'; "
            "pass the integer value instead"
        )
    return values.pop()


def _convert(table: OptionsTable, option: OptionField, value: Any) -> Any:
    """Check `value` against the field type and convert it (enum names to integers,
    sequences to a numpy vector of the field's element type)."""
    where = f"{table.name}.{_snake(option.name)}"
    if option.kind == "unsupported":
        raise ValueError(f"{where} is a table or a vector of tables; it cannot be set")
    if option.kind == "string":
        if not isinstance(value, str):
            raise TypeError(f"{where} takes a string, got {value!r}")
        return value
    assert option.dtype is not None
    array = np.asarray(value)
    if array.dtype.kind in "US":  # enum member names; option values are a handful
        names = array.reshape(-1).tolist()
        array = np.array([_enum_value(table, option, n) for n in names]).reshape(
            array.shape
        )
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{where} takes numbers, got {value!r}")
    if option.kind == "scalar" and array.ndim != 0:
        raise ValueError(f"{where} takes a single value, got {value!r}")
    if option.kind == "vector" and array.ndim > 1:
        raise ValueError(f"{where} takes a 1-D sequence, got {value!r}")
    converted = array.astype(option.dtype)
    if option.dtype.kind in "biu" and not np.array_equal(converted, array):
        raise ValueError(f"{where} is {option.dtype}; {value!r} does not fit")
    return converted.item() if option.kind == "scalar" else converted.reshape(-1)


def builtin_code(op_name: str) -> int:
    """The `BuiltinOperator` value of `op_name` ("CONV_2D" -> 3)."""
    code = getattr(_BuiltinOperator, op_name.upper(), None)
    if not isinstance(code, int):
        raise ValueError(f"'{op_name}' is not a BuiltinOperator of the TFLite schema")
    return code


def tensor_type(dtype: DTypeLike | str) -> int:
    """The `TensorType` value of a numpy dtype (np.int8 -> INT8, bool -> BOOL).

    A `TensorType` member name ("INT4", "STRING") is accepted too, for the types numpy
    has no dtype for; such tensors take their data as raw bytes.
    """
    if isinstance(dtype, str) and isinstance(
        getattr(_TensorType, dtype.upper(), None), int
    ):
        return getattr(_TensorType, dtype.upper())
    name = np.dtype(dtype).name.upper()
    value = getattr(_TensorType, name, None)
    if not isinstance(value, int):
        raise ValueError(f"TFLite has no tensor type for numpy dtype {dtype!r}")
    return value


def flexbuffer_options(options: Mapping[str, bool | int | float | str]) -> bytes:
    """Encode custom-operator options as the FlexBuffer map TFLite custom ops read.

    For example the attributes of `TFLite_Detection_PostProcess` (`max_detections`,
    `nms_iou_threshold`, `use_regular_nms`, ...).
    """
    return bytes(flatbuffers.flexbuffers.Dumps(dict(options)))


# --------------------------------------------------------------------------------------
# The builder
# --------------------------------------------------------------------------------------


@dataclass(eq=False)
class Quant:
    """Affine quantization `real = scale * (q - zero_point)` of one tensor.

    A scalar `scale` is per-tensor. A 1-D `scale` with `axis` set is per-channel along
    that axis (TFLite's `quantized_dimension`); a scalar `zero_point` is then repeated
    for every channel.
    """

    scale: float | Sequence[float] | np.ndarray
    zero_point: int | Sequence[int] | np.ndarray = 0
    axis: int | None = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(scales as float32, zero points as int64), both 1-D and of equal length."""
        scales = np.asarray(self.scale, np.float32).reshape(-1)
        zero_points = np.asarray(self.zero_point, np.int64).reshape(-1)
        if zero_points.size == 1:
            zero_points = np.broadcast_to(zero_points, scales.shape)
        if scales.size == 0 or zero_points.shape != scales.shape:
            raise ValueError(
                f"Quant: {scales.size} scales but {zero_points.size} zero points"
            )
        return scales, np.ascontiguousarray(zero_points)


@dataclass(frozen=True)
class SparseLevel:
    """One traversal level of a sparse tensor (TFLite's DimensionMetadata): DENSE with
    `dense_size` positions when `segments` is None, else SPARSE_CSR with `segments` and
    `indices`, stored as `index_type` ("int32", "uint16" or "uint8"). `format` overrides
    the format number written (tests of malformed files)."""

    dense_size: int = 0
    segments: Sequence[int] | None = None
    indices: Sequence[int] | None = None
    index_type: str = "int32"
    format: int | None = None


@dataclass(frozen=True)
class Sparsity:
    """A tensor's SparsityParameters: `levels[i]` walks expanded dimension
    `traversal_order[i]`; `block_map[b]` is the dimension block dimension `b` splits."""

    traversal_order: Sequence[int]
    levels: Sequence[SparseLevel]
    block_map: Sequence[int] = ()


@dataclass
class _TensorSpec:
    """A tensor as recorded by `ModelBuilder`, written out by `build()`."""

    name: str
    shape: tuple[int, ...]
    type: int
    buffer: int
    quant: Quant | None
    signature: tuple[int, ...] | None = None
    sparsity: Sparsity | None = None


@dataclass
class _SubgraphSpec:
    """A finished subgraph as recorded by `ModelBuilder` (see `subgraph`)."""

    name: str
    tensors: list[_TensorSpec]
    operators: list[_OperatorSpec]
    inputs: list[int]
    outputs: list[int]


@dataclass
class _OperatorSpec:
    """An operator as recorded by `ModelBuilder`, written out by `build()`."""

    opcode: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    table: OptionsTable | None = None
    options: list[tuple[OptionField, Any]] = field(default_factory=list)
    custom_options: bytes | None = None


class ModelBuilder:
    """Builds a `.tflite` model: tensors, constants, operators, I/O of subgraph 0 (more
    subgraphs, e.g. CALL_ONCE initializations, follow `subgraph()`).

    Every tensor method returns the tensor's index, which operators and `output()` take.
    Operators must be added in execution order (TFLite runs them as listed); `build()`
    checks that each operator input is a model input, a constant or an earlier output.
    """

    def __init__(self, description: str = "synapc.testing.tflite_builder") -> None:
        self.description = description
        self._tensors: list[_TensorSpec] = []
        self._buffers: list[bytes] = [b""]  # buffer 0: the empty sentinel
        self._operators: list[_OperatorSpec] = []
        self._opcodes: dict[tuple[int, str, int], int] = {}
        self._inputs: list[int] = []
        self._outputs: list[int] = []
        #: subgraphs before the current one (see `subgraph`)
        self._finished: list[_SubgraphSpec] = []
        self._name = "main"

    def subgraph(self, name: str) -> int:
        """Finish the current subgraph and start a new, empty one (a CALL_ONCE
        initialization or a control-flow body); later tensors, operators, inputs and
        outputs belong to it. Returns its index. Buffers are shared by all subgraphs."""
        self._finished.append(self._current())
        self._tensors, self._operators, self._inputs, self._outputs = [], [], [], []
        self._name = name
        return len(self._finished)

    # -- tensors -------------------------------------------------------------------------
    def tensor(
        self,
        name: str,
        shape: Sequence[int],
        dtype: DTypeLike | str,
        *,
        quant: Quant | None = None,
        data: np.ndarray | bytes | None = None,
        signature: Sequence[int] | None = None,
        sparsity: Sparsity | None = None,
    ) -> int:
        """Add a tensor; without `data` it is an activation (intermediate or output).

        With `sparsity` the tensor is stored sparse: `data` is then the 1-D array of
        stored values, in the order the sparsity table walks them.

        `data` (a numpy array of this shape, cast to `dtype`, or raw little-endian bytes
        for types numpy lacks) makes it a constant stored in its own buffer.
        `signature` is written as the tensor's `shape_signature` (-1 marks a dimension
        unknown at conversion time; `shape` then holds the placeholder LiteRT allocates
        until the input is resized).
        """
        shape = tuple(int(d) for d in shape)
        type_ = tensor_type(dtype)
        if quant is not None:
            scales, _ = quant.arrays()  # checks the scale / zero-point lengths now
        if quant is not None and quant.axis is not None:
            axis = quant.axis + len(shape) if quant.axis < 0 else quant.axis
            if not 0 <= axis < len(shape) or shape[axis] not in (scales.size, -1):
                raise ValueError(
                    f"tensor '{name}': per-channel axis {quant.axis} with {scales.size} "
                    f"scales does not fit shape {list(shape)}"
                )
            quant = Quant(quant.scale, quant.zero_point, axis)
        buffer = 0
        if data is not None:
            if not isinstance(data, bytes):
                array = np.asarray(data, dtype=np.dtype(dtype))
                if sparsity is not None:
                    array = array.reshape(-1)
                elif array.shape != shape:
                    raise ValueError(
                        f"tensor '{name}': data shape {array.shape} != {list(shape)}"
                    )
                little = array.dtype.newbyteorder("<")
                data = np.ascontiguousarray(array, dtype=little).tobytes()
            self._buffers.append(data)
            buffer = len(self._buffers) - 1
        sig = None if signature is None else tuple(int(d) for d in signature)
        self._tensors.append(_TensorSpec(name, shape, type_, buffer, quant, sig, sparsity))
        return len(self._tensors) - 1

    def constant(
        self,
        name: str,
        data: np.ndarray,
        *,
        dtype: DTypeLike | None = None,
        quant: Quant | None = None,
    ) -> int:
        """Add a constant tensor with the shape and dtype of `data` (or cast to `dtype`)."""
        array = np.asarray(data, dtype=dtype)
        return self.tensor(name, array.shape, array.dtype, quant=quant, data=array)

    def input(
        self,
        name: str,
        shape: Sequence[int],
        dtype: DTypeLike | str,
        *,
        quant: Quant | None = None,
        signature: Sequence[int] | None = None,
    ) -> int:
        """Add a tensor and make it the next model input (`signature`: its
        `shape_signature`, see `tensor`)."""
        index = self.tensor(name, shape, dtype, quant=quant, signature=signature)
        self._inputs.append(index)
        return index

    def output(self, *tensors: int) -> None:
        """Make `tensors` the next model outputs, in order."""
        for index in tensors:
            self._check_tensor(index, "output")
            self._outputs.append(index)

    # -- operators -----------------------------------------------------------------------
    def op(
        self,
        name: str,
        inputs: Sequence[int],
        outputs: Sequence[int],
        /,
        *,
        version: int = 1,
        options: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> int:
        """Add builtin operator `name` ("CONV_2D") and return its index.

        `fields` are the operator's options table fields in snake_case (`stride_w=2`,
        `padding="SAME"`, `new_shape=[1, -1]`); `options` takes the same as a mapping,
        for a field named `version` (STABLEHLO_COMPOSITE). An input of -1 is an absent
        optional input. `version` is the opcode version (see the module docstring).
        """
        code = builtin_code(name)
        if code == _BuiltinOperator.CUSTOM:
            raise ValueError("use custom_op() for custom operators")
        self._check_io(inputs, outputs)
        values = {**(options or {}), **fields}
        table = options_table(name)
        if table is None and values:
            raise ValueError(f"{name} has no options table; got options {sorted(values)}")
        spec = _OperatorSpec(
            opcode=self._opcode(code, "", version),
            inputs=tuple(inputs),
            outputs=tuple(outputs),
            table=table,
            options=table.resolve(values) if table else [],
        )
        self._operators.append(spec)
        return len(self._operators) - 1

    def custom_op(
        self,
        name: str,
        inputs: Sequence[int],
        outputs: Sequence[int],
        options: bytes = b"",
        *,
        version: int = 1,
    ) -> int:
        """Add custom operator `name` with raw `custom_options` bytes (usually a FlexBuffer,
        see `flexbuffer_options`) and return its index."""
        self._check_io(inputs, outputs)
        spec = _OperatorSpec(
            opcode=self._opcode(_BuiltinOperator.CUSTOM, name, version),
            inputs=tuple(inputs),
            outputs=tuple(outputs),
            custom_options=bytes(options),
        )
        self._operators.append(spec)
        return len(self._operators) - 1

    # -- output --------------------------------------------------------------------------
    def build(self, *, validate: bool = True) -> bytes:
        """Serialise the model; returns the contents of a `.tflite` file.

        With `validate`, every operator input must be a model input, a constant or an
        output of an earlier operator, and there must be at least one output.
        """
        if validate:
            self._validate()
        fb = flatbuffers.Builder(1024 + sum(len(b) for b in self._buffers))
        buffers = [self._write_buffer(fb, data) for data in self._buffers]
        graphs = [*self._finished, self._current()]
        subgraphs = [self._write_subgraph(fb, g) for g in graphs]
        opcodes = [self._write_opcode(fb, *key) for key in self._opcodes]

        opcodes_vec = _offset_vector(fb, opcodes)
        subgraphs_vec = _offset_vector(fb, subgraphs)
        description = fb.CreateString(self.description)
        buffers_vec = _offset_vector(fb, buffers)
        _Model.ModelStart(fb)
        _Model.ModelAddVersion(fb, _SCHEMA_VERSION)
        _Model.ModelAddOperatorCodes(fb, opcodes_vec)
        _Model.ModelAddSubgraphs(fb, subgraphs_vec)
        _Model.ModelAddDescription(fb, description)
        _Model.ModelAddBuffers(fb, buffers_vec)
        fb.Finish(_Model.ModelEnd(fb), file_identifier=_FILE_IDENTIFIER)
        return bytes(fb.Output())

    def save(self, path: str | Path) -> Path:
        """Write `build()` to `path` and return it as a Path."""
        path = Path(path)
        path.write_bytes(self.build())
        return path

    # -- internals -----------------------------------------------------------------------
    def _current(self) -> _SubgraphSpec:
        """The subgraph being built."""
        return _SubgraphSpec(
            self._name, self._tensors, self._operators, self._inputs, self._outputs
        )

    def _check_tensor(self, index: int, role: str) -> None:
        if not 0 <= index < len(self._tensors):
            raise IndexError(f"{role} tensor {index} does not exist")

    def _check_io(self, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        for index in inputs:
            if index != -1:
                self._check_tensor(index, "input")
        for index in outputs:
            self._check_tensor(index, "output")

    def _opcode(self, code: int, custom: str, version: int) -> int:
        """Index of the (code, custom name, version) opcode, added on first use."""
        return self._opcodes.setdefault((code, custom, version), len(self._opcodes))

    def _validate(self) -> None:
        graphs = [*self._finished, self._current()]
        if not graphs[0].outputs:
            raise ValueError("the model has no outputs; call output()")
        for graph in graphs:
            self._validate_subgraph(graph)

    @staticmethod
    def _validate_subgraph(graph: _SubgraphSpec) -> None:
        ready = set(graph.inputs)
        ready.update(i for i, t in enumerate(graph.tensors) if t.buffer != 0)
        for position, op in enumerate(graph.operators):
            missing = [i for i in op.inputs if i != -1 and i not in ready]
            if missing:
                names = [graph.tensors[i].name for i in missing]
                raise ValueError(
                    f"operator {position} reads {names}, which no earlier operator "
                    "writes and which are neither inputs nor constants"
                )
            ready.update(op.outputs)
        unproduced = [graph.tensors[i].name for i in graph.outputs if i not in ready]
        if unproduced:
            raise ValueError(f"outputs {unproduced} are never written")

    def _write_subgraph(self, fb: flatbuffers.Builder, graph: _SubgraphSpec) -> int:
        tensors = [self._write_tensor(fb, t) for t in graph.tensors]
        operators = [self._write_operator(fb, op) for op in graph.operators]
        tensors_vec = _offset_vector(fb, tensors)
        inputs_vec = _int32_vector(fb, graph.inputs)
        outputs_vec = _int32_vector(fb, graph.outputs)
        operators_vec = _offset_vector(fb, operators)
        name = fb.CreateString(graph.name)
        _SubGraph.SubGraphStart(fb)
        _SubGraph.SubGraphAddTensors(fb, tensors_vec)
        _SubGraph.SubGraphAddInputs(fb, inputs_vec)
        _SubGraph.SubGraphAddOutputs(fb, outputs_vec)
        _SubGraph.SubGraphAddOperators(fb, operators_vec)
        _SubGraph.SubGraphAddName(fb, name)
        return _SubGraph.SubGraphEnd(fb)

    @staticmethod
    def _write_buffer(fb: flatbuffers.Builder, data: bytes) -> int:
        vector = _aligned_bytes(fb, data) if data else None
        _Buffer.BufferStart(fb)
        if vector is not None:
            _Buffer.BufferAddData(fb, vector)
        return _Buffer.BufferEnd(fb)

    @staticmethod
    def _write_tensor(fb: flatbuffers.Builder, tensor: _TensorSpec) -> int:
        name = fb.CreateString(tensor.name)
        shape = _int32_vector(fb, tensor.shape)
        signature = (
            None if tensor.signature is None else _int32_vector(fb, tensor.signature)
        )
        quant = None
        if tensor.quant is not None:
            scales, zero_points = tensor.quant.arrays()
            scale_vec = fb.CreateNumpyVector(scales)
            zero_point_vec = fb.CreateNumpyVector(zero_points)
            _QuantizationParameters.QuantizationParametersStart(fb)
            _QuantizationParameters.QuantizationParametersAddScale(fb, scale_vec)
            _QuantizationParameters.QuantizationParametersAddZeroPoint(fb, zero_point_vec)
            _QuantizationParameters.QuantizationParametersAddQuantizedDimension(
                fb, tensor.quant.axis or 0
            )
            quant = _QuantizationParameters.QuantizationParametersEnd(fb)
        sparsity = None if tensor.sparsity is None else _write_sparsity(fb, tensor.sparsity)
        _Tensor.TensorStart(fb)
        _Tensor.TensorAddShape(fb, shape)
        _Tensor.TensorAddType(fb, tensor.type)
        _Tensor.TensorAddBuffer(fb, tensor.buffer)
        _Tensor.TensorAddName(fb, name)
        if signature is not None:
            _Tensor.TensorAddShapeSignature(fb, signature)
        if quant is not None:
            _Tensor.TensorAddQuantization(fb, quant)
        if sparsity is not None:
            _Tensor.TensorAddSparsity(fb, sparsity)
        return _Tensor.TensorEnd(fb)

    @staticmethod
    def _write_operator(fb: flatbuffers.Builder, op: _OperatorSpec) -> int:
        inputs = _int32_vector(fb, op.inputs)
        outputs = _int32_vector(fb, op.outputs)
        options = op.table.write(fb, op.options) if op.table is not None else None
        custom = None
        if op.custom_options:
            custom = fb.CreateNumpyVector(np.frombuffer(op.custom_options, np.uint8))
        _Operator.OperatorStart(fb)
        _Operator.OperatorAddOpcodeIndex(fb, op.opcode)
        _Operator.OperatorAddInputs(fb, inputs)
        _Operator.OperatorAddOutputs(fb, outputs)
        if op.table is not None and options is not None:
            getattr(_Operator, f"OperatorAdd{op.table.union}Type")(fb, op.table.union_type)
            getattr(_Operator, f"OperatorAdd{op.table.union}")(fb, options)
        if custom is not None:
            _Operator.OperatorAddCustomOptions(fb, custom)
            _Operator.OperatorAddCustomOptionsFormat(fb, _CustomOptionsFormat.FLEXBUFFERS)
        return _Operator.OperatorEnd(fb)

    @staticmethod
    def _write_opcode(fb: flatbuffers.Builder, code: int, custom: str, version: int) -> int:
        custom_code = fb.CreateString(custom) if custom else None
        _OperatorCode.OperatorCodeStart(fb)
        _OperatorCode.OperatorCodeAddDeprecatedBuiltinCode(
            fb, min(code, _PLACEHOLDER_FOR_GREATER_OP_CODES)
        )
        if custom_code is not None:
            _OperatorCode.OperatorCodeAddCustomCode(fb, custom_code)
        _OperatorCode.OperatorCodeAddVersion(fb, version)
        _OperatorCode.OperatorCodeAddBuiltinCode(fb, code)
        return _OperatorCode.OperatorCodeEnd(fb)


def _write_sparsity(fb: flatbuffers.Builder, sparsity: Sparsity) -> int:
    """A SparsityParameters table with its DimensionMetadata and index vectors."""
    levels = []
    for level in sparsity.levels:
        tag = _INDEX_VECTORS[level.index_type][0]
        vectors = [
            _index_vector(fb, values, level.index_type)
            for values in (level.segments, level.indices)
            if values is not None
        ]
        csr = level.segments is not None
        _DimensionMetadata.DimensionMetadataStart(fb)
        _DimensionMetadata.DimensionMetadataAddFormat(
            fb, int(csr) if level.format is None else level.format
        )
        _DimensionMetadata.DimensionMetadataAddDenseSize(fb, level.dense_size)
        if vectors:
            _DimensionMetadata.DimensionMetadataAddArraySegmentsType(fb, tag)
            _DimensionMetadata.DimensionMetadataAddArraySegments(fb, vectors[0])
        if len(vectors) > 1:
            _DimensionMetadata.DimensionMetadataAddArrayIndicesType(fb, tag)
            _DimensionMetadata.DimensionMetadataAddArrayIndices(fb, vectors[1])
        levels.append(_DimensionMetadata.DimensionMetadataEnd(fb))
    order = _int32_vector(fb, sparsity.traversal_order)
    block_map = _int32_vector(fb, sparsity.block_map) if sparsity.block_map else None
    metadata = _offset_vector(fb, levels)
    _SparsityParameters.SparsityParametersStart(fb)
    _SparsityParameters.SparsityParametersAddTraversalOrder(fb, order)
    if block_map is not None:
        _SparsityParameters.SparsityParametersAddBlockMap(fb, block_map)
    _SparsityParameters.SparsityParametersAddDimMetadata(fb, metadata)
    return _SparsityParameters.SparsityParametersEnd(fb)


def _index_vector(fb: flatbuffers.Builder, values: Sequence[int], index_type: str) -> int:
    """An Int32Vector / Uint16Vector / Uint8Vector table holding `values`."""
    name = _INDEX_VECTORS[index_type][1]
    member = _schema(name)
    vector = fb.CreateNumpyVector(np.asarray(values, dtype=np.dtype(index_type)))
    getattr(member, f"{name}Start")(fb)
    getattr(member, f"{name}AddValues")(fb, vector)
    return getattr(member, f"{name}End")(fb)


def _int32_vector(fb: flatbuffers.Builder, values: Sequence[int]) -> int:
    """A flatbuffer vector of int32 (shapes, tensor indices)."""
    return fb.CreateNumpyVector(np.asarray(values, dtype=np.int32).reshape(-1))


def _offset_vector(fb: flatbuffers.Builder, offsets: Sequence[int]) -> int:
    """A flatbuffer vector of table offsets (one per table, not per data element)."""
    fb.StartVector(4, len(offsets), 4)
    for offset in reversed(offsets):
        fb.PrependUOffsetTRelative(offset)
    return fb.EndVector()


def _aligned_bytes(fb: flatbuffers.Builder, data: bytes) -> int:
    """A ubyte vector whose payload starts on a `_BUFFER_ALIGNMENT` boundary."""
    fb.StartVector(1, len(data), _BUFFER_ALIGNMENT)
    fb.head -= len(data)
    fb.Bytes[fb.head : fb.head + len(data)] = data
    return fb.EndVector()
