"""ONNX recurrent layers: RNN, GRU and LSTM become `synap.rnn`, `synap.gru` and
`synap.lstm` (dialects/synap/recurrent.py), one op per layer as the NPU runs them.

The synap ops are time-major (ONNX's ``layout = 0``); a batch-major node (``layout =
1``) reads its input and initial states transposed and its results are bound stored
time-major (the layout tracking transposes them only if a consumer needs it). W, R, B,
P and the initial states may be constants or computed values (the initial states are
typically the streaming state of a model run step by step). Each named output is bound;
any of Y, Y_h, Y_c may be omitted.

`sequence_lens` must be a constant (it decides which steps run); lengths equal to the
sequence length are dropped, others become the op's `sequence_lens`.

ONNX's `activation_alpha` / `activation_beta` are consumed in the order of the listed
functions, each function taking a value only for a parameter it has (as ONNX Runtime
reads them); the op stores one alpha and one beta per function. A parameter with no
value left takes ONNX's default where the runtimes agree on it (LeakyRelu 0.01,
HardSigmoid 0.2 and 0.5, Elu 1.0) and is refused otherwise (Affine, ScaledTanh,
ThresholdedRelu: ONNX names the defaults of operators that ONNX Runtime does not use).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from synapc.dialects.synap.base import is_float
from synapc.dialects.synap.recurrent import (
    GateActivation,
    GRUOp,
    LSTMOp,
    RecurrentDirection,
    RecurrentDirectionAttr,
    RNNOp,
    _Recurrent,
    f32_list,
    gate_activations,
)
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.reader import Importer, Node, converts

_OPS: dict[str, type[_Recurrent]] = {"RNN": RNNOp, "GRU": GRUOp, "LSTM": LSTMOp}

#: ONNX's activation names, lower-cased (ONNX Runtime matches them in any case).
_FUNCTIONS: dict[str, GateActivation] = {
    "sigmoid": GateActivation.SIGMOID,
    "tanh": GateActivation.TANH,
    "relu": GateActivation.RELU,
    "affine": GateActivation.AFFINE,
    "leakyrelu": GateActivation.LEAKY_RELU,
    "thresholdedrelu": GateActivation.THRESHOLDED_RELU,
    "scaledtanh": GateActivation.SCALED_TANH,
    "hardsigmoid": GateActivation.HARD_SIGMOID,
    "elu": GateActivation.ELU,
    "softsign": GateActivation.SOFTSIGN,
    "softplus": GateActivation.SOFTPLUS,
}
#: The parameter defaults ONNX and ONNX Runtime agree on.
_DEFAULTS: dict[tuple[GateActivation, str], float] = {
    (GateActivation.LEAKY_RELU, "alpha"): 0.01,
    (GateActivation.HARD_SIGMOID, "alpha"): 0.2,
    (GateActivation.HARD_SIGMOID, "beta"): 0.5,
    (GateActivation.ELU, "alpha"): 1.0,
}
#: Input positions: X, W, R, B, sequence_lens, initial_h, initial_c (LSTM), P (LSTM).
_X, _W, _R, _B, _LENS, _H0, _C0, _P = range(8)
#: Where each result's logical axes are stored, for layout 1 (batch-major): the op
#: gives Y as [seq, dirs, batch, hidden] for ONNX's [batch, seq, dirs, hidden], and the
#: states as [dirs, batch, hidden] for [batch, dirs, hidden].
_BATCH_MAJOR_RESULTS = ((1, 2, 0, 3), (1, 0, 2), (1, 0, 2))
_BATCH_MAJOR_INPUT = (1, 0, 2)


#: ONNX's names of the inputs, by position.
_INPUT_NAMES = ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")


@dataclass(frozen=True)
class _Dimensions:
    """The sizes of a recurrent node (from X and R) and its layout."""

    seq_length: int
    batch: int
    input_size: int
    hidden: int
    batch_major: bool


@converts("RNN", "GRU", "LSTM", outputs_optional=True)
def recurrent(imp: Importer, node: Node) -> None:
    """One ONNX recurrent layer as one synap op; each named output is bound."""
    op_class = _OPS[node.op_type]
    direction = _direction(node)
    dims = _dimensions(imp, node)
    operands = _operands(imp, node, op_class, direction, dims)
    props: dict[str, Any] = {
        "direction": RecurrentDirectionAttr(direction),
        "sequence_lens": _sequence_lens(imp, node, dims),
        **_gate_functions(node, op_class, direction.num_directions),
    }
    clip = node.attr("clip")
    if clip is not None:
        if not isinstance(clip, float | int) or not 0 < clip < math.inf:
            raise node.fail(f"attribute 'clip' {clip} must be a positive number")
        props["clip"] = float(clip)
    if op_class is LSTMOp:
        props["input_forget"] = bool(node.int_attr("input_forget", 0))
    if op_class is GRUOp:
        props["linear_before_reset"] = bool(node.int_attr("linear_before_reset", 0))
    op = imp.emit(node, op_class, *operands, output=None, **props)
    for k, name in enumerate(node.outputs):
        if name:
            perm = _BATCH_MAJOR_RESULTS[k] if dims.batch_major else None
            imp.bind(name, op.results[k], perm)


def _dimensions(imp: Importer, node: Node) -> _Dimensions:
    """The node's layout and sizes; X, W and R must have rank 3, `hidden_size` (when
    given) must be R's, and the hidden size and sequence length at least 1."""
    layout = node.int_attr("layout", 0)
    if layout not in (0, 1):
        raise node.fail(f"attribute 'layout' {layout} must be 0 or 1")
    for k in (_X, _W, _R):
        if imp.rank(node.inputs[k]) != 3:
            shape = list(imp.shape(node.inputs[k]))
            raise node.fail(f"input {_INPUT_NAMES[k]} must have rank 3, got shape {shape}")
    x = imp.shape(node.inputs[_X])
    seq_length, batch = (x[0], x[1]) if layout == 0 else (x[1], x[0])
    hidden = imp.shape(node.inputs[_R])[2]
    if node.attrs.get("hidden_size") is not None:
        given = node.int_attr("hidden_size", hidden)
        if given != hidden:
            raise node.fail(
                f"attribute 'hidden_size' {given} does not match R's hidden size {hidden}"
            )
    if hidden < 1 or seq_length < 1:
        raise node.fail(
            f"needs a hidden size and a sequence length of at least 1, got {hidden} and "
            f"{seq_length}"
        )
    return _Dimensions(seq_length, batch, x[2], hidden, layout == 1)


