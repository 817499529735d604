"""Checks of what an ONNX file declares, made before synapc trusts or allocates it.

An `.onnx` file from the internet can declare a 2**62-element initializer with three bytes
of data, names that are not UTF-8, an external-data file of a terabyte, attributes of
the wrong type or a convolution with pads of 2**62. The reader calls these checks first,
so that a bad file is one `SynapcError` naming the file and the tensor, node, attribute
or field (see `synapc.limits`), never a numpy allocation or a Python traceback.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import TensorProto

from synapc.errors import SynapcError
from synapc.limits import check_count, check_tensor, limits

if TYPE_CHECKING:
    from synapc.importers.onnx.reader import Node

#: numpy's largest rank (numpy 2): a tensor of a higher rank cannot be materialized,
#: whatever `max_tensor_rank` allows.
_NUMPY_MAX_RANK = 64
#: Longest name (in characters) a message quotes; longer names are shortened.
MAX_SHOWN = 80

#: The element types a constant may have, with the TensorProto field holding typed data.
_TYPED_FIELD = {
    TensorProto.FLOAT: "float_data",
    TensorProto.UINT8: "int32_data",
    TensorProto.INT8: "int32_data",
    TensorProto.UINT16: "int32_data",
    TensorProto.INT16: "int32_data",
    TensorProto.INT32: "int32_data",
    TensorProto.INT64: "int64_data",
    TensorProto.BOOL: "int32_data",
    TensorProto.FLOAT16: "int32_data",
    TensorProto.BFLOAT16: "int32_data",
    TensorProto.DOUBLE: "double_data",
    TensorProto.UINT32: "uint64_data",
    TensorProto.UINT64: "uint64_data",
}
#: The storage-only element types a constant may have (float8, float4, 4- and 2-bit
#: integers; their typed data is in int32_data), with their width in bits: raw data
#: packs 4- and 2-bit values several to a byte.
_LOW_PRECISION_BITS = {
    TensorProto.FLOAT8E4M3FN: 8,
    TensorProto.FLOAT8E4M3FNUZ: 8,
    TensorProto.FLOAT8E5M2: 8,
    TensorProto.FLOAT8E5M2FNUZ: 8,
    TensorProto.FLOAT8E8M0: 8,
    TensorProto.FLOAT4E2M1: 4,
    TensorProto.INT4: 4,
    TensorProto.UINT4: 4,
    TensorProto.INT2: 2,
    TensorProto.UINT2: 2,
}


def one_line(text: str) -> str:
    """`text` with its control characters (line breaks, ...) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def shown(name: object) -> str:
    """`name` as a message quotes it: control characters escaped, long names shortened
    (a name comes from the file and may hold anything)."""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "backslashreplace")
    text = one_line(str(name))
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def type_name(data_type: int) -> str:
    """The ONNX name of element type `data_type` (its number when the enum has none)."""
    try:
        return TensorProto.DataType.Name(data_type)
    except ValueError:
        return f"#{data_type}"


def numpy_dtype_of(data_type: int, what: str) -> np.dtype:
    """The numpy dtype holding ONNX element type `data_type`; refuses the types synapc
    does not read (strings, complex, ...); the storage-only types (float8, float4, 4-
    and 2-bit integers) are read as ml_dtypes arrays."""
    if data_type not in _TYPED_FIELD and data_type not in _LOW_PRECISION_BITS:
        raise SynapcError(f"{what}: element type {type_name(data_type)} is not supported")
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(data_type))


def check_rank(rank: int, what: str) -> None:
    """Refuse a tensor (`what` names the file and the tensor) of more than
    `max_tensor_rank` dimensions, or of more than numpy can hold."""
    check_count(rank, "max_tensor_rank", f"{what} (rank)")
    if rank > _NUMPY_MAX_RANK:
        raise SynapcError(
            f"{what}: rank {rank} is more than numpy holds ({_NUMPY_MAX_RANK})"
        )


