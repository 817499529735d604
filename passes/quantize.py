"""`quantize{data_type=uint8 scheme=default mode=standard}`: post-training quantization of
a calibrated float model into the quantized IR the exact integer kernels run.

Input: an optimized float model annotated by calibration (issue 19's contract): each op
with float results carries ``synap.calibrated_range`` (one f64 ``[low, high]`` array per
result, empty for non-float results) and optionally ``synap.quant_type`` (``uint8`` |
``int8`` | ``int16`` | ``float16`` | ``float32``); `@main`'s arguments carry the same as
argument attributes. Ops without ``synap.quant_type`` take the pass's `data_type`.

Output: the IR an imported quantized TFLite model has. Each op runs in its own data
type; where consecutive ops differ, conversions are inserted (`synap.quantize` from
float or between quantized types, `synap.dequantize`, `synap.cast` to or from f16):

* layers with weights (conv2d, depthwise_conv2d, transpose_conv2d, fully_connected and
  the fused conv2d_pool): quantized input,
  weights quantized from their own values (per output channel for
  ``perchannel_symmetric_affine`` and for int16, i.e. TFLite 16x8), a bias of
  ``i32`` (``i64`` for int16 activations) with scale ``s_in * s_w``, the result
  quantized from its calibrated range, the fused activation kept. conv2d_pool is
  quantized as it is, not split: `fuse-conv-pool` runs before calibration (quantization
  points are the fused layers), its kernel convolves into the result's type and
  max-pools stored integers, and the maximum commutes with quantization's clamping;
* ops that rescale (add, sub, mul, squared_difference, prelu, matmul, concat, mean,
  sum, select, clamp / relu / relu6, leaky_relu, hard_swish, swish, gelu, elu, exp, log,
  sqrt, rsqrt, abs): inputs in their own types, the result from its range;
* ops that select an operand's value (maximum, minimum, reduce_max, reduce_min): the
  operands requantized to the result's type (from its range; TFLite requires one);
* ops that move stored integers (reshape, transpose, pools, pad, slices, split, tile,
  broadcast, gather, depth/space, nearest and 8-bit bilinear resize): the result in the
  input's type (TFLite requires it);
* softmax, logistic, tanh, log_softmax, l2_normalization: TFLite's fixed output
  encodings (e.g. logistic 1/256 with zero point -128 for int8, 2**-15 for int16).

Kernels TFLite has for some storages only (`STORAGES`): a uint8 layer of an int8-only
kernel (elu, exp, log, sqrt, rsqrt, abs, squared_difference) runs in int8 (same width,
conversions inserted); other missing storages (int16 hard_swish, swish, elu, log, rsqrt,
log_softmax, l2_normalization, squared_difference, bilinear resize) stay float.

Schemes: ``asymmetric_affine`` (asymmetric activations; per-tensor weights, symmetric
for signed storage), ``dynamic_fixed_point`` (power-of-two scales, zero point 0, as
the vendor quantizes int8 and int16), ``perchannel_symmetric_affine`` (asymmetric
activations, symmetric weights per output channel) and ``default``: uint8 asymmetric,
int8 dynamic fixed point, int16 symmetric activations with per-channel int8 weights
(TFLite 16x8). Ranges are nudged to contain 0.

The graph's inputs stay float (a `synap.quantize` at the entry); outputs keep the type
of the op computing them (`dequantize-outputs` turns quantized ones into float), except
that a returned concatenation whose narrowest operand would get less than
1 / `UNRELATED_RANGES` of one shared range joins its operands in float (each with its
own scale; the YOLOv8 head case; a concatenation returned through a reshape or transpose
is not recognized).

A conv / depthwise / fully connected layer and the hard_swish it alone feeds run as one
fused layer (`plan_fused_activations`): the layer writes its result in 16 bits
(symmetric) and hard_swish reads it, so the only 8-bit point is after the activation.

Under ``perchannel_symmetric_affine``, values that only depthwise layers read (directly
or through hard_swish) are quantized per channel (`plan_channelwise`): their producer
(conv, depthwise, hard_swish) writes each channel with its own scale and zero point
from ``synap.calibrated_channel_range``. Ops
the integer path does not support (not in `INTEGER_OPS`, or without a range, or a
layer with non-constant weights) stay float behind `synap.dequantize` /
`synap.quantize`; with ``mode=full`` they are refused instead (a `SynapcError` naming
the layer). The annotations are removed.

Quantization arithmetic (parameters, rounding) lives in `synapc.dialects.quant`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f16,
    f32,
    i1,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from synapc.context import weights_of
from synapc.dialects.quant import (
    DATA_TYPE_STORAGE,
    UniformQuantizedType,
    activation_type,
    bias_type,
    channel_activation_type,
    f64_values,
    nudged_range,
    quantize_array,
    weight_type,
)
from synapc.dialects.synap import activation as act
from synapc.dialects.synap import conv, fused, logical, pool, reduce, resize
from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap.attributes import CoordinateMode, ResizeMode
from synapc.dialects.synap.base import element_of, is_float
from synapc.dialects.synap.constant import ConstantOp
from synapc.dialects.synap.conversion import CastOp, DequantizeOp, QuantizeOp
from synapc.dtypes import numpy_dtype
from synapc.errors import SynapcError
from synapc.passes.apply_layout import main_function, return_of
from synapc.passes.common import constant_array, new_constant
from synapc.quant_schemes import QUANTIZATION_MODES as MODES
from synapc.quant_schemes import SCHEMES
from synapc.weights import WeightStore

RANGE_ATTR = "synap.calibrated_range"
"""Op attribute (ArrayAttr of f64 [low, high] per result) / arg attribute (one array)."""

TYPE_ATTR = "synap.quant_type"
"""Op / arg attribute: the data type the layer runs in."""

CHANNEL_RANGE_ATTR = "synap.calibrated_channel_range"
"""Op attribute of the ops in `CHANNELWISE_PRODUCERS` (per-channel schemes): the f64
array ``[low_0 .. low_{C-1}, high_0 .. high_{C-1}]`` of the first result's last axis."""

