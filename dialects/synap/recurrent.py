"""Recurrent layers: one-layer RNN, GRU and LSTM over a whole sequence.

The NPU runs each as a single layer (its LSTM and GRU kernels), so each is one op with
static shapes: the time loop lives inside the op. Layout is time-major, as in ONNX with
``layout = 0``: the input is ``[seq_length, batch, input_size]``, the weights
``W [num_directions, gates * hidden, input_size]`` and ``R [num_directions, gates *
hidden, hidden]`` hold the gates stacked along axis 1, the optional bias is ``[Wb, Rb]``
per direction (``[num_directions, 2 * gates * hidden]``) and the optional initial states
are ``[num_directions, batch, hidden]`` (absent: zeros). Results: the hidden state of
every step ``[seq_length, num_directions, batch, hidden]`` and the last hidden state
(and cell state for the LSTM) ``[num_directions, batch, hidden]``.

Gate order and equations follow ONNX (``t`` is the step, ``(.)`` the elementwise
product, ``clip`` clamps to ``[-clip, clip]`` and applies to the input of every gate
activation when the `clip` property is present):

* `synap.rnn` (1 gate, functions ``f``): ``H_t = f(X_t W^T + H_t-1 R^T + Wb + Rb)``.
* `synap.gru` (gates z, r, h; functions ``f, g``): ``z = f(X W_z^T + H R_z^T + Wb_z +
  Rb_z)``, ``r`` likewise, ``h = g(X W_h^T + (r (.) H) R_h^T + Rb_h + Wb_h)`` or, with
  `linear_before_reset`, ``h = g(X W_h^T + r (.) (H R_h^T + Rb_h) + Wb_h)``; then
  ``H_t = (1 - z) (.) h + z (.) H_t-1``.
* `synap.lstm` (gates i, o, f, c; functions ``f, g, h``; peepholes ``P = [P_i, P_o,
  P_f]``): ``i = f(X W_i^T + H R_i^T + P_i (.) C_t-1 + b_i)``, ``f`` likewise with
  ``P_f`` (or ``1 - i`` with `input_forget`), ``c = g(X W_c^T + H R_c^T + b_c)``,
  ``C_t = f (.) C_t-1 + i (.) c``, ``o = f(X W_o^T + H R_o^T + P_o (.) C_t + b_o)``,
  ``H_t = o (.) h(C_t)``.

`direction` runs the sequence forward, reverse (from the last step to the first; the
results stay in input order) or both (direction 0 forward, direction 1 reverse).

`sequence_lens` (one length per batch entry, each in ``[0, seq_length]``; empty: every
sequence has the full length) stops sequence ``b`` after its first ``L_b`` steps: a
reverse direction starts at step ``L_b - 1``, the steps from ``L_b`` on are zero in the
per-step result and the last states are those after step ``L_b - 1`` (zero when
``L_b = 0``, as ONNX Runtime computes).

`activations` lists the functions of each direction in turn (``f`` for the RNN, ``f, g``
for the GRU, ``f, g, h`` for the LSTM); empty means the standard ones (tanh; sigmoid,
tanh; sigmoid, tanh, tanh). `activation_alpha` and `activation_beta` hold one value per
listed function (those that take no parameter ignore theirs); empty when no listed
function takes that parameter.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, TensorType, f32
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.str_enum import StrEnum

from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    enum_prop,
    int_array_prop,
    shape_of,
)
from synapc.dialects.synap.shapes import ShapeError


class RecurrentDirection(StrEnum):
    """Which way a recurrent layer runs through the sequence."""

    FORWARD = "forward"
    REVERSE = "reverse"
    BIDIRECTIONAL = "bidirectional"

    @property
    def num_directions(self) -> int:
        """How many directions the layer computes (the weights' leading dimension)."""
        return 2 if self is RecurrentDirection.BIDIRECTIONAL else 1

    def reversed_directions(self) -> tuple[int, ...]:
        """The direction indices that run from the last step to the first."""
        return {
            RecurrentDirection.FORWARD: (),
            RecurrentDirection.REVERSE: (0,),
            RecurrentDirection.BIDIRECTIONAL: (1,),
        }[self]


@irdl_attr_definition
class RecurrentDirectionAttr(
    EnumAttribute[RecurrentDirection], SpacedOpaqueSyntaxAttribute
):
    """The direction of `synap.rnn`, `synap.gru` and `synap.lstm`."""

    name = "synap.recurrent_direction"


class GateActivation(StrEnum):
    """A gate function of a recurrent layer (ONNX's list), of ``x`` and the parameters
    ``alpha`` and ``beta``: sigmoid ``1 / (1 + e^-x)``, tanh, relu ``max(0, x)``,
    affine ``alpha * x + beta``, leaky_relu ``x if x >= 0 else alpha * x``,
    thresholded_relu ``x if x > alpha else 0``, scaled_tanh ``alpha * tanh(beta * x)``,
    hard_sigmoid ``min(max(alpha * x + beta, 0), 1)``, elu ``x if x >= 0 else
    alpha * (e^x - 1)``, softsign ``x / (1 + |x|)``, softplus ``log(1 + e^x)``."""

    SIGMOID = "sigmoid"
    TANH = "tanh"
    RELU = "relu"
    AFFINE = "affine"
    LEAKY_RELU = "leaky_relu"
    THRESHOLDED_RELU = "thresholded_relu"
    SCALED_TANH = "scaled_tanh"
    HARD_SIGMOID = "hard_sigmoid"
    ELU = "elu"
    SOFTSIGN = "softsign"
    SOFTPLUS = "softplus"

    @property
    def parameters(self) -> tuple[str, ...]:
        """The parameters the function reads: some of ``("alpha", "beta")``."""
        return _PARAMETERS.get(self, ())


_PARAMETERS: dict[GateActivation, tuple[str, ...]] = {
    GateActivation.AFFINE: ("alpha", "beta"),
    GateActivation.LEAKY_RELU: ("alpha",),
    GateActivation.THRESHOLDED_RELU: ("alpha",),
    GateActivation.SCALED_TANH: ("alpha", "beta"),
    GateActivation.HARD_SIGMOID: ("alpha", "beta"),
    GateActivation.ELU: ("alpha",),
}


@irdl_attr_definition
class GateActivationAttr(EnumAttribute[GateActivation], SpacedOpaqueSyntaxAttribute):
    """One gate function of a recurrent layer."""

    name = "synap.gate_activation"


#: A gate function with its parameters: (function, alpha, beta).
GateFunction = tuple[GateActivation, float, float]


def gate_activations(functions: list[GateActivation]) -> ArrayAttr[GateActivationAttr]:
    """The `activations` property value listing `functions`."""
    return ArrayAttr([GateActivationAttr(f) for f in functions])


def f32_list(values: list[float]) -> ArrayAttr[FloatAttr]:
    """An `activation_alpha` / `activation_beta` property value."""
    return ArrayAttr([FloatAttr(float(v), f32) for v in values])


class _Recurrent(SynapOp):
    """What the three recurrent ops share: direction, gate functions, clip, sequence
    lengths, and the shape rules of the input, weights and states."""

    direction = enum_prop(RecurrentDirectionAttr, RecurrentDirection.FORWARD)
    activations = prop_def(
        ArrayAttr.constr(GateActivationAttr), default_value=ArrayAttr([])
    )
    activation_alpha = prop_def(
        ArrayAttr.constr(FloatAttr.constr(f32)), default_value=ArrayAttr([])
    )
    activation_beta = prop_def(
        ArrayAttr.constr(FloatAttr.constr(f32)), default_value=ArrayAttr([])
    )
    clip = opt_prop_def(FloatAttr.constr(f32))
    sequence_lens = int_array_prop(())

    irdl_options = (AttrSizedOperandSegments(), ParsePropInAttrDict())

    SAME_KIND_OPERANDS: ClassVar[bool] = True
    #: Weight blocks (gates) stacked along axis 1 of W and R.
    GATES: ClassVar[int]
    #: The standard gate functions of one direction.
    FUNCTIONS: ClassVar[tuple[GateActivation, ...]]
    #: Names of the results: the per-step hidden states, then the last states.
    RESULTS: ClassVar[tuple[str, ...]] = ("output", "hidden")

    # -- shape rules -------------------------------------------------------------------
    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        if len(operand_shapes) < 3:
            raise ShapeError("needs the input, the weights and the recurrence weights")
        x, w, r = operand_shapes[:3]
        for what, shape in (("input", x), ("weights", w), ("recurrence", r)):
            if len(shape) != 3:
                raise ShapeError(f"{what} must have rank 3, got shape {list(shape)}")
        seq_length, batch, _ = x
        directions, hidden = w[0], r[2]
        state = (directions, batch, hidden)
        return [(seq_length, directions, batch, hidden)] + [state] * (len(cls.RESULTS) - 1)

    def _optional(self) -> dict[str, tuple[SSAValue | None, Shape]]:
        """The optional operands with the shape each must have."""
        x, w, r = (shape_of(v) for v in (self.input, self.weights, self.recurrence))
        directions, batch, hidden = w[0], x[1], r[2]
        state = (directions, batch, hidden)
        return {
            "bias": (self.bias, (directions, 2 * self.GATES * hidden)),
            "initial_h": (self.initial_h, state),
        }

    def verify_semantics(self) -> None:
        x, w, r = (shape_of(v) for v in (self.input, self.weights, self.recurrence))
        direction = self.props()["direction"]
        directions, hidden = direction.num_directions, r[2]
        rows = self.GATES * hidden
        if w != (directions, rows, x[2]):
            self.fail(
                f"weights of shape {list(w)} should be {[directions, rows, x[2]]} "
                f"(direction {direction}, gates x hidden size = {self.GATES} x {hidden}, "
                f"input size {x[2]})"
            )
        if r != (directions, rows, hidden):
            self.fail(
                f"recurrence of shape {list(r)} should be {[directions, rows, hidden]}"
            )
        for what, (value, want) in self._optional().items():
            if value is not None and shape_of(value) != want:
                self.fail(f"{what} of shape {list(shape_of(value))} should be {list(want)}")
        self._verify_functions(directions)
        clip = self.clip
        if clip is not None and not (0 < clip.value.data < math.inf):
            self.fail(f"clip must be a positive finite number, got {clip.value.data:g}")
        lengths = self.props()["sequence_lens"]
        if lengths and len(lengths) != x[1]:
            self.fail(f"sequence_lens has {len(lengths)} values for a batch of {x[1]}")
        if any(not 0 <= n <= x[0] for n in lengths):
            self.fail(f"sequence_lens {list(lengths)} must be within [0, {x[0]}]")

    def _verify_functions(self, directions: int) -> None:
        """`activations` lists the functions of every direction, and the parameters
        they need are given, one per function."""
        names = [a.data for a in self.activations.data]
        count = len(self.FUNCTIONS) * directions
        if names and len(names) != count:
            self.fail(
                f"activations lists {len(names)} functions; {count} needed "
                f"({len(self.FUNCTIONS)} per direction)"
            )
        for key in ("activation_alpha", "activation_beta"):
            values = self.properties[key].data  # type: ignore[attr-defined]
            if values and len(values) != len(names):
                self.fail(f"{key} has {len(values)} values for {len(names)} functions")
            if any(not math.isfinite(v.value.data) for v in values):
                self.fail(f"{key} holds a value that is not finite")
            parameter = key.removeprefix("activation_")
            needing = [n for n in names if parameter in n.parameters]
            if needing and not values:
                self.fail(f"{needing[0]} needs its {parameter} in {key}")

    # -- queries -------------------------------------------------------------------------
    def gate_functions(self) -> list[list[GateFunction]]:
        """The gate functions of each direction, with their alpha and beta."""
        directions = self.props()["direction"].num_directions
        names = [a.data for a in self.activations.data] or list(self.FUNCTIONS * directions)
        alphas = [v.value.data for v in self.activation_alpha.data] or [0.0] * len(names)
        betas = [v.value.data for v in self.activation_beta.data] or [0.0] * len(names)
        functions = list(zip(names, alphas, betas, strict=True))
        per = len(self.FUNCTIONS)
        return [functions[d * per : (d + 1) * per] for d in range(directions)]

    def clip_value(self) -> float | None:
        """The clip threshold, None when gate inputs are not clipped."""
        return None if self.clip is None else self.clip.value.data


_HEAD = "$input `,` $weights `,` $recurrence (`bias` $bias^ `:` type($bias))? "
_INITIAL_H = "(`initial_h` $initial_h^ `:` type($initial_h))? "
_TYPES = "attr-dict `:` type($input) `,` type($weights) `,` type($recurrence) `->` "


@irdl_op_definition
class RNNOp(_Recurrent):
    """A one-layer simple RNN over the whole sequence (see the module docstring).

    Syntax: ``synap.rnn %x, %w, %r bias %b : type initial_h %h : type {...} :
    type(x), type(w), type(r) -> type(y), type(y_h)``, each keyword group optional."""

    name = "synap.rnn"

    input = operand_def(TensorType)
    weights = operand_def(TensorType)
    recurrence = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    output = result_def(TensorType)
    hidden = result_def(TensorType)

    assembly_format = _HEAD + _INITIAL_H + _TYPES + "type($output) `,` type($hidden)"

    GATES: ClassVar[int] = 1
    FUNCTIONS: ClassVar[tuple[GateActivation, ...]] = (GateActivation.TANH,)


@irdl_op_definition
class GRUOp(_Recurrent):
    """A one-layer GRU over the whole sequence (gates z, r, h; see the module
    docstring). Syntax as `synap.rnn`."""

    name = "synap.gru"

    input = operand_def(TensorType)
    weights = operand_def(TensorType)
    recurrence = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    output = result_def(TensorType)
    hidden = result_def(TensorType)

    linear_before_reset = bool_prop(False)

    assembly_format = _HEAD + _INITIAL_H + _TYPES + "type($output) `,` type($hidden)"

    GATES: ClassVar[int] = 3
    FUNCTIONS: ClassVar[tuple[GateActivation, ...]] = (
        GateActivation.SIGMOID,
        GateActivation.TANH,
    )


@irdl_op_definition
class LSTMOp(_Recurrent):
    """A one-layer LSTM over the whole sequence (gates i, o, f, c; see the module
    docstring), with optional initial cell state and peepholes
    ``[num_directions, 3 * hidden]`` (``P_i, P_o, P_f``; absent: zeros).

    Syntax: ``synap.lstm %x, %w, %r bias %b : type initial_h %h : type initial_c %c :
    type peepholes %p : type {...} : type(x), type(w), type(r) -> type(y), type(y_h),
    type(y_c)``, each keyword group optional."""

    name = "synap.lstm"

    input = operand_def(TensorType)
    weights = operand_def(TensorType)
    recurrence = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    initial_c = opt_operand_def(TensorType)
    peepholes = opt_operand_def(TensorType)
    output = result_def(TensorType)
    hidden = result_def(TensorType)
    cell = result_def(TensorType)

    input_forget = bool_prop(False)

    assembly_format = (
        _HEAD
        + _INITIAL_H
        + "(`initial_c` $initial_c^ `:` type($initial_c))? "
        + "(`peepholes` $peepholes^ `:` type($peepholes))? "
        + _TYPES
        + "type($output) `,` type($hidden) `,` type($cell)"
    )

    GATES: ClassVar[int] = 4
    FUNCTIONS: ClassVar[tuple[GateActivation, ...]] = (
        GateActivation.SIGMOID,
        GateActivation.TANH,
        GateActivation.TANH,
    )
    RESULTS: ClassVar[tuple[str, ...]] = ("output", "hidden", "cell")

    def _optional(self) -> dict[str, tuple[SSAValue | None, Shape]]:
        optional = super()._optional()
        directions, hidden = shape_of(self.weights)[0], shape_of(self.recurrence)[2]
        optional["initial_c"] = (self.initial_c, optional["initial_h"][1])
        optional["peepholes"] = (self.peepholes, (directions, 3 * hidden))
        return optional


OPS = [RNNOp, GRUOp, LSTMOp]
ATTRIBUTES = [RecurrentDirectionAttr, GateActivationAttr]
