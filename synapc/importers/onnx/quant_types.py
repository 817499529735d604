"""Which element types QuantizeLinear / DequantizeLinear tensors have, and whether a node
takes the `!quant.uniform` path: shared by the reader (QDQ folding) and the converters
(quantized.py, quantize_arith.py), so the reader depends on no converter module."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from onnx import TensorProto, helper

from synapc.dtypes import numpy_dtype

if TYPE_CHECKING:
    from synapc.importers.onnx.reader import Importer, Node

#: The zero-point types `!quant.uniform` stores.
QUANT_STORAGE = frozenset({"int8", "uint8", "int16", "uint16", "int32"})
_F32 = np.dtype(np.float32)


def dtype_of(imp: Importer, name: str) -> np.dtype:
    """The numpy dtype of tensor `name`'s elements as ONNX sees them: the real values'
    type for a dequantized view, the storage integers' type for a tensor that holds a
    quantized type (the output of a QuantizeLinear)."""
    t = imp.tensor(name)
    if t.qtype is not None and not t.dequantized:
        return np.dtype(t.qtype.storage_dtype)
    if t.array is not None and t.qtype is None:
        return t.array.dtype
    return numpy_dtype(imp.element_type(name))


def onnx_dtype(node: Node, attr: str) -> np.dtype | None:
    """The numpy dtype an ONNX data-type attribute names (None when absent or 0)."""
    code = node.attr(attr, 0)
    if not code:
        return None
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(int(code)))
    except (KeyError, ValueError, TypeError):
        raise node.fail(
            f"attribute {attr}={code} is not a data type synapc reads"
        ) from None


def holds_quantized_type(imp: Importer, node: Node) -> bool:
    """Whether QuantizeLinear / DequantizeLinear `node` is one the `!quant.uniform` path
    converts: no block_size, constant float32 scale (one or a 1-D list) and zero point of
    8-, 16- or 32-bit integers, no `precision` or `output_dtype` that changes the types."""
    if node.int_attr("block_size", 0):
        return False
    scale = imp.const(node.input(1))
    if scale is None or scale.dtype != _F32 or scale.ndim > 1:
        return False
    zp = node.input(2)
    zp_array = imp.const(zp) if zp is not None else None
    if zp is not None and (zp_array is None or zp_array.dtype.name not in QUANT_STORAGE):
        return False
    if node.op_type == "QuantizeLinear":
        if node.attr("precision", 0) not in (0, TensorProto.FLOAT):
            return False
        out = onnx_dtype(node, "output_dtype")
        stored = zp_array.dtype if zp_array is not None else np.dtype(np.uint8)
        return out is None or out == stored
    if onnx_dtype(node, "output_dtype") not in (None, _F32):
        return False
    return dtype_of(imp, node.inputs[0]).name in QUANT_STORAGE
