"""ONNX `MaxUnpool`: the pooled values written back at the flat positions MaxPool's
Indices name, zeros elsewhere.

Composed from existing ops in logical (NCHW) order: X and I flattened to 1-D, a
`synap.scatter_elements` of X into zeros of the output's size at I, reshaped to the
default output shape ``(in - 1) * stride - pad_begin - pad_end + kernel`` per spatial
axis. As ONNX's reference implementation (and its node tests) do, the indices address
that default shape; a larger constant `output_shape` pads it with zeros at the end of
each axis. Indices are data: an index outside ``[-size, size)`` of the flat output is
dropped (its value is not written), a negative one counts from the end.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from synapc.dialects.synap.data_movement import BroadcastToOp, PadOp
from synapc.dialects.synap.indexing import ScatterElementsOp
from synapc.dtypes import numpy_dtype
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.reader import Importer, Node, converts
from synapc.importers.onnx.reduce import require_float


def _default_shape(node: Node, shape: tuple[int, ...]) -> list[int]:
    """The output shape attributes `kernel_shape`, `strides` and `pads` give for an
    input of `shape` (N, C, spatial...)."""
    spatial = list(shape[2:])
    n = len(spatial)
    kernel = node.ints_attr("kernel_shape")
    if kernel is None:
        raise node.fail("attribute 'kernel_shape' is missing")
    strides = node.ints_attr("strides", [1] * n)
    pads = node.ints_attr("pads", [0] * 2 * n)
    for name, values, count in (
        ("kernel_shape", kernel, n),
        ("strides", strides, n),
        ("pads", pads, 2 * n),
    ):
        if len(values) != count:
            raise node.fail(f"attribute '{name}' {values} must have {count} values")
    if min(kernel) < 1 or min(strides) < 1 or min(pads) < 0:
        raise node.fail(
            f"kernel_shape {kernel} and strides {strides} must be positive, pads {pads} "
            "not negative"
        )
    out = [
        (size - 1) * s - pads[i] - pads[n + i] + k
        for i, (size, s, k) in enumerate(zip(spatial, strides, kernel, strict=True))
    ]
    if min(out) < 1:
        raise node.fail(f"kernel_shape, strides and pads give an empty output {out}")
    return [*shape[:2], *out]


def _requested_shape(imp: Importer, node: Node, default: list[int]) -> list[int]:
    """Input `output_shape` (a constant no smaller than `default` on any axis), else
    `default`."""
    name = node.input(2)
    if name is None:
        return default
    if imp.const(name) is None:
        raise node.fail(
            f"output_shape (input 2) '{shown(name)}' is computed at run time: the output "
            "shape must be known at compile time (a graph with static shapes)"
        )
    wanted = imp.const_ints(node, 2, "output_shape")
    if len(wanted) != len(default) or any(
        w < d for w, d in zip(wanted, default, strict=True)
    ):
        raise node.fail(
            f"output_shape (input 2) {wanted} must have {len(default)} values, none "
            f"smaller than the unpooled shape {default}"
        )
    return wanted


def _flat(imp: Importer, node: Node, name: str) -> SSAValue:
    """Tensor `name` in logical order, flattened to 1-D."""
    return imp.reshape(imp.get(name), (math.prod(imp.shape(name)),), **node.source)


@converts("MaxUnpool")
def max_unpool(imp: Importer, node: Node) -> None:
    """MaxUnpool: X scattered into zeros at the flat positions I (see the module
    docstring), padded to `output_shape`."""
    if len(node.inputs) < 2 or node.input(0) is None or node.input(1) is None:
        raise node.fail("MaxUnpool takes X and I")
    x, indices = node.inputs[0], node.inputs[1]
    require_float(imp, node, x)
    shape = imp.shape(x)
    if not 3 <= len(shape) <= 5:
        raise node.fail(f"X '{shown(x)}' must have rank 3 to 5, got {list(shape)}")
    if imp.shape(indices) != shape:
        raise node.fail(
            f"I '{shown(indices)}' {list(imp.shape(indices))} must have X's shape "
            f"{list(shape)}"
        )
    default = _default_shape(node, shape)
    wanted = _requested_shape(imp, node, default)
    element = imp.element_type(x)
    zero = f"{node.outputs[0]}#zero"
    imp.bind_const(zero, np.zeros((1,), numpy_dtype(element)))
    size = math.prod(default)
    zeros = imp.append(
        BroadcastToOp.make(
            imp.get(zero), result_types=[TensorType(element, (size,))], **node.source
        )
    )
    scattered = imp.append(
        ScatterElementsOp.make(
            zeros, _flat(imp, node, indices), _flat(imp, node, x), axis=0, **node.source
        )
    )
    result = imp.reshape(scattered, default, **node.source)
    if wanted != default:
        pads = [v for d, w in zip(default, wanted, strict=True) for v in (0, w - d)]
        result = imp.append(PadOp.make(result, pads=pads, **node.source))
    imp.bind_output(node, result)
