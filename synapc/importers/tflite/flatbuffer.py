"""A bounds-checked reader of the parts of a `.tflite` flatbuffer that synapc uses.

The generated `tflite` package reads each field at the offset the file states and checks
nothing: a corrupt offset reads garbage, raises from `struct.unpack` deep inside a
converter, or lets numpy view bytes that are not there. This module follows every
offset, vtable, vector and string of the tables the importer reads (Model, OperatorCode,
SubGraph, Tensor, QuantizationParameters, SparsityParameters, Buffer, Operator) the way
the C++ flatbuffers Verifier does, checks it against the file, and turns the file into
plain Python records up front. A field that points outside the file raises a
`SynapcError` naming the table and the field::

    model.tflite: corrupt TFLite model: subgraph 0, tensor 5, field shape: vector of
    1,000,000 elements of 4 bytes at byte 2,400 runs past the end of the file (3,000
    bytes)

Operator options tables are read later through the generated classes (the converters
need dozens of them); `read_model` checks their vtables here, so those reads stay inside
their table. Nothing here interprets the values (indices, shapes, types): the importer
checks those against each other with the names of the tensors and operators.
"""

from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from synapc.errors import SynapcError
from synapc.limits import check_count

_I8, _U8 = struct.Struct("<b"), struct.Struct("<B")
_U16, _I32, _U32 = struct.Struct("<H"), struct.Struct("<i"), struct.Struct("<I")
_U64 = struct.Struct("<Q")


#: Longest tensor or operator name quoted in a message.
_NAME_IN_MESSAGE = 120


def display(name: str) -> str:
    """`name` as it may appear in a one-line message: control characters escaped, and
    cut short when long."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)
    if len(shown) > _NAME_IN_MESSAGE:
        shown = shown[: _NAME_IN_MESSAGE - 3] + "..."
    return shown


@dataclass(frozen=True)
class Quantization:
    """A tensor's QuantizationParameters: scales, zero points and the quantized axis
    (numpy views of the file bytes; either array may be empty)."""

    scale: np.ndarray
    zero_point: np.ndarray
    quantized_dimension: int


#: DimensionMetadata formats (schema.fbs DimensionType)
DENSE, SPARSE_CSR = 0, 1


@dataclass(frozen=True)
class DimensionMetadata:
    """One level of a sparse tensor's traversal: DENSE (`dense_size` positions) or
    SPARSE_CSR (`array_segments` and `array_indices`, numpy views of the file's int32,
    uint16 or uint8 vectors; empty when absent). Nothing is checked against the tensor
    here: `sparsity.densify` does that."""

    format: int
    dense_size: int
    array_segments: np.ndarray
    array_indices: np.ndarray


@dataclass(frozen=True)
class Sparsity:
    """A tensor's SparsityParameters: the order in which the (block-expanded) dimensions
    are traversed, which original dimension each block dimension splits, and one
    `DimensionMetadata` per traversal level."""

    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    dim_metadata: tuple[DimensionMetadata, ...]


@dataclass(frozen=True)
class Tensor:
    """One tensor of a subgraph, as stored (nothing checked against other tables).

    `shape_signature` is empty when the file has none; otherwise it is `shape` with -1
    for each dimension unknown when the model was converted (`shape` then holds a
    placeholder there, usually 1)."""

    index: int
    name: str
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...]
    type: int
    buffer: int
    quantization: Quantization | None
    sparse: bool
    #: the tensor's SparsityParameters (None for a dense tensor)
    sparsity: Sparsity | None = None


@dataclass(frozen=True)
class Buffer:
    """Where a buffer's bytes are in the file: `size` bytes from byte `start` (inside the
    flatbuffer, or after it for models over 2 GiB); size 0 for an empty buffer."""

    index: int
    start: int
    size: int


@dataclass(frozen=True)
class Operator:
    """One operator of a subgraph. `options_pos` is the position of its builtin options
    table (vtable checked) or None; `custom_options` its custom options bytes."""

    index: int
    opcode_index: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options_type: int
    options_pos: int | None
    custom_options: bytes | None


@dataclass(frozen=True)
class OperatorCode:
    """An entry of the model's operator code table."""

    builtin_code: int
    custom_code: str | None
    version: int


@dataclass(frozen=True)
class Subgraph:
    """The main subgraph: tensors, model inputs and outputs, operators in order."""

    name: str
    tensors: list[Tensor]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    operators: list[Operator]