DATA_TYPES = ("uint8", "int8", "int16", "float16", "float32")

#: Layers with weights and the axis of their output channels in the filter. The fused
#: conv2d_pool (`fuse-conv-pool` runs before calibration) is quantized as one layer: its
#: kernel runs the quantized convolution into the result's type and max-pools the stored
#: integers, and a maximum commutes with the clamping that quantization does, so no split
#: is needed and the layer's one calibrated range is the pooled result's.
WEIGHTED_OPS: dict[type[Operation], int] = {
    conv.Conv2DOp: 0,
    conv.DepthwiseConv2DOp: 3,
    conv.FullyConnectedOp: 0,
    conv.TransposeConv2DOp: 0,
    fused.Conv2DPoolOp: 0,
}
#: Ops whose integer kernels rescale: result quantized from its own range.
RESCALING_OPS: tuple[type[Operation], ...] = (
    ew.AddOp,
    ew.SubOp,
    ew.MulOp,
    ew.SquaredDifferenceOp,
    ew.PReluOp,
    conv.MatMulOp,
    dm.ConcatOp,
    reduce.ReduceMeanOp,
    reduce.ReduceSumOp,
    act.ClampOp,
    act.LeakyReluOp,
    act.HardSwishOp,
    act.SwishOp,
    act.GeluOp,
    act.EluOp,
    act.ExpOp,
    act.LogOp,
    act.SqrtOp,
    act.RsqrtOp,
    act.AbsOp,
    logical.SelectOp,
)
#: Ops whose result is one of their operands' values (the kernels compare stored
#: integers of one quantization): the operands are requantized to the result's type,
#: which comes from the result's range (clamping commutes with the maximum / minimum).
SELECTING_OPS: tuple[type[Operation], ...] = (
    ew.MaximumOp,
    ew.MinimumOp,
    reduce.ReduceMaxOp,
    reduce.ReduceMinOp,
)
#: Ops that move stored integers: the result has the input's quantization.
MOVING_OPS: tuple[type[Operation], ...] = (
    dm.ReshapeOp,
    dm.TransposeOp,
    dm.PadOp,
    dm.SliceOp,
    dm.StridedSliceOp,
    dm.SplitOp,
    dm.TileOp,
    dm.BroadcastToOp,
    dm.GatherOp,
    dm.DepthToSpaceOp,
    dm.SpaceToDepthOp,
    pool.MaxPool2DOp,
    pool.AvgPool2DOp,
    resize.ResizeOp,  # nearest and bilinear work on the input's stored integers
)
#: Ops whose quantized result has a fixed encoding per storage (scale, zero point), as
#: TFLite's Prepare fixes it; a storage missing here has no integer kernel.
FIXED_OUTPUT_OPS: dict[type[Operation], dict[str, tuple[float, int]]] = {
    act.SoftmaxOp: {"u8": (1 / 256, 0), "i8": (1 / 256, -128), "i16": (1 / 32768, 0)},
    act.SigmoidOp: {"u8": (1 / 256, 0), "i8": (1 / 256, -128), "i16": (1 / 32768, 0)},
    act.TanhOp: {"u8": (1 / 128, 128), "i8": (1 / 128, 0), "i16": (1 / 32768, 0)},
    act.LogSoftmaxOp: {"u8": (16 / 256, 255), "i8": (16 / 256, 127)},
    act.L2NormalizeOp: {"u8": (1 / 128, 128), "i8": (1 / 128, 0)},
}
#: Storage types of ops whose integer kernels exist for some storages only (TFLite's);
#: in other storages they stay float.
STORAGES: dict[type[Operation], tuple[str, ...]] = {
    act.HardSwishOp: ("u8", "i8"),
    act.SwishOp: ("u8", "i8"),  # the NPU's 8-bit SWISH table (TFLite has no kernel)
    act.EluOp: ("i8",),
    act.ExpOp: ("i8", "i16"),
    act.LogOp: ("i8",),  # int16: the 513-entry table is off by thousands of steps
    act.SqrtOp: ("i8", "i16"),
    act.RsqrtOp: ("i8",),  # near 0 (the int16 table interpolates a pole)
    act.AbsOp: ("i8", "i16"),
    ew.SquaredDifferenceOp: ("i8",),
    **{op: tuple(codes) for op, codes in FIXED_OUTPUT_OPS.items()},
}
#: Ops that write each output channel with its own scale (a convolution's per-channel
#: multipliers; elementwise kernels with per-channel parameters): their result may be
#: quantized per channel when every reader keeps channels apart too.
CHANNELWISE_PRODUCERS: tuple[type[Operation], ...] = (
    conv.Conv2DOp,
    conv.DepthwiseConv2DOp,
    act.HardSwishOp,
)
#: A concatenation the model returns stays float when the range covering all its
#: operands (each nudged to contain 0) is this many times the narrowest one's: one scale
#: for unrelated outputs joined in one tensor (YOLOv8's boxes and class scores) would
#: leave the narrow ones a few steps.
UNRELATED_RANGES = 16.0
#: Activations a conv / depthwise / fully connected layer runs fused with it: the
#: activation reads the layer's 16-bit intermediate, not an 8-bit tensor
#: (`_Rewriter.plan_fused_activations`).
FUSED_ACTIVATIONS: tuple[type[Operation], ...] = (act.HardSwishOp,)
#: Elementwise ops whose integer kernels take per-channel input and output types.
CHANNELWISE_ELEMENTWISE: tuple[type[Operation], ...] = (act.HardSwishOp,)
INTEGER_OPS: tuple[type[Operation], ...] = (
    *WEIGHTED_OPS,
    *RESCALING_OPS,
    *SELECTING_OPS,
    *MOVING_OPS,
    *FIXED_OUTPUT_OPS,
)
"""Op classes the quantized path supports (those the TFLite importer produces
quantized and the integer kernels run); the backend is not consulted."""


