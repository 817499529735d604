"""LiteRT as the oracle: build a small TFLite model, run it in LiteRT and in synapc, and
compare every output.

A *case* is a function that adds inputs, constants and operators to a `CaseGraph`. It
states no result shapes: the model is first built with placeholder shapes, LiteRT computes
every tensor's shape while preparing it (as the TFLite converter would have written them),
and the model is rebuilt with those shapes. Inputs come from a generator seeded the same
way for both builds, so both carry identical data.

Quantized cases give tensors a `Quant` and an integer dtype. Inputs and constants are
written as real values and quantized with the tensor's parameters (round half away from
zero, saturating), so a case reads in the units of the float model it stands for.

Float outputs compare within a relative tolerance; integer outputs must be identical.
Needs `ai_edge_litert` (a test dependency), imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from synapc.testing.tflite_builder import ModelBuilder, Quant

SEED = 20240611
F32 = np.float32


def quantize(real: np.ndarray, dtype: type, quant: Quant) -> np.ndarray:
    """`real` stored with `quant` in integer `dtype` (per-channel along `quant.axis`)."""
    scales, zero_points = quant.arrays()
    real = np.asarray(real, np.float64)
    if quant.axis is not None and scales.size > 1:
        shape = [1] * real.ndim
        shape[quant.axis] = -1
        scales, zero_points = scales.reshape(shape), zero_points.reshape(shape)
    else:
        scales, zero_points = scales[0], zero_points[0]
    q = np.sign(real / scales) * np.floor(np.abs(real / scales) + 0.5) + zero_points
    info = np.iinfo(dtype)
    return np.clip(q, info.min, info.max).astype(dtype)


#: One activation quantization per storage type (int16 activations have zero point 0),
#: for cases that only need "a typical tensor of this type".
QUANTS: dict[str, tuple[type, Quant]] = {
    "int8": (np.int8, Quant(0.05, -3)),
    "uint8": (np.uint8, Quant(0.04, 131)),
    "int16": (np.int16, Quant(0.0005, 0)),
}


def storage_range(dtype: type, quant: Quant) -> tuple[float, float]:
    """Real bounds one step beyond what (per-tensor, or the largest per-channel scale of)
    `quant` can store in `dtype`: uniform inputs in them cover every stored integer and
    saturate at both ends."""
    info = np.iinfo(dtype)
    scales, zero_points = quant.arrays()
    scale, zero_point = float(scales.max()), int(zero_points[0])
    return scale * (info.min - zero_point - 1.0), scale * (info.max - zero_point + 1.0)


class CaseGraph:
    """A model under construction: seeded inputs, constants and operators.

    `shapes` maps tensor names to their shapes (from LiteRT); without it, operator
    results get a placeholder shape for LiteRT to replace.
    """

    def __init__(self, shapes: dict[str, tuple[int, ...]] | None = None) -> None:
        self.builder = ModelBuilder()
        self.rng = np.random.default_rng(SEED)
        self.shapes = shapes
        self.feeds: list[np.ndarray] = []
        self._count = 0

    def _name(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def input(
        self,
        shape: Sequence[int],
        low: float = -4.0,
        high: float = 4.0,
        dtype: type = F32,
        value: np.ndarray | None = None,
        quant: Quant | None = None,
    ) -> int:
        """A model input fed with uniform random values in [low, high) (or `value`).

        With `quant`, the values are real numbers stored quantized in integer `dtype`;
        an integer `dtype` without `quant` draws integers in [low, high].
        """
        if value is None:
            if np.issubdtype(dtype, np.integer) and quant is None:
                value = self.rng.integers(low, high, size=shape, endpoint=True)
            else:
                value = self.rng.uniform(low, high, size=shape)
        if quant is not None:
            value = quantize(value, dtype, quant)
        value = np.asarray(value, dtype)
        self.feeds.append(value)
        return self.builder.input(
            self._name("input"), value.shape, value.dtype, quant=quant
        )

    def const(
        self, value: Any, dtype: type | None = None, quant: Quant | None = None
    ) -> int:
        """A constant tensor holding `value` (real values quantized when `quant` is set)."""
        if quant is not None:
            value = quantize(np.asarray(value), dtype or np.int8, quant)
        return self.builder.constant(
            self._name("const"), np.asarray(value, dtype), quant=quant
        )

    def weights(
        self,
        shape: Sequence[int],
        scale: float = 1.0,
        dtype: type = F32,
        quant: Quant | None = None,
    ) -> int:
        """A constant with normal random values times `scale` (quantized with `quant`)."""
        return self.const(scale * self.rng.standard_normal(shape), dtype, quant)

    def op(
        self,
        name: str,
        inputs: Sequence[int],
        *,
        outputs: int = 1,
        dtype: type = F32,
        quant: Quant | Sequence[Quant] | None = None,
        shape: Sequence[int] | None = None,
        **options: Any,
    ) -> Any:
        """Add operator `name`; returns its result tensor, or a list if `outputs` > 1.

        `quant` quantizes the results (one `Quant` for all, or one per result). `shape`
        is the result shape for the first build, for operators whose Prepare checks a
        static result shape instead of setting it (SLICE).
        """
        quants = list(quant) if isinstance(quant, Sequence) else [quant] * outputs
        results = []
        for i in range(outputs):
            tensor = self._name("t")
            if self.shapes is not None:
                shape = self.shapes[tensor]
            elif shape is None:
                shape = (1,)
            results.append(self.builder.tensor(tensor, shape, dtype, quant=quants[i]))
        self.builder.op(name, inputs, results, **options)
        return results[0] if outputs == 1 else results

    def output(self, *tensors: int) -> None:
        """Make `tensors` model outputs."""
        self.builder.output(*tensors)


Case = Callable[[CaseGraph], None]


def _litert() -> Any:
    from ai_edge_litert import interpreter

    return interpreter


def reference_resolver() -> Any:
    """LiteRT's reference kernels (`OpResolverType.BUILTIN_REF`)."""
    return _litert().OpResolverType.BUILTIN_REF


