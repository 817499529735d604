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


def f64_array(values: Sequence[float] | np.ndarray) -> DenseArrayBase:
    """An ``array<f64: ...>`` attribute straight from the bytes of `values` (no Python
    list of floats in between)."""
    data = np.ascontiguousarray(values, dtype="<f8").reshape(-1)
    return DenseArrayBase(Float64Type(), BytesAttr(data.tobytes()))


def f64_values(attr: DenseArrayBase) -> np.ndarray:
    """The values of an ``array<f64: ...>`` attribute as a read-only float64 array
    (ValueError for another element type)."""
    if not isinstance(attr.elt_type, Float64Type):
        raise ValueError(f"expected an array<f64> attribute, got {attr.elt_type}")
    return np.frombuffer(attr.data.data, dtype="<f8")


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
            f64_array([scale]),
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
            f64_array(scales),
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
            f64_array(scales),
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


# -- choosing quantization parameters (post-training quantization) ----------------------
#: Storage spelling of each data type a quantization map names.
DATA_TYPE_STORAGE: dict[str, str] = {"uint8": "u8", "int8": "i8", "int16": "i16"}


def nudged_range(low: float, high: float) -> tuple[float, float]:
    """`[low, high]` widened to contain 0, as TFLite's converter does (a real zero must
    be exactly representable: zero padding and ReLU outputs rely on it)."""
    return min(float(low), 0.0), max(float(high), 0.0)


def affine_parameters(low: float, high: float, storage: str) -> tuple[float, int]:
    """Asymmetric (scale, zero point) mapping `[low, high]` (nudged to contain 0) onto
    the whole `storage` range, the zero point rounded and clamped into it (TFLite's
    ChooseQuantizationParams). An empty range gets scale 1."""
    _, qmin, qmax = STORAGE_TYPES[storage]
    low, high = nudged_range(low, high)
    scale = (high - low) / (qmax - qmin)
    if not scale > 0 or not math.isfinite(scale):
        return 1.0, 0 if qmin < 0 else qmin
    zero_point = int(np.clip(np.round(qmin - low / scale), qmin, qmax))
    return scale, zero_point


def symmetric_scales(bound: np.ndarray | float, storage: str) -> np.ndarray:
    """Scales (zero point 0) mapping ``[-bound, bound]`` onto the narrow signed range
    ``[-qmax, qmax]``, elementwise over `bound` (per-channel weights); a zero bound
    gets scale 1."""
    qmax = STORAGE_TYPES[storage][2]
    bound = np.abs(np.asarray(bound, np.float64))
    return np.where(bound > 0, bound / qmax, 1.0)


def fixed_point_fraction(bound: float, storage: str) -> int:
    """Fractional bits of dynamic fixed point (scale ``2**-fl``, zero point 0) for
    values within ``[-bound, bound]``: the largest `fl` whose range still holds
    `bound` (the vendor's power-of-two scales); an empty range gets ``fl = 0``."""
    qmax = STORAGE_TYPES[storage][2]
    bound = abs(float(bound))
    if not bound > 0 or not math.isfinite(bound):
        return 0
    return math.floor(math.log2(qmax / bound))


def activation_type(
    low: float, high: float, storage: str, *, symmetric: bool, power_of_two: bool
) -> UniformQuantizedType:
    """The per-tensor type of an activation calibrated to `[low, high]`: dynamic fixed
    point (`power_of_two`), symmetric (zero point 0) or asymmetric affine."""
    bound = max(abs(low), abs(high))
    if power_of_two:
        return UniformQuantizedType.dynamic_fixed_point(
            storage, fixed_point_fraction(bound, storage)
        )
    if symmetric:
        return UniformQuantizedType.per_tensor(
            storage, float(symmetric_scales(bound, storage))
        )
    return UniformQuantizedType.per_tensor(storage, *affine_parameters(low, high, storage))


def channel_activation_type(
    lows: np.ndarray,
    highs: np.ndarray,
    storage: str,
    axis: int,
    *,
    symmetric: bool,
    min_scales: np.ndarray | None = None,
) -> UniformQuantizedType:
    """The per-channel type (along `axis`) of an activation calibrated to one
    `[low, high]` per channel: symmetric (zero point 0) or asymmetric affine, each
    channel's range nudged to contain 0 as `affine_parameters` does; an empty channel
    gets scale 1; `min_scales` (per channel) floors the scales, a kernel's limit on the
    ratio of its input and output scales (TFLite's hard_swish: below 128). Per-channel
    activations are what a layer that writes one output channel at a time (convolution,
    depthwise) and its depthwise consumers support."""
    _, qmin, qmax = STORAGE_TYPES[storage]
    lows = np.minimum(np.asarray(lows, np.float64), 0.0)
    highs = np.maximum(np.asarray(highs, np.float64), 0.0)
    floor = 0.0 if min_scales is None else np.asarray(min_scales, np.float64)
    if symmetric:
        scales = np.maximum(symmetric_scales(np.maximum(-lows, highs), storage), floor)
        return UniformQuantizedType.per_axis(storage, axis, scales)
    with np.errstate(divide="ignore", invalid="ignore"):
        scales = (highs - lows) / (qmax - qmin)
        ok = (scales > 0) & np.isfinite(scales)
        scales = np.maximum(np.where(ok, scales, 1.0), floor)
        zero_points = np.clip(np.round(qmin - lows / scales), qmin, qmax)
    zero_points = np.where(ok, zero_points, 0 if qmin < 0 else qmin).astype(np.int64)
    return UniformQuantizedType.per_axis(storage, axis, scales, zero_points)