def _operands(
    imp: Importer,
    node: Node,
    op_class: type[_Recurrent],
    direction: RecurrentDirection,
    dims: _Dimensions,
) -> list[SSAValue | None]:
    """The op's operands (None for an absent optional input): float inputs of the
    shapes ONNX gives them, X and the initial states time-major."""
    directions, hidden = direction.num_directions, dims.hidden
    rows = op_class.GATES * hidden
    state = (directions, dims.batch, hidden)
    if dims.batch_major:
        state = (dims.batch, directions, hidden)
    expected = {
        _W: (directions, rows, dims.input_size),
        _R: (directions, rows, hidden),
        _B: (directions, 2 * rows),
        _H0: state,
        _C0: state,
        _P: (directions, 3 * hidden),
    }
    operands: list[SSAValue | None] = []
    for k in (_X, _W, _R, _B, _H0, *((_C0, _P) if op_class is LSTMOp else ())):
        name = node.input(k)
        if name is None:
            operands.append(None)
            continue
        _check_float(imp, node, name, k)
        want = expected.get(k)
        if want is not None and imp.shape(name) != want:
            raise node.fail(
                f"input {_INPUT_NAMES[k]} has shape {list(imp.shape(name))}; "
                f"{list(want)} expected ({direction} direction, hidden size {hidden})"
            )
        perm = _BATCH_MAJOR_INPUT if dims.batch_major and k in (_X, _H0, _C0) else None
        operands.append(imp.get(name, perm))
    return operands


def _direction(node: Node) -> RecurrentDirection:
    """The node's `direction` attribute."""
    value = node.attr("direction", "forward")
    try:
        return RecurrentDirection(value)
    except ValueError:
        raise node.fail(
            f"attribute 'direction' '{shown(value)}' must be forward, reverse or "
            "bidirectional"
        ) from None


