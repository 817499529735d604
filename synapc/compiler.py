"""`synapc.compile`: optimize a model for a target and make it runnable.

The default pipeline runs on a copy of the module (the caller's model is left as it was);
the JAX backend lowers the result to one jitted function.

Everything is checked at compile time, never at the first `run`: the IR is verified, the
backend's checks (`synapc.backends.jax.lowering.check_function`: types and constants within
`synapc.limits`, attributes in range, a kernel for every op) run before any pass, and
lowering traces the program abstractly, so an op, attribute, type or shape the backend
cannot run is refused by `compile` (and `convert`) with a `SynapcError` naming the model
file and the layer. `Executable.run` checks the count, shapes and dtypes of its inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import DiagnosticException

from synapc.backends.targets import Target, get_target
from synapc.context import make_context
from synapc.dtypes import device_dtype, dtype_kind
from synapc.errors import SynapcError
from synapc.model import Model, TensorInfo

#: The default pipeline: the `optimize` pass (`synapc/passes/optimize.py`) runs the graph
#: optimization and fusion passes to a fixed point.
DEFAULT_PIPELINE = ("optimize",)


def _where(model: Model) -> str:
    """How messages name the model: its file, or "model"."""
    return model.source or "model"


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def check_model(model: Model) -> FuncOp:
    """The entry function of `model` once it is known to be runnable: the IR verifies,
    the model's inputs and outputs match `@main`'s signature, and the backend's checks
    pass (`check_function`). Refusals are `SynapcError`s naming the model file and the
    input, output or layer; nothing has been traced or allocated yet."""
    from synapc.backends.jax.lowering import UnsupportedOpError, check_function

    where = _where(model)
    try:
        func = model.main
    except LookupError as error:
        raise SynapcError(f"{where}: {error}") from None
    try:
        model.module.verify()
    except DiagnosticException as error:  # VerifyException: an op that does not verify
        raise SynapcError(f"{where}: {_one_line(error)}") from None
    signature = func.function_type
    for kind, infos, types in (
        ("inputs", model.inputs, signature.inputs.data),
        ("outputs", model.outputs, signature.outputs.data),
    ):
        if len(infos) != len(types):
            raise SynapcError(
                f"{where}: the model lists {len(infos)} {kind}, @main has {len(types)}"
            )
        for info, t in zip(infos, types, strict=True):
            shape = tuple(getattr(t, "get_shape", tuple)())
            if info.shape != shape or info.element_type != getattr(t, "element_type", t):
                raise SynapcError(
                    f"{where}: {kind[:-1]} '{info.name}' is {list(info.shape)} "
                    f"{info.element_type} in the model but {t} in @main"
                )
    _check_state(model)
    try:
        model.integer_semantics  # noqa: B018  (refuses an unknown value)
        check_function(func, model.weights)
    except UnsupportedOpError as error:
        raise UnsupportedOpError(f"{where}: {error}") from None
    except SynapcError as error:
        raise SynapcError(f"{where}: {error}") from None
    return func


def _check_state(model: Model) -> None:
    """Each state pairs a distinct model input with a distinct model output of the same
    shape and type, and its initial value fits them."""
    where = _where(model)
    seen_in: set[int] = set()
    seen_out: set[int] = set()
    for state in model.state:
        what = f"{where}: state '{state.name}'"
        if not (
            0 <= state.input < len(model.inputs) and 0 <= state.output < len(model.outputs)
        ):
            raise SynapcError(f"{what}: input {state.input} / output {state.output} "
                              "is not a model input / output")  # fmt: skip
        if state.input in seen_in or state.output in seen_out:
            raise SynapcError(f"{what}: its input or output belongs to another state")
        seen_in.add(state.input)
        seen_out.add(state.output)
        given, taken = model.inputs[state.input], model.outputs[state.output]
        if (given.shape, given.element_type) != (taken.shape, taken.element_type):
            raise SynapcError(f"{what}: input '{given.name}' and output '{taken.name}' "
                              "differ in shape or type")  # fmt: skip
        initial = np.asarray(state.initial)
        if initial.shape != given.shape or initial.dtype != given.dtype:
            raise SynapcError(
                f"{what}: initial value is {list(initial.shape)} {initial.dtype}, the "
                f"state is {list(given.shape)} {given.dtype}"
            )


def optimize(model: Model, pipeline: Sequence[str] = DEFAULT_PIPELINE) -> Model:
    """A copy of `model` with the passes of `pipeline` applied: by default the graph
    optimization and fusion passes, run to a fixed point, i.e. the IR `compile` lowers
    (for inspection and golden tests). Weights are shared; passes add new ones.

    The model is checked first (`check_model`): passes never see IR that does not
    verify or that the backend would refuse (constant folding runs kernels)."""
    from synapc.passes.registry import get_pass

    check_model(model)
    module: ModuleOp = model.module.clone()
    ctx = make_context(model.weights)
    for name in pipeline:
        get_pass(name)().apply(ctx, module)
    module.verify()
    return model.with_module(module)  # inputs / outputs as the passes left @main


class Executable:
    """A compiled model: `run(inputs)` takes and returns numpy arrays in model order.

    Lowering checks and traces the whole program (see the module docstring): whatever
    the backend cannot run is refused here with a `SynapcError` naming the layer.

    A streaming model's state (`Model.state`) is kept here: each run feeds the current
    state and keeps the state the program returns, starting from the initial values
    (`reset_state` goes back to them); `inputs`, `outputs` and `run` show the model's
    other inputs and outputs only.

    XLA compiles the program here, so the first `run` costs what every run costs
    (`lazy=True` leaves compilation to the first `run`, for callers that may never
    run it). JAX's persistent compilation cache, when configured, serves both."""

    def __init__(self, model: Model, target: Target, *, lazy: bool = False):
        from synapc.backends.jax.lowering import UnsupportedOpError, input_specs, lower

        self.model = model
        self.target = target
        where = _where(model)
        try:
            func = model.main
        except LookupError as error:
            raise SynapcError(f"{where}: {error}") from None
        try:
            self._function, self._params = lower(
                func, model.weights, target, model.integer_semantics
            )
        except UnsupportedOpError as error:
            raise UnsupportedOpError(f"{where}: {error}") from None
        except SynapcError as error:
            raise SynapcError(f"{where}: {error}") from None
        #: what `run` calls: the compiled program, or (lazy) the jitted function
        self._program = self._function
        if not lazy:
            specs = {
                k: jax.ShapeDtypeStruct(v.shape, v.dtype) for k, v in self._params.items()
            }
            try:
                self._program = self._function.lower(specs, *input_specs(func)).compile()
            except MemoryError:
                raise
            except Exception as error:  # XLA's own errors, any kind
                raise SynapcError(
                    f"{where}: XLA cannot compile the program ({_one_line(error)})"
                ) from error
        state_inputs = {s.input for s in model.state}
        state_outputs = {s.output for s in model.state}
        #: positions of the user's inputs / outputs among the program's
        self._inputs = [i for i in range(len(model.inputs)) if i not in state_inputs]
        self._outputs = [i for i in range(len(model.outputs)) if i not in state_outputs]
        #: per user input, the (shape, dtype) of an array the program takes as it is
        self._ready_inputs = [
            (info.shape, info.dtype if device_dtype(info.dtype) == info.dtype else None)
            for info in self.inputs
        ]
        self._state: list[Any] = []
        self.reset_state()

    def reset_state(self) -> None:
        """Set the model's state (if any) back to its initial values, as before the
        first run."""
        self._state = [
            np.asarray(s.initial).astype(
                device_dtype(self.model.inputs[s.input].dtype), copy=True
            )
            for s in self.model.state
        ]

    @property
    def inputs(self) -> list[TensorInfo]:
        """The model inputs, in order (state inputs left out)."""
        return [self.model.inputs[i] for i in self._inputs]

    @property
    def outputs(self) -> list[TensorInfo]:
        """The model outputs, in order (state outputs left out)."""
        return [self.model.outputs[i] for i in self._outputs]

    def run(self, inputs: Sequence[Any] | Mapping[str, Any]) -> list[np.ndarray]:
        """Run one inference; `inputs` is a list in model order or a dict by input name.
        A streaming model's state advances by one run (see the class docstring).

        Each value must have the input's shape; floats and integers are converted to a
        float input's dtype, integers (in range) to an integer or quantized input's
        (quantized inputs take their stored integers); anything else is refused with a
        `SynapcError` naming the input."""
        arrays: list[Any] = [None] * len(self.model.inputs)
        for i, array in zip(self._inputs, self._input_arrays(inputs), strict=True):
            arrays[i] = array
        for state, value in zip(self.model.state, self._state, strict=True):
            arrays[state.input] = value
        outputs = self._program(self._params, *arrays)
        self._state = [outputs[s.output] for s in self.model.state]  # stays on device
        # JAX runs without 64-bit mode: int64 results come back as int32 (same values).
        return [
            np.asarray(outputs[i]).astype(info.dtype, copy=False)
            for i, info in zip(self._outputs, self.outputs, strict=True)
        ]

    def _input_arrays(self, inputs: Sequence[Any] | Mapping[str, Any]) -> list[np.ndarray]:
        """`inputs` checked against the model inputs, as the arrays the program takes."""
        where = _where(self.model)
        names = [i.name for i in self.inputs]
        if isinstance(inputs, Mapping):
            missing = [name for name in names if name not in inputs]
            if missing:
                raise SynapcError(f"{where}: missing inputs: {', '.join(missing)}")
            unknown = [str(key) for key in inputs if key not in names]
            if unknown:
                raise SynapcError(
                    f"{where}: unknown inputs: {', '.join(unknown)} (the model's inputs "
                    f"are {', '.join(names)})"
                )
            values = [inputs[name] for name in names]
        elif isinstance(inputs, np.ndarray | str | bytes):
            raise SynapcError(
                f"{where}: pass the inputs as a list (one array per input) or a dict by "
                f"input name, not a {type(inputs).__name__}"
            )
        else:
            try:
                values = list(inputs)
            except TypeError:
                raise SynapcError(
                    f"{where}: pass the inputs as a list (one array per input) or a dict "
                    f"by input name, not a {type(inputs).__name__}"
                ) from None
        if len(values) != len(self.inputs):
            raise SynapcError(
                f"{where}: expected {len(self.inputs)} inputs, got {len(values)}"
            )
        if all(
            type(value) is np.ndarray and value.dtype == dtype and value.shape == shape
            for value, (shape, dtype) in zip(values, self._ready_inputs, strict=True)
        ):
            return values  # the program's own shapes and dtypes: nothing to check
        return [
            _input_array(f"{where}: input '{info.name}' (#{index})", info, value)
            for index, (info, value) in enumerate(zip(self.inputs, values, strict=True))
        ]


