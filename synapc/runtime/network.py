"""`Network`: load a `model.synap` and run it with JAX, without the compiler.

Loading reads and verifies the package, deserializes each subgraph's `jax.export`
program (a program not seen before is first deserialized in a separate process, which a
hostile program may crash instead of this one: `synapc.runtime.program_check`), lowers
and compiles it (`lazy=True`: at the first `predict`) and puts its weights on the device
(JAX's persistent compilation cache, `synapc.runtime.cache`, makes compiling fast in later
processes). `predict` runs the subgraphs in the bundle's order, feeding each its inputs
from the model inputs or earlier subgraphs' outputs. Only numpy, jax and the package
reader are imported: no xDSL, IR or importers.
"""

from __future__ import annotations

import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.export
import numpy as np

from synapc.backends.package import PackageError, TensorSpec, read_package
from synapc.backends.package.spec import DATA_TYPES, quote
from synapc.errors import SynapcError
from synapc.limits import limits
from synapc.runtime.cache import configure
from synapc.runtime.preprocessed import PreprocessedInput, preprocessed_inputs
from synapc.runtime.program_check import check_programs
from synapc.runtime.tensor import Tensor


@dataclass
class Statistics:
    """Timing of `Network.predict`: how many inferences ran, their total and last time."""

    inference_count: int = 0
    total_time_us: float = 0.0
    last_time_us: float = 0.0

    @property
    def average_time_us(self) -> float:
        """Mean time of one inference (0 before the first)."""
        return self.total_time_us / self.inference_count if self.inference_count else 0.0


@dataclass(frozen=True)
class LayerTiming:
    """One layer's time in `Network.profile`: fused layer name, op type, microseconds."""

    name: str
    type: str
    time_us: float


#: The dtype JAX computes a package tensor's data type in when its 64-bit mode is off
#: (the exported programs take and return these; `_Program` casts at the boundary).
_DEVICE_DTYPES = {
    np.dtype(np.int64): np.dtype(np.int32),
    np.dtype(np.uint64): np.dtype(np.uint32),
    np.dtype(np.float64): np.dtype(np.float32),
}
#: Bytes of one element of a StableHLO element type (anything else counts as 8).
_ELEMENT_BYTES = {"i1": 1, "i8": 1, "ui8": 1, "i16": 2, "ui16": 2, "f16": 2, "bf16": 2}
_TENSOR_TYPE = re.compile(r"tensor<((?:\d+x)+)([a-z]\w*)")
_CUSTOM_CALL = re.compile(r'stablehlo\.custom_call"?')
_TARGET = re.compile(
    r'\s*@(?:([\w.$-]+)|"((?:[^"\\]|\\.)*)")'  # pretty: custom_call @target(...)
    r'|[^{]*\{[^}]*?call_target_name = "((?:[^"\\]|\\.)*)"'  # generic: {call_target_name}
)
try:  # the targets JAX itself lets `jax.export` serialize: stable across versions
    from jax._src.export._export import (
        _CUSTOM_CALL_TARGETS_GUARANTEED_STABLE as _STABLE_TARGETS,
    )
except ImportError:  # pragma: no cover - a JAX without the private name
    _STABLE_TARGETS = {"Sharding", "shape_assertion"}
#: Custom calls a package's program may make: each runs native code with the buffers the
#: program passes, so anything else (a hostile program calling an internal kernel) is
#: refused before the program is lowered.
_ALLOWED_TARGETS = frozenset(_STABLE_TARGETS) - {"tf.call_tf_function", "tpu_custom_call"}


def _fits(spec: TensorSpec, aval: Any) -> bool:
    """Whether a package tensor and a program argument / result are the same value:
    equal shapes, and the data type or what JAX computes it in."""
    dtype = np.dtype(spec.data_type)
    return tuple(aval.shape) == spec.shape and np.dtype(aval.dtype) in (
        dtype,
        _DEVICE_DTYPES.get(dtype),
    )