def _check_float(imp: Importer, node: Node, name: str, k: int) -> None:
    """Input `k` holds float values (a dequantized view counts: it is computed on
    dequantized values)."""
    element = imp.element_type(name)
    if not is_float(element):
        raise node.fail(
            f"input {_INPUT_NAMES[k]} has element type {element}; recurrent layers "
            "compute on float tensors"
        )


def _sequence_lens(imp: Importer, node: Node, dims: _Dimensions) -> list[int]:
    """The constant `sequence_lens` (empty when absent or all of full length)."""
    seq_length, batch = dims.seq_length, dims.batch
    name = node.input(_LENS)
    if name is None:
        return []
    values = imp.const(name)
    if values is None:
        raise node.fail(
            f"input sequence_lens '{shown(name)}' must be a constant: synapc compiles the "
            "time loop for fixed sequence lengths"
        )
    values = np.asarray(values)
    if values.dtype.kind not in "iu" or values.shape != (batch,):
        raise node.fail(
            f"input sequence_lens must hold {batch} integers (one per batch entry), got "
            f"{values.dtype} {list(values.shape)}"
        )
    lengths = [int(v) for v in values.tolist()]
    if any(not 0 <= n <= seq_length for n in lengths):
        raise node.fail(
            f"input sequence_lens {lengths} must be within [0, {seq_length}] (the "
            "sequence length)"
        )
    return [] if all(n == seq_length for n in lengths) else lengths


def _gate_functions(
    node: Node, op_class: type[_Recurrent], directions: int
) -> dict[str, Any]:
    """The `activations`, `activation_alpha` and `activation_beta` properties (absent
    when the node uses the standard functions)."""
    listed = node.attrs.get("activations")
    alphas = [float(v) for v in node.attrs.get("activation_alpha", [])]
    betas = [float(v) for v in node.attrs.get("activation_beta", [])]
    if listed is None:
        if alphas or betas:
            raise node.fail("activation_alpha / activation_beta given without activations")
        return {}
    names = [
        n.decode("utf-8", "replace") if isinstance(n, bytes) else str(n) for n in listed
    ]
    count = len(op_class.FUNCTIONS) * directions
    # ONNX's default for RNN is ["Tanh", "Tanh"] whatever the direction; one direction
    # reads the first (as ONNX Runtime does)
    spare = op_class is RNNOp and directions == 1 and len(names) == 2
    if len(names) != count and not spare:
        raise node.fail(
            f"attribute 'activations' lists {len(names)} functions; {count} expected "
            f"({len(op_class.FUNCTIONS)} per direction)"
        )
    functions = []
    for name in names:
        function = _FUNCTIONS.get(name.lower())
        if function is None:
            raise node.fail(
                f"activation '{shown(name)}' is not one of ONNX's recurrent activation "
                "functions"
            )
        functions.append(function)
    parameters = {"alpha": list(alphas), "beta": list(betas)}
    resolved: dict[str, list[float]] = {"alpha": [], "beta": []}
    for name, function in zip(names, functions, strict=True):
        for parameter, values in parameters.items():
            if parameter not in function.parameters:
                resolved[parameter].append(0.0)
            elif values:
                resolved[parameter].append(values.pop(0))
            elif (function, parameter) in _DEFAULTS:
                resolved[parameter].append(_DEFAULTS[(function, parameter)])
            else:
                raise node.fail(
                    f"activation '{shown(name)}' needs a value in "
                    f"activation_{parameter} (ONNX and ONNX Runtime disagree on its "
                    "default)"
                )
    for parameter, values in parameters.items():
        if values:
            raise node.fail(
                f"activation_{parameter} has {len(values)} more values than the "
                "activations take"
            )
    if not all(math.isfinite(v) for v in resolved["alpha"] + resolved["beta"]):
        raise node.fail("activation_alpha / activation_beta must be finite")
    functions = functions[:count]
    if functions == list(op_class.FUNCTIONS * directions):
        return {}  # the standard functions, which take no parameters
    props: dict[str, Any] = {"activations": gate_activations(functions)}
    for parameter, values in resolved.items():
        if any(parameter in f.parameters for f in functions):
            props[f"activation_{parameter}"] = f32_list(values[:count])
    return props
