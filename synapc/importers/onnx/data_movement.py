"""ONNX tensor plumbing: concat, split, slice, reshape family, transpose, pad, gather,
expand, tile, depth/space rearrangements, identity. Ops that only move axes keep the
input's layout (axes are renumbered); reshapes work on the logical layout."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType

from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap.attributes import DepthToSpaceMode, PadMode
from synapc.dialects.synap.base import element_of, shape_of
from synapc.importers.onnx import layout
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.folding import CannotFold, broadcast_shapes
from synapc.importers.onnx.helpers import common_layout
from synapc.importers.onnx.reader import Importer, Node, converts


def _input(node: Node) -> list[str | None]:
    return node.inputs[:1]


@converts("Identity", "Dropout")
def identity(imp: Importer, node: Node) -> None:
    """The input itself; Dropout at inference (training_mode false) drops nothing."""
    if node.op_type == "Dropout":
        training = node.attr("is_test", 1) == 0 if node.opset < 7 else False
        if node.input(2) is not None:
            mode = imp.const(node.input(2))
            if mode is None:
                raise node.fail("training_mode (input 2) must be a constant")
            training = bool(np.asarray(mode).reshape(-1)[0])
        ratio = imp.const(node.input(1)) if node.input(1) else None
        ratio = float(node.attr("ratio", 0.5)) if ratio is None else float(ratio)
        if training and ratio != 0.0:
            raise node.fail("training-mode dropout (random masks) is not supported")
    imp.tensors[node.outputs[0]] = imp.tensor(node.inputs[0])
    if len(node.outputs) > 1 and node.outputs[1]:  # inference: nothing is dropped
        imp.bind_const(node.outputs[1], np.ones(imp.shape(node.inputs[0]), np.bool_))


@converts("Concat", quantized=lambda n: [i for i in n.inputs if i])
def concat(imp: Importer, node: Node) -> None:
    names = [n for n in node.inputs if n]
    if not names:
        raise node.fail("has no inputs")
    rank, perm = common_layout(imp, names)
    if any(imp.rank(n) != rank for n in names):
        shapes = [list(imp.shape(n)) for n in names]
        raise node.fail(f"inputs of shapes {shapes} have different ranks")
    axis = node.axis(node.int_attr("axis", 0), rank)
    # an operand with no elements adds nothing (it is checked against the others)
    _check_concat_shapes(node, [imp.shape(n) for n in names], axis)
    names = [n for n in names if 0 not in imp.shape(n)] or names
    if len(names) == 1:
        value = imp.get(names[0], "any", quantized=node.quantized)
        imp.bind_output(node, value, imp.perm(names[0]))
        return
    values = [imp.get(n, perm, quantized=node.quantized) for n in names]
    imp.emit(
        node, dm.ConcatOp, values, perm=perm, axis=layout.physical_axis(perm, axis, rank)
    )


def _check_concat_shapes(node: Node, shapes: list[tuple[int, ...]], axis: int) -> None:
    """Concat's operands agree on every dimension but `axis` (checked here because
    empty operands are dropped before synap.concat would check them)."""
    others = {s[:axis] + s[axis + 1 :] for s in shapes}
    if len(others) > 1:
        raise node.fail(
            f"inputs of shapes {[list(s) for s in shapes]} differ outside axis {axis}"
        )


@converts("Split")
def split(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    rank = imp.rank(x)
    axis = node.axis(node.int_attr("axis", 0), rank)
    size = imp.shape(x)[axis]
    if node.opset >= 13 and node.input(1) is not None:
        sizes = imp.const_ints(node, 1, "split")
    elif node.opset < 13 and node.attr("split") is not None:
        sizes = node.ints_attr("split")
    else:
        count = node.int_attr("num_outputs", len(node.outputs))
        if not 1 <= count <= len(node.outputs):
            raise node.fail(f"num_outputs {count} does not fit {len(node.outputs)} outputs")
        chunk = -(-size // count)
        sizes = [min(chunk, size - k * chunk) for k in range(count)]
    if sum(sizes) != size or any(s < 0 for s in sizes):
        raise node.fail(f"split sizes {sizes} do not add up to dimension {size}")
    if len(sizes) != len(node.outputs):
        raise node.fail(f"{len(sizes)} split sizes for {len(node.outputs)} outputs")
    perm = imp.perm(x)
    value = imp.get(x, "any")
    p_axis = layout.physical_axis(perm, axis, rank)
    element = element_of(value)
    # a part of size 0 holds no values: an empty constant, not a result of the split
    for name, s in zip(node.outputs, sizes, strict=True):
        if name and s == 0:
            empty = list(imp.shape(x))
            empty[axis] = 0
            imp.bind_empty(name, empty, element)
    parts = [(name, s) for name, s in zip(node.outputs, sizes, strict=True) if s > 0]
    result_types = []
    for _, s in parts:
        shape = list(shape_of(value))
        shape[p_axis] = s
        result_types.append(TensorType(element, shape))
    if len(parts) <= 1:
        results = [value] * len(parts)
    else:
        op = imp.emit(
            node, dm.SplitOp, value, output=None, result_types=result_types, axis=p_axis
        )
        results = list(op.results)
    for (name, _), result in zip(parts, results, strict=True):
        if name:
            imp.bind(name, result, perm)


@converts("Slice", quantized=_input)
def slice_(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    shape = imp.shape(x)
    rank = len(shape)
    if node.opset < 10:
        starts, ends = node.ints_attr("starts", []), node.ints_attr("ends", [])
        axes = node.ints_attr("axes", range(len(starts)))
        steps = [1] * len(starts)
    else:
        starts = imp.const_ints(node, 1, "starts")
        ends = imp.const_ints(node, 2, "ends")
        axes = (
            imp.const_ints(node, 3, "axes") if node.input(3) else list(range(len(starts)))
        )
        steps = imp.const_ints(node, 4, "steps") if node.input(4) else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise node.fail(
            f"starts {starts}, ends {ends}, axes {axes} and steps {steps} differ in length"
        )
    axes = [node.axis(a, rank, "slice axis") for a in axes]
    if len(set(axes)) != len(axes):
        raise node.fail(f"slice axes {axes} repeat an axis")
    begin, end, stride = [0] * rank, list(shape), [1] * rank
    for start, stop, axis, step in zip(starts, ends, axes, steps, strict=True):
        dim = shape[axis]
        if step == 0:
            raise node.fail("a slice step of 0 is not allowed")
        # numpy semantics of python slices, clamped like ONNX
        first, last, _ = slice(start, stop, step).indices(dim)
        begin[axis], end[axis], stride[axis] = first, last, step
    perm = imp.perm(x)
    value = imp.get(x, "any", quantized=node.quantized)
    order = perm or tuple(range(rank))
    p_begin = [begin[a] for a in order]
    p_end = [end[a] for a in order]
    p_stride = [stride[a] for a in order]
    if all(s == 1 for s in p_stride):
        sizes = [max(e - b, 0) for b, e in zip(p_begin, p_end, strict=True)]
        imp.emit(
            node,
            dm.SliceOp,
            value,
            perm=perm,
            result_types=[TensorType(element_of(value), sizes)],
            start=p_begin,
        )
        return
    p_end = [-1 if e < 0 else e for e in p_end]
    imp.emit(
        node,
        dm.StridedSliceOp,
        value,
        perm=perm,
        begin=p_begin,
        end=p_end,
        strides=p_stride,
    )


def _reshape_to(imp: Importer, node: Node, shape: tuple[int, ...]) -> None:
    x = node.inputs[0]
    value = imp.get(x, quantized=node.quantized)
    imp.bind_output(node, imp.reshape(value, shape, **node.source))


@converts("Reshape", quantized=_input)
def reshape(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    source = imp.shape(x)
    target = (
        node.ints_attr("shape", []) if node.opset < 5 else imp.const_ints(node, 1, "shape")
    )
    if len(target) > 64 or target.count(-1) > 1 or any(d < -1 for d in target):
        raise node.fail(f"cannot reshape {list(source)} to {_brief(target)}")
    if not node.attr("allowzero", 0):
        if any(d == 0 and i >= len(source) for i, d in enumerate(target)):
            raise node.fail(f"cannot reshape {list(source)} to {target}")
        target = [source[i] if d == 0 else d for i, d in enumerate(target)]
    if -1 in target:
        known = math.prod(d for d in target if d != -1)
        target[target.index(-1)] = math.prod(source) // max(known, 1)
    if math.prod(target) != math.prod(source):
        raise node.fail(f"cannot reshape {list(source)} to {_brief(target)}")
    _reshape_to(imp, node, tuple(target))


@converts("Flatten", quantized=_input)
def flatten(imp: Importer, node: Node) -> None:
    shape = imp.shape(node.inputs[0])
    axis = node.int_attr("axis", 1)
    if not -len(shape) <= axis <= len(shape):
        raise node.fail(f"axis {axis} is out of range for rank {len(shape)}")
    axis = axis + len(shape) if axis < 0 else axis
    _reshape_to(imp, node, (math.prod(shape[:axis]), math.prod(shape[axis:])))


def _axes(imp: Importer, node: Node) -> list[int] | None:
    if node.opset >= 13:
        return imp.const_ints(node, 1, "axes") if node.input(1) else None
    return node.ints_attr("axes")


@converts("Squeeze", quantized=_input)
def squeeze(imp: Importer, node: Node) -> None:
    shape = imp.shape(node.inputs[0])
    axes = _axes(imp, node)
    rank = len(shape)
    if axes is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    axes = {node.axis(a, rank, "squeeze axis") for a in axes}
    if any(shape[a] != 1 for a in axes):
        raise node.fail(f"cannot squeeze axes {sorted(axes)} of shape {list(shape)}")
    _reshape_to(imp, node, tuple(d for i, d in enumerate(shape) if i not in axes))


@converts("Unsqueeze", quantized=_input)
def unsqueeze(imp: Importer, node: Node) -> None:
    shape = list(imp.shape(node.inputs[0]))
    axes = _axes(imp, node) or []
    rank = len(shape) + len(axes)
    positions = sorted(node.axis(a, rank, "unsqueeze axis") for a in axes)
    if len(set(positions)) != len(positions):
        raise node.fail(f"unsqueeze axes {axes} repeat an axis")
    for a in positions:
        shape.insert(a, 1)
    _reshape_to(imp, node, tuple(shape))


@converts("Transpose", quantized=_input)
def transpose(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    rank = imp.rank(x)
    perm = tuple(node.ints_attr("perm", list(range(rank))[::-1]))
    if sorted(perm) != list(range(rank)):
        raise node.fail(f"perm {list(perm)} is not a permutation of {rank} axes")
    stored = imp.perm(x) or tuple(range(rank))
    value = imp.get(x, "any", quantized=node.quantized)
    # output logical axis i is input logical axis perm[i]; keep the data where it is and
    # record the new layout when the result can stay as it is stored
    imp.bind_output(node, value, tuple(perm.index(p) for p in stored))


@converts("Pad", quantized=_input)
def pad(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    rank = imp.rank(x)
    mode = node.attr("mode", "constant")
    modes = {
        "constant": PadMode.CONSTANT,
        "reflect": PadMode.REFLECT,
        "edge": PadMode.EDGE,
        "wrap": PadMode.WRAP,
    }
    if mode not in modes:
        raise node.fail(f"pad mode '{mode}' is not supported")
    if node.opset < 11:
        pads = node.ints_attr("pads", node.ints_attr("paddings", []))
        value = float(node.attr("value", 0.0))
    else:
        pads = imp.const_ints(node, 1, "pads")
        constant = imp.const(node.input(2))
        if node.input(2) is not None and constant is None:
            raise node.fail("constant_value (input 2) must be a constant")
        value = 0.0 if constant is None else float(np.asarray(constant).reshape(-1)[0])
    axes = imp.const_ints(node, 3, "axes") if node.input(3) else list(range(rank))
    axes = [node.axis(a, rank, "pad axis") for a in axes]
    if len(pads) != 2 * len(axes):
        raise node.fail(f"{len(pads)} pads for {len(axes)} axes")
    full = [0] * (2 * rank)
    count = len(axes)
    for k, axis in enumerate(axes):
        full[axis], full[rank + axis] = pads[k], pads[count + k]
    if any(p < 0 for p in full):
        raise node.fail(f"negative pads {pads} are not supported")
    shape = imp.shape(x)
    for axis in range(rank):
        if mode != "constant" and shape[axis] == 0 and full[axis] + full[rank + axis]:
            raise node.fail(
                f"{mode} padding of empty dimension {axis} has no values to use"
            )
    perm = imp.perm(x)
    order = perm or tuple(range(rank))
    physical = [v for a in order for v in (full[a], full[rank + a])]
    imp.emit(
        node,
        dm.PadOp,
        imp.get(x, "any", quantized=node.quantized),
        perm=perm,
        pads=physical,
        mode=modes[mode],
        value=value,
    )


@converts("Gather")
def gather(imp: Importer, node: Node) -> None:
    data, indices = node.inputs[0], node.inputs[1]
    rank = imp.rank(data)
    axis = node.axis(node.int_attr("axis", 0), rank)
    index_array = imp.const(indices)
    if index_array is not None:
        size = imp.shape(data)[axis]
        if index_array.dtype.kind not in "iu":
            raise node.fail(f"indices '{shown(indices)}' must be integers")
        if index_array.size and (
            int(index_array.min()) < -size or int(index_array.max()) >= size
        ):
            raise node.fail(
                f"indices '{shown(indices)}' are out of range for a dimension of {size}"
            )
        fixed = np.where(index_array < 0, index_array + size, index_array).astype(np.int32)
        indices = f"{indices}#{size}"
        imp.bind_const(indices, fixed)
    scalar = imp.rank(indices) == 0
    perm = imp.perm(data) if scalar else None
    value = imp.get(data, "any" if scalar else None)
    imp.emit(
        node,
        dm.GatherOp,
        value,
        imp.get(indices),
        perm=layout.without_axes(perm, [axis]),
        axis=layout.physical_axis(perm, axis, rank),
    )


@converts("Expand")
def expand(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    shape = imp.const_ints(node, 1, "shape")
    try:
        target = tuple(broadcast_shapes([imp.shape(x), shape]))
    except CannotFold as error:
        raise node.fail(error.reason) from None
    rank = len(target)
    perm = imp.perm(x) if imp.rank(x) == rank else None
    value = imp.get(x, perm, rank=rank)
    physical = layout.physical_shape(target, perm)
    imp.emit(
        node,
        dm.BroadcastToOp,
        value,
        perm=perm,
        result_types=[TensorType(element_of(value), physical)],
    )


@converts("Tile")
def tile(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    repeats = imp.const_ints(node, 1, "repeats")
    if len(repeats) != imp.rank(x) or any(r < 0 for r in repeats):
        raise node.fail(f"repeats {_brief(repeats)} must be {imp.rank(x)} values >= 0")
    perm = imp.perm(x)
    order = perm or tuple(range(len(repeats)))
    imp.emit(
        node, dm.TileOp, imp.get(x, "any"), perm=perm, multiples=[repeats[a] for a in order]
    )


@converts("DepthToSpace", quantized=_input)
def depth_to_space(imp: Importer, node: Node) -> None:
    x = node.inputs[0]
    mode = (
        DepthToSpaceMode.CRD if node.attr("mode", "DCR") == "CRD" else DepthToSpaceMode.DCR
    )
    _check_blocks(imp, node, node.int_attr("blocksize", 0), depth_to_space=True)
    cl = layout.channels_last(4)
    imp.emit(
        node,
        dm.DepthToSpaceOp,
        imp.get(x, cl, quantized=node.quantized),
        perm=cl,
        block_size=int(node.attr("blocksize")),
        mode=mode,
    )


@converts("SpaceToDepth", quantized=_input)
def space_to_depth(imp: Importer, node: Node) -> None:
    """NHWC space-to-depth; channels come out ordered (row, column, channel) as in
    ONNX's DCR mode, and the CRD mode regroups them (channel, row, column)."""
    x = node.inputs[0]
    cl = layout.channels_last(4)
    block = node.int_attr("blocksize", 0)
    _check_blocks(imp, node, block, depth_to_space=False)
    op = imp.emit(
        node,
        dm.SpaceToDepthOp,
        imp.get(x, cl, quantized=node.quantized),
        perm=cl,
        output=None,
        block_size=block,
    )
    value = op.results[0]
    if node.attr("mode", "DCR") == "CRD":
        n, h, w, c = shape_of(value)
        grouped = imp.reshape(value, (n, h, w, block * block, c // (block * block)))
        value = imp.reshape(imp.transpose(grouped, (0, 1, 2, 4, 3)), (n, h, w, c))
    imp.bind_output(node, value, cl)


def _check_blocks(imp: Importer, node: Node, block: int, depth_to_space: bool) -> None:
    """A 4-D input whose channels (depth to space) or height and width (space to
    depth) the block size divides."""
    shape = imp.shape(node.inputs[0])
    if len(shape) != 4:
        raise node.fail(f"the input must have rank 4, got shape {list(shape)}")
    if block < 1:
        raise node.fail(f"blocksize {block} must be at least 1")
    if depth_to_space and shape[1] % (block * block):
        raise node.fail(f"blocksize {block} does not divide {shape[1]} channels")
    if not depth_to_space and (shape[2] % block or shape[3] % block):
        raise node.fail(f"blocksize {block} does not divide the shape {list(shape)}")


def _brief(values: list[int]) -> str:
    text = str(values)
    return text if len(text) <= 80 else text[:76] + "...]"
