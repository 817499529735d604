"""`${ANCHORS}`: the anchor boxes of a model's `TFLite_Detection_PostProcess` layer as
compact JSON, for output `format` strings such as
`tflite_detection_boxes ... anchors=${ANCHORS}` that postprocessing on the device reads.

The `.tflite` flatbuffer is read with the `tflite` schema package, imported only when
anchors are asked for, so parsing a metafile stays light and never imports an importer.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from synapc.errors import SynapcError
from synapc.limits import limits
from synapc.metafile.substitute import ReadProblem, read_regular_file, shown

__all__ = ["model_anchors"]

_OP = "TFLite_Detection_PostProcess"
_ANCHORS_INPUT = 2  # inputs: box encodings, class predictions, anchors
#: Characters (ASCII: bytes) one float32 takes at most in the JSON
#: ("-1.2345678901234567e-38,").
_CHARS_PER_VALUE = 25


class _Corrupt(Exception):
    """The flatbuffer holds more operators than its bytes can (shared vectors)."""


def model_anchors(model_path: Path) -> str:
    """Compact JSON (`[[y, x, h, w], ...]`) of the anchors tensor (input 2, constant
    [N, 4]) of the first `TFLite_Detection_PostProcess` operator of a `.tflite` model,
    float32 values printed as Python floats; "[]" when the model has no such operator or
    is not a `.tflite` file. An unreadable model or anchors that are not constant raise
    `SynapcError`."""
    model_path = Path(model_path)
    if model_path.suffix.lower() != ".tflite":
        return "[]"
    try:
        data = read_regular_file(
            model_path, limits().max_model_file_bytes, "max_model_file_bytes"
        )
    except ReadProblem as problem:
        raise SynapcError(
            f"{model_path}: cannot read the model file: it {problem.reason}"
        ) from None
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise SynapcError(f"{model_path}: not a TFLite model (no TFL3 file identifier)")
    try:
        anchors = _find_anchors(model_path, data)
    except SynapcError:
        raise
    except Exception:  # a truncated or corrupt flatbuffer; its Python text says nothing
        raise SynapcError(
            f"{model_path}: corrupt TFLite model (its flatbuffer refers outside the file "
            f"or holds impossible values) while looking for the {_OP} anchors"
        ) from None
    if anchors is None:
        return "[]"
    return json.dumps(anchors.astype(np.float32).tolist(), separators=(",", ":"))


def _schema(name: str) -> Any:
    """The class `name` of the generated `tflite` schema bindings."""
    module = importlib.import_module(f"tflite.{name}")
    return getattr(module, name)


def _find_anchors(model_path: Path, data: bytes) -> np.ndarray | None:
    """The anchors array of the first detection operator, or None without one."""
    model = _schema("Model").GetRootAs(data, 0)
    custom = _schema("BuiltinOperator").CUSTOM
    budget = len(data) // 4 + 16  # a vector entry takes 4 bytes: more means sharing
    for s in range(model.SubgraphsLength()):
        graph = model.Subgraphs(s)
        count = graph.OperatorsLength()
        budget -= count + 1
        if budget < 0:
            raise _Corrupt
        for o in range(count):
            op = graph.Operators(o)
            code = model.OperatorCodes(op.OpcodeIndex())
            if max(code.BuiltinCode(), code.DeprecatedBuiltinCode()) != custom:
                continue
            if (code.CustomCode() or b"").decode("utf-8", "replace") != _OP:
                continue
            where = f"{model_path}: {_OP} operator {o}"
            if op.InputsLength() <= _ANCHORS_INPUT or op.Inputs(_ANCHORS_INPUT) < 0:
                raise SynapcError(f"{where}: has no anchors input")
            return _anchors_array(model, data, graph, op.Inputs(_ANCHORS_INPUT), where)
    return None


def _anchors_array(
    model: Any, data: bytes, graph: Any, index: int, where: str
) -> np.ndarray:
    """The constant tensor `index` as float32 [N, 4]; a tensor computed by a DEQUANTIZE of
    a constant (float16 or 8-bit anchors, as converters emit them) is dequantized here."""
    values = _constant(model, data, graph, index, where)
    if values is None:
        producer = _producer(graph, index)
        dequantize = _schema("BuiltinOperator").DEQUANTIZE
        if producer is not None:
            code = model.OperatorCodes(producer.OpcodeIndex())
            if max(code.BuiltinCode(), code.DeprecatedBuiltinCode()) == dequantize:
                values = _constant(model, data, graph, producer.Inputs(0), where)
        if values is None:
            raise SynapcError(
                f"{where}: the anchors (input {_ANCHORS_INPUT}) are not constant"
            )
    if values.ndim != 2 or values.shape[1] != 4:
        raise SynapcError(
            f"{where}: anchors of shape {list(values.shape)}, expected [N, 4]"
        )
    limit = limits().max_substituted_text_bytes
    if values.size * _CHARS_PER_VALUE > limit:
        raise SynapcError(
            f"{where}: {values.shape[0]:,} anchors are too many for ${{ANCHORS}} (at most "
            f"{limit // (4 * _CHARS_PER_VALUE):,}; SYNAPC_MAX_SUBSTITUTED_TEXT_BYTES "
            "raises it)"
        )
    return values


def _producer(graph: Any, index: int) -> Any:
    """The operator of `graph` that outputs tensor `index`, or None (the operator count
    was bounded by `_find_anchors`)."""
    for o in range(graph.OperatorsLength()):
        op = graph.Operators(o)
        if index in op.OutputsAsNumpy().tolist():
            return op
    return None


def _constant(
    model: Any, data: bytes, graph: Any, index: int, where: str
) -> np.ndarray | None:
    """Tensor `index` as float32 if it holds constant data (dequantized when it is an
    8-bit tensor with quantization parameters), else None."""
    tensor = graph.Tensors(index)
    buffer = model.Buffers(tensor.Buffer())
    raw: bytes = b""
    if buffer is not None and buffer.Offset() > 1:  # stored after the flatbuffer
        raw = data[buffer.Offset() : buffer.Offset() + buffer.Size()]
    elif buffer is not None and buffer.DataLength() > 0:
        raw = buffer.DataAsNumpy().tobytes()
    if not raw:
        return None
    types = _schema("TensorType")
    dtypes = {
        types.FLOAT32: "<f4",
        types.FLOAT16: "<f2",
        types.INT8: "i1",
        types.UINT8: "u1",
    }
    dtype = dtypes.get(tensor.Type())
    if dtype is None:
        raise SynapcError(
            f"{where}: anchors tensor '{_name(tensor)}' has unsupported type "
            f"{tensor.Type()}"
        )
    itemsize = np.dtype(dtype).itemsize
    shape = tuple(int(d) for d in tensor.ShapeAsNumpy()) if tensor.ShapeLength() else ()
    count = 1
    for d in shape:
        count *= d
    if not shape or min(shape) < 0 or count * itemsize != len(raw):
        raise SynapcError(
            f"{where}: anchors tensor '{_name(tensor)}' of shape {list(shape)} does not "
            f"match its {len(raw):,} bytes of data"
        )
    values = np.frombuffer(raw, dtype).reshape(shape).astype(np.float32)
    if dtype in ("i1", "u1"):
        quant = tensor.Quantization()
        if quant is None or quant.ScaleLength() != 1:
            raise SynapcError(
                f"{where}: 8-bit anchors tensor '{_name(tensor)}' needs one "
                "quantization scale"
            )
        zero = float(quant.ZeroPoint(0)) if quant.ZeroPointLength() else 0.0
        values = (values - np.float32(zero)) * np.float32(quant.Scale(0))
    return values


def _name(tensor: Any) -> str:
    """A tensor's name for messages (escaped and cut short: it is the file's text)."""
    return shown((tensor.Name() or b"").decode("utf-8", "replace"), 100)[1:-1]