def builtin_resolver() -> Any:
    """LiteRT's builtin kernels without the default delegate, for the few operators
    missing from the reference resolver."""
    return _litert().OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES


def run_litert(data: bytes, feeds: Sequence[np.ndarray], resolver: Any) -> Any:
    """A LiteRT interpreter that has run `data` on `feeds`."""
    interpreter = _litert().Interpreter(
        model_content=data, experimental_op_resolver_type=resolver
    )
    interpreter.allocate_tensors()
    for detail, value in zip(interpreter.get_input_details(), feeds, strict=True):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    return interpreter


def build_case(case: Case, resolver: Any) -> tuple[bytes, list[np.ndarray]]:
    """The model of `case` with LiteRT's tensor shapes, and its input values."""
    draft = CaseGraph()
    case(draft)
    interpreter = run_litert(draft.builder.build(), draft.feeds, resolver)
    shapes = {
        d["name"]: tuple(int(s) for s in d["shape"])
        for d in interpreter.get_tensor_details()
    }
    graph = CaseGraph(shapes)
    case(graph)
    return graph.builder.build(), graph.feeds


def check_case(
    tmp_path: Path,
    case: Case,
    resolver: Any = None,
    *,
    target: str = "GENERIC",
    rtol: float = 1e-5,
) -> None:
    """Run `case` in LiteRT and in synapc on `target`; float outputs must agree within
    `rtol` (absolute `rtol` of the largest reference magnitude), integer outputs exactly,
    shapes and dtypes must be equal."""
    import synapc

    resolver = reference_resolver() if resolver is None else resolver
    data, feeds = build_case(case, resolver)
    interpreter = run_litert(data, feeds, resolver)
    expected = [
        interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()
    ]
    path = tmp_path / "model.tflite"
    path.write_bytes(data)
    got = synapc.compile(synapc.import_model(path), target=target).run(feeds)
    assert len(got) == len(expected)
    for i, (out, ref) in enumerate(zip(got, expected, strict=True)):
        assert out.shape == ref.shape, f"output {i}"
        assert out.dtype == ref.dtype, f"output {i}"
        if ref.dtype.kind == "f":
            scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
            np.testing.assert_allclose(
                out, ref, rtol=rtol, atol=rtol * scale, err_msg=f"output {i}"
            )
        else:
            differ = int(np.count_nonzero(out != ref))
            assert differ == 0, (
                f"output {i}: {differ} of {ref.size} integers differ from LiteRT\n"
                f"synapc: {out.reshape(-1)[:16]}\nLiteRT: {ref.reshape(-1)[:16]}"
            )
