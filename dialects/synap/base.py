"""What every synap op shares: source-layer attributes, type checks, shape inference.

An op subclass declares its operands, results and properties with IRDL, and implements
`infer_shapes` (the result shapes its operands and properties imply, from
`dialects.synap.shapes`) and, where needed, `verify_semantics`. The verifier then checks
the actual result shapes against `infer_shapes`, so importers and verifiers share one rule,
and `make` builds an op from Python values with its result type inferred.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, NoReturn, Self

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f32,
    i1,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarResultDef,
    opt_attr_def,
    prop_def,
    traits_def,
)
from xdsl.irdl.constraints import VerificationContext
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from synapc.dialects.quant import UniformQuantizedType, verify_quantized_tensor
from synapc.dialects.synap import shapes
from synapc.dialects.synap.attributes import ATTRIBUTES

Shape = shapes.Shape


# -- attribute helpers -----------------------------------------------------------------
def i64_array(values: Iterable[int]) -> DenseArrayBase:
    """An `array<i64: ...>` attribute from integers."""
    data = np.asarray(list(values), dtype="<i8")
    return DenseArrayBase(i64, BytesAttr(data.tobytes()))


def ints(attr: DenseArrayBase) -> tuple[int, ...]:
    """The integers of an `array<i64: ...>` attribute."""
    return tuple(int(v) for v in np.frombuffer(attr.data.data, dtype="<i8"))


def int_array_prop(default: Sequence[int] | None = None) -> Any:
    """An `array<i64>` property, elided when equal to `default`."""
    return prop_def(
        DenseArrayBase.constr(i64),
        default_value=None if default is None else i64_array(default),
    )


def int_prop(default: int | None = None) -> Any:
    """An i64 integer property, elided when equal to `default`."""
    return prop_def(
        IntegerAttr.constr(type=i64),
        default_value=None if default is None else IntegerAttr(default, i64),
    )


def bool_prop(default: bool = False) -> Any:
    """A boolean property, elided when equal to `default`."""
    return prop_def(
        IntegerAttr.constr(type=i1), default_value=IntegerAttr(int(default), i1)
    )


def float_prop(default: float | None = None) -> Any:
    """An f32 float property, elided when equal to `default`."""
    return prop_def(
        FloatAttr.constr(f32),
        default_value=None if default is None else FloatAttr(default, f32),
    )


def enum_prop(attr_type: type[EnumAttribute[Any]], default: enum.Enum) -> Any:
    """An enumerated property, elided when equal to `default`."""
    return prop_def(attr_type, default_value=attr_type(default))


_ENUM_ATTRS: dict[type, type[EnumAttribute[Any]]] = {a.enum_type: a for a in ATTRIBUTES}


def to_python(attr: Attribute) -> Any:
    """The Python value of a property attribute (tuple, int, bool, float, enum, str)."""
    if isinstance(attr, DenseArrayBase):
        return ints(attr)
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        return bool(value) if attr.type == i1 else value
    if isinstance(attr, FloatAttr):  # parsed from an integer literal, data is an int
        return float(attr.value.data)
    if isinstance(attr, EnumAttribute):
        return attr.data
    if isinstance(attr, StringAttr):
        return attr.data
    return attr


def _candidates(value: Any) -> list[Attribute]:
    if isinstance(value, Attribute):
        return [value]
    if isinstance(value, enum.Enum):
        return [_ENUM_ATTRS[type(value)](value)]
    if isinstance(value, bool | np.bool_):
        return [IntegerAttr(int(value), i1)]
    if isinstance(value, int | np.integer):
        return [IntegerAttr(int(value), i64), FloatAttr(float(value), f32)]
    if isinstance(value, float | np.floating):
        return [FloatAttr(float(value), f32)]
    if isinstance(value, str):
        return [StringAttr(value)]
    if isinstance(value, Sequence | np.ndarray):
        return [i64_array(int(v) for v in value)]
    raise TypeError(f"cannot turn {value!r} into an attribute")


# -- type helpers ----------------------------------------------------------------------
def tensor_type(value: SSAValue | Attribute) -> TensorType[Attribute]:
    """The tensor type of a value (or the type itself)."""
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType), f"expected a tensor, got {t}"
    return t


def shape_of(value: SSAValue | Attribute) -> Shape:
    """The static shape of a tensor value or type."""
    return tensor_type(value).get_shape()


def element_of(value: SSAValue | Attribute) -> Attribute:
    """The element type of a tensor value or type."""
    return tensor_type(value).element_type


def is_quantized(element: Attribute) -> bool:
    """Whether an element type is a `!quant.uniform` type."""
    return isinstance(element, UniformQuantizedType)


def is_float(element: Attribute) -> bool:
    """Whether an element type is a builtin floating-point type."""
    return getattr(element, "name", "") in {"f16", "bf16", "f32", "f64"}


#: The storage-only float types (ONNX's float8 and float4 kinds).
_LOW_PRECISION_FLOATS = frozenset(
    {"f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "f8E8M0FNU", "f4E2M1FN"}
)


def is_low_precision(element: Attribute) -> bool:
    """Whether an element type is storage-only: float8, float4 and 2- or 4-bit integers
    hold a model's values and are cast to and from, but no other op computes in them."""
    if isinstance(element, IntegerType):
        return element.width.data in (2, 4)
    return getattr(element, "name", "") in _LOW_PRECISION_FLOATS


