"""Kernels of `dialects/synap/reduce.py`.

Quantized reductions follow LiteRT's reference kernels (``tflite/kernels/reduce.cc``):

* MEAN and SUM (int8, uint8, int16) are ``reference_ops::QuantizedMeanOrSum`` on every
  axes set, with or without keep_dims (the 4-D spatial-mean special cases are only in the
  optimized kernels): the int32 sum of ``q - zero_point`` is rescaled by
  ``MultiplyByQuantizedMultiplier`` with ``QuantizeMultiplier(s_in / s_out)``; for MEAN
  the multiplier first absorbs ``1 / num_elements``:
  ``shift = min(floor(log2(n)), 32, 31 + exponent)``,
  ``multiplier = (int64(multiplier) << shift) / n``, ``exponent -= shift``.
  (The reference SUM of the ai-edge-litert 2.3 wheel reads and writes int8 / int16 tensors
  as uint8 -- a bug of its ``QuantizedMeanOrSum`` wrapper, fixed in later LiteRT; the
  kernel here is the intended one, which that wheel runs for uint8 SUM and every MEAN.)
* REDUCE_MAX and REDUCE_MIN compare the stored integers; TFLite requires equal input and
  output quantization.
* ARG_MAX and ARG_MIN compare the stored integers (the first extreme index wins).

`synap.reduce_prod`, `synap.cumsum` and `synap.cumprod` run on float and integer values
(integers wrap around, as ONNX's and TFLite's do); they have no quantized kernel here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from synapc.backends.jax import fixed_point as fp
from synapc.backends.jax.lowering import (
    LoweringContext,
    UnsupportedOpError,
    kernel,
    op_check,
    takes_booleans,
)
from synapc.backends.jax.ops.common import any_quantized, float_only, widen
from synapc.backends.jax.ops.quantized import qtype, saturate, scale_f64
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap import reduce
from synapc.dialects.synap.base import shape_of

_FLOAT = {
    reduce.ReduceMeanOp: jnp.mean,
    reduce.ReduceSumOp: jnp.sum,
    reduce.ReduceMaxOp: jnp.max,
    reduce.ReduceMinOp: jnp.min,
}


def mean_or_sum_multiplier(
    in_q: UniformQuantizedType, out_q: UniformQuantizedType, count: int, mean: bool
) -> tuple[int, int]:
    """TFLite's ``(multiplier, shift)`` of QuantizedMeanOrSum: ``QuantizeMultiplier`` of
    ``s_in / s_out`` in double; for a mean over `count` elements, ``1 / count`` folded in
    with the integer division TFLite uses."""
    multiplier, shift = (
        int(v) for v in fp.quantize_multiplier(scale_f64(in_q) / scale_f64(out_q))
    )
    if mean and count > 0:
        extra = min(count.bit_length() - 1, 32, 31 + shift)
        multiplier = (multiplier << extra) // count
        shift -= extra
    return multiplier, shift


def _per_tensor(op: reduce._Reduce) -> tuple[UniformQuantizedType, UniformQuantizedType]:
    in_q, out_q = qtype(op.input), qtype(op.output)
    if in_q.is_per_axis or out_q.is_per_axis:
        raise UnsupportedOpError(f"per-axis quantized {op.name} is not supported")
    if in_q.storage_dtype != out_q.storage_dtype:
        raise UnsupportedOpError(f"{op.name} from {in_q} to {out_q} is not supported")
    return in_q, out_q


def _quantized_reduction(op: reduce._Reduce, x: jax.Array, p: dict) -> jax.Array:
    """The integer reduction of stored integers `x` (see the module docstring)."""
    in_q, out_q = _per_tensor(op)
    axes, keep = tuple(p["axes"]), p["keep_dims"]
    if isinstance(op, reduce.ReduceMaxOp | reduce.ReduceMinOp):
        if (np.float32(in_q.scale), in_q.zero_point) != (
            np.float32(out_q.scale),
            out_q.zero_point,
        ):
            raise UnsupportedOpError(
                f"{op.name} needs equal input and output quantization (as TFLite)"
            )
        find = jnp.max if isinstance(op, reduce.ReduceMaxOp) else jnp.min
        return find(x, axis=axes, keepdims=keep)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    mean = isinstance(op, reduce.ReduceMeanOp)
    multiplier, shift = mean_or_sum_multiplier(in_q, out_q, count, mean)
    centered = x.astype(jnp.int32) - jnp.int32(in_q.zero_point)
    total = jnp.sum(centered, axis=axes, keepdims=keep, dtype=jnp.int32)
    y = fp.multiply_by_quantized_multiplier(total, multiplier, shift) + out_q.zero_point
    return saturate(y, out_q, out_q.storage_min, out_q.storage_max)


@op_check(reduce.ReduceMaxOp, reduce.ReduceMinOp, reduce.ArgMaxOp, reduce.ArgMinOp)
def _check_extremes(op: reduce.SynapOp) -> list[tuple[str, tuple[int, ...]]]:
    """A maximum, minimum or its index over an empty axis has no value (unless the
    result is empty too)."""
    shape = shape_of(op.input)
    p = op.props()
    axes = p["axes"] if "axes" in p else (p["axis"],)
    empty = [a % len(shape) for a in axes if shape and shape[a % len(shape)] == 0]
    if empty and 0 not in shape_of(op.output):
        raise UnsupportedOpError(
            f"axis {empty[0]} of its input {list(shape)} is empty: there is no extreme "
            "value to find"
        )
    return []


takes_booleans(reduce.ReduceMaxOp, reduce.ReduceMinOp, reduce.ArgMaxOp, reduce.ArgMinOp)


@kernel(*_FLOAT)
def reduction(
    op: reduce._Reduce, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Reduction over axes: float, or TFLite's integer kernels on quantized values."""
    p = op.props()
    if any_quantized(op):
        return [_quantized_reduction(op, args[0], p)]
    result = _FLOAT[type(op)](widen(args[0]), axis=p["axes"], keepdims=p["keep_dims"])
    return [result.astype(args[0].dtype)]