@dataclass(frozen=True)
class Scheme:
    """How one data type is quantized under a scheme."""

    storage: str
    symmetric: bool
    power_of_two: bool
    per_channel: bool

    @staticmethod
    def of(data_type: str, scheme: str) -> Scheme:
        """The scheme's rules for integer `data_type` (see the module docstring)."""
        storage = DATA_TYPE_STORAGE[data_type]
        if scheme == "default":
            scheme = {
                "uint8": "asymmetric_affine",
                "int8": "dynamic_fixed_point",
                "int16": "int16",
            }[data_type]
        if scheme == "dynamic_fixed_point":
            if storage == "u8":
                raise SynapcError(
                    "quantize: dynamic_fixed_point needs a signed data type (int8 or "
                    "int16), not uint8"
                )
            return Scheme(storage, True, True, False)
        if scheme == "int16":  # TFLite 16x8: symmetric activations, per-channel weights
            return Scheme(storage, True, False, True)
        per_channel = scheme == "perchannel_symmetric_affine"
        # int16 activations take zero point 0 in every TFLite kernel
        return Scheme(storage, storage == "i16", False, per_channel)


def _f64_pair(attr: Attribute) -> tuple[float, float] | None:
    """[low, high] of a DenseArrayBase, or None when empty / not an array."""
    if not isinstance(attr, DenseArrayBase):
        return None
    values = attr.get_values()
    if len(values) != 2:
        return None
    return float(values[0]), float(values[1])


def _tensor(element: Attribute, value: SSAValue) -> TensorType[Attribute]:
    return TensorType(element, value.type.get_shape())  # type: ignore[attr-defined]


def _recreated(
    op: Operation, operands: Sequence[SSAValue], result_types: Sequence[Attribute]
) -> Operation:
    """A copy of `op` (properties, attributes) over new operands and result types."""
    return type(op).create(
        operands=list(operands),
        result_types=list(result_types),
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )


def _layer(op: Operation) -> str:
    name = op.attributes.get("layer_name")
    return f"layer '{name.data}'" if isinstance(name, StringAttr) else f"op {op.name}"