def declared_shape(tensor: TensorProto, what: str) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype `tensor` declares, checked against the limits (elements,
    bytes, rank) before anything is allocated."""
    dtype = numpy_dtype_of(tensor.data_type, what)
    check_rank(len(tensor.dims), what)
    shape = tuple(int(d) for d in tensor.dims)
    check_tensor(shape, dtype.itemsize, what)
    return shape, dtype


def tensor_to_array(tensor: TensorProto, what: str) -> np.ndarray:
    """`tensor` as a numpy array, after checking its declared size against the limits
    and its data (raw bytes or typed values) against its declared size; `what` names the
    tensor (file and tensor name) in errors. External data must have been loaded."""
    if tensor.HasField("segment"):
        raise SynapcError(f"{what}: segmented tensors are not supported")
    if tensor.data_location == TensorProto.EXTERNAL or len(tensor.external_data):
        raise SynapcError(f"{what}: external data is only read for the main model")
    shape, dtype = declared_shape(tensor, what)
    count = math.prod(shape)
    if tensor.data_type in _LOW_PRECISION_BITS:
        return _low_precision_array(tensor, shape, what)
    if tensor.HasField("raw_data"):
        size = len(tensor.raw_data)
        if size != count * dtype.itemsize:
            raise SynapcError(
                f"{what}: raw_data holds {size:,} bytes, but shape {list(shape)} of "
                f"{type_name(tensor.data_type)} needs {count * dtype.itemsize:,}"
            )
        return np.frombuffer(tensor.raw_data, dtype=dtype).reshape(shape)
    field = _TYPED_FIELD[tensor.data_type]
    values = getattr(tensor, field)
    if len(values) != count:
        raise SynapcError(
            f"{what}: {field} holds {len(values):,} values, but shape {list(shape)} "
            f"has {count:,} elements"
        )
    try:
        return onnx.numpy_helper.to_array(tensor).astype(dtype).reshape(shape)
    except (ValueError, TypeError, OverflowError):
        raise SynapcError(
            f"{what}: {field} holds values that do not fit {type_name(tensor.data_type)}"
        ) from None


def _low_precision_array(
    tensor: TensorProto, shape: tuple[int, ...], what: str
) -> np.ndarray:
    """A storage-only `tensor` (see `_LOW_PRECISION_BITS`) as an ml_dtypes array, its
    data checked against its declared size first."""
    count = math.prod(shape)
    name = type_name(tensor.data_type)
    if tensor.HasField("raw_data"):
        needed = -(-count * _LOW_PRECISION_BITS[tensor.data_type] // 8)
        if len(tensor.raw_data) != needed:
            raise SynapcError(
                f"{what}: raw_data holds {len(tensor.raw_data):,} bytes, but shape "
                f"{list(shape)} of {name} needs {needed:,}"
            )
    else:
        values = len(tensor.int32_data)
        packed = -(-count * _LOW_PRECISION_BITS[tensor.data_type] // 8)
        if values not in (count, packed):
            raise SynapcError(
                f"{what}: int32_data holds {values:,} values, but shape {list(shape)} "
                f"has {count:,} elements"
            )
    try:
        return onnx.numpy_helper.to_array(tensor).reshape(shape)
    except (ValueError, TypeError, OverflowError):
        raise SynapcError(f"{what}: its data cannot be read as {name}") from None


# -- names -------------------------------------------------------------------------
def check_strings(proto: onnx.ModelProto, path: Path) -> None:
    """Refuse a model whose names are not text: protobuf hands a proto2 string that is
    not valid UTF-8 over as bytes, which no later step expects."""
    for domain in (o.domain for o in proto.opset_import):
        if not isinstance(domain, str):
            raise SynapcError(f"{path}: an opset_import domain is not UTF-8 text")
    _check_graph_strings(proto.graph, path, "the graph", 0)


def _check_graph_strings(
    graph: onnx.GraphProto, path: Path, where: str, depth: int
) -> None:
    limit = limit_of("max_graph_nesting")
    if depth > limit:
        raise SynapcError(
            f"{path}: subgraphs are nested more than {limit} levels deep "
            "(SYNAPC_MAX_GRAPH_NESTING raises it)"
        )
    for kind, infos in (
        ("input", graph.input),
        ("output", graph.output),
        ("value_info", graph.value_info),
        ("initializer", graph.initializer),
    ):
        for k, info in enumerate(infos):
            if not isinstance(info.name, str):
                raise SynapcError(
                    f"{path}: {where}: {kind} {k} has a name that is not UTF-8"
                )
    for index, node in enumerate(graph.node):
        fields: Iterable[object] = (
            node.name,
            node.op_type,
            node.domain,
            *node.input,
            *node.output,
            *(a.name for a in node.attribute),
        )
        if not all(isinstance(f, str) for f in fields):
            raise SynapcError(
                f"{path}: {where}: node {index} has a name, type, domain, input, output "
                "or attribute name that is not UTF-8 text"
            )
        for attribute in node.attribute:
            inner = f"{where}, node {index} attribute '{shown(attribute.name)}'"
            if attribute.HasField("g"):
                _check_graph_strings(attribute.g, path, inner, depth + 1)
            for g in attribute.graphs:
                _check_graph_strings(g, path, inner, depth + 1)


# -- the file ------------------------------------------------------------------------
def check_file_size(path: Path) -> None:
    """Refuse a model file above `max_model_file_bytes`, before reading it."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise SynapcError(f"{path}: cannot read the model ({error.strerror})") from None
    check_count(size, "max_model_file_bytes", f"{path}: model file size in bytes")