@dataclass(frozen=True)
class ModelFile:
    """What synapc reads of a `.tflite` file: the main subgraph (subgraph 0), the operator
    codes, the buffers and the number of subgraphs."""

    version: int
    operator_codes: list[OperatorCode]
    subgraph_count: int
    main: Subgraph
    buffers: list[Buffer]


class Reader:
    """Bounds-checked access to the bytes of one flatbuffer file."""

    def __init__(self, path: Path, data: bytes):
        self.path = path
        self.data = data
        self.size = len(data)

    def corrupt(self, what: str, problem: str) -> SynapcError:
        """The error for a structure of the file that cannot be right."""
        return SynapcError(f"{self.path}: corrupt TFLite model: {what}: {problem}")

    def check_entries(self, what: str, count: int, limit_name: str) -> None:
        """Refuse a vector longer than synapc reads: more entries than the limit
        `limit_name` (`max_graph_items` or `max_tensor_rank`, read now)."""
        check_count(count, limit_name, f"{self.path}: {what} (entries)")

    def get(self, fmt: struct.Struct, pos: int, what: str) -> int:
        """The scalar of format `fmt` at byte `pos`, which must lie inside the file."""
        if pos < 0 or pos + fmt.size > self.size:
            raise self.corrupt(
                what, f"flatbuffer offset {pos:,} is outside the file ({self.size:,} bytes)"
            )
        return fmt.unpack_from(self.data, pos)[0]

    def table(self, pos: int, what: str) -> Table:
        """The table at byte `pos`, with its vtable and inline size checked."""
        soffset = self.get(_I32, pos, what)
        vtable = pos - soffset
        if vtable < 0 or vtable + 4 > self.size:
            raise self.corrupt(
                what,
                f"vtable at byte {vtable:,} is outside the file ({self.size:,} bytes)",
            )
        vtable_size = self.get(_U16, vtable, what)
        object_size = self.get(_U16, vtable + 2, what)
        if vtable_size < 4 or vtable_size % 2 or vtable + vtable_size > self.size:
            raise self.corrupt(
                what, f"vtable of {vtable_size} bytes at byte {vtable:,} is malformed"
            )
        if object_size < 4 or pos + object_size > self.size:
            raise self.corrupt(
                what,
                f"table of {object_size} bytes at byte {pos:,} runs past the end of the "
                f"file ({self.size:,} bytes)",
            )
        return Table(self, pos, vtable, vtable_size, object_size, what)


