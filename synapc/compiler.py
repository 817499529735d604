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

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import DiagnosticException

from synapc.backends.targets import Target, get_target
from synapc.context import make_context
from synapc.dtypes import device_dtype
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
    try:
        model.integer_semantics  # noqa: B018  (refuses an unknown value)
        check_function(func, model.weights)
    except UnsupportedOpError as error:
        raise UnsupportedOpError(f"{where}: {error}") from None
    except SynapcError as error:
        raise SynapcError(f"{where}: {error}") from None
    return func


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
    return Model(module, model.weights, model.inputs, model.outputs, model.source,
                 dict(model.metadata))  # fmt: skip


class Executable:
    """A compiled model: `run(inputs)` takes and returns numpy arrays in model order.

    Lowering checks and traces the whole program (see the module docstring): whatever
    the backend cannot run is refused here with a `SynapcError` naming the layer."""

    def __init__(self, model: Model, target: Target):
        from synapc.backends.jax.lowering import UnsupportedOpError, lower

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

    @property
    def inputs(self) -> list[TensorInfo]:
        """The model inputs, in order."""
        return self.model.inputs

    @property
    def outputs(self) -> list[TensorInfo]:
        """The model outputs, in order."""
        return self.model.outputs

    def run(self, inputs: Sequence[Any] | Mapping[str, Any]) -> list[np.ndarray]:
        """Run one inference; `inputs` is a list in model order or a dict by input name.

        Each value must have the input's shape; floats and integers are converted to a
        float input's dtype, integers (in range) to an integer or quantized input's
        (quantized inputs take their stored integers); anything else is refused with a
        `SynapcError` naming the input."""
        arrays = self._input_arrays(inputs)
        outputs = self._function(self._params, *arrays)
        # JAX runs without 64-bit mode: int64 results come back as int32 (same values).
        return [
            np.asarray(o).astype(info.dtype, copy=False)
            for o, info in zip(outputs, self.outputs, strict=True)
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
        return [
            _input_array(f"{where}: input '{info.name}' (#{index})", info, value)
            for index, (info, value) in enumerate(zip(self.inputs, values, strict=True))
        ]


def _kind(dtype: np.dtype) -> str:
    """numpy's kind of `dtype`, with bfloat16 (ml_dtypes, kind "V") a float."""
    return "f" if dtype.name == "bfloat16" else dtype.kind


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
    have, need = _kind(array.dtype), _kind(want)
    if array.dtype != want and (have not in "biuf" or (need in "biu" and have == "f")):
        raise SynapcError(f"{what}: has {array.dtype} values, expected {want}{stored}")
    if array.shape != info.shape:
        raise SynapcError(f"{what}: has shape {list(array.shape)}, "
                          f"expected {list(info.shape)}")  # fmt: skip
    if (
        want.kind in "iu"
        and array.dtype.kind in "iu"
        and array.size
        and array.dtype != want
    ):
        bounds = np.iinfo(want)
        low, high = int(array.min()), int(array.max())
        if low < bounds.min or high > bounds.max:
            raise SynapcError(
                f"{what}: has values in [{low}, {high}], outside the {want} range "
                f"[{bounds.min}, {bounds.max}]{stored}"
            )
    return array.astype(device_dtype(want), copy=False)


def compile(model: Model, target: str = "VS680") -> Executable:
    """Optimize `model` with the default pipeline and lower it for `target`; whatever
    the backend cannot run is refused here (a `SynapcError` naming the model file and
    the layer), never at the first `run`."""
    spec = get_target(target)
    return Executable(optimize(model), spec)