def _all_tensors(proto: onnx.ModelProto) -> Iterable[tuple[TensorProto, str]]:
    """Every tensor of the model that can hold data, with where it is: initializers
    and tensor attributes of the graph and its subgraphs."""
    stack = [(proto.graph, "")]
    while stack:
        graph, where = stack.pop()
        for init in graph.initializer:
            yield init, f"initializer '{shown(init.name)}'{where}"
        for node in graph.node:
            for attribute in node.attribute:
                label = f" of node '{shown(node.name)}' attribute '{shown(attribute.name)}'"
                if attribute.HasField("t"):
                    yield attribute.t, f"tensor{label}"
                for t in attribute.tensors:
                    yield t, f"tensor{label}"
                inner = f" in the subgraph{label}"
                if attribute.HasField("g"):
                    stack.append((attribute.g, inner))
                stack.extend((g, inner) for g in attribute.graphs)


def load_external_data(proto: onnx.ModelProto, path: Path) -> None:
    """Read the external data of the model's tensors (files beside the model) into the
    tensors. Each tensor's size comes from its shape and is checked against the limits
    first; the file must lie inside the model's folder, hold `offset + size` bytes and
    agree with a declared `length`; all of it together stays under `max_constant_bytes`."""
    total = 0
    for tensor, label in _all_tensors(proto):
        if tensor.data_location != TensorProto.EXTERNAL:
            continue
        what = f"{path}: {label}"
        entries = {}
        for entry in tensor.external_data:
            if not isinstance(entry.key, str) or not isinstance(entry.value, str):
                raise SynapcError(f"{what}: external_data entries must be UTF-8 text")
            entries[entry.key] = entry.value
        location = entries.get("location", "")
        offset = _external_int(entries, "offset", what)
        length = _external_int(entries, "length", what)
        shape, dtype = declared_shape(tensor, what)
        size = math.prod(shape) * dtype.itemsize
        if length is not None and length != size:
            raise SynapcError(
                f"{what}: external data length {length:,} does not match shape "
                f"{list(shape)} of {type_name(tensor.data_type)} ({size:,} bytes)"
            )
        total += size
        check_count(total, "max_constant_bytes", f"{path}: bytes of external data")
        tensor.raw_data = _read_external(path, location, offset or 0, size, what)
        tensor.data_location = TensorProto.DEFAULT
        del tensor.external_data[:]


def _external_int(entries: dict[str, str], key: str, what: str) -> int | None:
    text = entries.get(key)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise SynapcError(
            f"{what}: external data {key} {shown(text)!r} is not a number"
        ) from None
    if value < 0:
        raise SynapcError(f"{what}: external data {key} {value} is negative")
    return value


