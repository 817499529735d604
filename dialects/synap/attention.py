"""Scaled dot-product attention as one layer: `synap.attention`.

Why one fused op rather than a chain of matrix products, a softmax and masking
arithmetic: NPUs of the transformer era run attention as a single layer (the scores
``Q K^T`` never leave the accelerator's local memory, the softmax is computed on the fly
along the key axis, grouped-query heads read their shared key/value head without copying
it), and a fused layer keeps the key/value cache update, the causal / sliding-window
frontier and the fully-masked-row rule in one place instead of spread over a dozen ops
that a later pass would have to pattern-match back together.

Operands (``B`` batch, ``Hq`` query heads, ``Hkv`` key/value heads dividing ``Hq``,
``S`` query length, ``L`` new key/value length, ``P`` past length, ``T = P + L``):

* `query` ``[B, Hq, S, D]``, `key` ``[B, Hkv, L, D]``, `value` ``[B, Hkv, L, Dv]``;
  query head ``h`` reads key/value head ``h // (Hq / Hkv)`` (grouped-query attention).
* `mask` (optional): boolean (true attends) or additive float scores of shape
  ``[..., M]`` with ``M <= T`` broadcasting (NumPy rules) against ``[B, Hq, S, T]``; the
  keys beyond ``M`` are masked out.
* `past_key` ``[B, Hkv, P, D]`` and `past_value` ``[B, Hkv, P, Dv]`` (optional,
  together): the cache the new keys and values are appended to.
* `kv_lengths` (optional, integers ``[B]``, without a cache): the number of valid keys
  of each batch entry (keys from there on are masked out).

Results: the attention output ``[B, Hq, S, Dv]``, the present key ``[B, Hkv, T, D]`` and
value ``[B, Hkv, T, Dv]`` (cache and new entries concatenated along the sequence axis),
and the scores ``[B, Hq, S, T]`` selected by `scores_mode`.

Computation, ``i`` the query row and ``j`` the key column: ``s = scale * Q K^T``; with
``softcap > 0``, ``s = softcap * tanh(s / softcap)``; the bias adds the mask (booleans
as 0 / -inf) and -inf wherever a rule forbids ``j``: causal (`is_causal`) allows ``j <=
i + offset``; the window allows ``i + offset - left_window <= j`` (``left_window >= 0``)
and ``j <= i + offset + right_window`` (``right_window >= 0``); `kv_lengths` allows
``j < kv_lengths[b]``. The offset is ``P`` with a cache, ``kv_lengths[b] - S`` with
lengths, else 0 (bottom-right aligned). Then ``p = softmax(s + bias)`` along the keys,
with rows whose bias is all -inf set to 0 (no key to attend), and the output is
``p V``. `scores_mode` selects the scores result: 0 the scaled product, 1 after the
softcap, 2 with the bias added too, 3 the probabilities ``p`` (ONNX's
`qk_matmul_output_mode`).

Every step's result is rounded to the query's element type, as ONNX's function body
computes each step in it (a float16 layer's scores are float16), but products, sums and
the softmax accumulate in float32 (the widest precision the device has), whatever
ONNX's `softmax_precision` asks for; results have the query's element type.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
)

from synapc.dialects.synap import shapes
from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    float_prop,
    int_prop,
    is_float,
    shape_of,
)

#: The largest `scores_mode` (3: the softmax probabilities).
MAX_SCORES_MODE = 3


@irdl_op_definition
class AttentionOp(SynapOp):
    """Scaled dot-product attention with grouped-query heads, masks, a key/value cache
    and the scores as a second view (see the module docstring).

    Syntax: ``synap.attention %q, %k, %v mask %m : type past_key %pk : type past_value
    %pv : type kv_lengths %n : type {...} : type(q), type(k), type(v) -> type(output),
    type(present_key), type(present_value), type(scores)``, each keyword group
    optional."""

    name = "synap.attention"

    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    past_key = opt_operand_def(TensorType)
    past_value = opt_operand_def(TensorType)
    kv_lengths = opt_operand_def(TensorType)
    output = result_def(TensorType)
    present_key = result_def(TensorType)
    present_value = result_def(TensorType)
    scores = result_def(TensorType)

    scale = float_prop()
    is_causal = bool_prop(False)
    softcap = float_prop(0.0)
    scores_mode = int_prop(0)
    left_window = int_prop(-1)
    right_window = int_prop(-1)

    irdl_options = (AttrSizedOperandSegments(), ParsePropInAttrDict())
    assembly_format = (
        "$query `,` $key `,` $value "
        "(`mask` $mask^ `:` type($mask))? "
        "(`past_key` $past_key^ `:` type($past_key))? "
        "(`past_value` $past_value^ `:` type($past_value))? "
        "(`kv_lengths` $kv_lengths^ `:` type($kv_lengths))? "
        "attr-dict `:` type($query) `,` type($key) `,` type($value) `->` "
        "type($output) `,` type($present_key) `,` type($present_value) `,` "
        "type($scores)"
    )

    @classmethod
    def result_shapes(
        cls,
        query: Shape,
        key: Shape,
        value: Shape,
        past_length: int = 0,
    ) -> list[Shape]:
        """The shapes of the four results for these operand shapes and a cache of
        `past_length` entries."""
        batch, heads, length, _ = query
        _, kv_heads, new, depth = key
        total = past_length + new
        value_depth = value[3]
        return [
            (batch, heads, length, value_depth),
            (batch, kv_heads, total, depth),
            (batch, kv_heads, total, value_depth),
            (batch, heads, length, total),
        ]

    def verify_semantics(self) -> None:
        q, k, v = (shape_of(x) for x in (self.query, self.key, self.value))
        for what, shape in (("query", q), ("key", k), ("value", v)):
            if len(shape) != 4:
                self.fail(f"{what} must have rank 4, got shape {list(shape)}")
        if not is_float(element_of(self.query)):
            self.fail(f"query must hold floats, got {element_of(self.query)}")
        batch, heads, _, depth = q
        kv_heads = k[1]
        if k[0] != batch or k[3] != depth:
            self.fail(f"key of shape {list(k)} does not fit query of shape {list(q)}")
        if v[:3] != k[:3]:
            self.fail(f"value of shape {list(v)} does not fit key of shape {list(k)}")
        if kv_heads < 1 or heads % kv_heads:
            self.fail(f"{kv_heads} key/value heads do not divide {heads} query heads")
        past = self._verify_cache(k, v)
        want = self.result_shapes(q, k, v, past)
        got = [shape_of(r) for r in self.results]
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            if tuple(w) != tuple(g):
                self.fail(f"result #{i} shape {list(g)} should be {list(w)}")
        self._verify_mask(want[3])
        if self.kv_lengths is not None:
            lengths = shape_of(self.kv_lengths)
            if lengths != (batch,) or not isinstance(
                element_of(self.kv_lengths), IntegerType
            ):
                self.fail(
                    f"kv_lengths must be {batch} integers, got {self.kv_lengths.type}"
                )
            if past:
                self.fail("kv_lengths and a key/value cache exclude each other")
        self._verify_props()

    def _verify_cache(self, k: Shape, v: Shape) -> int:
        """The cache is given whole or not at all and fits the new keys and values;
        returns its length."""
        if (self.past_key is None) != (self.past_value is None):
            self.fail("past_key and past_value must be given together")
        if self.past_key is None or self.past_value is None:
            return 0
        pk, pv = shape_of(self.past_key), shape_of(self.past_value)
        if len(pk) != 4 or pk[:2] != k[:2] or pk[3] != k[3]:
            self.fail(f"past_key of shape {list(pk)} does not fit key {list(k)}")
        if len(pv) != 4 or pv[:2] != v[:2] or pv[3] != v[3] or pv[2] != pk[2]:
            self.fail(f"past_value of shape {list(pv)} does not fit value {list(v)}")
        return pk[2]

    def _verify_mask(self, scores: Shape) -> None:
        """The mask is boolean or float, covers at most the keys, and broadcasts."""
        if self.mask is None:
            return
        shape = shape_of(self.mask)
        element = element_of(self.mask)
        boolean = isinstance(element, IntegerType) and element.width.data == 1
        if not (boolean or is_float(element)):
            self.fail(f"mask must be boolean or float, got {element}")
        if not 1 <= len(shape) <= 4 or shape[-1] > scores[-1]:
            self.fail(f"mask of shape {list(shape)} does not fit scores {list(scores)}")
        try:
            fits = shapes.broadcast((*shape[:-1], scores[-1]), scores) == tuple(scores)
        except shapes.ShapeError:
            fits = False
        if not fits:
            self.fail(f"mask of shape {list(shape)} does not broadcast to {list(scores)}")

    def _verify_props(self) -> None:
        props: dict[str, Any] = self.props()
        if not 0 <= props["scores_mode"] <= MAX_SCORES_MODE:
            self.fail(f"scores_mode must be 0 to 3, got {props['scores_mode']}")
        if not props["softcap"] >= 0:
            self.fail(f"softcap must be 0 (none) or positive, got {props['softcap']}")
        for key in ("left_window", "right_window"):
            if props[key] < -1:
                self.fail(f"{key} must be -1 (unbounded) or more, got {props[key]}")


OPS = [AttentionOp]
