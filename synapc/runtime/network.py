"""`Network`: load a `model.synap` and run it with JAX, without the compiler.

Loading reads and verifies the package, deserializes each subgraph's `jax.export`
program, lowers it and puts its weights on the device; nothing compiles until the first
`predict` (JAX's persistent compilation cache, `synapc.runtime.cache`, makes that fast in
later processes). `predict` runs the subgraphs in the bundle's order, feeding each its
inputs from the model inputs or earlier subgraphs' outputs. Only numpy, jax and the package
reader are imported: no xDSL, IR or importers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.export
import numpy as np

from synapc.backends.package import PackageError, read_package
from synapc.runtime.cache import configure
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


class _Program:
    """A deserialized program with its device weights.

    Lowered when the package loads (that also pays JAX's one-time setup for exported
    programs), compiled on the first call: from JAX's persistent cache when it holds it.
    """

    def __init__(self, where: str, serialized: bytes, weights: Sequence[np.ndarray]):
        try:
            exported = jax.export.deserialize(bytearray(serialized))
        except Exception as error:  # the flatbuffer / MLIR reader's own exception types
            raise PackageError(f"{where}: cannot load the program: {error}") from None
        count = len(weights)
        avals = exported.in_avals
        if len(avals) < count or any(
            a.shape != w.shape or a.dtype != w.dtype
            for a, w in zip(avals[:count], weights, strict=False)
        ):
            raise PackageError(f"{where}: the weights do not match the program")
        self.input_dtypes = [np.dtype(a.dtype) for a in avals[count:]]
        self.weights = [jax.device_put(w) for w in weights]
        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals]
        self._lowered = jax.jit(exported.call).lower(specs[:count], *specs[count:])
        self._compiled: Callable[..., Any] | None = None

    def __call__(self, inputs: Sequence[Any]) -> list[jax.Array]:
        """Run on `inputs`, cast to the program's input dtypes; compiles on first use."""
        if self._compiled is None:
            self._compiled = self._lowered.compile()
        args = [
            x.astype(d, copy=False) if isinstance(x, np.ndarray) else x.astype(d)
            for x, d in zip(inputs, self.input_dtypes, strict=True)
        ]
        return list(self._compiled(self.weights, *args))


class Network:
    """A loaded `model.synap`: assign `inputs`, call `predict`, read `outputs`."""

    def __init__(self, path: str | os.PathLike[str]):
        configure()
        self.path = Path(path)
        self.package = read_package(self.path)
        self.inputs = [Tensor(spec) for spec in self.package.inputs]
        self.outputs = [Tensor(spec) for spec in self.package.outputs]
        self.statistics = Statistics()
        self._programs = []
        for index, subgraph in enumerate(self.package.subgraphs):
            where = f"{self.path}: {index}/model.stablehlo"
            program = _Program(where, subgraph.executable, subgraph.weights)
            if len(program.input_dtypes) != len(subgraph.inputs):
                raise PackageError(
                    f"{where}: the program takes {len(program.input_dtypes)}"
                    f" inputs, model.json lists {len(subgraph.inputs)}"
                )
            self._programs.append(program)
        self._layers: list[list[_Program]] | None = None

    def __repr__(self) -> str:
        return f"Network('{self.path}', inputs={self.inputs}, outputs={self.outputs})"

    def predict(self) -> list[Tensor]:
        """Run one inference on the inputs' current values; the results are stored in
        (and returned as) `outputs`. The first call compiles."""
        start = time.perf_counter_ns()
        values = self._run_graph()
        results = [values[ref] for ref in self.package.output_refs]
        jax.block_until_ready(results)
        for tensor, result in zip(self.outputs, results, strict=True):
            tensor._set(np.asarray(result))
        elapsed = (time.perf_counter_ns() - start) / 1000.0
        self.statistics.inference_count += 1
        self.statistics.total_time_us += elapsed
        self.statistics.last_time_us = elapsed
        return self.outputs

    def _run_graph(self) -> dict[tuple[int, int], Any]:
        """Every subgraph's outputs, keyed ``(subgraph, output)``; model inputs are
        ``(-1, i)``."""
        values: dict[tuple[int, int], Any] = {
            (-1, i): t._value for i, t in enumerate(self.inputs)
        }
        for k, (subgraph, program) in enumerate(
            zip(self.package.subgraphs, self._programs, strict=True)
        ):
            outputs = program([values[ref] for ref in subgraph.input_refs])
            for j, value in enumerate(outputs):
                values[(k, j)] = value
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
        values: dict[tuple[int, int], Any] = {
            (-1, i): t._value for i, t in enumerate(self.inputs)
        }
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