@dataclass(frozen=True)
class Table:
    """A flatbuffer table whose vtable lies in the file; every field read is checked."""

    reader: Reader
    pos: int
    vtable: int
    vtable_size: int
    object_size: int
    what: str

    def field(self, slot: int, size: int, name: str) -> int | None:
        """Byte position of field `slot` (None when absent); the field's `size` bytes
        must lie inside the table."""
        entry = 4 + 2 * slot
        if entry + 2 > self.vtable_size:
            return None
        offset = self.reader.get(_U16, self.vtable + entry, self.what)
        if offset == 0:
            return None
        if offset < 4 or offset + size > self.object_size:
            raise self.reader.corrupt(
                f"{self.what}, field {name}",
                f"field offset {offset} lies outside its table of {self.object_size} bytes",
            )
        return self.pos + offset

    def check_fields(self) -> None:
        """Every field of the vtable lies inside the table (for tables read later by
        the generated classes, whose field types this module does not know)."""
        for entry in range(4, self.vtable_size, 2):
            offset = self.reader.get(_U16, self.vtable + entry, self.what)
            if offset and (offset < 4 or offset >= self.object_size):
                raise self.reader.corrupt(
                    f"{self.what}, field {(entry - 4) // 2}",
                    f"field offset {offset} lies outside its table of "
                    f"{self.object_size} bytes",
                )

    def scalar(self, slot: int, fmt: struct.Struct, default: int, name: str) -> int:
        """An integer field, or `default` when absent."""
        pos = self.field(slot, fmt.size, name)
        if pos is None:
            return default
        return self.reader.get(fmt, pos, f"{self.what}, field {name}")

    def target(self, slot: int, name: str) -> int | None:
        """Where the offset field `slot` points (None when absent)."""
        pos = self.field(slot, 4, name)
        if pos is None:
            return None
        return pos + self.reader.get(_U32, pos, f"{self.what}, field {name}")

    def table(self, slot: int, name: str, what: str) -> Table | None:
        """The sub-table of field `slot`, named `what` in messages (None when absent)."""
        pos = self.target(slot, name)
        return None if pos is None else self.reader.table(pos, what)

    def vector(self, slot: int, name: str, itemsize: int) -> tuple[int, int] | None:
        """(start, count) of the vector of field `slot` (None when absent); its
        `count * itemsize` bytes must lie inside the file."""
        pos = self.target(slot, name)
        if pos is None:
            return None
        what = f"{self.what}, field {name}"
        count = self.reader.get(_U32, pos, what)
        start = pos + 4
        if start + count * itemsize > self.reader.size:
            raise self.reader.corrupt(
                what,
                f"vector of {count:,} elements of {itemsize} bytes at byte {start:,} "
                f"runs past the end of the file ({self.reader.size:,} bytes)",
            )
        return start, count

    def array(self, slot: int, name: str, dtype: str) -> np.ndarray:
        """The numeric vector of field `slot` as a read-only view (empty when absent)."""
        dt = np.dtype(dtype)
        found = self.vector(slot, name, dt.itemsize)
        if found is None:
            return np.zeros(0, dt)
        start, count = found
        return np.frombuffer(self.reader.data, dt, count, start)

    def ints(self, slot: int, name: str, limit_name: str) -> tuple[int, ...]:
        """An int32 vector of field `slot` as Python ints (at most as many as the limit
        `limit_name` allows)."""
        found = self.vector(slot, name, 4)
        if found is None:
            return ()
        start, count = found
        self.reader.check_entries(f"{self.what}, field {name}", count, limit_name)
        return tuple(np.frombuffer(self.reader.data, "<i4", count, start).tolist())

    def string(self, slot: int, name: str) -> str | None:
        """The string of field `slot`, decoded as UTF-8 (None when absent)."""
        found = self.vector(slot, name, 1)
        if found is None:
            return None
        start, count = found
        return self.reader.data[start : start + count].decode("utf-8", "replace")

    def tables(self, slot: int, name: str) -> list[int]:
        """Positions of the tables of the table vector `slot` (empty when absent)."""
        found = self.vector(slot, name, 4)
        if found is None:
            return []
        start, count = found
        self.reader.check_entries(f"{self.what}, field {name}", count, "max_graph_items")
        offsets = np.frombuffer(self.reader.data, "<u4", count, start).astype(np.int64)
        return (offsets + start + 4 * np.arange(count, dtype=np.int64)).tolist()


# Field slots of the TFLite schema (schema.fbs; slot = field number).
_MODEL_VERSION, _MODEL_CODES, _MODEL_SUBGRAPHS, _MODEL_BUFFERS = 0, 1, 2, 4
_CODE_DEPRECATED, _CODE_CUSTOM, _CODE_VERSION, _CODE_BUILTIN = 0, 1, 2, 3
_SG_TENSORS, _SG_INPUTS, _SG_OUTPUTS, _SG_OPERATORS, _SG_NAME = 0, 1, 2, 3, 4
_T_SHAPE, _T_TYPE, _T_BUFFER, _T_NAME, _T_QUANT, _T_SPARSITY = 0, 1, 2, 3, 4, 6
_T_SHAPE_SIGNATURE = 7
_SP_TRAVERSAL_ORDER, _SP_BLOCK_MAP, _SP_DIM_METADATA = 0, 1, 2
_DM_FORMAT, _DM_DENSE_SIZE, _DM_SEGMENTS_TYPE, _DM_SEGMENTS = 0, 1, 2, 3
_DM_INDICES_TYPE, _DM_INDICES = 4, 5
#: SparseIndexVector union members -> element type of their `values` vector (slot 0)
_INDEX_VECTOR_TYPES = {1: "<i4", 2: "<u2", 3: "u1"}
_Q_SCALE, _Q_ZERO_POINT, _Q_DIMENSION = 2, 3, 6
_B_DATA, _B_OFFSET, _B_SIZE = 0, 1, 2
_OP_OPCODE, _OP_INPUTS, _OP_OUTPUTS, _OP_OPTIONS_TYPE, _OP_OPTIONS = 0, 1, 2, 3, 4
_OP_CUSTOM, _OP_LARGE_OFFSET, _OP_LARGE_SIZE = 5, 9, 10


