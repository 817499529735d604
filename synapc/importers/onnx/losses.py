"""ONNX loss operators (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) composed from
synap ops as the operators' ONNX function bodies define them.

The input ``[N, C, d1, ..., dk]`` is computed as ``[N, C, D]`` (``D = d1 * ... * dk``)
and the labels ``[N, d1, ..., dk]`` as ``[N, D]``: the loss of a position is minus the
log-probability of its label (`synap.gather_elements` along the class axis), scaled by
the label's weight when there is a weight input (`synap.gather`). A position whose label
is `ignore_index` has loss 0 and weight 0 (`synap.equal` + `synap.select`, the label
replaced by 0 before the gathers so that an out-of-range ignored label reads nothing).
Reduction ``mean`` divides the sum of the losses by the sum of the weights (by the count
when there are neither weights nor an ignored label)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from synapc.dialects.synap import activation as act
from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap import reduce as red
from synapc.dialects.synap.base import element_of, is_float
from synapc.dialects.synap.data_movement import GatherOp
from synapc.dialects.synap.indexing import GatherElementsOp
from synapc.dialects.synap.logical import EqualOp, SelectOp
from synapc.dtypes import numpy_dtype
from synapc.importers.onnx.reader import Importer, Node, converts

_REDUCTIONS = ("none", "sum", "mean")


def _constant(imp: Importer, node: Node, tag: str, array: np.ndarray) -> SSAValue:
    """A host constant made for `node` (named after its first output and `tag`)."""
    name = f"{node.outputs[0]}#{tag}"
    imp.bind_const(name, array)
    return imp.get(name)


def _checked_inputs(imp: Importer, node: Node) -> tuple[tuple[int, ...], str]:
    """The scores' shape ``[N, C, d...]`` and the reduction, with the labels' and the
    weights' types and shapes checked against it."""
    x, target, weight = node.input(0), node.input(1), node.input(2)
    if x is None or target is None:
        raise node.fail("needs the scores (input 0) and the labels (input 1)")
    shape = imp.shape(x)
    if len(shape) < 2:
        raise node.fail(
            f"input 0 must have rank 2 or more ([N, C, ...]), got {list(shape)}"
        )
    element = imp.element_type(x)
    if not is_float(element):
        raise node.fail(f"input 0 ('{x}') is {element}; the loss takes float tensors only")
    labels = imp.element_type(target)
    if not isinstance(labels, IntegerType) or labels.width.data == 1:
        raise node.fail(f"the labels (input 1) must be integers, got {labels}")
    expected = (shape[0], *shape[2:])
    if imp.shape(target) != expected:
        raise node.fail(
            f"the labels (input 1) have shape {list(imp.shape(target))}, expected "
            f"{list(expected)} for scores of shape {list(shape)}"
        )
    if weight is not None:
        if imp.shape(weight) != (shape[1],):
            raise node.fail(
                f"the weights (input 2) have shape {list(imp.shape(weight))}, expected "
                f"[{shape[1]}]"
            )
        if imp.element_type(weight) != element:
            raise node.fail(
                f"the weights (input 2) are {imp.element_type(weight)}, the scores "
                f"{element}"
            )
    reduction = node.attr("reduction", "mean")
    if reduction not in _REDUCTIONS:
        raise node.fail(f"attribute 'reduction' '{reduction}' must be one of {_REDUCTIONS}")
    return shape, reduction


def _ignore_index(node: Node) -> int | None:
    """The `ignore_index` attribute, None when absent."""
    if "ignore_index" not in node.attrs:
        return None
    return node.int_attr("ignore_index", 0)


def _negative_log_likelihood(
    imp: Importer, node: Node, log_probs: SSAValue, shape: tuple[int, ...], reduction: str
) -> None:
    """Bind output 0 to the loss of `log_probs` (``[N, C, D]``) at the node's labels."""
    n = shape[0]
    d = int(np.prod(shape[2:], dtype=np.int64))
    src = node.source
    element = element_of(log_probs)
    dtype = numpy_dtype(element)
    target_name, weight_name = node.inputs[1], node.input(2)
    labels = imp.reshape(imp.get(target_name), (n, d))
    label_dtype = numpy_dtype(element_of(labels))
    ignore_index = _ignore_index(node)
    ignored = None
    if ignore_index is not None:
        info = np.iinfo(label_dtype)
        if info.min <= ignore_index <= info.max:  # otherwise no label can equal it
            index = _constant(
                imp, node, "ignore_index", np.full((1, 1), ignore_index, label_dtype)
            )
            ignored = imp.append(EqualOp.make(labels, index, **src))
            zero_label = _constant(imp, node, "zero_label", np.zeros((1, 1), label_dtype))
            labels = imp.append(
                SelectOp.make(
                    ignored, zero_label, labels, element_type=element_of(labels), **src
                )
            )
    picked = imp.append(
        GatherElementsOp.make(log_probs, imp.reshape(labels, (n, 1, d)), axis=1, **src)
    )
    loss = imp.append(act.NegOp.make(imp.reshape(picked, (n, d)), **src))
    weights = None
    if weight_name is not None:
        weights = imp.append(GatherOp.make(imp.get(weight_name), labels, axis=0, **src))
        loss = imp.append(ew.MulOp.make(loss, weights, **src))
    if ignored is not None:
        zero = _constant(imp, node, "zero", np.zeros((1, 1), dtype))
        loss = imp.append(SelectOp.make(ignored, zero, loss, element_type=element, **src))
        kept = weights
        if kept is None:
            kept = _constant(imp, node, "one", np.ones((1, 1), dtype))
        weights = imp.append(
            SelectOp.make(ignored, zero, kept, element_type=element, **src)
        )
    if reduction == "none":
        imp.bind(imp.out_name(node), imp.reshape(loss, (n, *shape[2:])))
        return
    if reduction == "sum" or weights is None:
        op_class = red.ReduceSumOp if reduction == "sum" else red.ReduceMeanOp
        total = imp.append(op_class.make(loss, axes=(0, 1), keep_dims=False, **src))
        imp.bind(imp.out_name(node), total)
        return
    total = imp.append(red.ReduceSumOp.make(loss, axes=(0, 1), keep_dims=False, **src))
    weight_sum = imp.append(
        red.ReduceSumOp.make(weights, axes=(0, 1), keep_dims=False, **src)
    )
    imp.emit(node, ew.DivOp, total, weight_sum)


def _scores(imp: Importer, node: Node, shape: tuple[int, ...]) -> SSAValue:
    """Input 0 as ``[N, C, D]``."""
    n, c = shape[0], shape[1]
    d = int(np.prod(shape[2:], dtype=np.int64))
    return imp.reshape(imp.get(node.inputs[0]), (n, c, d))


@converts("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(imp: Importer, node: Node) -> None:
    """``loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]``, reduced."""
    shape, reduction = _checked_inputs(imp, node)
    _negative_log_likelihood(imp, node, _scores(imp, node, shape), shape, reduction)


@converts("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(imp: Importer, node: Node) -> None:
    """The negative log-likelihood loss of ``log_softmax(scores)`` along the class axis;
    the optional output 1 is that log-softmax in the scores' shape."""
    shape, reduction = _checked_inputs(imp, node)
    log_probs = imp.append(
        act.LogSoftmaxOp.make(_scores(imp, node, shape), axis=1, **node.source)
    )
    if len(node.outputs) > 1 and node.outputs[1]:
        imp.bind(imp.out_name(node, 1), imp.reshape(log_probs, shape))
    _negative_log_likelihood(imp, node, log_probs, shape, reduction)
