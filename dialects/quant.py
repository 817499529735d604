"""The `quant` dialect: uniformly quantized element types in MLIR's spelling.

A quantized tensor stores integers ``q`` that stand for real values
``scale * (q - zero_point)``. One attribute class owns the `quant.uniform` mnemonic
(xDSL maps one class per mnemonic), so per-tensor and per-axis quantization share it::

    !quant.uniform<u8:f32, 0.0235:128>               per tensor
    !quant.uniform<i8:f32:0, {0.1,0.2:1}>            per axis (axis 0), zero point 0 elided

Dynamic fixed point with ``fl`` fractional bits is a per-tensor type with scale
``2**-fl`` and zero point 0. Scales and zero points are kept as packed arrays inside the
attribute (never Python lists), so per-channel types of wide layers stay cheap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    NoneAttr,
    ShapedType,
    StringAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

#: Storage type spelling -> (numpy dtype, smallest value, largest value).
STORAGE_TYPES: dict[str, tuple[np.dtype, int, int]] = {
    "u8": (np.dtype(np.uint8), 0, 255),
    "i8": (np.dtype(np.int8), -128, 127),
    "u16": (np.dtype(np.uint16), 0, 65535),
    "i16": (np.dtype(np.int16), -32768, 32767),
    "i32": (np.dtype(np.int32), -(2**31), 2**31 - 1),
    "i64": (np.dtype(np.int64), -(2**63), 2**63 - 1),
}


def format_scale(value: float) -> str:
    """Shortest text that parses back to exactly ``value`` and lexes as an MLIR float."""
    text = repr(float(value))
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def _f64_array(values: Sequence[float] | np.ndarray) -> DenseArrayBase:
    data = np.ascontiguousarray(values, dtype="<f8").reshape(-1)
    return DenseArrayBase(Float64Type(), BytesAttr(data.tobytes()))


def _i64_array(values: Sequence[int] | np.ndarray) -> DenseArrayBase:
    data = np.ascontiguousarray(values, dtype="<i8").reshape(-1)
    return DenseArrayBase(i64, BytesAttr(data.tobytes()))


@irdl_attr_definition
class UniformQuantizedType(ParametrizedAttribute, TypeAttribute):
    """An integer element type standing for ``scale * (q - zero_point)`` real values.

    Per-tensor when `axis` is `NoneAttr` (exactly one scale and zero point); per-axis
    otherwise, with one scale and zero point per index along `axis` of the tensor that
    carries it (checked by `verify_quantized_tensor`, since a type alone knows no shape).
    """

    name = "quant.uniform"

    storage: StringAttr
    expressed: Attribute
    axis: IntAttr | NoneAttr
    scales_attr: DenseArrayBase
    zero_points_attr: DenseArrayBase

    # -- construction -------------------------------------------------------------
    @staticmethod
    def per_tensor(
        storage: str, scale: float, zero_point: int = 0, expressed: Attribute = f32
    ) -> UniformQuantizedType:
        """A per-tensor type: one scale and one zero point for every element."""
        return UniformQuantizedType(
            StringAttr(storage),
            expressed,
            NoneAttr(),
            _f64_array([scale]),
            _i64_array([zero_point]),
        )

    @staticmethod
    def per_axis(
        storage: str,
        axis: int,
        scales: Sequence[float] | np.ndarray,
        zero_points: Sequence[int] | np.ndarray | None = None,
        expressed: Attribute = f32,
    ) -> UniformQuantizedType:
        """A per-axis type: scale and zero point ``i`` apply to index ``i`` of `axis`."""
        scales = np.asarray(scales, dtype=np.float64).reshape(-1)
        if zero_points is None:
            zero_points = np.zeros(scales.shape, dtype=np.int64)
        return UniformQuantizedType(
            StringAttr(storage),
            expressed,
            IntAttr(axis),
            _f64_array(scales),
            _i64_array(zero_points),
        )

    @staticmethod
    def dynamic_fixed_point(
        storage: str, fraction_length: int, expressed: Attribute = f32
    ) -> UniformQuantizedType:
        """Dynamic fixed point: `fraction_length` fractional bits (scale 2^-fl, zp 0)."""
        return UniformQuantizedType.per_tensor(
            storage, math.ldexp(1.0, -fraction_length), 0, expressed
        )

    # -- queries ------------------------------------------------------------------
    @property
    def scales(self) -> np.ndarray:
        """The scales as a read-only float64 array (length 1 when per-tensor)."""
        return np.frombuffer(self.scales_attr.data.data, dtype="<f8")

    @property
    def zero_points(self) -> np.ndarray:
        """The zero points as a read-only int64 array (length 1 when per-tensor)."""
        return np.frombuffer(self.zero_points_attr.data.data, dtype="<i8")

    @property
    def is_per_axis(self) -> bool:
        """Whether scales vary along an axis."""
        return isinstance(self.axis, IntAttr)

    @property
    def quantized_dimension(self) -> int | None:
        """The axis the scales vary along, or None when per-tensor."""
        return self.axis.data if isinstance(self.axis, IntAttr) else None

    @property
    def scale(self) -> float:
        """The scale of a per-tensor type."""
        assert not self.is_per_axis, "per-axis type has no single scale"
        return float(self.scales[0])

    @property
    def zero_point(self) -> int:
        """The zero point of a per-tensor type."""
        assert not self.is_per_axis, "per-axis type has no single zero point"
        return int(self.zero_points[0])

    @property
    def storage_dtype(self) -> np.dtype:
        """The numpy dtype the integers are stored in."""
        return STORAGE_TYPES[self.storage.data][0]

    @property
    def storage_min(self) -> int:
        """Smallest storable integer."""
        return STORAGE_TYPES[self.storage.data][1]

    @property
    def storage_max(self) -> int:
        """Largest storable integer."""
        return STORAGE_TYPES[self.storage.data][2]

    @property
    def is_signed(self) -> bool:
        """Whether the storage type is signed."""
        return self.storage.data.startswith("i")

    @property
    def bitwidth(self) -> int:
        """Bits per stored integer."""
        return int(self.storage.data[1:])

    # -- verification -------------------------------------------------------------
    def verify(self) -> None:
        storage = self.storage.data
        if storage not in STORAGE_TYPES:
            raise VerifyException(
                f"quant.uniform: storage type '{storage}' is not one of "
                f"{', '.join(STORAGE_TYPES)}"
            )
        if not isinstance(
            self.expressed, Float16Type | BFloat16Type | Float32Type | Float64Type
        ):
            raise VerifyException(
                f"quant.uniform: expressed type must be f16, bf16, f32 or f64, got "
                f"{self.expressed}"
            )
        if not isinstance(self.scales_attr.elt_type, Float64Type):
            raise VerifyException("quant.uniform: scales must be stored as f64")
        if self.zero_points_attr.elt_type != i64:
            raise VerifyException("quant.uniform: zero points must be stored as i64")
        scales, zero_points = self.scales, self.zero_points
        if len(scales) == 0:
            raise VerifyException("quant.uniform: at least one scale is required")
        if len(scales) != len(zero_points):
            raise VerifyException(
                f"quant.uniform: {len(scales)} scales but {len(zero_points)} zero points"
            )
        if not self.is_per_axis and len(scales) != 1:
            raise VerifyException(
                f"quant.uniform: a per-tensor type has one scale, got {len(scales)}"
            )
        if self.is_per_axis and self.axis.data < 0:  # type: ignore[union-attr]
            raise VerifyException(
                f"quant.uniform: quantized axis must be >= 0, got {self.axis.data}"  # type: ignore[union-attr]
            )
        bad = ~(np.isfinite(scales) & (scales > 0))
        if bad.any():
            index = int(np.argmax(bad))
            raise VerifyException(
                f"quant.uniform: scale must be positive and finite, got "
                f"{scales[index]} (index {index})"
            )
        _, lo, hi = STORAGE_TYPES[storage]
        outside = (zero_points < lo) | (zero_points > hi)
        if outside.any():
            index = int(np.argmax(outside))
            raise VerifyException(
                f"quant.uniform: zero point {zero_points[index]} is outside the "
                f"{storage} storage range [{lo}, {hi}]"
            )

    # -- syntax -------------------------------------------------------------------
    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parser.parse_punctuation("<")
        storage = parser.parse_identifier(" (quantized storage type)")
        parser.parse_punctuation(":")
        expressed = parser.parse_type()
        axis: IntAttr | NoneAttr = NoneAttr()
        if parser.parse_optional_punctuation(":") is not None:
            axis = IntAttr(parser.parse_integer(allow_boolean=False))
        parser.parse_punctuation(",")

        def scale_and_zero_point() -> tuple[float, int]:
            number = parser.parse_number(context_msg=" (quantization scale)")
            try:
                scale = float(number)
            except OverflowError:  # an integer beyond f64: infinite, rejected by verify
                scale = math.inf if number > 0 else -math.inf
            zero_point = 0
            if parser.parse_optional_punctuation(":") is not None:
                start = parser.pos
                zero_point = parser.parse_integer(allow_boolean=False)
                if not -(2**63) <= zero_point < 2**63:
                    message = f"zero point {zero_point} does not fit in 64 bits"
                    parser.raise_error(message, start, parser.pos)
            return scale, zero_point

        if isinstance(axis, IntAttr):
            pairs = parser.parse_comma_separated_list(
                parser.Delimiter.BRACES, scale_and_zero_point
            )
        else:
            pairs = [scale_and_zero_point()]
        parser.parse_punctuation(">")
        scales = np.array([p[0] for p in pairs], dtype=np.float64)
        zero_points = np.array([p[1] for p in pairs], dtype=np.int64)
        return [
            StringAttr(storage),
            expressed,
            axis,
            _f64_array(scales),
            _i64_array(zero_points),
        ]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.storage.data}:")
        printer.print_attribute(self.expressed)
        if isinstance(self.axis, IntAttr):
            printer.print_string(f":{self.axis.data}, {{")
        else:
            printer.print_string(", ")
        printer.print_string(
            ",".join(
                format_scale(s) if z == 0 else f"{format_scale(s)}:{z}"
                for s, z in zip(
                    self.scales.tolist(), self.zero_points.tolist(), strict=True
                )
            )
        )
        printer.print_string("}>" if isinstance(self.axis, IntAttr) else ">")


def verify_quantized_tensor(tensor_type: Attribute, what: str) -> None:
    """Check a per-axis quantized tensor type against its shape.

    The axis must exist and carry exactly one scale per index. `what` names the value
    in the message (e.g. ``"operand 1 (filter)"``).
    """
    if not isinstance(tensor_type, ShapedType):
        return
    element = tensor_type.get_element_type()  # type: ignore[attr-defined]
    if not isinstance(element, UniformQuantizedType) or not element.is_per_axis:
        return
    shape = tensor_type.get_shape()
    axis = element.quantized_dimension
    assert axis is not None
    if axis >= len(shape):
        raise VerifyException(
            f"{what}: quantized axis {axis} is out of range for rank {len(shape)}"
        )
    if len(element.scales) != shape[axis]:
        raise VerifyException(
            f"{what}: {len(element.scales)} scales for quantized axis {axis} of size "
            f"{shape[axis]}"
        )


Quant = Dialect("quant", [], [UniformQuantizedType])
__all__ = [
    "STORAGE_TYPES",
    "Quant",
    "UniformQuantizedType",
    "format_scale",
    "verify_quantized_tensor",
]


def quantize_real(value: float, q: UniformQuantizedType) -> int:
    """TFLite's ``zero_point + int(TfLiteRound(value / scale))`` in float32 (ties away
    from zero). A quotient beyond float32 (an infinite bound, or a tiny scale) gives the
    storage extreme on its side, which is what every caller clamps to; NaN cannot be
    quantized (ValueError)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        ratio = np.float32(value) / np.float32(q.scale)
    if np.isnan(ratio):
        raise ValueError(f"cannot quantize {value} with scale {q.scale:g}")
    if np.isinf(ratio):
        return q.storage_max if ratio > 0 else q.storage_min
    whole = np.trunc(ratio)  # the fraction is exact: ties are found exactly
    away = np.sign(ratio) if abs(ratio - whole) >= 0.5 else 0
    return int(q.zero_point + int(whole + away))


def activation_range(
    bounds: tuple[float | None, float | None], q: UniformQuantizedType
) -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized: the storage range of `q`, narrowed to
    a fused activation's clamp `bounds` (None: unbounded) quantized with `q`."""
    low, high = bounds
    lo, hi = q.storage_min, q.storage_max
    if low is not None:
        lo = max(lo, quantize_real(low, q))
    if high is not None:
        hi = min(hi, quantize_real(high, q))
    return lo, hi
