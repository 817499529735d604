"""Kernels of `dialects/synap/recurrent.py`: `synap.rnn`, `synap.gru`, `synap.lstm`
(float only; quantized layers are refused when compiling).

A layer is one `lax.scan` over time. The directions of a bidirectional layer share the
loop: they are stacked along the state's leading axis and the reverse direction scans
its input in reverse time order, so each step advances both. Only the recurrence runs in
the loop: the input projections of all steps (``X W^T`` plus the biases that do not
depend on the state) are one matrix product before it. W and R arrive transposed to
``[num_directions, in, gates * hidden]`` (`operand_layout`: constant weights once on the
host at lowering). Everything computes in float32 (the compute dtype may be float16)
and is cast to the result type.

With `sequence_lens`, step ``t`` of sequence ``b`` runs only while ``t < L_b``: beyond,
the states keep their value and the per-step result is zero. A reverse direction reads
input step ``L_b - 1 - t`` at step ``t`` (a static gather whose index table is its own
inverse, so the same gather puts its results back in input order); the last states of
an empty sequence (``L_b = 0``) are zero, as ONNX Runtime computes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from synapc.backends.jax.lowering import (
    LoweringContext,
    Transform,
    UnsupportedOpError,
    kernel,
    op_check,
    operand_layout,
    real_valued,
)
from synapc.backends.jax.ops.common import any_quantized, widen
from synapc.dialects.synap.base import shape_of
from synapc.dialects.synap.recurrent import (
    GateActivation,
    GateFunction,
    GRUOp,
    LSTMOp,
    RNNOp,
    _Recurrent,
)

_Gate = Callable[[jax.Array, float, float], jax.Array]
_States = tuple[jax.Array, ...]
#: One step: (states, the step's projections) -> (new states, the step's hidden state).
_Cell = Callable[[_States, jax.Array], tuple[_States, jax.Array]]

#: Each gate function of x, alpha and beta (see `GateActivation`).
_GATES: dict[GateActivation, _Gate] = {
    GateActivation.SIGMOID: lambda x, a, b: jax.nn.sigmoid(x),
    GateActivation.TANH: lambda x, a, b: jnp.tanh(x),
    GateActivation.RELU: lambda x, a, b: jnp.maximum(x, 0),
    GateActivation.AFFINE: lambda x, a, b: a * x + b,
    GateActivation.LEAKY_RELU: lambda x, a, b: jnp.where(x >= 0, x, a * x),
    GateActivation.THRESHOLDED_RELU: lambda x, a, b: jnp.where(x > a, x, 0),
    GateActivation.SCALED_TANH: lambda x, a, b: a * jnp.tanh(b * x),
    GateActivation.HARD_SIGMOID: lambda x, a, b: jnp.clip(a * x + b, 0, 1),
    GateActivation.ELU: lambda x, a, b: jnp.where(x >= 0, x, a * jnp.expm1(x)),
    GateActivation.SOFTSIGN: lambda x, a, b: x / (1 + jnp.abs(x)),
    GateActivation.SOFTPLUS: lambda x, a, b: jax.nn.softplus(x),
}

_OPS = (RNNOp, GRUOp, LSTMOp)
real_valued(*_OPS)


def _transposed(w: Any) -> Any:
    """``[num_directions, rows, in]`` -> ``[num_directions, in, rows]`` (numpy or JAX)."""
    return w.transpose(0, 2, 1)


@operand_layout(*_OPS)
def _weights_layout(op: _Recurrent) -> dict[int, Transform]:
    """W (operand 1) and R (operand 2) transposed for ``x @ W^T`` as ``x @ W_t``."""
    return {1: _transposed, 2: _transposed}


@op_check(*_OPS)
def _check_recurrent(op: _Recurrent) -> list[tuple[str, tuple[int, ...]]]:
    """Quantized layers are refused (the kernel runs float layers); the input
    projections and the per-step states of all steps are intermediates."""
    if any_quantized(op):
        raise UnsupportedOpError(
            f"quantized {op.name} is not supported: recurrent layers run in float only"
        )
    seq_length, batch, _ = shape_of(op.input)
    directions, rows, _ = shape_of(op.weights)
    hidden = shape_of(op.recurrence)[2]
    return [
        ("its input projections", (seq_length, directions, batch, rows)),
        ("its per-step states", (seq_length, directions, batch, hidden)),
    ]


# -- pieces shared by the three cells ---------------------------------------------------
def _operands(op: _Recurrent, args: Sequence[jax.Array]) -> dict[str, jax.Array | None]:
    """The kernel's arguments by operand name (None for an absent optional operand),
    floats widened to float32."""
    names = ["input", "weights", "recurrence", "bias", "initial_h"]
    if isinstance(op, LSTMOp):
        names += ["initial_c", "peepholes"]
    present = iter(args)
    return {
        name: widen(next(present)) if getattr(op, name) is not None else None
        for name in names
    }


def _apply(
    functions: Sequence[GateFunction], x: jax.Array, clip: float | None
) -> jax.Array:
    """Gate function ``functions[d]`` of each direction ``d`` on ``x[d]`` (its input
    clipped to ``[-clip, clip]`` first when `clip` is set)."""
    if clip is not None:
        x = jnp.clip(x, -clip, clip)
    if len(set(functions)) == 1:
        function, alpha, beta = functions[0]
        return _GATES[function](x, alpha, beta)
    return jnp.stack(
        [_GATES[f](x[d], alpha, beta) for d, (f, alpha, beta) in enumerate(functions)]
    )


def _recur(h: jax.Array, r_t: jax.Array) -> jax.Array:
    """``h R^T`` per direction: ``[D, B, H] x [D, H, rows] -> [D, B, rows]``."""
    return jnp.einsum(
        "dbh,dhg->dbg",
        h,
        r_t,
        precision=lax.Precision.HIGHEST,
        preferred_element_type=jnp.float32,
    )


def _projections(x: jax.Array, w_t: jax.Array, bias: jax.Array | None) -> jax.Array:
    """``X W^T + bias`` for every step: ``[S, B, I] x [D, I, rows] -> [S, D, B, rows]``."""
    projected = jnp.einsum(
        "sbi,dig->sdbg",
        x,
        w_t,
        precision=lax.Precision.HIGHEST,
        preferred_element_type=jnp.float32,
    )
    return projected if bias is None else projected + bias[None, :, None, :]


class _Timing:
    """How the steps of each direction map to input steps, and which steps run.

    `order[t, b]` is the input step a reverse direction reads at step `t` (None without
    `sequence_lens`: plain time reversal); `valid[t, b]` says whether step `t` of
    sequence `b` runs (None when all run); `empty[b]` marks sequences of length 0."""

    def __init__(self, op: _Recurrent):
        seq_length = shape_of(op.input)[0]
        self.reversed = op.props()["direction"].reversed_directions()
        lengths = np.asarray(op.props()["sequence_lens"], np.int64)
        self.order: np.ndarray | None = None
        self.valid: np.ndarray | None = None
        self.empty: np.ndarray | None = None
        if lengths.size == 0 or bool(np.all(lengths == seq_length)):
            return
        steps = np.arange(seq_length)[:, None]
        self.valid = steps < lengths[None, :]
        self.order = np.where(self.valid, lengths[None, :] - 1 - steps, steps).astype(
            np.int32
        )
        self.empty = lengths == 0

    def _reverse(self, values: jax.Array) -> jax.Array:
        """`values` ``[S, B, ...]`` in reverse step order (within each sequence's
        length); applying it twice gives `values` back."""
        if self.order is None:
            return jnp.flip(values, 0)
        index = self.order.reshape(self.order.shape + (1,) * (values.ndim - 2))
        return jnp.take_along_axis(values, jnp.asarray(index), axis=0)

    def by_direction(self, values: jax.Array) -> jax.Array:
        """`values` ``[S, D, B, ...]`` with each reverse direction's steps reordered
        (input order <-> that direction's scan order)."""
        if not self.reversed:
            return values
        parts = [
            self._reverse(values[:, d]) if d in self.reversed else values[:, d]
            for d in range(values.shape[1])
        ]
        return jnp.stack(parts, axis=1)

    def scan(
        self,
        cell: _Cell,
        states: _States,
        projections: jax.Array,
    ) -> tuple[_States, jax.Array]:
        """Run `cell` over the steps of `projections` (``[S, D, B, rows]``, input
        order) from `states`; returns the last states and the per-step hidden states
        ``[S, D, B, H]`` in input order."""
        inputs = self.by_direction(projections)
        if self.valid is None:
            last, outputs = lax.scan(cell, states, inputs)
        else:

            def masked(
                carry: _States, step: tuple[jax.Array, jax.Array]
            ) -> tuple[_States, jax.Array]:
                projection, valid = step
                new, output = cell(carry, projection)
                keep = valid[None, :, None]
                new = tuple(jnp.where(keep, n, o) for n, o in zip(new, carry, strict=True))
                return new, jnp.where(keep, output, 0)

            last, outputs = lax.scan(masked, states, (inputs, jnp.asarray(self.valid)))
            if self.empty is not None and self.empty.any():
                gone = jnp.asarray(self.empty)[None, :, None]
                last = tuple(jnp.where(gone, 0, s) for s in last)
        return last, self.by_direction(outputs)


def _initial(value: jax.Array | None, op: _Recurrent) -> jax.Array:
    """An initial state, zeros when absent."""
    if value is not None:
        return value
    directions, batch = shape_of(op.weights)[0], shape_of(op.input)[1]
    return jnp.zeros((directions, batch, shape_of(op.recurrence)[2]), jnp.float32)


def _results(
    op: _Recurrent, ctx: LoweringContext, values: Sequence[jax.Array]
) -> list[jax.Array]:
    """`values` cast to the op's result dtypes."""
    return [v.astype(ctx.dtype_of(r)) for v, r in zip(values, op.results, strict=True)]


# -- the kernels ------------------------------------------------------------------------
@kernel(RNNOp)
def rnn(op: RNNOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """``H_t = f(X_t W^T + H_t-1 R^T + Wb + Rb)``."""
    v = _operands(op, args)
    f_fns = [functions[0] for functions in op.gate_functions()]
    clip = op.clip_value()
    r_t, bias = v["recurrence"], v["bias"]
    hidden = r_t.shape[1]
    joint = None if bias is None else bias[:, :hidden] + bias[:, hidden:]
    projections = _projections(v["input"], v["weights"], joint)

    def cell(carry: _States, x: jax.Array) -> tuple[_States, jax.Array]:
        (h,) = carry
        h = _apply(f_fns, x + _recur(h, r_t), clip)
        return (h,), h

    timing = _Timing(op)
    (h,), outputs = timing.scan(cell, (_initial(v["initial_h"], op),), projections)
    return _results(op, ctx, [outputs, h])


@kernel(GRUOp)
def gru(op: GRUOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Gates z, r, h (``linear_before_reset`` applies the reset gate after the
    recurrence product, its bias included); ``H_t = (1 - z) h + z H_t-1``."""
    v = _operands(op, args)
    per_direction = op.gate_functions()
    f_fns = [functions[0] for functions in per_direction]
    g_fns = [functions[1] for functions in per_direction]
    clip = op.clip_value()
    linear_before_reset = op.props()["linear_before_reset"]
    r_t, bias = v["recurrence"], v["bias"]
    hidden = r_t.shape[1]
    r_zr, r_h = r_t[..., : 2 * hidden], r_t[..., 2 * hidden :]
    joint, rb_h = None, None
    if bias is not None:
        wb, rb = bias[:, : 3 * hidden], bias[:, 3 * hidden :]
        rb_h = rb[:, None, 2 * hidden :]
        # every bias joins the projections except Rb_h under linear_before_reset
        state_free = rb.at[:, 2 * hidden :].set(0) if linear_before_reset else rb
        joint = wb + state_free
    projections = _projections(v["input"], v["weights"], joint)

    def cell(carry: _States, x: jax.Array) -> tuple[_States, jax.Array]:
        (h,) = carry
        zr = x[..., : 2 * hidden] + _recur(h, r_zr)
        z = _apply(f_fns, zr[..., :hidden], clip)
        r = _apply(f_fns, zr[..., hidden:], clip)
        if linear_before_reset:
            recurrent = _recur(h, r_h)
            if rb_h is not None:
                recurrent = recurrent + rb_h
            candidate = x[..., 2 * hidden :] + r * recurrent
        else:
            candidate = x[..., 2 * hidden :] + _recur(r * h, r_h)
        h = (1 - z) * _apply(g_fns, candidate, clip) + z * h
        return (h,), h

    timing = _Timing(op)
    (h,), outputs = timing.scan(cell, (_initial(v["initial_h"], op),), projections)
    return _results(op, ctx, [outputs, h])


@kernel(LSTMOp)
def lstm(op: LSTMOp, args: list[jax.Array], ctx: LoweringContext) -> list[jax.Array]:
    """Gates i, o, f, c with optional peepholes (``input_forget``: ``f = 1 - i``);
    ``C_t = f C_t-1 + i c``, ``H_t = o h(C_t)``."""
    v = _operands(op, args)
    per_direction = op.gate_functions()
    f_fns, g_fns, h_fns = ([fs[k] for fs in per_direction] for k in range(3))
    clip = op.clip_value()
    input_forget = op.props()["input_forget"]
    r_t, bias, peepholes = v["recurrence"], v["bias"], v["peepholes"]
    hidden = r_t.shape[1]
    joint = None if bias is None else bias[:, : 4 * hidden] + bias[:, 4 * hidden :]
    projections = _projections(v["input"], v["weights"], joint)
    # P = [P_i, P_o, P_f] per direction, each [D, 1, H] against the [D, B, H] state
    p_i, p_o, p_f = (
        (None, None, None)
        if peepholes is None
        else (peepholes[:, None, k * hidden : (k + 1) * hidden] for k in range(3))
    )

    def cell(carry: _States, x: jax.Array) -> tuple[_States, jax.Array]:
        h, c = carry
        pre = x + _recur(h, r_t)
        i, o, forget, candidate = (
            pre[..., k * hidden : (k + 1) * hidden] for k in range(4)
        )
        if p_i is not None and p_f is not None:
            i, forget = i + p_i * c, forget + p_f * c
        i = _apply(f_fns, i, clip)
        forget = 1 - i if input_forget else _apply(f_fns, forget, clip)
        c = forget * c + i * _apply(g_fns, candidate, clip)
        if p_o is not None:
            o = o + p_o * c
        h = _apply(f_fns, o, clip) * _apply(h_fns, c, None)
        return (h, c), h

    timing = _Timing(op)
    states = (_initial(v["initial_h"], op), _initial(v["initial_c"], op))
    (h, c), outputs = timing.scan(cell, states, projections)
    return _results(op, ctx, [outputs, h, c])
