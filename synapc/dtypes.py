"""Mapping between IR element types and the numpy dtypes that hold their values."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

from synapc.dialects.quant import UniformQuantizedType

_BY_DTYPE: dict[np.dtype, Attribute] = {
    np.dtype(np.float16): f16,
    np.dtype(np.float32): f32,
    np.dtype(np.float64): f64,
    np.dtype(np.bool_): i1,
    np.dtype(np.int8): i8,
    np.dtype(np.int16): i16,
    np.dtype(np.int32): i32,
    np.dtype(np.int64): i64,
    np.dtype(np.uint8): IntegerType(8, Signedness.UNSIGNED),
    np.dtype(np.uint16): IntegerType(16, Signedness.UNSIGNED),
    np.dtype(np.uint32): IntegerType(32, Signedness.UNSIGNED),
}


def dtype_kind(dtype: np.dtype) -> str:
    """numpy's kind of `dtype` ("f", "i", "u", "b"), with bfloat16 (an ml_dtypes type,
    kind "V" to numpy) a float."""
    return "f" if dtype.name == "bfloat16" else dtype.kind


def element_type_for(dtype: np.dtype | type) -> Attribute:
    """The IR element type of a numpy dtype (signless integers for signed dtypes)."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return BFloat16Type()
    try:
        return _BY_DTYPE[dtype]
    except KeyError:
        raise TypeError(f"no IR element type for numpy dtype {dtype}") from None


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that stores values of an element type (storage type if quantized)."""
    if isinstance(element_type, UniformQuantizedType):
        return element_type.storage_dtype
    if isinstance(element_type, Float32Type):
        return np.dtype(np.float32)
    if isinstance(element_type, Float16Type):
        return np.dtype(np.float16)
    if isinstance(element_type, Float64Type):
        return np.dtype(np.float64)
    if isinstance(element_type, BFloat16Type):
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width not in (8, 16, 32, 64):  # numpy reads "int4" as a 4-byte int32
            raise TypeError(f"no numpy dtype for element type {element_type}")
        unsigned = element_type.signedness.data == Signedness.UNSIGNED
        return np.dtype(f"{'u' if unsigned else ''}int{width}")
    raise TypeError(f"no numpy dtype for element type {element_type}")


def device_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype the JAX backend computes `dtype` in: 64-bit integers run as 32-bit (JAX's
    64-bit mode stays off; indices and shapes fit), converted back at the boundary."""
    return np.dtype(np.int32) if dtype == np.dtype(np.int64) else dtype
