"""Semantic checks of passes: run a module on the JAX backend before and after a pass
pipeline and compare the outputs (identical integers for quantized outputs, float within
a relative tolerance). Shared by the pass tests and usable on any model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import TensorType

from synapc.backends.targets import get_target
from synapc.compiler import Executable, optimize
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.constant import ConstantOp
from synapc.dtypes import numpy_dtype
from synapc.mlir_io import parse_module
from synapc.model import Model, TensorInfo
from synapc.weights import WeightStore


def random_array(t: TensorType, rng: np.random.Generator) -> np.ndarray:
    """Values for a tensor of type `t`: stored integers over the whole storage range for
    quantized types, small integers for plain integer types, N(0, 1) floats otherwise."""
    shape = tuple(t.get_shape())
    element = t.element_type
    if isinstance(element, UniformQuantizedType):
        lo, hi = element.storage_min, element.storage_max
        return rng.integers(lo, hi + 1, shape).astype(element.storage_dtype)
    dtype = numpy_dtype(element)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu":
        return rng.integers(0, 8, shape).astype(dtype)
    return rng.normal(0, 1, shape).astype(dtype)


def model_from_text(text: str, seed: int = 0) -> Model:
    """Parse MLIR text into a Model; constants whose handles have no blob in the text get
    random values (see `random_array`), so lit-style snippets can run."""
    weights = WeightStore()
    module = parse_module(text, weights)
    rng = np.random.default_rng(seed)
    for op in module.walk():
        if isinstance(op, ConstantOp) and op.handle not in weights:
            weights[op.handle] = random_array(op.result.type, rng)
    return Model.from_module(module, weights)


def random_inputs(inputs: Sequence[TensorInfo], seed: int = 0) -> list[np.ndarray]:
    """One random value per model input (see `random_array`)."""
    rng = np.random.default_rng(seed)
    return [random_array(TensorType(i.element_type, i.shape), rng) for i in inputs]


@dataclass
class PassCheck:
    """Outputs of a model before and after a pipeline, and the optimized model."""

    before: list[np.ndarray]
    after: list[np.ndarray]
    optimized: Model


def run_unoptimized(model: Model, inputs: Sequence[np.ndarray], target: str) -> list:
    """Run `model` exactly as its IR stands (no pipeline) on `target`."""
    return Executable(model, get_target(target)).run(list(inputs))


def check_pipeline(
    model: Model | str,
    pipeline: Sequence[str],
    *,
    target: str = "GENERIC",
    rtol: float = 1e-5,
    seed: int = 0,
    inputs: Sequence[np.ndarray] | None = None,
) -> PassCheck:
    """Run `model` (a Model or MLIR text) before and after `pipeline` and assert that the
    outputs agree: integer outputs identical, float outputs within `rtol` of
    ``max(1, max |before|)``."""
    if isinstance(model, str):
        model = model_from_text(model, seed)
    if inputs is None:
        inputs = random_inputs(model.inputs, seed)
    optimized = optimize(model, pipeline)
    before = run_unoptimized(model, inputs, target)
    after = run_unoptimized(optimized, inputs, target)
    for index, (b, a) in enumerate(zip(before, after, strict=True)):
        if b.dtype.kind == "f":
            bound = rtol * max(1.0, float(np.abs(b).max(initial=0.0)))
            error = float(np.abs(a.astype(np.float64) - b).max(initial=0.0))
            assert error <= bound, f"output {index}: error {error:.3g} > {bound:.3g}"
        else:
            differ = int(np.count_nonzero(a != b))
            assert differ == 0, f"output {index}: {differ} of {b.size} integers differ"
    return PassCheck(before, after, optimized)
