"""ONNX constants and shape queries: with static shapes they are all host constants
(and the shape arithmetic that follows them is folded by the reader, within the limits
of `synapc.limits`)."""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.dialects.builtin import TensorType

from synapc.dialects.synap import data_movement as dm
from synapc.dialects.synap.base import element_of
from synapc.importers.onnx import checks
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.reader import Importer, Node, converts


@converts("Constant")
def constant(imp: Importer, node: Node) -> None:
    attrs = node.attrs
    if isinstance(attrs.get("value"), onnx.TensorProto):
        what = f"{imp.path}: value of Constant node '{shown(node.name)}'"
        array = checks.tensor_to_array(attrs["value"], what)
    elif "value_float" in attrs:
        array = np.array(attrs["value_float"], np.float32)
    elif "value_floats" in attrs:
        array = np.array(attrs["value_floats"], np.float32)
    elif "value_int" in attrs:
        array = np.array(attrs["value_int"], np.int64)
    elif "value_ints" in attrs:
        array = np.array(attrs["value_ints"], np.int64)
    else:
        raise node.fail(f"constant attribute {sorted(attrs)} is not supported")
    imp.bind_const(node.outputs[0], array)


@converts("Shape")
def shape(imp: Importer, node: Node) -> None:
    dims = np.array(imp.shape(node.inputs[0]), np.int64)
    start = node.int_attr("start", 0)
    end = node.attrs.get("end")
    end = None if end is None else node.int_attr("end", 0)
    imp.bind_const(node.outputs[0], dims[start:end])


@converts("Size")
def size(imp: Importer, node: Node) -> None:
    imp.bind_const(
        node.outputs[0], np.array(int(np.prod(imp.shape(node.inputs[0]))), np.int64)
    )


@converts("ConstantOfShape")
def constant_of_shape(imp: Importer, node: Node) -> None:
    """A constant-filled tensor. The reader folds it when its shape is a constant and
    it is within `max_fold_elements`; a larger one (the weights of ONNX's "light"
    models) runs on the target as its one value broadcast to the shape."""
    dims = imp.const_ints(node, 0, "the shape")
    if any(d < 0 for d in dims):
        raise node.fail(f"the shape {dims} has a negative dimension")
    fill = node.attrs.get("value")
    if fill is None:
        array = np.zeros(1, np.float32)
    elif isinstance(fill, onnx.TensorProto):
        what = f"{imp.path}: value of ConstantOfShape node '{shown(node.name)}'"
        array = checks.tensor_to_array(fill, what)
    else:
        raise node.fail("attribute 'value' must be a tensor")
    if array.size != 1:
        raise node.fail(f"attribute 'value' has {array.size} elements, not 1")
    one = f"{node.outputs[0]}#fill"
    imp.bind_const(one, array.reshape((1,) * len(dims)))
    value = imp.get(one)
    imp.emit(
        node,
        dm.BroadcastToOp,
        value,
        result_types=[TensorType(element_of(value), dims)],
    )