def _read_external(path: Path, location: str, offset: int, size: int, what: str) -> bytes:
    """`size` bytes at `offset` of the file `location` (relative, inside the model's
    folder, not a link out of it)."""
    folder = path.parent.resolve()
    if not location or os.path.isabs(location) or "\\" in location:
        raise SynapcError(
            f"{what}: external data location {shown(location)!r} must be a relative path"
        )
    target = (folder / location).resolve()
    if folder not in target.parents:
        raise SynapcError(
            f"{what}: external data location {shown(location)!r} is outside the "
            "model's folder"
        )
    try:
        with open(target, "rb") as data:
            available = os.fstat(data.fileno()).st_size
            if offset + size > available:
                raise SynapcError(
                    f"{what}: external data file {shown(location)!r} has {available:,} "
                    f"bytes, fewer than offset {offset:,} + {size:,}"
                )
            data.seek(offset)
            content = data.read(size)
    except OSError as error:
        raise SynapcError(
            f"{what}: cannot read external data {shown(location)!r} ({error.strerror})"
        ) from None
    if len(content) != size:
        raise SynapcError(f"{what}: external data file {shown(location)!r} is truncated")
    return content


def check_opsets(proto: onnx.ModelProto, path: Path) -> int:
    """The model's ONNX opset, checked: every imported opset version within what the
    onnx library knows (the default domain) or a sane range (other domains)."""
    newest = onnx.defs.onnx_opset_version()
    opset = None
    for entry in proto.opset_import:
        domain = entry.domain or "ai.onnx"
        version = int(entry.version)
        if domain == "ai.onnx":
            if not 1 <= version <= newest:
                raise SynapcError(
                    f"{path}: opset_import gives ONNX opset {version}; synapc reads "
                    f"opsets 1 to {newest}"
                )
            opset = version if opset is None else opset
        elif not 1 <= version <= 1 << 16:
            raise SynapcError(
                f"{path}: opset_import gives version {version} for domain '{shown(domain)}'"
            )
    if opset is None:
        raise SynapcError(f"{path}: opset_import declares no ONNX (default domain) opset")
    return opset


def limit_of(name: str) -> int:
    """The current value of limit `name` (see `synapc.limits`)."""
    return int(getattr(limits(), name))


# -- nodes ---------------------------------------------------------------------------
#: Window operators: their sizes must be positive, their paddings non-negative.
_WINDOW_OPS = {
    "Conv",
    "ConvInteger",
    "ConvTranspose",
    "MaxPool",
    "AveragePool",
    "LpPool",
    "MaxUnpool",
    "QLinearConv",
    "QLinearAveragePool",
}
#: (attribute, lowest allowed value) per operator family.
_INT_RULES: dict[str, tuple[tuple[str, int], ...]] = {
    **{
        op: (
            ("kernel_shape", 1),
            ("strides", 1),
            ("dilations", 1),
            ("pads", 0),
            ("output_padding", 0),
            ("output_shape", 1),
            ("group", 1),
        )
        for op in _WINDOW_OPS
    },
    "DepthToSpace": (("blocksize", 1),),
    "SpaceToDepth": (("blocksize", 1),),
    "LRN": (("size", 1),),
    "Split": (("num_outputs", 1),),
    "TopK": (("k", 0),),
}
#: The required inputs of the com.microsoft quantized operators synapc converts.
_MICROSOFT_INPUTS = {
    "QGemm": (0, 1, 3, 4),
    "QLinearAdd": (0, 1, 3, 4, 6),
    "QLinearMul": (0, 1, 3, 4, 6),
    "QLinearGlobalAveragePool": (0, 1, 3),
    "QLinearAveragePool": (0, 1, 3),
    "QLinearLeakyRelu": (0, 1, 3),
    "QLinearSigmoid": (0, 1, 3),
    "QLinearSoftmax": (0, 1, 3),
    "QLinearConcat": (0, 2, 3),
}
_ATTR_TYPE_NAMES = {int(v): k for k, v in onnx.AttributeProto.AttributeType.items()}