def _signature(avals: Sequence[Any]) -> str:
    return ", ".join(f"{np.dtype(a.dtype).name}{list(a.shape)}" for a in avals)


def _check_module(where: str, text: str) -> None:
    """Refuse a program (its StableHLO text) that calls a custom call target outside
    the allowed ones, or that has a tensor beyond the tensor limits anywhere inside:
    both would be trusted by XLA as they are."""
    for match in _CUSTOM_CALL.finditer(text):
        name = _TARGET.match(text, match.end())
        target = name and next((g for g in name.groups() if g is not None), None)
        if target not in _ALLOWED_TARGETS:
            raise PackageError(
                f"{where}: the program calls "
                + ("a custom call" if target is None else f"custom call target {target!r}")
                + ", which a package may not use"
            )
    current = limits()
    for match in _TENSOR_TYPE.finditer(text):
        dims = [int(d) for d in match.group(1).split("x")[:-1]]
        elements = math.prod(dims)
        size = elements * _ELEMENT_BYTES.get(
            match.group(2), 4 if "32" in match.group(2) else 8
        )
        if elements > current.max_tensor_elements or size > current.max_tensor_bytes:
            raise PackageError(
                f"{where}: the program has a tensor of shape {dims} ({elements:,} "
                f"elements, {size:,} bytes), beyond the tensor limits "
                "(SYNAPC_MAX_TENSOR_ELEMENTS / SYNAPC_MAX_TENSOR_BYTES raise them)"
            )


@contextmanager
def _native_diagnostics() -> Iterator[Callable[[], None]]:
    """Hold back what native code (MLIR, XLA) writes to file descriptor 2 in the block:
    it is written out afterwards, unless the block called the function it was given
    (the program was refused, and the refusal's one line says why; MLIR's diagnostics of
    a damaged program would bury it)."""
    dropped = False

    def drop() -> None:
        nonlocal dropped
        dropped = True

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield drop
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if not dropped:
                sink.seek(0)
                held = memoryview(sink.read())
                while held:
                    held = held[os.write(2, held) :]


