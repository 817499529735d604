"""Converters of TFLite operators that move values: concat, split, slice, reshape,
transpose, pad, tile, gather, pack, depth/space rearrangements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import tflite
from xdsl.dialects.builtin import TensorType

from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import data_movement
from synapc.dialects.synap.attributes import (
    PadMode,
)
from synapc.dialects.synap.base import shape_of
from synapc.importers.tflite.helpers import (
    emit,
    emit_with_activation,
    output_type,
)
from synapc.importers.tflite.reader import Importer, TfliteOp, converts
from synapc.importers.tflite.slicing import strided_slice_bounds


def require_same_quantization(
    imp: Importer, op: TfliteOp, inputs: Sequence[int], outputs: Sequence[int]
) -> None:
    """Refuse `op` when a quantized tensor of `inputs` is quantized unlike `outputs`.

    For these operators LiteRT copies the stored integers into the output without
    rescaling (or refuses differing parameters), whereas synap ops keep real values; a
    model whose input and output parameters differ has no faithful translation."""
    types = [imp.element_type(t) for t in (*inputs, *outputs)]
    quantized = [t for t in types if isinstance(t, UniformQuantizedType)]
    if any(t != quantized[0] for t in quantized[1:]):
        listed = ", ".join(str(t) for t in quantized)
        raise op.fail(
            "LiteRT copies the stored integers without rescaling (or refuses the model), "
            f"but the input and output quantizations differ ({listed})"
        )


@converts("CONCATENATION", inputs=(1, None))
def _concat(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.ConcatenationOptions, required=True)
    if imp.numpy_dtype(op.outputs[0]) == np.int16:
        # LiteRT rescales uint8 inputs (int8 ones must match), but copies int16 ones.
        require_same_quantization(imp, op, op.inputs, op.outputs)
    values = [imp.value(t) for t in op.inputs]
    axis = op.axis(o.Axis(), len(imp.shape(op.inputs[0])))
    emit_with_activation(
        imp,
        op,
        lambda t: data_movement.ConcatOp.make(
            values,
            axis=axis,
            result_types=[t],
            **op.source,
        ),
        o.FusedActivationFunction(),
    )


def _emit_split(imp: Importer, op: TfliteOp, x: int, axis: int) -> None:
    require_same_quantization(imp, op, [x], op.outputs)
    types = [imp.tensor_type(t) for t in op.outputs]
    imp.emit(
        data_movement.SplitOp.make(
            imp.value(x),
            axis=op.axis(axis, len(imp.shape(x))),
            result_types=types,
            **op.source,
        ),
        *op.outputs,
    )


@converts("SPLIT", inputs=(2, 2), outputs=(1, None))
def _split(imp: Importer, op: TfliteOp) -> None:
    _emit_split(imp, op, op.inputs[1], imp.const_int(op, 0, "axis"))


@converts("SPLIT_V", inputs=(3, 3), outputs=(1, None))
def _split_v(imp: Importer, op: TfliteOp) -> None:
    _emit_split(imp, op, op.inputs[0], imp.const_int(op, 2, "axis"))


@converts("SLICE", inputs=(3, 3))
def _slice(imp: Importer, op: TfliteOp) -> None:
    begin = imp.const_ints(op, 1, "begin")
    require_same_quantization(imp, op, op.inputs[:1], op.outputs)
    emit(imp, op, data_movement.SliceOp, imp.value(op.inputs[0]), start=begin)


@converts("STRIDED_SLICE", inputs=(4, 4))
def _strided_slice(imp: Importer, op: TfliteOp) -> None:
    require_same_quantization(imp, op, op.inputs[:1], op.outputs)
    bounds = strided_slice_bounds(imp, op, imp.shape(op.inputs[0]))
    value = imp.value(op.inputs[0])
    out_type = output_type(imp, op)
    sliced = data_movement.StridedSliceOp.make(
        value,
        begin=bounds.begin,
        end=bounds.end,
        strides=bounds.strides,
        element_type=out_type.element_type,
        **op.source,
    )
    if shape_of(sliced.results[0]) == out_type.get_shape():
        imp.emit(sliced, op.outputs[0])
        return
    imp.emit(sliced)
    imp.emit(data_movement.ReshapeOp.make(sliced, result_types=[out_type]), op.outputs[0])


_UNARY_BY_OUTPUT = {
    "RESHAPE": data_movement.ReshapeOp,
    "SQUEEZE": data_movement.ReshapeOp,
    "EXPAND_DIMS": data_movement.ReshapeOp,
    "BROADCAST_TO": data_movement.BroadcastToOp,
}


@converts("RESHAPE", inputs=(1, 2))
@converts("SQUEEZE", inputs=(1, 1))
@converts("EXPAND_DIMS", "BROADCAST_TO", inputs=(2, 2))
def _unary_by_output(imp: Importer, op: TfliteOp) -> None:
    """Ops of input 0 alone whose result is fully described by the output tensor's type
    (shape inputs such as RESHAPE's are implied by it)."""
    op_class = _UNARY_BY_OUTPUT[op.name]
    require_same_quantization(imp, op, op.inputs[:1], op.outputs)
    emit(imp, op, op_class, imp.value(op.inputs[0]))


_WITH_CONSTANT_LIST = {
    "TRANSPOSE": (data_movement.TransposeOp, "perm"),
    "TILE": (data_movement.TileOp, "multiples"),
}


@converts(*_WITH_CONSTANT_LIST, inputs=(2, 2))
def _with_constant_list(imp: Importer, op: TfliteOp) -> None:
    """Ops whose input 1 is a constant integer list that becomes a property."""
    op_class, prop = _WITH_CONSTANT_LIST[op.name]
    require_same_quantization(imp, op, op.inputs[:1], op.outputs)
    values = imp.const_ints(op, 1, prop)
    emit(imp, op, op_class, imp.value(op.inputs[0]), **{prop: values})


@converts("PAD", "MIRROR_PAD", inputs=(2, 2))
@converts("PADV2", inputs=(2, 3))
def _pad(imp: Importer, op: TfliteOp) -> None:
    pads = imp.const_ints(op, 1, "paddings")
    require_same_quantization(imp, op, op.inputs[:1], op.outputs)
    props: dict[str, Any] = {"pads": pads}
    if op.name == "MIRROR_PAD":
        o = op.options(tflite.MirrorPadOptions, required=True)
        modes = {
            tflite.MirrorPadMode.REFLECT: PadMode.REFLECT,
            tflite.MirrorPadMode.SYMMETRIC: PadMode.SYMMETRIC,
        }
        if o.Mode() not in modes:
            raise op.fail(f"mirror pad mode {o.Mode()} is not REFLECT or SYMMETRIC")
        props["mode"] = modes[o.Mode()]
    elif op.name == "PADV2" and op.input(2) is not None:
        raw = imp.constant_array(op.inputs[2])
        if raw is None:
            raise op.fail("constant_values (input 2) must be a constant")
        element = imp.element_type(op.inputs[2])
        if raw.size != 1:
            raise op.fail(f"constant_values (input 2) must hold one value, got {raw.size}")
        value = float(raw.reshape(-1)[0])
        if isinstance(element, UniformQuantizedType):
            value = element.scale * (value - element.zero_point)
        props["value"] = value
    emit(imp, op, data_movement.PadOp, imp.value(op.inputs[0]), **props)


@converts("DEPTH_TO_SPACE", inputs=(1, 1))
def _depth_to_space(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.DepthToSpaceOptions, required=True)
    op.positive("block_size", [o.BlockSize()])
    require_same_quantization(imp, op, op.inputs, op.outputs)
    emit(imp, op, data_movement.DepthToSpaceOp, block_size=o.BlockSize())


@converts("SPACE_TO_DEPTH", inputs=(1, 1))
def _space_to_depth(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.SpaceToDepthOptions, required=True)
    op.positive("block_size", [o.BlockSize()])
    require_same_quantization(imp, op, op.inputs, op.outputs)
    emit(imp, op, data_movement.SpaceToDepthOp, block_size=o.BlockSize())


@converts("GATHER", inputs=(2, 2))
def _gather(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.GatherOptions)
    require_same_quantization(imp, op, op.inputs[:1], op.outputs)
    if o is not None and o.BatchDims():
        raise op.fail("batch_dims is not supported")
    rank = len(imp.shape(op.inputs[0]))
    axis = op.axis(o.Axis() if o else 0, rank)
    emit(imp, op, data_movement.GatherOp, axis=axis)


@converts("PACK", inputs=(1, None))
def _pack(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.PackOptions, required=True)
    require_same_quantization(imp, op, op.inputs, op.outputs)
    out_type = output_type(imp, op)
    axis = op.axis(o.Axis(), len(out_type.get_shape()))
    pieces = []
    for t in op.inputs:
        shape = list(imp.shape(t))
        shape.insert(axis, 1)
        piece_type = TensorType(imp.element_type(t), shape)
        pieces.append(
            imp.emit(
                data_movement.ReshapeOp.make(imp.value(t), result_types=[piece_type])
            ).results[0]
        )
    imp.emit(
        data_movement.ConcatOp.make(
            pieces, axis=axis, result_types=[out_type], **op.source
        ),
        op.outputs[0],
    )


@converts("UNPACK", inputs=(1, 1), outputs=(1, None))
def _unpack(imp: Importer, op: TfliteOp) -> None:
    o = op.options(tflite.UnpackOptions, required=True)
    require_same_quantization(imp, op, op.inputs, op.outputs)
    shape = list(imp.shape(op.inputs[0]))
    axis = op.axis(o.Axis(), len(shape))
    piece_shape = [*shape[:axis], 1, *shape[axis + 1 :]]
    element = imp.element_type(op.inputs[0])
    split = imp.emit(
        data_movement.SplitOp.make(
            imp.value(op.inputs[0]),
            axis=axis,
            result_types=[TensorType(element, piece_shape)] * len(op.outputs),
            **op.source,
        )
    )
    for result, t in zip(split.results, op.outputs, strict=True):
        imp.emit(data_movement.ReshapeOp.make(result, result_types=[imp.tensor_type(t)]), t)
