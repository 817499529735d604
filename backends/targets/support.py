"""Which NPU engine runs a `synap` op, or why none does: support as small constraint
functions with reasons, in the spirit of Arm Vela's ``supported_operators``.

`layer_support` answers for one op on one target. The type rules come from the vendor's
table (`operator_table`): the op's table operator (`TABLE_OPERATORS`) and the type class
of its input, weights and output select a row, whose first engine runs the op. Then the
engine rules (`ENGINE_RULES`) may move a layer off the engine the table prefers: each
is a function whose docstring *is* the rule as users read it, returning None when the op
complies and otherwise what about this op breaks it. An op without a table operator, or
whose types have no row, is not supported on the NPU and falls back to a CPU subgraph
with that reason.

Float tensors are looked up as ``fp16``: the NPU computes float models in float16
(``TARGETS.md``; `Target.npu_float_dtype`). Where the table has no float16 row but a
float32 one (FULLY_CONNECTED, for one), the op runs in float32 on that row's engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Attribute, Operation

from synapc.backends.targets.descriptions import Target
from synapc.backends.targets.operator_table import lookup
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.base import ints, is_float, shape_of
from synapc.dialects.synap.constant import ConstantOp

#: synap op name -> the vendor table's operator (a function of the op where it depends
#: on attributes). Ops missing here have no NPU equivalent.
TABLE_OPERATORS: dict[str, str | Callable[[Operation], str]] = {
    # weighted layers: ovxlib expresses a depthwise convolution as CONV2D with a
    # depth multiplier, a grouped one as GROUPED_CONV2D
    "synap.conv2d": lambda op: "GROUPED_CONV2D" if _groups(op) > 1 else "CONV2D",
    "synap.depthwise_conv2d": "CONV2D",
    "synap.conv2d_pool": lambda op: "GROUPED_CONV2D" if _groups(op) > 1 else "CONV2D",
    "synap.transpose_conv2d": "DECONVOLUTION",
    "synap.conv_nd": lambda op: "CONV1D" if len(shape_of(op.operands[1])) == 3 else "",
    "synap.transpose_conv_nd": lambda op: (
        "DECONVOLUTION1D" if len(shape_of(op.operands[1])) == 3 else ""
    ),
    "synap.fully_connected": "FULLY_CONNECTED",
    "synap.matmul": "MATRIXMUL",
    # activations
    "synap.clamp": "CLIP",
    "synap.leaky_relu": "LEAKY_RELU",
    "synap.prelu": "PRELU",
    "synap.sigmoid": "SIGMOID",
    "synap.tanh": "TANH",
    "synap.hard_sigmoid": "HARD_SIGMOID",
    # ovxlib's SWISH has a hard variant (its type parameter), so hard_swish is SWISH
    "synap.hard_swish": "SWISH",
    "synap.swish": "SWISH",
    "synap.gelu": "GELU",
    "synap.erf": "ERF",
    "synap.elu": "ELU",
    "synap.exp": "EXP",
    "synap.log": "LOG",
    "synap.sqrt": "SQRT",
    "synap.rsqrt": "RSQRT",
    "synap.abs": "ABS",
    "synap.neg": "NEG",
    "synap.square": "SQUARE",
    "synap.softplus": "SOFTRELU",
    "synap.mish": "MISH",
    "synap.floor": "FLOOR",
    "synap.ceil": "CEIL",
    "synap.round": "ROUND",
    "synap.sin": "SIN",
    "synap.softmax": "SOFTMAX",
    "synap.log_softmax": "LOG_SOFTMAX",
    "synap.l2_normalize": "L2_NORMALIZE",
    # elementwise
    "synap.add": "ADD",
    "synap.sub": "SUBTRACT",
    "synap.mul": "MULTIPLY",
    "synap.div": "DIVIDE",
    "synap.maximum": "MAXIMUM",
    "synap.minimum": "MINIMUM",
    "synap.pow": "POW",
    "synap.equal": "RELATIONAL_OPS",
    "synap.greater": "RELATIONAL_OPS",
    "synap.greater_equal": "RELATIONAL_OPS",
    "synap.less": "RELATIONAL_OPS",
    "synap.less_equal": "RELATIONAL_OPS",
    "synap.logical_and": "LOGICAL_OPS",
    "synap.logical_or": "LOGICAL_OPS",
    "synap.logical_xor": "LOGICAL_OPS",
    "synap.logical_not": "LOGICAL_NOT",
    "synap.select": "SELECT",
    # data movement
    "synap.concat": "CONCAT",
    "synap.split": "SPLIT",
    "synap.slice": "SLICE",
    "synap.strided_slice": "STRIDED_SLICE",
    "synap.reshape": "RESHAPE",
    "synap.bitcast": "RESHAPE",
    "synap.transpose": "PERMUTE",
    "synap.pad": "PAD",
    "synap.tile": "TILE",
    "synap.broadcast_to": "EXPAND_BROADCAST",
    "synap.gather": "GATHER",
    "synap.gather_nd": "GATHER_ND",
    "synap.scatter_nd": "SCATTER_ND",
    "synap.depth_to_space": "DEPTH2SPACE",
    "synap.space_to_depth": "SPACE2DEPTH",
    "synap.one_hot": "ONE_HOT",
    "synap.cast": "CAST",
    # pooling, reductions, normalization, resize, recurrent
    "synap.max_pool2d": "POOL",
    "synap.avg_pool2d": "POOL",
    "synap.reduce_mean": "REDUCE",
    "synap.reduce_sum": "REDUCE",
    "synap.reduce_max": "REDUCE",
    "synap.reduce_min": "REDUCE",
    "synap.reduce_prod": "REDUCE",
    "synap.argmax": "ARGMAX",
    "synap.argmin": "ARGMIN",
    "synap.layer_norm": "LAYER_NORM",
    "synap.resize": "RESIZE",
    "synap.lstm": "LSTM_OVXLIB",
    "synap.gru": "GRU_OVXLIB",
}

#: Type conversions: the table lists DATACONVERT for requantization within one type
#: class only; a conversion between float and a quantized type is the NPU's input /
#: output conversion (METAFILE.md: conversion to the input's data type, quantization
#: included, runs on the NPU), on the engine of its quantized side's DATACONVERT row.
CONVERSIONS = ("synap.quantize", "synap.dequantize")
#: Preprocessing inserted from the metafile: executed on the NPU (METAFILE.md), not an
#: operator of the vendor's table; its published latencies (TARGETS.md, convert_nv12)
#: are NPU times.
PREPROCESSING = (
    "synap.preprocess",
    "synap.yuv_to_rgb",
    "synap.crop_resize",
    "synap.yuv_to_rgb_resize",
)
#: Table operators whose types are ``input->weight->output``.
WEIGHTED = frozenset(
    {"CONV2D", "GROUPED_CONV2D", "CONV1D", "DECONVOLUTION", "DECONVOLUTION1D",
     "FULLY_CONNECTED"}
)  # fmt: skip


@dataclass(frozen=True)
class Support:
    """Where one op runs on a target's NPU: `engine` (``NN``, ``TP``, ``PPU``) or None
    when the NPU cannot run it (it falls back to the CPU); `reason` says why, as a user
    reads it; `operator` is the vendor table's operator it was looked up as, if any."""

    engine: str | None
    reason: str
    operator: str | None = None

    @property
    def supported(self) -> bool:
        """Whether the NPU runs the op."""
        return self.engine is not None


