"""ONNX constants and shape queries: with static shapes they are all host constants
(and the shape arithmetic that follows them is folded by the reader)."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from synapc.importers.onnx.reader import Importer, Node, converts


@converts("Constant")
def constant(imp: Importer, node: Node) -> None:
    attrs = node.attrs
    if "value" in attrs:
        array = numpy_helper.to_array(attrs["value"])
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
    start = int(node.attr("start", 0))
    end = node.attr("end")
    imp.bind_const(node.outputs[0], dims[start : None if end is None else int(end)])


@converts("Size")
def size(imp: Importer, node: Node) -> None:
    imp.bind_const(
        node.outputs[0], np.array(int(np.prod(imp.shape(node.inputs[0]))), np.int64)
    )


@converts("ConstantOfShape")
def constant_of_shape(imp: Importer, node: Node) -> None:
    """A constant-filled tensor; it is folded at import when its shape is a constant (the
    reader evaluates it), so reaching this converter means the shape is not static."""
    raise node.fail("the shape (input 0) must be a constant")