#: Coordinate modes of TFLite's integer resize kernels.
_RESIZE_COORDINATES = (
    CoordinateMode.ASYMMETRIC,
    CoordinateMode.ALIGN_CORNERS,
    CoordinateMode.HALF_PIXEL,
)


def _integer_resize(op: resize.ResizeOp, storage: str) -> bool:
    """Whether TFLite's integer resize runs `op`: nearest neighbour (it copies stored
    integers) or 8-bit bilinear (ResizeBilinearInteger's 10-bit weights overflow on
    int16 values), with TFLite's coordinate modes and none of ONNX's further
    parameters."""
    p = op.props()
    if op.scales is not None or p["antialias"] or p["exclude_outside"]:
        return False
    if p["mode"] == ResizeMode.NEAREST:
        return p["coordinate_mode"] != CoordinateMode.TF_CROP_AND_RESIZE
    return (
        p["mode"] == ResizeMode.BILINEAR
        and storage in ("u8", "i8")
        and p["coordinate_mode"] in _RESIZE_COORDINATES
    )


@dataclass
class _Rewriter:
    """The state of one rewrite of @main: conversions already inserted, per value."""

    func: FuncOp
    weights: WeightStore
    data_type: str
    scheme: str
    full: bool
    #: (value, target element key) -> converted value
    views: dict[tuple[SSAValue, object], SSAValue] = field(default_factory=dict)
    #: value -> calibrated range of the float value it stands for
    ranges: dict[SSAValue, tuple[float, float]] = field(default_factory=dict)
    #: ops the rewrite inserted (erased again when nothing reads them)
    inserted: set[Operation] = field(default_factory=set)
    #: value -> calibrated (lows, highs) of its channels (last axis)
    channel_ranges: dict[SSAValue, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )
    #: values quantized per channel (`plan_channelwise`)
    channelwise: set[SSAValue] = field(default_factory=set)
    #: layer results kept in 16 bits for the activation fused after them
    wide: set[SSAValue] = field(default_factory=set)

    @property
    def block(self) -> Block:
        return self.func.body.block

    # -- annotations -------------------------------------------------------------
    def read_annotations(self) -> dict[SSAValue, str]:
        """Ranges of every annotated value (into `ranges`) and the data type of each
        argument; the annotations are removed."""
        arg_types: dict[SSAValue, str] = {}
        attrs = self.func.arg_attrs
        if attrs is not None:
            new = []
            for arg, d in zip(self.block.args, attrs.data, strict=True):
                entries = dict(d.data)
                pair = _f64_pair(entries.pop(RANGE_ATTR, None))  # type: ignore[arg-type]
                if pair is not None:
                    self.ranges[arg] = pair
                kind = entries.pop(TYPE_ATTR, None)
                if isinstance(kind, StringAttr):
                    arg_types[arg] = self._checked_type(kind.data, f"argument {arg.index}")
                new.append(DictionaryAttr(entries))
            self.func.arg_attrs = ArrayAttr(new)
        for op in self.block.ops:
            ranges = op.attributes.pop(RANGE_ATTR, None)
            if isinstance(ranges, ArrayAttr):
                for result, attr in zip(op.results, ranges.data, strict=False):
                    pair = _f64_pair(attr)
                    if pair is not None:
                        self.ranges[result] = pair
            channels = op.attributes.pop(CHANNEL_RANGE_ATTR, None)
            if (
                isinstance(channels, DenseArrayBase)
                and isinstance(channels.elt_type, Float64Type)
                and op.results
            ):
                values = f64_values(channels)
                shape = op.results[0].type.get_shape()  # type: ignore[attr-defined]
                if shape and values.size == 2 * shape[-1]:
                    self.channel_ranges[op.results[0]] = (
                        values[: shape[-1]],
                        values[shape[-1] :],
                    )
        return arg_types

    def _peek_type(self, op: Operation) -> str:
        """The data type `op` will run in (its annotation, left in place)."""
        kind = op.attributes.get(TYPE_ATTR)
        return kind.data if isinstance(kind, StringAttr) else self.data_type

    def plan_channelwise(self) -> None:
        """Choose the values quantized per output channel (`channelwise`): under the
        ``perchannel_symmetric_affine`` scheme, 8-bit results of `CHANNELWISE_PRODUCERS`
        with calibrated channel ranges, not returned, all of whose readers (of the same
        type) keep channels apart: a depthwise layer's input, or a
        `CHANNELWISE_ELEMENTWISE` op whose own result is per channel. Depthwise inputs
        are where per-tensor scales hurt most: a channel of small values next to large
        ones loses its precision, and the depthwise filter cannot average it out."""
        if self.scheme != "perchannel_symmetric_affine":
            return
        returned = set(return_of(self.func).operands)
        for op in reversed(list(self.block.ops)):
            if not isinstance(op, CHANNELWISE_PRODUCERS):
                continue
            result = op.results[0]
            kind = self._peek_type(op)
            if (
                kind not in ("uint8", "int8")
                or result in returned
                or result in self.wide
                or result not in self.channel_ranges
                or not result.uses
            ):
                continue
            if all(self._reads_channelwise(use, kind) for use in result.uses):
                self.channelwise.add(result)

    def plan_fused_activations(self) -> None:
        """Choose the layer results kept in 16 bits (`wide`): the input of an 8-bit
        `FUSED_ACTIVATIONS` op computed by a weighted layer of the same type that
        nothing else reads. The NPU runs the layer and its activation as one layer, so
        the activation reads the accumulator rescaled to 16 bits and only its own
        result is an 8-bit quantization point, as NNCF places quantizers. An 8-bit
        point before hard_swish spends its steps on the negative values hard_swish
        squashes (PP-OCRv4's recognizer: 10.9 -> 11.9 dB, detector: 10.3 -> 13.1 dB on
        a quick benchmark run)."""
        returned = set(return_of(self.func).operands)
        for op in self.block.ops:
            if not isinstance(op, FUSED_ACTIVATIONS):
                continue
            value = op.operands[0]
            producer = value.owner
            kind = self._peek_type(op)
            if (
                kind in ("uint8", "int8")
                and isinstance(producer, tuple(WEIGHTED_OPS))
                and not isinstance(producer, fused.Conv2DPoolOp)
                and self._peek_type(producer) == kind
                and len(list(value.uses)) == 1
                and value not in returned
            ):
                self.wide.add(value)

    def _reads_channelwise(self, use: Any, kind: str) -> bool:
        """Whether the reader of `use` takes a per-channel operand of type `kind`."""
        reader = use.operation
        if self._peek_type(reader) != kind:
            return False
        if isinstance(reader, conv.DepthwiseConv2DOp):
            return use.index == 0
        return isinstance(reader, CHANNELWISE_ELEMENTWISE) and (
            reader.results[0] in self.channelwise
        )

    def _checked_type(self, kind: str, where: str) -> str:
        if kind not in DATA_TYPES:
            raise SynapcError(
                f"quantize: {where}: {TYPE_ATTR} '{kind}' is not one of "
                + ", ".join(DATA_TYPES)
            )
        return kind

    def type_of(self, op: Operation) -> str:
        """The data type `op` runs in (its annotation, consumed, or the default)."""
        kind = op.attributes.pop(TYPE_ATTR, None)
        if isinstance(kind, StringAttr):
            return self._checked_type(kind.data, _layer(op))
        return self.data_type

    # -- conversions -------------------------------------------------------------
    def _insert(self, op: Operation, before: Operation) -> SSAValue:
        self.block.insert_op_before(op, before)
        self.inserted.add(op)
        return op.results[0]

    def quantized(
        self, value: SSAValue, rules: Scheme, before: Operation
    ) -> SSAValue | None:
        """`value` stored in `rules.storage`: as it is when already so quantized per
        tensor, else converted with parameters from its range (constants: from their
        values). None when no range is known."""
        element = element_of(value)
        if (
            isinstance(element, UniformQuantizedType)
            and element.storage.data == rules.storage
            and (not element.is_per_axis or value in self.channelwise)
        ):
            return value  # per channel: its readers were chosen to take it so
        if (
            isinstance(element, UniformQuantizedType)
            and element.storage.data == "i16"
            and value in self.wide
        ):
            return value  # a fused layer's 16-bit intermediate
        key = (value, rules)
        if key in self.views:
            return self.views[key]
        array = constant_array(value, self.weights)
        if array is not None and is_float(element):
            low, high = (float(array.min()), float(array.max())) if array.size else (0, 0)
            q = activation_type(
                low, high, rules.storage, symmetric=rules.symmetric,
                power_of_two=rules.power_of_two,
            )  # fmt: skip
            stored = quantize_array(array.astype(np.float64), q)
            view = self._insert(
                new_constant(self.weights, stored, _tensor(q, value), "q"), before
            )
        else:
            q = self.result_type(value, rules)
            if q is None:
                return None
            source = self.floating(value, f32, before) if element == f16 else value
            view = self._insert(
                QuantizeOp.make(source, result_types=[_tensor(q, value)]), before
            )
        self.views[key] = view
        return view

    def requantized(
        self, value: SSAValue, q: UniformQuantizedType, before: Operation
    ) -> SSAValue:
        """`value` stored in exactly `q` (a constant: its values quantized; else a
        `synap.quantize` from float or from another quantization)."""
        element = element_of(value)
        if element == q:
            return value
        key = (value, q)
        if key in self.views:
            return self.views[key]
        array = constant_array(value, self.weights)
        if array is not None and is_float(element):
            stored = quantize_array(array.astype(np.float64), q)
            op: Operation = new_constant(self.weights, stored, _tensor(q, value), "q")
        else:
            source = self.floating(value, f32, before) if element == f16 else value
            op = QuantizeOp.make(source, result_types=[_tensor(q, value)])
        view = self._insert(op, before)
        self.views[key] = view
        return view

    def result_type(self, value: SSAValue, rules: Scheme) -> UniformQuantizedType | None:
        """The type of `value` from its calibrated range under `rules` (None: no range)."""
        if value in self.channelwise:
            lows, highs = self.channel_ranges[value]
            axis = len(value.type.get_shape()) - 1  # type: ignore[attr-defined]
            return channel_activation_type(
                lows, highs, rules.storage, axis, symmetric=rules.symmetric
            )
        pair = self.ranges.get(value)
        if pair is None:
            return None
        return activation_type(
            *pair, rules.storage, symmetric=rules.symmetric, power_of_two=rules.power_of_two
        )

    def floating(self, value: SSAValue, element: Attribute, before: Operation) -> SSAValue:
        """`value` as float of `element`: dequantized and/or cast."""
        current = element_of(value)
        if current == element or not (is_float(current) or isinstance(
            current, UniformQuantizedType
        )):  # fmt: skip
            return value
        key = (value, element)
        if key in self.views:
            return self.views[key]
        if isinstance(current, UniformQuantizedType):
            view = self._insert(
                DequantizeOp.make(value, result_types=[_tensor(f32, value)]), before
            )
            if element != f32:
                view = self._insert(
                    CastOp.make(view, result_types=[_tensor(element, value)]), before
                )
        else:
            array = constant_array(value, self.weights)
            if array is not None:
                dtype = numpy_dtype(element)
                constant = new_constant(self.weights, array.astype(dtype), hint="c")
                view = self._insert(constant, before)
            else:
                view = self._insert(
                    CastOp.make(value, result_types=[_tensor(element, value)]), before
                )
        self.views[key] = view
        return view

    # -- ops ---------------------------------------------------------------------
    def rewrite(self, op: Operation) -> None:
        """Rewrite one op of @main in the data type it runs in."""
        kind = self.type_of(op)
        if isinstance(op, ConstantOp | ReturnOp):
            return
        if kind in ("float32", "float16"):
            self._run_float(op, f32 if kind == "float32" else f16)
            return
        if not self.full and self._joins_unrelated_outputs(op):
            self._run_float(op, f32)
            return
        new = self._integer(op, Scheme.of(kind, self.scheme))
        if new is None:
            if self.full and any(is_float(element_of(r)) for r in op.results):
                raise SynapcError(
                    f"quantize: {_layer(op)} ({op.name}) cannot be quantized to {kind} "
                    "(mode=full quantizes every layer)"
                )
            self._run_float(op, f32)
            return
        self._replace(op, new)

    def _joins_unrelated_outputs(self, op: Operation) -> bool:
        """Whether `op` concatenates operands of unrelated ranges (`UNRELATED_RANGES`)
        into a value the model returns: each operand is then dequantized with its own
        scale and joined in float, as tools that leave the model output float do."""
        if not isinstance(op, dm.ConcatOp):
            return False
        if op.results[0] not in set(return_of(self.func).operands):
            return False
        pairs = [nudged_range(*p) for v in op.operands if (p := self.ranges.get(v))]
        widths = [high - low for low, high in pairs if high > low]
        if len(widths) < 2:
            return False
        # the shared range covers every operand's: the narrowest gets its share of it
        shared = max(high for _, high in pairs) - min(low for low, _ in pairs)
        return shared / min(widths) >= UNRELATED_RANGES

    def _run_float(self, op: Operation, element: Attribute) -> None:
        """Keep `op` float (of `element`): its float operands converted to `element`,
        its f32 results retyped when `element` is f16. An op computing another float
        type (f64, bf16: a model's own choice) keeps it, its operands converted to it."""
        own = next((e for r in op.results if is_float(e := element_of(r))), None)
        operand_element = (
            own if own is not None and not isinstance(own, Float32Type | Float16Type)
            else element
        )  # fmt: skip
        for i, operand in enumerate(op.operands):
            if is_float(element_of(operand)) or isinstance(
                element_of(operand), UniformQuantizedType
            ):
                op.operands[i] = self.floating(operand, operand_element, op)
        if element == f16 and any(
            isinstance(element_of(r), Float32Type) for r in op.results
        ):
            types = [
                _tensor(f16, r) if isinstance(element_of(r), Float32Type) else r.type
                for r in op.results
            ]
            self._replace(op, _recreated(op, list(op.operands), types))

    def _replace(self, op: Operation, new: Operation) -> None:
        """Put `new` in place of `op` (results in order; ranges carried over)."""
        self.block.insert_op_before(new, op)
        for old, result in zip(op.results, new.results, strict=True):
            if old in self.ranges:
                self.ranges[result] = self.ranges[old]
            if old in self.wide:
                self.wide.add(result)
            if old in self.channelwise:
                self.channelwise.add(result)
                self.channel_ranges[result] = self.channel_ranges[old]
            old.replace_all_uses_with(result)
        self.block.erase_op(op)

    def _integer(self, op: Operation, rules: Scheme) -> Operation | None:
        """The quantized replacement of `op` (not yet inserted), or None when the
        integer path cannot run it."""
        if not isinstance(op, INTEGER_OPS) or not all(
            isinstance(element_of(r), Float32Type | Float16Type) for r in op.results
        ):
            return None
        storages = STORAGES.get(type(op), (rules.storage,))
        if rules.storage == "u8" and "u8" not in storages and "i8" in storages:
            rules = replace(rules, storage="i8")  # TFLite's kernel of the same width
        if rules.storage not in storages:
            return None  # no integer kernel in this storage
        if isinstance(op, tuple(WEIGHTED_OPS)):
            return self._weighted(op, rules)  # type: ignore[arg-type]
        if isinstance(op, pool.AvgPool2DOp) and op.props()["count_include_pad"]:
            return None  # TFLite's integer average divides by in-bound cells only
        if isinstance(op, resize.ResizeOp) and not _integer_resize(op, rules.storage):
            return None
        shared = None
        if isinstance(op, SELECTING_OPS):
            shared = self.result_type(op.results[0], rules)
            if shared is None:
                return None
        operands = []
        for operand in op.operands:
            if not is_float(element_of(operand)) and not isinstance(
                element_of(operand), UniformQuantizedType
            ):
                operands.append(operand)  # indices, conditions: pass through
                continue
            view = (
                self.quantized(operand, rules, op)
                if shared is None
                else self.requantized(operand, shared, op)
            )
            if view is None:
                return None
            operands.append(view)
        result_types = self._result_types(op, operands, rules, shared)
        if result_types is None:
            return None
        new = _recreated(op, operands, result_types)
        if isinstance(new, ew.AddOp | ew.SubOp) and rules.storage == "i16":
            # the general int16 rescaling: the power-of-two (LSTM) path needs the
            # output scale equal to an input's, which calibrated ranges do not give
            new.properties["pot_scale_int16"] = IntegerAttr(0, i1)
        return new

    def _result_types(
        self,
        op: Operation,
        operands: Sequence[SSAValue],
        rules: Scheme,
        shared: UniformQuantizedType | None,
    ) -> list[Attribute] | None:
        """The quantized result types of `op` over its quantized `operands` (None when
        a range is missing or the kernel would refuse the parameters)."""
        if isinstance(op, MOVING_OPS):
            element = element_of(operands[0])
            return [_tensor(element, r) for r in op.results]
        if shared is not None:
            return [_tensor(shared, r) for r in op.results]
        if isinstance(op, tuple(FIXED_OUTPUT_OPS)):
            scale, zero_point = FIXED_OUTPUT_OPS[type(op)][rules.storage]
            q = UniformQuantizedType.per_tensor(rules.storage, scale, zero_point)
            return [_tensor(q, op.results[0])]
        types = [self.result_type(r, rules) for r in op.results]
        if any(t is None for t in types):
            return None
        if isinstance(op, act.HardSwishOp):
            qi = element_of(operands[0])
            assert isinstance(qi, UniformQuantizedType) and types[0] is not None
            # the kernel's "hires" input scale: s_in / 128 for 8 bits, s_in for 16
            # (a fused layer's intermediate); it needs hires / s_out < 1
            hires = qi.scales / (1 if qi.storage.data == "i16" else 128)
            if op.results[0] in self.channelwise:
                # a nearly dead channel must not push the layer off the integer path:
                # its scale is floored to what the kernel takes
                lows, highs = self.channel_ranges[op.results[0]]
                types[0] = channel_activation_type(
                    lows,
                    highs,
                    rules.storage,
                    len(op.results[0].type.get_shape()) - 1,  # type: ignore[attr-defined]
                    symmetric=rules.symmetric,
                    min_scales=np.broadcast_to(hires, lows.shape) * (128 / 127),
                )
            if np.any(hires / types[0].scales >= 127.5 / 128):
                return None  # TFLite's HARD_SWISH needs s_in / s_out < 128
        return [_tensor(t, r) for t, r in zip(types, op.results, strict=True)]  # type: ignore[arg-type]

    def _weighted(self, op: conv.BiasedLayer, rules: Scheme) -> Operation | None:
        """A conv / depthwise / fully connected layer with quantized input, weights
        and bias (constant weights and bias only)."""
        w = constant_array(op.filter, self.weights)
        b = None if op.bias is None else constant_array(op.bias, self.weights)
        if w is None or (op.bias is not None and b is None) or not is_float(
            element_of(op.filter)
        ):  # fmt: skip
            return None
        x = self.quantized(op.input, rules, op)
        out = self.result_type(
            op.output,
            replace(rules, storage="i16", symmetric=True)
            if op.output in self.wide
            else rules,
        )
        if x is None or out is None:
            return None
        qx = element_of(x)
        assert isinstance(qx, UniformQuantizedType)
        weight_storage = "u8" if rules.storage == "u8" and not rules.per_channel else "i8"
        axis = WEIGHTED_OPS[type(op)] if rules.per_channel else None
        qw = weight_type(
            w, weight_storage, axis, symmetric=weight_storage != "u8",
            power_of_two=rules.power_of_two,
        )  # fmt: skip
        filter_value = self._insert(
            new_constant(self.weights, quantize_array(w, qw), _tensor(qw, op.filter), "qw"),
            op,
        )
        operands: list[SSAValue] = [x, filter_value]
        if b is not None:
            qb = bias_type(qx, qw, "i64" if rules.storage == "i16" else "i32")
            stored = quantize_array(b.astype(np.float64), qb, axis=0)
            operands.append(
                self._insert(
                    new_constant(self.weights, stored, _tensor(qb, op.bias), "qb"),
                    op,  # type: ignore[arg-type]
                )
            )
        return _recreated(op, operands, [_tensor(out, op.output)])