def _input_array(what: str, info: TensorInfo, value: Any) -> np.ndarray:
    """`value` as the array the program takes for input `info` (named `what`), refused
    when its shape differs, or when it is not numbers, floats for an integer or
    quantized input, or integers outside the input's range."""
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        raise SynapcError(f"{what}: not an array of numbers") from None
    want = info.dtype
    stored = " (the stored integers of its quantization)" if info.quantization else ""
    have, need = dtype_kind(array.dtype), dtype_kind(want)
    if array.dtype != want and (have not in "biuf" or (need in "biu" and have == "f")):
        raise SynapcError(f"{what}: has {array.dtype} values, expected {want}{stored}")
    if array.shape != info.shape:
        raise SynapcError(f"{what}: has shape {list(array.shape)}, "
                          f"expected {list(info.shape)}")  # fmt: skip
    device = device_dtype(want)
    if (
        want.kind in "iu"
        and array.dtype.kind in "iu"
        and array.size
        and (array.dtype != want or device != want)
    ):
        bounds = np.iinfo(device)
        low, high = int(array.min()), int(array.max())
        if low < bounds.min or high > bounds.max:
            runs = "" if device == want else f" (a {want} input runs as {device})"
            raise SynapcError(
                f"{what}: has values in [{low}, {high}], outside the {device} range "
                f"[{bounds.min}, {bounds.max}]{runs}{stored}"
            )
    return array.astype(device, copy=False)


def compile(model: Model, target: str = "VS680", *, lazy: bool = False) -> Executable:
    """Optimize `model` with the default pipeline, lower it for `target` and compile it
    (`lazy`: at the first `run` instead); whatever the backend cannot run is refused
    here (a `SynapcError` naming the model file and the layer), never at the first
    `run`."""
    spec = get_target(target)
    return Executable(optimize(model), spec, lazy=lazy)
