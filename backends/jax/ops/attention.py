"""Kernel of `dialects/synap/attention.py`: `synap.attention` (float only).

Products and the softmax compute in float32 (float16 / bfloat16 operands are widened,
as the NPU's accumulators are); each step's result is rounded to the query's type, the
type ONNX's function body computes every step in (``sqrt(scale)`` applied to Q and to K,
the scores, the soft cap, the biased scores, the probabilities). Grouped-query
heads are not copied: the query is viewed as ``[B, Hkv, G, S, D]`` so that each group of
``G`` query heads reads its one key/value head. The bias (mask, causal / window
frontier, valid lengths) is built once as ``[B or 1, Hq or 1, S, T]`` and added; a row
whose bias is -inf everywhere attends nothing and gets probabilities 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
from jax import lax

from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    op_check,
    takes_booleans,
)
from synapc.backends.jax.ops.common import any_quantized, widen
from synapc.dialects.synap.attention import AttentionOp
from synapc.dialects.synap.base import shape_of

takes_booleans(AttentionOp)  # a boolean mask

_HIGHEST = lax.Precision.HIGHEST


@op_check(AttentionOp)
def _check_attention(op: AttentionOp) -> list[tuple[str, tuple[int, ...]]]:
    """Quantized attention is refused (the kernel runs float layers); the scores and the
    probabilities are intermediates of the scores' size."""
    if any_quantized(op):
        raise UnsupportedOpError(
            f"quantized {op.name} is not supported: attention runs in float only"
        )
    scores = tuple(shape_of(op.scores))
    return [("its scores", scores), ("its probabilities", scores)]


def _optional(op: AttentionOp, args: Sequence[jax.Array]) -> dict[str, jax.Array | None]:
    """The optional operands by name (None when absent), in definition order."""
    rest = iter(args[3:])
    names = ("mask", "past_key", "past_value", "kv_lengths")
    return {n: next(rest) if getattr(op, n) is not None else None for n in names}


def _mask_bias(mask: jax.Array, total: int) -> jax.Array:
    """The additive float32 bias of a boolean or float mask, its last axis padded to
    `total` keys with masked-out entries."""
    if mask.dtype == jnp.bool_:
        bias = jnp.where(mask, jnp.float32(0), jnp.float32(-jnp.inf))
    else:
        bias = mask.astype(jnp.float32)
    missing = total - bias.shape[-1]
    if missing:
        pad = [(0, 0)] * (bias.ndim - 1) + [(0, missing)]
        bias = jnp.pad(bias, pad, constant_values=-jnp.inf)
    return bias


def _allowed(
    op: AttentionOp, length: int, total: int, past: int, lengths: jax.Array | None
) -> jax.Array | None:
    """Where the causal, window and valid-length rules let query ``i`` attend key
    ``j``, as booleans ``[B or 1, 1, S, T]`` (None when no rule applies)."""
    props = op.props()
    i = jnp.arange(length).reshape(1, 1, length, 1)
    j = jnp.arange(total).reshape(1, 1, 1, total)
    if lengths is not None:
        valid = lengths.astype(jnp.int32).reshape(-1, 1, 1, 1)
        offset = valid - length
    else:
        valid, offset = None, jnp.int32(past)
    diff = i + offset - j  # how far key j lies before query i's position
    rules = []
    if props["is_causal"]:
        rules.append(diff >= 0)
    if props["left_window"] >= 0:
        rules.append(diff <= props["left_window"])
    if props["right_window"] >= 0:
        rules.append(-diff <= props["right_window"])
    if valid is not None:
        rules.append(j < valid)
    if not rules:
        return None
    allowed = rules[0]
    for rule in rules[1:]:
        allowed = allowed & rule
    return allowed


def _softmax(scores: jax.Array, bias: jax.Array | None) -> jax.Array:
    """Softmax along the keys; rows whose bias is -inf everywhere give 0 (no key)."""
    top = jnp.max(scores, axis=-1, keepdims=True)
    top = jnp.where(jnp.isneginf(top), jnp.float32(0), top)
    exp = jnp.exp(scores - top)
    total = jnp.sum(exp, axis=-1, keepdims=True)
    probs = exp / jnp.where(total == 0, jnp.float32(1), total)
    if bias is None:
        return probs
    empty = jnp.isneginf(jnp.max(bias, axis=-1, keepdims=True))
    return jnp.where(empty, jnp.float32(0), probs)


@kernel(AttentionOp)
def attention(
    op: AttentionOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """``softmax(scale * Q K^T + bias) V`` with the cache update and the scores view
    (see the module docstring of `dialects/synap/attention.py`)."""
    q, k, v = args[:3]
    extra = _optional(op, args)
    props = op.props()
    if extra["past_key"] is not None and extra["past_value"] is not None:
        k = jnp.concatenate([extra["past_key"].astype(k.dtype), k], axis=2)
        v = jnp.concatenate([extra["past_value"].astype(v.dtype), v], axis=2)
    present_key, present_value = k, v
    batch, heads, length, depth = q.shape
    kv_heads, total = k.shape[1], k.shape[2]
    group = heads // kv_heads
    dtype = q.dtype

    def rounded(x: jax.Array) -> jax.Array:
        """`x` rounded to the operands' type (kept in float32 for the next step)."""
        return x.astype(dtype).astype(jnp.float32)

    root = rounded(jnp.sqrt(jnp.float32(props["scale"])))
    grouped = rounded(widen(q) * root).reshape(batch, kv_heads, group, length, depth)
    keys = rounded(widen(k) * root)
    scores = jnp.einsum("bhgsd,bhtd->bhgst", grouped, keys, precision=_HIGHEST)
    scores = rounded(scores.reshape(batch, heads, length, total))
    raw = scores
    softcap = props["softcap"]
    if softcap > 0:
        cap = jnp.float32(softcap)
        scores = rounded(rounded(jnp.tanh(rounded(scores / cap))) * cap)
    bias = None
    if extra["mask"] is not None:
        bias = _mask_bias(extra["mask"], total)
    past = total - shape_of(op.key)[2]
    allowed = _allowed(op, length, total, past, extra["kv_lengths"])
    if allowed is not None:
        rule = jnp.where(allowed, jnp.float32(0), jnp.float32(-jnp.inf))
        bias = rule if bias is None else bias + rule
    if bias is not None:
        bias = rounded(bias)
    biased = scores if bias is None else rounded(scores + bias)
    probs = rounded(_softmax(biased, bias))
    weights = probs.reshape(batch, kv_heads, group, length, total)
    output = jnp.einsum("bhgst,bhtd->bhgsd", weights, widen(v), precision=_HIGHEST)
    output = output.reshape(batch, heads, length, v.shape[3])
    view = {0: raw, 1: scores, 2: biased, 3: probs}[props["scores_mode"]]
    return [
        output.astype(q.dtype),
        present_key,
        present_value,
        jnp.broadcast_to(view, (batch, heads, length, total)).astype(q.dtype),
    ]