def _groups(op: Operation) -> int:
    groups = op.properties.get("groups")
    return groups.value.data if isinstance(groups, IntegerAttr) else 1


def _ints(op: Operation, name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    attr = op.properties.get(name)
    return ints(attr) if isinstance(attr, DenseArrayBase) else default


def type_class(element: Attribute) -> str:
    """The vendor table's class of a tensor element type (float as ``fp16``, see the
    module docstring); a type the table has no class for is named as the IR spells it."""
    if isinstance(element, UniformQuantizedType):
        storage = element.storage.data
        if storage == "u8" and not element.is_per_axis:
            return "asym-u8"
        if storage == "i8":
            return "pc-sym-i8" if element.is_per_axis else "asym-i8"
        kind = "dfp" if not element.zero_points.any() else "asym"
        return f"{'pc-' if element.is_per_axis else ''}{kind}-{storage}"
    if is_float(element):
        return "fp16"
    if isinstance(element, IntegerType):
        width = element.width.data
        return "bool8" if width == 1 else "int16" if width == 16 else "int32" if width in (
            32, 64
        ) else f"i{width}"  # fmt: skip
    return str(element)


def _element(value) -> Attribute | None:
    return value.type.element_type if isinstance(value.type, TensorType) else None


def signature(op: Operation, operator: str) -> tuple[str, ...] | None:
    """The type classes the table is looked up with: input, weights (weighted
    operators) and output; None when the op has no tensor input or output."""
    elements = [_element(v) for v in op.operands]
    outputs = [_element(v) for v in op.results]
    if not elements or elements[0] is None or not outputs or outputs[0] is None:
        return None
    classes = [type_class(elements[0])]
    if operator in WEIGHTED:
        if len(elements) < 2 or elements[1] is None:
            return None
        classes.append(type_class(elements[1]))
    classes.append(type_class(outputs[0]))
    return tuple(classes)


# -- engine rules: each docstring is the rule; the result says what breaks it ---------


def convolution_on_cores(op: Operation) -> str | None:
    """Convolutions run on the convolution cores (NN) only with stride 1, a kernel of at
    most 15x15 and a dilated kernel extent of at most 15x15; otherwise on a tensor
    processor (TP), much slower."""
    kernel = tuple(shape_of(op.operands[1])[1:3])
    strides = _ints(op, "strides", (1, 1))
    dilations = _ints(op, "dilations", (1, 1))
    extent = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=False))
    problems = []
    if any(s != 1 for s in strides):
        problems.append(f"stride {'x'.join(map(str, strides))}")
    if any(k > 15 for k in kernel):
        problems.append(f"a {'x'.join(map(str, kernel))} kernel")
    elif any(e > 15 for e in extent):
        problems.append(f"a dilated kernel extent of {'x'.join(map(str, extent))}")
    return " and ".join(problems) or None