@dataclass(frozen=True)
class QuantizePass(ModulePass):
    """Rewrite a calibrated float model (``synap.calibrated_range`` /
    ``synap.quant_type`` annotations) into quantized IR for the integer kernels."""

    name = "quantize"

    #: Data type of layers without a ``synap.quant_type`` annotation.
    data_type: str = "uint8"
    #: asymmetric_affine | dynamic_fixed_point | perchannel_symmetric_affine | default
    scheme: str = "default"
    #: standard (unsupported ops stay float) | full (refuse them)
    mode: str = "standard"
    #: perchannel_symmetric_affine: quantize the values only depthwise layers read per
    #: channel (`_Rewriter.plan_channelwise`); false keeps every activation per tensor
    channel_activations: bool = True
    #: a layer and the hard_swish after it run as one layer with a 16-bit intermediate
    #: (`_Rewriter.plan_fused_activations`); false: an 8-bit point in between
    fused_activations: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for option, value, allowed in (
            ("data_type", self.data_type, DATA_TYPES),
            ("scheme", self.scheme, SCHEMES),
            ("mode", self.mode, MODES),
        ):
            if value not in allowed:
                raise SynapcError(
                    f"quantize: {option}={value} is not one of {', '.join(allowed)}"
                )
        func = main_function(op)
        rewriter = _Rewriter(
            func, weights_of(ctx), self.data_type, self.scheme, self.mode == "full"
        )
        arg_types = rewriter.read_annotations()
        if self.fused_activations:
            rewriter.plan_fused_activations()
        if self.channel_activations:
            rewriter.plan_channelwise()
        self._quantize_arguments(rewriter, arg_types)
        for inner in list(func.body.block.ops):
            rewriter.rewrite(inner)
        _drop_dead_conversions(func, rewriter)
        ret = return_of(func)
        func.function_type = FunctionType.from_lists(
            list(func.function_type.inputs.data), [v.type for v in ret.operands]
        )

    def _quantize_arguments(
        self, rewriter: _Rewriter, arg_types: dict[SSAValue, str]
    ) -> None:
        """Arguments stay float; an argument in an integer type gets its
        `synap.quantize` at the entry (with its own range and type) so every reader in
        that type shares it."""
        block = rewriter.block
        first = block.first_op
        if first is None:
            return
        for arg in block.args:
            kind = arg_types.get(arg, self.data_type)
            if kind not in DATA_TYPE_STORAGE or not isinstance(
                element_of(arg), Float32Type
            ):
                continue
            rewriter.quantized(arg, Scheme.of(kind, self.scheme), first)


def _drop_dead_conversions(func: FuncOp, rewriter: _Rewriter) -> None:
    """Erase conversions and constants the rewrite inserted but nothing reads (the
    float weights replaced by quantized ones, unused entry quantizations)."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(func.body.block.ops)):
            removable = op in rewriter.inserted or isinstance(op, ConstantOp)
            if removable and not any(r.uses for r in op.results):
                func.body.block.erase_op(op)
                changed = True


__all__: Sequence[str] = ["INTEGER_OPS", "QuantizePass", "Scheme"]