class _Program:
    """A deserialized program with its device weights.

    Everything the package says about the program is checked against what the program
    itself declares before it is lowered: static shapes, one device, no effects, only
    allowed custom calls, tensors within the limits, the weights' and (when given) the
    model.json inputs' and outputs' shapes and data types. Lowered and compiled when the
    package loads (`lazy`: compiled on the first call instead): from JAX's persistent
    cache when it holds it.
    """

    def __init__(
        self,
        where: str,
        serialized: bytes,
        weights: Sequence[np.ndarray],
        model: tuple[tuple[Sequence[TensorSpec], Sequence[TensorSpec]], str] | None = None,
        *,
        lazy: bool = False,
    ):
        self.where = where
        try:
            exported = jax.export.deserialize(bytearray(serialized))
            avals = list(exported.in_avals)
            out_avals = list(exported.out_avals)
            shapes = [tuple(a.shape) for a in avals + out_avals]
            dtypes = [np.dtype(a.dtype) for a in avals + out_avals]
        except Exception as error:  # the flatbuffer reader's own exceptions, any kind
            raise PackageError(
                f"{where}: cannot load the program: not a valid jax.export serialization"
                " (damaged or from another program)"
            ) from error
        if not all(isinstance(d, int) for shape in shapes for d in shape):
            raise PackageError(f"{where}: the program has symbolic (dynamic) shapes")
        if any(d.kind not in "biuf" and d.name not in DATA_TYPES for d in dtypes):
            raise PackageError(f"{where}: the program takes or returns unsupported types")
        if exported.nr_devices != 1:
            raise PackageError(
                f"{where}: the program needs {exported.nr_devices} devices (packages run "
                "on one)"
            )
        if exported.ordered_effects or exported.unordered_effects:
            raise PackageError(f"{where}: the program has side effects")
        count = len(weights)
        if len(avals) < count or any(
            a.shape != w.shape or a.dtype != w.dtype
            for a, w in zip(avals[:count], weights, strict=False)
        ):
            raise PackageError(
                f"{where}: the weights do not match the program (it takes "
                f"{_signature(avals[:count])})"
            )
        self.in_avals = avals[count:]
        self.input_dtypes = [np.dtype(a.dtype) for a in self.in_avals]
        if model is not None:
            specs, model_where = model
            self._check_signature(model_where, "inputs", specs[0], self.in_avals)
            self._check_signature(model_where, "outputs", specs[1], out_avals)
        with _native_diagnostics() as failed:
            try:
                text = exported.mlir_module()
            except Exception as error:  # the MLIR bytecode reader's errors, any kind
                failed()
                raise PackageError(
                    f"{where}: cannot load the program: its StableHLO does not parse"
                ) from error
            _check_module(where, text)
            try:
                self.weights = [jax.device_put(w) for w in weights]
                specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals]
                self._lowered = jax.jit(exported.call).lower(specs[:count], *specs[count:])
            except Exception as error:  # MLIR verification and XLA's errors, any kind
                failed()
                raise PackageError(
                    f"{where}: cannot load the program: its StableHLO does not verify"
                ) from error
        self._compiled: Callable[..., Any] | None = None
        if not lazy:
            self._compile()

    def _compile(self) -> Callable[..., Any]:
        """The compiled program (compiled on the first use)."""
        if self._compiled is None:
            try:
                self._compiled = self._lowered.compile()
            except Exception as error:  # XLA's errors, any kind
                raise PackageError(
                    f"{self.where}: the program failed to compile"
                ) from error
        return self._compiled

    def _check_signature(
        self, where: str, key: str, specs: Sequence[TensorSpec], avals: Sequence[Any]
    ) -> None:
        """model.json's `key` (inputs / outputs; `where` names the file and model.json)
        against the program's."""
        if len(specs) != len(avals):
            raise PackageError(
                f"{where}: {key}: {len(specs)} {key}, but the program has {len(avals)} "
                f"({_signature(avals)})"
            )
        for j, (spec, aval) in enumerate(zip(specs, avals, strict=True)):
            if not _fits(spec, aval):
                raise PackageError(
                    f"{where}: {key}[{j}]: {quote(spec.name)} is "
                    f"{spec.data_type}{list(spec.shape)}, but the program's {key[:-1]} "
                    f"{j} is {_signature([aval])}"
                )

    def __call__(self, inputs: Sequence[Any]) -> list[jax.Array]:
        """Run on `inputs` (checked against the program's signature, cast to its input
        dtypes); compiles on first use."""
        if len(inputs) != len(self.in_avals):
            raise SynapcError(
                f"{self.where}: {len(inputs)} inputs given, the program takes "
                f"{len(self.in_avals)}"
            )
        for j, (x, aval) in enumerate(zip(inputs, self.in_avals, strict=True)):
            dtype = np.dtype(x.dtype)
            if tuple(x.shape) != tuple(aval.shape) or (
                dtype.kind not in "biuf" and dtype.name not in DATA_TYPES
            ):
                raise SynapcError(
                    f"{self.where}: input {j} is {np.dtype(x.dtype).name}"
                    f"{list(x.shape)}, the program takes {_signature([aval])}"
                )
        args = [
            x.astype(d, copy=False) if isinstance(x, np.ndarray) else x.astype(d)
            for x, d in zip(inputs, self.input_dtypes, strict=True)
        ]
        compiled = self._compile()
        try:
            return list(compiled(self.weights, *args))
        except Exception as error:  # XLA's runtime errors
            raise PackageError(f"{self.where}: the program failed to run") from error


def subgraph_waves(input_refs: Sequence[Sequence[tuple[int, int]]]) -> list[list[int]]:
    """The package's subgraphs (each given by its input references, in the bundle's
    order, which reads only earlier subgraphs) grouped into waves: a subgraph's wave is
    one after the latest wave it reads from, so the subgraphs of a wave are
    independent."""
    level: list[int] = []
    for refs in input_refs:
        level.append(1 + max((level[k] for k, _ in refs if k >= 0), default=-1))
    return [
        [k for k, w in enumerate(level) if w == wave]
        for wave in range(max(level, default=-1) + 1)
    ]


