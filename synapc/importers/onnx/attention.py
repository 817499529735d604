"""ONNX attention operators: `Attention` (opsets 23 to 25) and `RotaryEmbedding`.

`Attention` is one `synap.attention` (the fused layer, see `dialects/synap/attention.py`
for why): 3-D inputs ``[B, S, heads * size]`` are first viewed as ``[B, heads, S,
size]`` (a reshape and a transpose) and the output is turned back the same way.
`RotaryEmbedding` is short arithmetic on slices of the input: the cos / sin rows
(gathered by `position_ids` when given) multiply the two halves of the rotated part
(interleaved: its even and odd elements), which are put back together with concats.
"""

from __future__ import annotations

import math

from onnx import TensorProto
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, SSAValue

from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap.attention import MAX_SCORES_MODE, AttentionOp
from synapc.dialects.synap.base import element_of, is_float, shape_of
from synapc.dialects.synap.data_movement import (
    ConcatOp,
    GatherOp,
    SliceOp,
    StridedSliceOp,
)
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.reader import Importer, Node, converts
from synapc.importers.onnx.reduce import combine, require_float

#: `softmax_precision` values ONNX allows: float, float16, double, bfloat16. The
#: softmax runs in float32 whichever is asked for.
_SOFTMAX_PRECISIONS = {
    TensorProto.FLOAT,
    TensorProto.FLOAT16,
    TensorProto.DOUBLE,
    TensorProto.BFLOAT16,
}


# -- Attention -------------------------------------------------------------------------
def _is_integer(element: Attribute) -> bool:
    """Whether `element` is a (non-boolean) integer type."""
    return isinstance(element, IntegerType) and element.width.data > 1


def _is_boolean(element: Attribute) -> bool:
    """Whether `element` is the boolean type i1."""
    return isinstance(element, IntegerType) and element.width.data == 1


def _same_float(imp: Importer, node: Node, names: list[str | None]) -> None:
    """Inputs `names` (None: absent) hold the query's float type."""
    query = node.inputs[0]
    require_float(imp, node, query)
    element = imp.element_type(query)
    for name in names:
        if name is not None and imp.element_type(name) != element:
            raise node.fail(
                f"input '{shown(name)}' is {imp.element_type(name)}; the query "
                f"'{shown(query)}' is {element}"
            )


def _heads(node: Node, name: str, default: int | None) -> int | None:
    """Head-count attribute `name` (`default` when absent); a given count is
    positive."""
    if name not in node.attrs:
        return default
    count = node.int_attr(name, 0)
    if count < 1:
        raise node.fail(f"attribute '{name}' must be positive, got {count}")
    return count