def _kind(element: Attribute) -> str:
    if is_quantized(element):
        return "quantized"
    return str(element)


def check_tensor_type(t: Attribute, what: str, low_precision: bool = False) -> None:
    """A synap operand or result is a ranked, static tensor of float, integer or quantized
    elements (or, where `low_precision`, of a storage-only type), and a per-axis
    quantized type fits its shape."""
    assert isinstance(t, TensorType)  # the IRDL operand constraints checked this
    if any(d < 0 for d in t.get_shape()):
        raise VerifyException(f"{what} must have a static shape, got {t}")
    element = t.element_type
    if is_low_precision(element):
        if not low_precision:
            raise VerifyException(
                f"{what} has element type {element}, which only synap.cast takes "
                "(a storage-only type)"
            )
    elif not (
        is_float(element) or is_quantized(element) or isinstance(element, IntegerType)
    ):
        raise VerifyException(f"{what} has unsupported element type {element}")
    verify_quantized_tensor(t, what)


def _as_values(
    operand: SSAValue | Operation | Sequence[SSAValue | Operation] | None,
) -> SSAValue | list[SSAValue]:
    """An operand given as a value, a single-result op, a sequence of those, or None."""
    if operand is None:
        return []
    if isinstance(operand, SSAValue | Operation):
        return SSAValue.get(operand)
    return [SSAValue.get(o) for o in operand]


