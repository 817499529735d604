"""Mapping between IR element types and the numpy dtypes that hold their values."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
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
    np.dtype(np.uint64): IntegerType(64, Signedness.UNSIGNED),
}

#: The storage-only element types (ml_dtypes' names): a model's values may be stored in
#: them and cast to and from them, but nothing else computes in them.
_LOW_PRECISION: dict[str, Attribute] = {
    "float8_e4m3fn": Float8E4M3FNType(),
    "float8_e4m3fnuz": Float8E4M3FNUZType(),
    "float8_e5m2": Float8E5M2Type(),
    "float8_e5m2fnuz": Float8E5M2FNUZType(),
    "float8_e8m0fnu": Float8E8M0FNUType(),
    "float4_e2m1fn": Float4E2M1FNType(),
    "int4": IntegerType(4),
    "uint4": IntegerType(4, Signedness.UNSIGNED),
    "int2": IntegerType(2),
    "uint2": IntegerType(2, Signedness.UNSIGNED),
}


def dtype_kind(dtype: np.dtype) -> str:
    """numpy's kind of `dtype` ("f", "i", "u", "b"), with bfloat16 (an ml_dtypes type,
    kind "V" to numpy) a float, and "V" for the storage-only types (`is_low_precision`;
    ml_dtypes gives float8_e5m2 kind "f"), which nothing but a cast computes in."""
    if is_low_precision(dtype):
        return "V"
    return "f" if dtype.name == "bfloat16" else dtype.kind


def element_type_for(dtype: np.dtype | type) -> Attribute:
    """The IR element type of a numpy dtype (signless integers for signed dtypes)."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return BFloat16Type()
    if dtype.name in _LOW_PRECISION:
        return _LOW_PRECISION[dtype.name]
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
        unsigned = element_type.signedness.data == Signedness.UNSIGNED
        name = f"{'u' if unsigned else ''}int{width}"
        if width in (2, 4) and element_type.signedness.data != Signedness.SIGNED:
            return _ml_dtype(name)  # numpy itself reads "int4" as a 4-byte int32
        if width not in (8, 16, 32, 64):
            raise TypeError(f"no numpy dtype for element type {element_type}")
        return np.dtype(name)
    for name, low in _LOW_PRECISION.items():
        if element_type == low:
            return _ml_dtype(name)
    raise TypeError(f"no numpy dtype for element type {element_type}")


def is_low_precision(dtype: np.dtype) -> bool:
    """Whether `dtype` is one of the storage-only types (float8, float4, 4- and 2-bit
    integers), which only casts compute in."""
    return dtype.name in _LOW_PRECISION


def _ml_dtype(name: str) -> np.dtype:
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, name))


def device_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype the JAX backend computes `dtype` in: 64-bit integers run as 32-bit (JAX's
    64-bit mode stays off; indices and shapes fit), converted back at the boundary."""
    if dtype == np.dtype(np.int64):
        return np.dtype(np.int32)
    if dtype == np.dtype(np.uint64):
        return np.dtype(np.uint32)
    return dtype