def _split_heads(imp: Importer, node: Node, name: str, heads: int, what: str) -> SSAValue:
    """3-D input `name` ``[B, S, heads * size]`` as ``[B, heads, S, size]``."""
    batch, length, hidden = imp.shape(name)
    if hidden % heads:
        raise node.fail(
            f"{what} '{shown(name)}' has {hidden} features, not a multiple of its "
            f"{heads} heads"
        )
    split = imp.reshape(imp.get(name), (batch, length, heads, hidden // heads))
    return imp.transpose(split, (0, 2, 1, 3))


def _attention_operands(imp: Importer, node: Node) -> list[SSAValue]:
    """Q, K and V as 4-D values ``[B, heads, S, size]``."""
    names = node.inputs[:3]
    ranks = {imp.rank(n) for n in names}
    if len(ranks) != 1 or ranks - {3, 4}:
        shown_shapes = [list(imp.shape(n)) for n in names]
        raise node.fail(f"Q, K and V must all be 3-D or all 4-D, got {shown_shapes}")
    q_heads = _heads(node, "q_num_heads", None)
    kv_heads = _heads(node, "kv_num_heads", None)
    if ranks == {4}:
        shapes = [imp.shape(n) for n in names]
        for count, shape, what in ((q_heads, shapes[0], "q"), (kv_heads, shapes[1], "kv")):
            if count is not None and count != shape[1]:
                raise node.fail(
                    f"{what}_num_heads {count} contradicts the 4-D input's {shape[1]} heads"
                )
        return [imp.get(n) for n in names]
    if q_heads is None or kv_heads is None:
        raise node.fail("3-D inputs need the attributes q_num_heads and kv_num_heads")
    query = _split_heads(imp, node, names[0], q_heads, "Q")
    return [
        query,
        _split_heads(imp, node, names[1], kv_heads, "K"),
        _split_heads(imp, node, names[2], kv_heads, "V"),
    ]


def _attention_props(node: Node, depth: int) -> dict[str, object]:
    """The `synap.attention` properties of the node's attributes."""
    scale = node.attr("scale")
    if scale is None:
        scale = 1 / math.sqrt(depth)
    if not isinstance(scale, float) or not math.isfinite(scale):
        raise node.fail(f"attribute 'scale' must be a finite float, got {scale!r}")
    softcap = node.attr("softcap", 0.0)
    if not isinstance(softcap, float) or not 0 <= softcap < math.inf:
        raise node.fail(f"attribute 'softcap' must be 0 or positive, got {softcap!r}")
    mode = node.int_attr("qk_matmul_output_mode", 0)
    if not 0 <= mode <= MAX_SCORES_MODE:
        raise node.fail(f"attribute 'qk_matmul_output_mode' must be 0 to 3, got {mode}")
    precision = node.attrs.get("softmax_precision")
    if precision is not None and precision not in _SOFTMAX_PRECISIONS:
        raise node.fail(
            f"attribute 'softmax_precision' {precision!r} is not a float type "
            "(float, float16, double or bfloat16)"
        )
    causal = node.int_attr("is_causal", 0)
    if causal not in (0, 1):
        raise node.fail(f"attribute 'is_causal' must be 0 or 1, got {causal}")
    windows = {}
    for attr, prop in (
        ("left_window_size", "left_window"),
        ("right_window_size", "right_window"),
    ):
        size = node.int_attr(attr, -1)
        if size < -1:
            raise node.fail(f"attribute '{attr}' must be -1 or more, got {size}")
        windows[prop] = size
    return {
        "scale": float(scale),
        "is_causal": bool(causal),
        "softcap": float(softcap),
        "scores_mode": mode,
        **windows,
    }


def _checked_mask(imp: Importer, node: Node, name: str | None) -> SSAValue | None:
    """The attention mask: boolean or additive floats, rank 1 to 4."""
    if name is None:
        return None
    element = imp.element_type(name)
    if not (_is_boolean(element) or is_float(element)):
        raise node.fail(
            f"attn_mask '{shown(name)}' is {element}; it must be boolean or float"
        )
    if not 1 <= imp.rank(name) <= 4:
        raise node.fail(f"attn_mask '{shown(name)}' must have rank 1 to 4")
    return imp.get(name)


@converts("Attention")
def attention(imp: Importer, node: Node) -> None:
    """ONNX Attention as one `synap.attention` (3-D inputs split into heads first)."""
    mask_name, past_k, past_v, lengths_name = (node.input(i) for i in range(3, 7))
    _same_float(imp, node, [*node.inputs[1:3], past_k, past_v])
    if (past_k is None) != (past_v is None):
        raise node.fail("past_key and past_value must be given together")
    if lengths_name is not None:
        if past_k is not None:
            raise node.fail("nonpad_kv_seqlen cannot be combined with past_key/past_value")
        if not _is_integer(imp.element_type(lengths_name)):
            raise node.fail(f"nonpad_kv_seqlen '{shown(lengths_name)}' must be integers")
    three_d = imp.rank(node.inputs[0]) == 3
    q, k, v = _attention_operands(imp, node)
    props = _attention_props(node, shape_of(q)[3])
    mask = _checked_mask(imp, node, mask_name)
    past = [None if n is None else imp.get(n) for n in (past_k, past_v)]
    lengths = None if lengths_name is None else imp.get(lengths_name)
    past_length = 0 if past[0] is None else shape_of(past[0])[2]
    element = element_of(q)
    if shape_of(q)[1] % max(shape_of(k)[1], 1):
        raise node.fail(
            f"{shape_of(k)[1]} key/value heads do not divide {shape_of(q)[1]} query heads"
        )
    result_types = [
        TensorType(element, s)
        for s in AttentionOp.result_shapes(
            shape_of(q), shape_of(k), shape_of(v), past_length
        )
    ]
    op = imp.emit(
        node,
        AttentionOp,
        q,
        k,
        v,
        mask,
        past[0],
        past[1],
        lengths,
        result_types=result_types,
        output=None,
        **props,
    )
    output = op.results[0]
    if three_d:
        batch, heads, length, size = shape_of(output)
        output = imp.transpose(output, (0, 2, 1, 3))
        output = imp.reshape(output, (batch, length, heads * size), **node.source)
    imp.bind(imp.out_name(node), output)
    for k_out in range(1, 4):
        if k_out < len(node.outputs) and node.outputs[k_out]:
            imp.bind(imp.out_name(node, k_out), op.results[k_out])


# -- RotaryEmbedding -------------------------------------------------------------------
def _slice(
    imp: Importer, node: Node, value: SSAValue, begin: int, end: int, step: int = 1
) -> SSAValue:
    """``value[..., begin:end:step]``."""
    shape = shape_of(value)
    if step == 1:
        start = [0] * (len(shape) - 1) + [begin]
        out = TensorType(element_of(value), (*shape[:-1], end - begin))
        return imp.append(
            SliceOp.make(value, start=start, result_types=[out], **node.source)
        )
    rank = len(shape)
    return imp.append(
        StridedSliceOp.make(
            value,
            begin=[0] * (rank - 1) + [begin],
            end=[*shape[:-1], end],
            strides=[1] * (rank - 1) + [step],
            **node.source,
        )
    )


def _concat(imp: Importer, node: Node, values: list[SSAValue]) -> SSAValue:
    """`values` concatenated along their last axis."""
    axis = len(shape_of(values[0])) - 1
    return imp.append(ConcatOp.make(values, axis=axis, **node.source))


def _rotation_table(
    imp: Importer, node: Node, name: str, positions: str | None, rows: tuple[int, int]
) -> SSAValue:
    """Cache `name` as ``[B, S, half]`` rows: gathered at `positions` when given."""
    shape = imp.shape(name)
    if positions is None:
        if len(shape) != 3 or shape[:2] != rows:
            raise node.fail(
                f"without position_ids, '{shown(name)}' must be [batch, sequence, half] "
                f"= {[*rows, 'half']}, got {list(shape)}"
            )
        return imp.get(name)
    if len(shape) != 2:
        raise node.fail(f"'{shown(name)}' must be [max_position, half], got {list(shape)}")
    if imp.shape(positions) != rows:
        raise node.fail(
            f"position_ids '{shown(positions)}' must be {list(rows)}, got "
            f"{list(imp.shape(positions))}"
        )
    return imp.append(
        GatherOp.make(imp.get(name), imp.get(positions), axis=0, **node.source)
    )


def _rotary_input(imp: Importer, node: Node) -> tuple[SSAValue, int]:
    """The input as ``[B, H, S, size]`` (4-D as given) or ``[B, S, H, size]`` (3-D
    split into `num_heads`), and the axis of the cos / sin rows' heads (1 or 2)."""
    x = node.inputs[0]
    shape = imp.shape(x)
    if len(shape) == 4:
        return imp.get(x), 1
    if len(shape) != 3:
        raise node.fail(f"the input must be 3-D or 4-D, got shape {list(shape)}")
    heads = node.int_attr("num_heads", 0)
    if heads < 1 or shape[2] % heads:
        raise node.fail(
            f"a 3-D input needs num_heads dividing its {shape[2]} features, got {heads}"
        )
    split = (shape[0], shape[1], heads, shape[2] // heads)
    return imp.reshape(imp.get(x), split), 2


@converts("RotaryEmbedding")
def rotary_embedding(imp: Importer, node: Node) -> None:
    """``[x1, x2] -> [cos x1 - sin x2, sin x1 + cos x2]`` on the first
    `rotary_embedding_dim` features of each head (halves, or even / odd elements when
    `interleaved`); the other features pass unchanged."""
    x_name = node.inputs[0]
    _same_float(imp, node, node.inputs[1:3])
    interleaved = node.int_attr("interleaved", 0)
    if interleaved not in (0, 1):
        raise node.fail(f"attribute 'interleaved' must be 0 or 1, got {interleaved}")
    x, heads_axis = _rotary_input(imp, node)
    shape = shape_of(x)
    size = shape[3]
    rotated = node.int_attr("rotary_embedding_dim", 0) or size
    if rotated % 2 or not 0 < rotated <= size:
        raise node.fail(
            f"rotary_embedding_dim {rotated} must be even and at most the head size {size}"
        )
    half = rotated // 2
    rows = (shape[0], shape[2] if heads_axis == 1 else shape[1])
    positions = node.input(3)
    if positions is not None and not _is_integer(imp.element_type(positions)):
        raise node.fail(f"position_ids '{shown(positions)}' must be integers")
    tables = []
    for name in node.inputs[1:3]:
        table = _rotation_table(imp, node, name, positions, rows)
        if shape_of(table)[-1] != half:
            raise node.fail(
                f"'{shown(name)}' has {shape_of(table)[-1]} values per position; "
                f"rotary_embedding_dim / 2 = {half}"
            )
        view = list(shape_of(table))
        view.insert(heads_axis, 1)
        tables.append(imp.reshape(table, view))
    cos, sin = tables
    if interleaved:
        first = _slice(imp, node, x, 0, rotated, 2)
        second = _slice(imp, node, x, 1, rotated, 2)
    else:
        first = _slice(imp, node, x, 0, half)
        second = _slice(imp, node, x, half, rotated)
    real = combine(
        imp,
        node,
        ew.SubOp,
        combine(imp, node, ew.MulOp, cos, first),
        combine(imp, node, ew.MulOp, sin, second),
    )
    imag = combine(
        imp,
        node,
        ew.AddOp,
        combine(imp, node, ew.MulOp, sin, first),
        combine(imp, node, ew.MulOp, cos, second),
    )
    if interleaved:
        pairs = [imp.reshape(p, (*shape_of(p), 1)) for p in (real, imag)]
        parts = [imp.reshape(_concat(imp, node, pairs), (*shape[:3], rotated))]
    else:
        parts = [real, imag]
    if rotated < size:
        parts.append(_slice(imp, node, x, rotated, size))
    result = _concat(imp, node, parts) if len(parts) > 1 else parts[0]
    imp.bind_output(node, imp.reshape(result, imp.shape(x_name), **node.source))
