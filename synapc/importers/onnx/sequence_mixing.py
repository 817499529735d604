"""ONNX sequence-mixing operators of state-space and linear-attention models, composed
from synap ops: CausalConvWithState (a depthwise convolution over the past state and the
input) and LinearAttention (its recurrence unrolled over the static sequence length)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, SSAValue

from synapc.dialects.synap.activation import ExpOp, SwishOp
from synapc.dialects.synap.base import SynapOp, element_of, is_float, shape_of
from synapc.dialects.synap.conv import DepthwiseConv2DOp
from synapc.dialects.synap.conversion import CastOp
from synapc.dialects.synap.data_movement import ConcatOp, SliceOp, SplitOp
from synapc.dialects.synap.elementwise import AddOp, MulOp, SubOp
from synapc.dialects.synap.indexing import EinsumOp
from synapc.dtypes import numpy_dtype
from synapc.importers.onnx import layout
from synapc.importers.onnx.reader import Importer, Node, converts

_ACTIVATIONS = ("none", "silu", "swish")


def _require_float(imp: Importer, node: Node, name: str, what: str) -> None:
    """Refuse a non-floating-point input (the operators compute real values)."""
    element = imp.element_type(name)
    if not is_float(element):
        raise node.fail(f"{what} must be floating-point, got {element}")


def _constant(imp: Importer, name: str, array: np.ndarray) -> SSAValue:
    """A host constant bound under `name` as an IR value (logical layout)."""
    imp.bind_const(name, array)
    return imp.get(name)


def _sequence_nhwc(imp: Importer, name: str) -> SSAValue:
    """A ``(B, C, L)`` tensor as the NHWC value ``(B, 1, L, C)``."""
    value = imp.get(name, layout.channels_last(3))
    b, length, c = shape_of(value)
    return imp.reshape(value, (b, 1, length, c))


@converts("CausalConvWithState")
def causal_conv_with_state(imp: Importer, node: Node) -> None:
    """``output = act(depthwise_conv(concat(past_state, input)) + bias)`` over the
    length axis; ``present_state`` is the last ``k - 1`` positions of the concatenation."""
    x, w = node.input(0), node.input(1)
    if x is None or w is None:
        raise node.fail("needs inputs input and weight")
    activation = node.attr("activation", "none")
    if activation not in _ACTIVATIONS:
        raise node.fail(f"activation '{activation}' is not one of {list(_ACTIVATIONS)}")
    for name, what in ((x, "input"), (w, "weight")):
        _require_float(imp, node, name, what)
    x_shape, w_shape = imp.shape(x), imp.shape(w)
    if len(x_shape) != 3:
        raise node.fail(f"input must have rank 3 (batch, channels, length), got {x_shape}")
    batch, channels, length = x_shape
    if len(w_shape) != 3 or w_shape[:2] != (channels, 1):
        raise node.fail(f"weight of shape {list(w_shape)} should be [{channels}, 1, k]")
    k = w_shape[2]
    bias, past = node.input(2), node.input(3)
    if bias is not None and imp.shape(bias) != (channels,):
        raise node.fail(f"bias of shape {list(imp.shape(bias))} should be [{channels}]")
    if past is not None and imp.shape(past) != (batch, channels, k - 1):
        raise node.fail(
            f"past_state of shape {list(imp.shape(past))} should be "
            f"{[batch, channels, k - 1]}"
        )
    element = imp.element_type(x)
    if k == 1 and len(node.outputs) > 1 and node.outputs[1]:
        # a kernel of size 1 keeps no past: present_state (B, C, 0) holds no values
        imp.bind_empty(imp.out_name(node, 1), (batch, channels, 0), element)
    value = _sequence_nhwc(imp, x)
    if k > 1:
        if past is not None:
            state = _sequence_nhwc(imp, past)
        else:
            zeros = np.zeros((batch, 1, k - 1, channels), numpy_dtype(element))
            state = _constant(imp, f"{imp.out_name(node)}::zero_state", zeros)
        value = imp.append(ConcatOp.make([state, value], axis=2, **node.source))
    w_value = imp.reshape(imp.get(w), (channels, 1, 1, k))
    filt = imp.transpose(w_value, (1, 2, 3, 0))
    b = None if bias is None else imp.get(bias)
    out = imp.append(DepthwiseConv2DOp.make(value, filt, b, **node.source))
    if activation != "none":
        out = imp.append(SwishOp.make(out, **node.source))
    cl = layout.channels_last(3)
    imp.bind(imp.out_name(node), imp.reshape(out, (batch, length, channels)), cl)
    if k > 1 and len(node.outputs) > 1 and node.outputs[1]:
        kept = (batch, 1, k - 1, channels)
        state_out = imp.append(
            SliceOp.make(
                value,
                result_types=[TensorType(element, kept)],
                start=(0, 0, length, 0),
                **node.source,
            )
        )
        imp.bind(
            imp.out_name(node, 1), imp.reshape(state_out, (batch, k - 1, channels)), cl
        )


#: The longest sequence LinearAttention is unrolled over (each step is a few ops).
MAX_UNROLLED_STEPS = 256
_UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


class _Builder:
    """Appends float32 synap ops for one node (each named after the node)."""

    def __init__(self, imp: Importer, node: Node):
        self.imp = imp
        self.node = node

    def cast(self, value: SSAValue, element: Attribute = f32) -> SSAValue:
        """`value` converted to `element` (itself when it has that type)."""
        if element_of(value) == element:
            return value
        result = TensorType(element, shape_of(value))
        cast = CastOp.make(value, result_types=[result], **self.node.source)
        return self.imp.append(cast)

    def op(self, op_class: type[SynapOp], *operands: Any, **props: Any) -> SSAValue:
        """Append `op_class(operands, props)` and return its result."""
        return self.imp.append(op_class.make(*operands, **props, **self.node.source))

    def einsum(self, equation: str, *operands: SSAValue) -> SSAValue:
        """Einstein summation of `operands`."""
        return self.op(EinsumOp, list(operands), equation=equation)

    def steps(self, value: SSAValue, shape: Sequence[int]) -> list[SSAValue]:
        """A ``(B, T, ...)`` value split along T, each step reshaped to `shape`."""
        b, t, *rest = shape_of(value)
        if t == 1:
            return [self.imp.reshape(value, shape)]
        pieces = [TensorType(element_of(value), (b, 1, *rest))] * t
        split = self.imp.append(
            SplitOp.make(value, result_types=pieces, axis=1, **self.node.source)
        )
        return [self.imp.reshape(r, shape) for r in split.owner.results]


def _heads(node: Node, shape: tuple[int, ...], heads: int, what: str) -> int:
    """The per-head size of a packed ``(B, T, heads * d)`` input."""
    if len(shape) != 3 or shape[2] % heads:
        raise node.fail(
            f"{what} of shape {list(shape)} must be (B, T, {heads} * d) for {heads} heads"
        )
    return shape[2] // heads


@converts("LinearAttention")
def linear_attention(imp: Importer, node: Node) -> None:
    """The recurrence of the update rule run step by step over the (static) sequence:
    per token, decay the state, correct the value by what the state retrieves for the
    key (delta rules), add ``k ⊗ v`` and read ``scale * q · S`` (query heads sharing a
    key/value head read the same state). Computed in float32 like ONNX's reference."""
    names = [node.input(i) for i in range(6)]
    query, key, value, past, decay, beta = names
    if query is None or key is None or value is None:
        raise node.fail("needs inputs query, key and value")
    rule = node.attr("update_rule", "gated_delta")
    if rule not in _UPDATE_RULES:
        raise node.fail(f"update_rule '{rule}' is not one of {list(_UPDATE_RULES)}")
    if "q_num_heads" not in node.attrs or "kv_num_heads" not in node.attrs:
        raise node.fail("attributes 'q_num_heads' and 'kv_num_heads' are required")
    hq, hkv = node.int_attr("q_num_heads", 0), node.int_attr("kv_num_heads", 0)
    if hq <= 0 or hkv <= 0 or hq % hkv:
        raise node.fail(
            f"q_num_heads {hq} must be a positive multiple of kv_num_heads {hkv}"
        )
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gated != (decay is not None):
        raise node.fail(f"update_rule '{rule}' {'needs' if gated else 'forbids'} decay")
    if delta != (beta is not None):
        raise node.fail(f"update_rule '{rule}' {'needs' if delta else 'forbids'} beta")
    labels = ("query", "key", "value", "past_state", "decay", "beta")
    for name, what in zip(names, labels, strict=True):
        if name is not None:
            _require_float(imp, node, name, what)
    q_shape = imp.shape(query)
    d_k = _heads(node, q_shape, hq, "query")
    b, t = q_shape[:2]
    if _heads(node, imp.shape(key), hkv, "key") != d_k or imp.shape(key)[:2] != (b, t):
        raise node.fail(f"key of shape {list(imp.shape(key))} does not fit the query")
    d_v = _heads(node, imp.shape(value), hkv, "value")
    if imp.shape(value)[:2] != (b, t):
        raise node.fail(f"value of shape {list(imp.shape(value))} does not fit the query")
    if t > MAX_UNROLLED_STEPS:
        raise node.fail(
            f"sequence length {t} is longer than the {MAX_UNROLLED_STEPS} steps the "
            "recurrence is unrolled over"
        )
    state_shape = (b, hkv, d_k, d_v)
    if past is not None and imp.shape(past) != state_shape:
        raise node.fail(
            f"past_state of shape {list(imp.shape(past))} should be {list(state_shape)}"
        )
    scale = float(node.attr("scale", 0.0))
    if scale == 0.0:
        scale = 1.0 / float(np.sqrt(d_k))
    out = _Builder(imp, node)
    group = hq // hkv
    qs = out.steps(out.cast(imp.get(query)), (b, hkv, group, d_k))
    ks = out.steps(out.cast(imp.get(key)), (b, hkv, d_k))
    vs = out.steps(out.cast(imp.get(value)), (b, hkv, d_v))
    gates: list[SSAValue] = []
    if decay is not None:
        last = imp.shape(decay)
        if len(last) != 3 or last[:2] != (b, t) or last[2] not in (hkv, hkv * d_k):
            raise node.fail(
                f"decay of shape {list(last)} should be [{b}, {t}, {hkv}] or "
                f"[{b}, {t}, {hkv * d_k}]"
            )
        per_key = last[2] // hkv
        factors = out.op(ExpOp, out.cast(imp.get(decay)))
        gates = out.steps(factors, (b, hkv, per_key, 1))
    rates: list[SSAValue] = []
    if beta is not None:
        last = imp.shape(beta)
        if len(last) != 3 or last[:2] != (b, t) or last[2] not in (hkv, 1):
            raise node.fail(
                f"beta of shape {list(last)} should be [{b}, {t}, {hkv}] or [{b}, {t}, 1]"
            )
        rates = out.steps(out.cast(imp.get(beta)), (b, last[2], 1))
    if past is not None:
        state = out.cast(imp.get(past))
    else:
        zeros = np.zeros(state_shape, np.float32)
        state = _constant(imp, f"{imp.out_name(node)}::zero_state", zeros)
    reads = []
    for i in range(t):  # the recurrence: one group of ops per token
        v_t = vs[i]
        if gated:
            state = out.op(MulOp, state, gates[i])
        if delta:
            retrieved = out.einsum("bhdm,bhd->bhm", state, ks[i])
            v_t = out.op(MulOp, rates[i], out.op(SubOp, v_t, retrieved))
        state = out.op(AddOp, state, out.einsum("bhd,bhm->bhdm", ks[i], v_t))
        read = out.einsum("bhgd,bhdm->bhgm", qs[i], state)
        reads.append(imp.reshape(read, (b, 1, hq * d_v)))
    joined = reads[0] if t == 1 else out.op(ConcatOp, reads, axis=1)
    factor = np.full((1, 1, 1), scale, np.float32)
    scale_value = _constant(imp, f"{imp.out_name(node)}::scale", factor)
    scaled = out.op(MulOp, joined, scale_value)
    imp.bind(imp.out_name(node), out.cast(scaled, imp.element_type(query)))
    if len(node.outputs) > 1 and node.outputs[1]:
        kind = imp.element_type(past if past is not None else query)
        imp.bind(imp.out_name(node, 1), out.cast(state, kind))