class Network:
    """A loaded `model.synap`: assign `inputs`, call `predict`, read `outputs`.

    A streaming model's state (the package's `state`) is kept here: each `predict`
    feeds the current state and keeps the new one, starting from the initial values
    (`reset_state` goes back to them); `inputs` and `outputs` are the others.

    Its programs compile when it loads, so the first `predict` costs what every one
    costs; `lazy=True` compiles each at its first use instead."""

    def __init__(
        self, path: str | os.PathLike[str], *, concurrent: bool = True, lazy: bool = False
    ):
        configure()
        self.path = Path(path)
        #: whether independent subgraphs run at the same time (False: one by one)
        self.concurrent = concurrent
        self.package = read_package(self.path)
        state = self.package.state
        #: positions of the user's inputs / outputs among the package's
        self._input_positions = [
            i for i in range(len(self.package.inputs)) if i not in {s.input for s in state}
        ]
        self._output_positions = [
            i
            for i in range(len(self.package.outputs))
            if i not in {s.output for s in state}
        ]
        self.inputs = [Tensor(self.package.inputs[i]) for i in self._input_positions]
        self.outputs = [Tensor(self.package.outputs[i]) for i in self._output_positions]
        #: the preprocessed inputs (metadata "preprocess"): each one's plane and crop
        #: tensors, which are among `inputs`
        self.preprocessed: list[PreprocessedInput] = preprocessed_inputs(
            self.path, self.package.bundle.get("metadata", {}), self.inputs
        )
        self._state: list[Any] = []
        self.reset_state()
        self.statistics = Statistics()
        # jaxlib's bytecode reader can crash on a hostile program: each is deserialized
        # in a separate process before this one first does (the layers' when profiled)
        check_programs(
            self.path,
            [
                (f"{index}/model.stablehlo", subgraph.executable)
                for index, subgraph in enumerate(self.package.subgraphs)
            ],
        )
        self._programs = []
        self._threads: ThreadPoolExecutor | None = None
        self._waves = subgraph_waves([s.input_refs for s in self.package.subgraphs])
        for index, subgraph in enumerate(self.package.subgraphs):
            where = f"{self.path}: {index}/model.stablehlo"
            program = _Program(
                where,
                subgraph.executable,
                subgraph.weights,
                ((subgraph.inputs, subgraph.outputs), f"{self.path}: {index}/model.json"),
                lazy=lazy,
            )
            self._programs.append(program)
        self._layers: list[list[_Program]] | None = None

    def __repr__(self) -> str:
        return f"Network('{self.path}', inputs={self.inputs}, outputs={self.outputs})"

    def reset_state(self) -> None:
        """Set a streaming model's state back to its initial values (as before the
        first `predict`); nothing to do for other models."""
        self._state = [s.initial.copy() for s in self.package.state]

    def predict(self) -> list[Tensor]:
        """Run one inference on the inputs' current values; the results are stored in
        (and returned as) `outputs`. The first call compiles a `lazy` network."""
        start = time.perf_counter_ns()
        values = self._run_graph()
        results = [values[ref] for ref in self.package.output_refs]
        jax.block_until_ready(results)
        self._state = [results[s.output] for s in self.package.state]
        for tensor, i in zip(self.outputs, self._output_positions, strict=True):
            tensor._set(np.asarray(results[i]))
        elapsed = (time.perf_counter_ns() - start) / 1000.0
        self.statistics.inference_count += 1
        self.statistics.total_time_us += elapsed
        self.statistics.last_time_us = elapsed
        return self.outputs

    def _run_graph(self) -> dict[tuple[int, int], Any]:
        """Every subgraph's outputs, keyed ``(subgraph, output)``; model inputs are
        ``(-1, i)``. Subgraphs run wave by wave (`subgraph_waves`); the subgraphs of one
        wave do not read each other and run at the same time, one thread each (XLA
        runs programs of several threads concurrently)."""
        values = self._model_inputs()
        subgraphs = self.package.subgraphs

        def run(k: int, wait: bool = False) -> list[Any]:
            outputs = self._programs[k]([values[ref] for ref in subgraphs[k].input_refs])
            return jax.block_until_ready(outputs) if wait else outputs

        for wave in self._waves:
            if len(wave) == 1 or not self.concurrent:
                results = [run(k) for k in wave]
            else:
                results = list(self._pool().map(lambda k: run(k, wait=True), wave))
            for k, outputs in zip(wave, results, strict=True):
                for j, value in enumerate(outputs):
                    values[(k, j)] = value
        return values

    def _pool(self) -> ThreadPoolExecutor:
        """The threads that run a wave's subgraphs, one per subgraph of the widest wave
        (made on first use)."""
        if self._threads is None:
            widest = max(len(wave) for wave in self._waves)
            self._threads = ThreadPoolExecutor(widest, thread_name_prefix="synapc")
        return self._threads

    def _model_inputs(self) -> dict[tuple[int, int], Any]:
        """The package's model inputs keyed ``(-1, i)``: the user's and the state;
        a crop rectangle outside its image is refused first."""
        for group in self.preprocessed:
            group.check_crop()
        values: dict[tuple[int, int], Any] = {
            (-1, i): t._value
            for i, t in zip(self._input_positions, self.inputs, strict=True)
        }
        for state, value in zip(self.package.state, self._state, strict=True):
            values[(-1, state.input)] = value
        return values

    def profile(self) -> list[LayerTiming]:
        """Time every fused layer once, in graph order, on the inputs' current values.

        Each layer's program is compiled and run once untimed, then timed over one run
        (until its results are ready). Needs a package converted with --profiling.
        """
        if not self.package.has_layers:
            raise PackageError(
                f"{self.path}: built without --profiling; convert with "
                "--profiling to time layers"
            )
        if self._layers is None:
            check_programs(
                self.path,
                [
                    (f"{i}/layers/{k}.stablehlo", layer.executable)
                    for i, subgraph in enumerate(self.package.subgraphs)
                    for k, layer in enumerate(subgraph.layers or [])
                ],
            )
            self._layers = [
                [
                    _Program(
                        f"{self.path}: {i}/layers/{k}.stablehlo",
                        layer.executable,
                        layer.weights,
                    )
                    for k, layer in enumerate(subgraph.layers or [])
                ]
                for i, subgraph in enumerate(self.package.subgraphs)
            ]
        timings = []
        values = self._model_inputs()
        for k, subgraph in enumerate(self.package.subgraphs):
            results: dict[tuple[int, int], Any] = {
                (-1, i): values[ref] for i, ref in enumerate(subgraph.input_refs)
            }
            for n, (layer, program) in enumerate(
                zip(subgraph.layers or [], self._layers[k], strict=True)
            ):
                missing = [ref for ref in layer.operands if ref not in results]
                if missing:
                    raise PackageError(
                        f"{self.path}: {k}/model.json: layer '{layer.name}'"
                        f" operand {missing[0]} names no value"
                    )
                args = [results[ref] for ref in layer.operands]
                jax.block_until_ready(program(args))
                start = time.perf_counter_ns()
                outputs = jax.block_until_ready(program(args))
                elapsed = (time.perf_counter_ns() - start) / 1000.0
                timings.append(LayerTiming(layer.name, layer.type, elapsed))
                for j, value in enumerate(outputs):
                    results[(n, j)] = value
            for j, ref in enumerate(subgraph.layer_outputs or []):
                if ref not in results:
                    raise PackageError(
                        f"{self.path}: {k}/model.json: layer_outputs[{j}] "
                        "names no layer result"
                    )
                values[(k, j)] = results[ref]
        return timings