def channel_activation_range(
    bounds: tuple[float | None, float | None], q: UniformQuantizedType
) -> tuple[np.ndarray, np.ndarray]:
    """`activation_range` of every channel of `q` at once: per-channel storage bounds of
    a fused activation's clamp (0-d arrays for a per-tensor `q`), each bound quantized
    as `quantize_real` does (float32 quotient, ties away from zero)."""
    scales = q.scales.astype(np.float32)
    zero_points = q.zero_points.astype(np.int64)

    def quantized(value: float) -> np.ndarray:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            ratio = np.float32(value) / scales
        finite = np.isfinite(ratio)
        # beyond 2**40 steps a bound clamps to the storage extreme anyway
        steps = round_half_away(np.clip(np.where(finite, ratio, 0), -(2.0**40), 2.0**40))
        inf = np.where(ratio > 0, q.storage_max, q.storage_min)
        return np.where(finite, zero_points + steps.astype(np.int64), inf)

    low, high = bounds
    lo = np.full(scales.shape, q.storage_min, np.int64)
    hi = np.full(scales.shape, q.storage_max, np.int64)
    if low is not None:
        lo = np.maximum(lo, quantized(low))
    if high is not None:
        hi = np.minimum(hi, quantized(high))
    return (lo, hi) if q.is_per_axis else (lo.reshape(()), hi.reshape(()))


def round_half_away(x: np.ndarray) -> np.ndarray:
    """Round to nearest, halves away from zero (TFLite's TfLiteRound), elementwise."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def quantize_array(
    x: np.ndarray, q: UniformQuantizedType, axis: int | None = None
) -> np.ndarray:
    """Real values `x` stored in `q` (per tensor, or per axis along `axis`): round half
    away from zero of ``x / scale`` plus the zero point, saturated to the storage."""
    scales, zero_points = q.scales, q.zero_points.astype(np.float64)
    if q.is_per_axis:
        shape = [1] * x.ndim
        shape[q.quantized_dimension if axis is None else axis] = -1
        scales, zero_points = scales.reshape(shape), zero_points.reshape(shape)
    else:
        scales, zero_points = scales.reshape(()), zero_points.reshape(())
    stored = round_half_away(np.asarray(x, np.float64) / scales) + zero_points
    return np.clip(stored, q.storage_min, q.storage_max).astype(q.storage_dtype)


def dequantize_array(x: np.ndarray, q: UniformQuantizedType) -> np.ndarray:
    """Stored integers `x` of type `q` as float32 reals ``scale * (x - zero_point)``."""
    scales, zero_points = q.scales, q.zero_points
    if q.is_per_axis:
        shape = [1] * np.ndim(x)
        shape[q.quantized_dimension or 0] = -1
        scales, zero_points = scales.reshape(shape), zero_points.reshape(shape)
    else:
        scales, zero_points = scales.reshape(()), zero_points.reshape(())
    return ((np.asarray(x, np.int64) - zero_points) * scales).astype(np.float32)


def weight_type(
    w: np.ndarray,
    storage: str,
    axis: int | None,
    *,
    symmetric: bool,
    power_of_two: bool,
) -> UniformQuantizedType:
    """The type of weights `w` quantized from their own values: per channel along
    `axis` (symmetric, zero point 0), or per tensor (dynamic fixed point, symmetric or
    asymmetric affine over the weights' min/max)."""
    w = np.asarray(w, np.float64)
    if axis is not None:
        others = tuple(i for i in range(w.ndim) if i != axis)
        bound = np.max(np.abs(w), axis=others) if w.size else np.zeros(w.shape[axis])
        return UniformQuantizedType.per_axis(
            storage, axis, symmetric_scales(bound, storage)
        )
    low, high = (float(w.min()), float(w.max())) if w.size else (0.0, 0.0)
    return activation_type(
        low, high, storage, symmetric=symmetric, power_of_two=power_of_two
    )


def bias_type(
    input_type: UniformQuantizedType, filter_type: UniformQuantizedType, storage: str
) -> UniformQuantizedType:
    """The type of a quantized layer's bias: `storage` (i32, or i64 for 16x8 layers),
    zero point 0, scale ``s_in * s_w`` per output channel (products in float32 as
    TFLite's converter forms them). An input quantized per channel (a depthwise layer's,
    one scale per output channel) gives per-channel bias scales too."""
    s_in = input_type.scales.astype(np.float32)
    if input_type.is_per_axis and filter_type.scales.size != s_in.size:
        # depthwise with a channel multiplier: output channel c reads input c // m
        s_in = np.repeat(s_in, filter_type.scales.size // s_in.size)
    scales = (s_in * filter_type.scales.astype(np.float32)).astype(np.float64)
    if filter_type.is_per_axis or input_type.is_per_axis:
        return UniformQuantizedType.per_axis(storage, 0, scales)
    return UniformQuantizedType.per_tensor(storage, float(scales[0]))