@kernel(reduce.ArgMaxOp, reduce.ArgMinOp)
def arg_reduction(
    op: reduce._ArgReduce, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Index of the first extreme value along the axis (works on any element type;
    quantized values compare as their stored integers, as in TFLite)."""
    p = op.props()
    find = jnp.argmax if isinstance(op, reduce.ArgMaxOp) else jnp.argmin
    index = find(args[0], axis=p["axis"], keepdims=p["keep_dims"])
    return [index.astype(ctx.dtype_of(op.output))]


@kernel(reduce.ReduceProdOp)
def product(
    op: reduce.ReduceProdOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Product over the axes: narrower floats multiply in float32, integers wrap."""
    float_only(op)
    p = op.props()
    result = jnp.prod(widen(args[0]), axis=p["axes"], keepdims=p["keep_dims"])
    return [result.astype(args[0].dtype)]


@kernel(reduce.CumSumOp, reduce.CumProdOp)
def cumulative_sum(
    op: reduce.CumSumOp, args: list[jax.Array], ctx: LoweringContext
) -> list[jax.Array]:
    """Running sum (product for `synap.cumprod`) along the axis, from its end with
    `reverse`; `exclusive` combines the elements before each one (shifting the input by
    one along the axis, with a 0 (1) in front, so that no subtraction or division
    rounds). Narrower floats accumulate in float32."""
    product = isinstance(op, reduce.CumProdOp)
    float_only(op)
    p = op.props()
    x = args[0]
    axis = p["axis"] % x.ndim
    values = widen(x)
    if p["reverse"]:
        values = jnp.flip(values, axis)
    if p["exclusive"]:
        size = values.shape[axis]
        first = lax.slice_in_dim(values, 0, 1, axis=axis)
        head = jnp.ones_like(first) if product else jnp.zeros_like(first)
        values = jnp.concatenate(
            [head, lax.slice_in_dim(values, 0, size - 1, axis=axis)], axis=axis
        )
    running = jnp.cumprod if product else jnp.cumsum
    total = running(values, axis=axis, dtype=values.dtype)
    if p["reverse"]:
        total = jnp.flip(total, axis)
    return [total.astype(x.dtype)]