def check_node(node: Node) -> None:
    """Refuse a node that does not fit its operator's ONNX schema (input and output
    counts, required inputs and attributes, attribute types) or whose size attributes
    are out of range (kernels, strides and dilations below 1, negative pads, sizes
    beyond the tensor limit), naming the node and the attribute."""
    proto = node.proto
    domain = proto.domain if proto.domain != "ai.onnx" else ""
    if domain == "":
        _check_schema(node)
    needed = _MICROSOFT_INPUTS.get(proto.op_type, ()) if domain == "com.microsoft" else ()
    for k in needed:
        if k >= len(proto.input) or not proto.input[k]:
            raise node.fail(f"its required input {k} is missing")
    if domain == "com.microsoft" and (not proto.output or not proto.output[0]):
        raise node.fail("has no output")
    rules = _INT_RULES.get(proto.op_type, ())
    if domain not in ("", "com.microsoft"):
        rules = ()
    biggest = limit_of("max_tensor_elements")
    for name, lowest in rules:
        value = node.attrs.get(name)
        if value is None:
            continue
        values = [value] if isinstance(value, int) else value
        if not isinstance(values, list) or not all(isinstance(v, int) for v in values):
            raise node.fail(f"attribute '{name}' must be integers, got {brief(value)}")
        for v in values:
            if v < lowest:
                raise node.fail(
                    f"attribute '{name}' {brief(value)} must be at least {lowest}"
                )
            if v > biggest:
                raise node.fail(
                    f"attribute '{name}' {brief(value)} exceeds the limit of "
                    f"{biggest:,} (SYNAPC_MAX_TENSOR_ELEMENTS raises it)"
                )


def _check_schema(node: Node) -> None:
    proto = node.proto
    try:
        schema = onnx.defs.get_schema(proto.op_type, node.opset, "")
    except onnx.defs.SchemaError:
        try:  # an operator newer than the model's opset: its first form
            schema = onnx.defs.get_schema(proto.op_type, onnx.defs.onnx_opset_version(), "")
        except onnx.defs.SchemaError:
            return  # not an ONNX operator: the converter decides
    inputs, outputs = len(proto.input), len(proto.output)
    if not schema.min_input <= inputs <= schema.max_input:
        takes = _count(schema.min_input, schema.max_input)
        raise node.fail(f"has {inputs} inputs; the operator takes {takes}")
    if not schema.min_output <= outputs <= schema.max_output:
        raise node.fail(
            f"has {outputs} outputs; the operator gives "
            f"{_count(schema.min_output, schema.max_output)}"
        )
    single = onnx.defs.OpSchema.FormalParameterOption.Single
    for k, formal in enumerate(schema.inputs[:inputs]):
        if formal.option == single and not proto.input[k]:
            raise node.fail(f"its required input {k} ('{formal.name}') is empty")
    for attribute in proto.attribute:
        expected = schema.attributes.get(attribute.name)
        if expected is None:
            continue
        if int(attribute.type) != int(expected.type):
            given = _ATTR_TYPE_NAMES.get(int(attribute.type), f"#{int(attribute.type)}")
            raise node.fail(
                f"attribute '{shown(attribute.name)}' is of type {given}; the operator "
                f"expects {expected.type.name}"
            )
    for name, attribute in schema.attributes.items():
        if attribute.required and name not in node.attrs:
            raise node.fail(f"its required attribute '{name}' is missing")


def _count(low: int, high: int) -> str:
    if high >= 1 << 30:
        return f"at least {low}"
    return str(low) if low == high else f"{low} to {high}"


def brief(values: object) -> str:
    """A short rendering of an attribute value for a message."""
    if isinstance(values, list | tuple):
        text = str([v if isinstance(v, int | float) else brief(v) for v in values])
    elif isinstance(values, int | float | str | bytes):
        text = shown(values)
    else:  # a tensor or graph
        return f"a {type(values).__name__}"
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 4] + "...]"