def read_model(path: Path, data: bytes) -> ModelFile:
    """Read the `.tflite` flatbuffer `data` (of file `path`) into records, checking
    every offset, vtable, vector and string it follows against the file."""
    reader = Reader(path, data)
    root = reader.get(_U32, 0, "root table offset")
    model = reader.table(root, "model")
    codes = [
        _operator_code(reader.table(pos, f"operator code {i}"))
        for i, pos in enumerate(model.tables(_MODEL_CODES, "operator_codes"))
    ]
    subgraphs = model.tables(_MODEL_SUBGRAPHS, "subgraphs")
    if not subgraphs:
        raise SynapcError(f"{path}: the model has no subgraph")
    buffers = [
        _buffer(reader, i, reader.table(pos, f"buffer {i}"))
        for i, pos in enumerate(model.tables(_MODEL_BUFFERS, "buffers"))
    ]
    return ModelFile(
        version=model.scalar(_MODEL_VERSION, _U32, 0, "version"),
        operator_codes=codes,
        subgraph_count=len(subgraphs),
        main=_subgraph(reader, reader.table(subgraphs[0], "subgraph 0")),
        buffers=buffers,
    )


def _operator_code(table: Table) -> OperatorCode:
    deprecated = table.scalar(_CODE_DEPRECATED, _I8, 0, "deprecated_builtin_code")
    builtin = table.scalar(_CODE_BUILTIN, _I32, 0, "builtin_code")
    return OperatorCode(
        # TFLite's GetBuiltinCode: codes above 127 live only in builtin_code, older files
        # only have deprecated_builtin_code.
        builtin_code=max(builtin, deprecated),
        custom_code=table.string(_CODE_CUSTOM, "custom_code"),
        version=table.scalar(_CODE_VERSION, _I32, 1, "version"),
    )


def _buffer(reader: Reader, index: int, table: Table) -> Buffer:
    offset = table.scalar(_B_OFFSET, _U64, 0, "offset")
    if offset > 1:  # models over 2 GiB keep buffers after the flatbuffer
        size = table.scalar(_B_SIZE, _U64, 0, "size")
        if offset + size > reader.size:
            raise reader.corrupt(
                f"buffer {index}",
                f"{size:,} bytes at file offset {offset:,} run past the end of the file "
                f"({reader.size:,} bytes)",
            )
        return Buffer(index, offset, size)
    found = table.vector(_B_DATA, "data", 1)
    if found is None:
        return Buffer(index, 0, 0)
    return Buffer(index, found[0], found[1])


def _subgraph(reader: Reader, table: Table) -> Subgraph:
    tensors = [
        _tensor(reader, i, reader.table(pos, f"subgraph 0, tensor {i}"))
        for i, pos in enumerate(table.tables(_SG_TENSORS, "tensors"))
    ]
    operators = [
        _operator(reader, i, reader.table(pos, f"subgraph 0, operator {i}"))
        for i, pos in enumerate(table.tables(_SG_OPERATORS, "operators"))
    ]
    return Subgraph(
        name=table.string(_SG_NAME, "name") or "",
        tensors=tensors,
        inputs=table.ints(_SG_INPUTS, "inputs", "max_graph_items"),
        outputs=table.ints(_SG_OUTPUTS, "outputs", "max_graph_items"),
        operators=operators,
    )


def _tensor(reader: Reader, index: int, table: Table) -> Tensor:
    name = table.string(_T_NAME, "name") or ""
    if name:  # name the tensor in messages about its other fields
        table = dataclasses.replace(
            table, what=f"subgraph 0, tensor {index} ('{display(name)}')"
        )
    quant = table.table(_T_QUANT, "quantization", f"{table.what}, quantization")
    quantization = None
    if quant is not None:
        quantization = Quantization(
            scale=quant.array(_Q_SCALE, "scale", "<f4"),
            zero_point=quant.array(_Q_ZERO_POINT, "zero_point", "<i8"),
            quantized_dimension=quant.scalar(_Q_DIMENSION, _I32, 0, "quantized_dimension"),
        )
    return Tensor(
        index=index,
        name=name,
        shape=table.ints(_T_SHAPE, "shape", "max_tensor_rank"),
        shape_signature=table.ints(
            _T_SHAPE_SIGNATURE, "shape_signature", "max_tensor_rank"
        ),
        type=table.scalar(_T_TYPE, _I8, 0, "type"),
        buffer=table.scalar(_T_BUFFER, _U32, 0, "buffer"),
        quantization=quantization,
        sparse=table.field(_T_SPARSITY, 4, "sparsity") is not None,
        sparsity=_sparsity(table),
    )