#: Table operator -> the rules that move it off the NN engine (to TP).
ENGINE_RULES: dict[str, tuple[Callable[[Operation], str | None], ...]] = {
    "CONV2D": (convolution_on_cores,),
    "GROUPED_CONV2D": (convolution_on_cores,),
}


def table_operator(op: Operation) -> str | None:
    """The vendor table's operator for `op`, or None if it has none."""
    entry = TABLE_OPERATORS.get(op.name)
    if entry is None:
        return None
    name = entry if isinstance(entry, str) else entry(op)
    return name or None


def layer_support(op: Operation, target: Target) -> Support:
    """Where `op` runs on `target`'s NPU, or why it cannot (see the module
    docstring). Constants are not layers: they are the weights of their readers."""
    label = op.name.removeprefix("synap.").upper()
    if not target.has_npu:
        return Support(None, f"{target.name} has no NPU")
    if isinstance(op, ConstantOp) or not op.name.startswith("synap."):
        return Support(None, "not a layer")
    if op.name in PREPROCESSING:
        return Support("PPU", "preprocessing runs on the NPU (METAFILE.md)")
    if op.name in CONVERSIONS:
        return _conversion(op)
    operator = table_operator(op)
    if operator is None:
        return Support(None, f"{label}: no NPU operator in the vendor table")
    types = signature(op, operator)
    if types is None:
        return Support(None, f"{label}: not a tensor operation", operator)
    row = lookup(operator, types)
    if row is None and "fp16" in types:
        # the shader also computes float32 (the table's fp32 rows)
        types = tuple("fp32" if t == "fp16" else t for t in types)
        row = lookup(operator, types)
    shown = "->".join(types)
    if row is None:
        return Support(None, f"{operator} {shown}: not supported on the NPU", operator)
    engine = row.engines[0]
    why = f"{operator} {shown} runs on {'|'.join(row.engines)}"
    if engine == "NN":
        broken = [
            problem
            for rule in ENGINE_RULES.get(operator, ())
            if (problem := rule(op)) is not None
        ]
        if broken:
            why = f"{operator} with {'; '.join(broken)}: TP, not NN"
            return Support("TP", why, operator)
    return Support(engine, why, operator)


def _conversion(op: Operation) -> Support:
    """Quantize / dequantize (see `CONVERSIONS`)."""
    source, result = _element(op.operands[0]), _element(op.results[0])
    quantized = [t for t in (source, result) if isinstance(t, UniformQuantizedType)]
    if not quantized:
        return Support(None, "DATACONVERT: no quantized side", "DATACONVERT")
    side = type_class(quantized[-1])
    row = lookup("DATACONVERT", (side, side))
    if row is None:
        return Support(
            None, f"DATACONVERT to/from {side}: not supported on the NPU", "DATACONVERT"
        )
    shown = "->".join(type_class(t) for t in (source, result) if t is not None)
    why = f"DATACONVERT {shown} runs on {'|'.join(row.engines)}"
    return Support(row.engines[0], why, "DATACONVERT")