class SynapOp(IRDLOperation):
    """Base of all synap ops: pure, NHWC, static shapes, source layers kept.

    `layer_name` and `layer_index` name the layer of the source model the op comes from
    (the metafile, `model_info.txt` and profiles address layers by them). `fused_layers`
    (``["bn_mul", "relu1"]``, absent when empty) names the other source layers the op
    also computes since a pass absorbed them (a folded batch-norm or pad, a fused
    activation or pool, the ops of a matched activation chain, a merged duplicate), in
    source graph order and without the op's own `layer_name`; passes maintain it with
    `synapc.passes.common.source_of`, so every source layer stays findable after fusion.
    """

    layer_name = opt_attr_def(StringAttr)
    layer_index = opt_attr_def(IntegerAttr.constr(type=i64))
    fused_layers = opt_attr_def(ArrayAttr[StringAttr])

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    #: Whether the result element kind follows operand 0 (float type or quantized).
    SAME_ELEMENT_KIND: ClassVar[bool] = True
    #: Whether every operand must be of operand 0's kind (same float or integer type, or
    #: quantized with any parameters).
    SAME_KIND_OPERANDS: ClassVar[bool] = False
    #: Whether operands and results may be of the storage-only types (`is_low_precision`).
    TAKES_LOW_PRECISION: ClassVar[bool] = False

    # -- subclass hooks -------------------------------------------------------------
    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        """Result shapes implied by operand shapes and properties.

        Ops whose result shape is given by the result type (reshape, resize, ...) do not
        override this; they must be built with an explicit result type.
        """
        raise NotImplementedError

    def verify_semantics(self) -> None:
        """Checks beyond result shapes (override where an op has them)."""

    # -- queries --------------------------------------------------------------------
    def props(self) -> dict[str, Any]:
        """Properties as Python values (defaults filled in)."""
        return {k: to_python(v) for k, v in self.properties.items()}

    @property
    def source(self) -> str:
        """`"name"` or `"@index"` of the source layer, for messages ("" if unknown)."""
        if self.layer_name is not None:
            return f'"{self.layer_name.data}"'
        if self.layer_index is not None:
            return f"@{self.layer_index.value.data}"
        return ""

    def fail(self, message: str) -> NoReturn:
        """Raise a VerifyException that names the op and its source layer."""
        where = f" {self.source}" if self.source else ""
        raise VerifyException(f"{self.name}{where}: {message}")

    # -- verification ---------------------------------------------------------------
    def verify_(self) -> None:
        try:
            low = self.TAKES_LOW_PRECISION
            for i, operand in enumerate(self.operands):
                check_tensor_type(operand.type, f"operand #{i}", low)
            for i, result in enumerate(self.results):
                check_tensor_type(result.type, f"result #{i}", low)
        except VerifyException as error:
            self.fail(str(error))
        if self.SAME_KIND_OPERANDS and self.operands:
            first = element_of(self.operands[0])
            for operand in self.operands[1:]:
                if _kind(element_of(operand)) != _kind(first):
                    self.fail(
                        f"operand element types {first} and {element_of(operand)} differ"
                    )
        if self.SAME_ELEMENT_KIND and self.operands and self.results:
            source = element_of(self.operands[0])
            for i, result in enumerate(self.results):
                if _kind(element_of(result)) != _kind(source):
                    self.fail(
                        f"result #{i} element type {element_of(result)} does not match "
                        f"operand #0 element type {source}"
                    )
        try:
            expected = self.infer_shapes([shape_of(v) for v in self.operands], self.props())
        except NotImplementedError:
            expected = None
        except shapes.ShapeError as error:
            self.fail(str(error))
        if expected is not None:
            actual = [shape_of(r) for r in self.results]
            for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
                if tuple(want) != tuple(got):
                    self.fail(f"result #{i} shape {list(got)} should be {list(want)}")
        try:
            self.verify_semantics()
        except shapes.ShapeError as error:
            self.fail(str(error))

    # -- construction ---------------------------------------------------------------
    @classmethod
    def make(
        cls,
        *operands: SSAValue | Operation | Sequence[SSAValue | Operation] | None,
        result_types: Sequence[Attribute] | None = None,
        element_type: Attribute | None = None,
        layer_name: str | None = None,
        layer_index: int | None = None,
        fused_layers: Sequence[str] | None = None,
        **props: Any,
    ) -> Self:
        """Build the op from values and Python property values.

        Operands follow the op's definition order (a sequence for a variadic operand,
        None for an absent optional one). Without `result_types`, result shapes come from
        `infer_shapes` and the element type from `element_type` or operand 0. An empty
        `fused_layers` sets no attribute.
        """
        op_def = cls.get_irdl_definition()
        properties: dict[str, Attribute] = {}
        for name, value in props.items():
            if name not in op_def.properties:
                raise TypeError(f"{cls.name} has no property '{name}'")
            constraint = op_def.properties[name].constr
            for candidate in _candidates(value):
                try:
                    constraint.verify(candidate, VerificationContext())
                except VerifyException:
                    continue
                properties[name] = candidate
                break
            else:
                raise TypeError(f"{cls.name}: {value!r} does not fit property '{name}'")
        for name, prop in op_def.properties.items():
            if name not in properties and prop.default_value is not None:
                properties[name] = prop.default_value
        operand_list = [_as_values(o) for o in operands]
        if result_types is None:
            flat = [
                v for o in operand_list for v in ([o] if isinstance(o, SSAValue) else o)
            ]
            if not flat:
                raise TypeError(f"{cls.name}: give result_types for an op without operands")
            result_shapes = cls.infer_shapes(
                [shape_of(v) for v in flat],
                {k: to_python(v) for k, v in properties.items()},
            )
            element = element_type if element_type is not None else element_of(flat[0])
            result_types = [TensorType(element, s) for s in result_shapes]
        if any(isinstance(d, VarResultDef) for _, d in op_def.results):
            result_types = [list(result_types)]  # the one variadic result takes them all
        attributes: dict[str, Attribute] = {}
        if layer_name is not None:
            attributes["layer_name"] = StringAttr(layer_name)
        if layer_index is not None:
            attributes["layer_index"] = IntegerAttr(layer_index, i64)
        if fused_layers:
            attributes["fused_layers"] = ArrayAttr([StringAttr(n) for n in fused_layers])
        return cls.build(
            operands=operand_list,
            result_types=list(result_types),
            properties=properties,
            attributes=attributes,
        )
