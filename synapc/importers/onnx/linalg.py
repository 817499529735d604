"""ONNX linear algebra: `Det`, one `synap.det` on the logical ``[..., M, M]`` input."""

from __future__ import annotations

from synapc.dialects.synap.base import is_float
from synapc.dialects.synap.linalg import DetOp
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.reader import Importer, Node, converts


@converts("Det")
def det(imp: Importer, node: Node) -> None:
    """The determinant of each square float matrix of the input's last two axes."""
    name = node.inputs[0]
    element = imp.element_type(name)
    if not is_float(element):
        raise node.fail(f"input '{shown(name)}' is {element}; Det takes floats only")
    shape = imp.shape(name)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise node.fail(
            f"input '{shown(name)}' of shape {list(shape)} must be square matrices "
            "[..., M, M]"
        )
    imp.emit(node, DetOp, imp.get(name))