def _sparsity(tensor: Table) -> Sparsity | None:
    """The tensor's SparsityParameters table, every offset and vector checked."""
    table = tensor.table(_T_SPARSITY, "sparsity", f"{tensor.what}, sparsity")
    if table is None:
        return None
    found = table.vector(_SP_DIM_METADATA, "dim_metadata", 4)
    if found is not None:  # one level per (block-expanded) dimension: at most 2 * rank
        table.reader.check_entries(
            f"{table.what}, field dim_metadata", (found[1] + 1) // 2, "max_tensor_rank"
        )
    levels = [
        _dimension_metadata(table.reader.table(pos, f"{table.what}, dim_metadata {i}"))
        for i, pos in enumerate(table.tables(_SP_DIM_METADATA, "dim_metadata"))
    ]
    return Sparsity(
        traversal_order=_level_ints(table, _SP_TRAVERSAL_ORDER, "traversal_order"),
        block_map=table.ints(_SP_BLOCK_MAP, "block_map", "max_tensor_rank"),
        dim_metadata=tuple(levels),
    )


def _level_ints(table: Table, slot: int, name: str) -> tuple[int, ...]:
    """An int32 vector with one entry per (block-expanded) dimension: at most twice
    `max_tensor_rank` entries."""
    found = table.vector(slot, name, 4)
    if found is None:
        return ()
    start, count = found
    table.reader.check_entries(
        f"{table.what}, field {name}", (count + 1) // 2, "max_tensor_rank"
    )
    return tuple(np.frombuffer(table.reader.data, "<i4", count, start).tolist())


def _dimension_metadata(table: Table) -> DimensionMetadata:
    return DimensionMetadata(
        format=table.scalar(_DM_FORMAT, _I8, DENSE, "format"),
        dense_size=table.scalar(_DM_DENSE_SIZE, _I32, 0, "dense_size"),
        array_segments=_index_vector(
            table, _DM_SEGMENTS_TYPE, _DM_SEGMENTS, "array_segments"
        ),
        array_indices=_index_vector(table, _DM_INDICES_TYPE, _DM_INDICES, "array_indices"),
    )


def _index_vector(table: Table, type_slot: int, slot: int, name: str) -> np.ndarray:
    """The SparseIndexVector union field `name` as a read-only view of its values (empty
    when absent); at most `max_tensor_elements` values."""
    kind = table.scalar(type_slot, _U8, 0, f"{name}_type")
    member = table.table(slot, name, f"{table.what}, {name}")
    if member is None or kind == 0:
        return np.zeros(0, np.int32)
    dtype = _INDEX_VECTOR_TYPES.get(kind)
    if dtype is None:
        raise table.reader.corrupt(
            f"{table.what}, field {name}_type",
            f"SparseIndexVector type {kind} is not Int32Vector (1), Uint16Vector (2) or "
            "Uint8Vector (3)",
        )
    values = member.array(0, "values", dtype)
    table.reader.check_entries(
        f"{member.what}, field values", values.size, "max_tensor_elements"
    )
    return values


def _operator(reader: Reader, index: int, table: Table) -> Operator:
    what = f"subgraph 0, operator {index}"
    options_type = table.scalar(_OP_OPTIONS_TYPE, _U8, 0, "builtin_options_type")
    options = table.table(_OP_OPTIONS, "builtin_options", f"{what}, builtin_options")
    if options is not None:
        options.check_fields()
    custom: bytes | None = None
    large_offset = table.scalar(_OP_LARGE_OFFSET, _U64, 0, "large_custom_options_offset")
    if large_offset > 1:  # models over 2 GiB keep custom options after the flatbuffer
        size = table.scalar(_OP_LARGE_SIZE, _U64, 0, "large_custom_options_size")
        if large_offset + size > reader.size:
            raise reader.corrupt(
                what,
                f"{size:,} bytes of custom options at file offset {large_offset:,} run "
                f"past the end of the file ({reader.size:,} bytes)",
            )
        custom = reader.data[large_offset : large_offset + size]
    else:
        found = table.vector(_OP_CUSTOM, "custom_options", 1)
        if found is not None:
            custom = reader.data[found[0] : found[0] + found[1]]
    return Operator(
        index=index,
        opcode_index=table.scalar(_OP_OPCODE, _U32, 0, "opcode_index"),
        inputs=table.ints(_OP_INPUTS, "inputs", "max_graph_items"),
        outputs=table.ints(_OP_OUTPUTS, "outputs", "max_graph_items"),
        options_type=options_type,
        options_pos=None if options is None else options.pos,
        custom_options=custom,
    )
