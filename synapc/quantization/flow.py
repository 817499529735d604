"""Post-training quantization end to end (issue 19): optimize, calibrate, annotate, the
`quantize` pass, optimize again; and the per-layer report ``quantization_info.txt``.

Calibration is not a pass: it runs the model on a dataset. `calibrate_and_quantize`
turns an optimized float model into the annotated one
(`synapc.quantization.annotate`), which
``synapc-opt -p '<quantize_step(...)>,optimize'`` turns into the quantized model, as
`synapc convert` and `synapc.quantize` do.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Operation

from synapc.convert.output import QUANTIZATION_INFO
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.constant import ConstantOp
from synapc.io_attributes import io_attributes
from synapc.metafile.parse import QUALITY_OPTIONS
from synapc.model import Model
from synapc.quantization.annotate import (
    RANGE_ATTR,
    TYPE_ATTR,
    DataType,
    LayerTypes,
    annotate,
    layer_types,
    named_layers,
    range_shape,
)
from synapc.quantization.compare import last_by_layer, layer_key, layer_sqnr
from synapc.quantization.dataset import Dataset, input_feeds
from synapc.quantization.statistics import collect_statistics

if TYPE_CHECKING:  # mixed_precision reads the runners of this module
    from synapc.quantization.mixed_precision import MixedPrecision

__all__ = [
    "QUANTIZATION_INFO",
    "Progress",
    "Quantized",
    "Settings",
    "calibrate_and_quantize",
    "layer_sqnr",
    "quantization_info",
    "quantize",
    "quantize_step",
]

#: The report's file name, next to ``model_info.txt``.
#: Algorithms whose ranges come from histograms (a second pass over the dataset).
HISTOGRAM_ALGORITHMS = ("kl_divergence", "percentile", "mse")


@dataclass(frozen=True)
class Settings:
    """The metafile's ``quantization`` settings (the dataset aside). `options` holds the
    range algorithm's options and the quality switches ``equalize`` (cross-layer
    equalization before calibration), ``bias_correction``, ``channel_activations`` and
    ``fused_activations``;
    `mixed_precision`
    the automatic mixed precision settings (None: off)."""

    data_type: DataType = "uint8"
    scheme: str = "default"
    mode: str = "standard"
    algorithm: str = "standard"
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)
    mixed_precision: MixedPrecision | None = None

    @property
    def range_options(self) -> dict[str, Any]:
        """The options of the range algorithm (the quality switches left out)."""
        return {k: v for k, v in self.options.items() if k not in QUALITY_OPTIONS}

    def _switch(self, name: str, default: bool) -> bool:
        """The quality switch `name` of the options, else `default`."""
        value = self.options.get(name)
        return default if value is None else bool(value)

    @property
    def equalize(self) -> bool:
        """Whether cross-layer equalization runs before calibration (the options'
        ``equalize``, else `DEFAULT_EQUALIZE`)."""
        return self._switch("equalize", DEFAULT_EQUALIZE)

    @property
    def bias_correction(self) -> bool:
        """Whether empirical bias correction runs after quantization (default on)."""
        return self._switch("bias_correction", DEFAULT_BIAS_CORRECTION)

    @property
    def channel_activations(self) -> bool:
        """Whether the values only depthwise layers read are quantized per channel
        under ``perchannel_symmetric_affine`` (the options' ``channel_activations``;
        default on: 15.4 -> 26.1 dB on the MobileNetV3 classifier of
        `benchmarks/ptq.py`)."""
        return self._switch("channel_activations", True)

    @property
    def fused_activations(self) -> bool:
        """Whether a layer and the hard_swish after it run as one layer with a 16-bit
        intermediate (the options' ``fused_activations``; default on)."""
        return self._switch("fused_activations", True)

    @property
    def default_type(self) -> str:
        """The pass's ``data_type`` for ops without an annotation."""
        if isinstance(self.data_type, str):
            return self.data_type
        items = (
            self.data_type.items()
            if isinstance(self.data_type, Mapping)
            else self.data_type
        )
        values = dict(items)
        return values.get("*", "int8" if "int8" in values.values() else "uint8")


#: Bias correction by default (measured: +0.8 to +4.8 dB after equalization).
DEFAULT_BIAS_CORRECTION = True


#: Cross-layer equalization by default, for every scheme: measured on a conv net with
#: batch-norm-like channel spreads (tests/test_quantization_quality.py) it gains 8.7 dB
#: with per-tensor int8 weights and 0.5 dB with per-channel ones (whose activation
#: ranges it evens out), and bias correction gains more after it.
DEFAULT_EQUALIZE = True


def quantize_step(settings: Settings) -> str:
    """The ``quantize{...}`` pass step of `settings`."""
    switches = "" if settings.channel_activations else " channel_activations=false"
    if not settings.fused_activations:
        switches += " fused_activations=false"
    return (
        f'quantize{{data_type="{settings.default_type}" scheme="{settings.scheme}" '
        f'mode="{settings.mode}"{switches}}}'
    )


class Progress:
    """Calibration progress: a tqdm bar on a terminal, else one plain line per step
    through `say` (nothing when `show` is false)."""

    def __init__(self, total: int, show: bool, say: Callable[[str], None]) -> None:
        self.total, self.done, self.show, self.say = total, 0, show, say
        self._bar = None
        if show and sys.stderr.isatty():
            from tqdm import tqdm  # a core dependency; imported only for a terminal

            self._bar = tqdm(total=total, desc="calibration", unit="batch")

    def step(self, what: str) -> None:
        """One batch done (`what`: the pass it belongs to)."""
        self.done += 1
        if self._bar is not None:
            self._bar.set_postfix_str(what, refresh=False)
            self._bar.update(1)
        elif self.show:
            self.say(f"calibration: {what} batch {self.done}/{self.total}")

    def close(self) -> None:
        """End the bar."""
        if self._bar is not None:
            self._bar.close()

    def wrap(self, batches: Iterable[Any], what: str) -> Iterator[Any]:
        """`batches`, stepping once after each."""
        for batch in batches:
            yield batch
            self.step(what)


@dataclass
class Quantized:
    """The result of calibration and quantization: the annotated float model (what
    ``synapc-opt`` replays the ``quantize`` step on), the quantized model, and the
    layers automatic mixed precision raised (by layer key, in order)."""

    annotated: Model
    quantized: Model
    raised: list[str] = field(default_factory=list)


def calibrate_and_quantize(
    optimized: Model,
    dataset: Dataset,
    settings: Settings,
    rewrite: Callable[[Model], Model],
    *,
    field: str = "quantization.data_type",
    progress: Progress | None = None,
) -> Quantized:
    """Calibrate the optimized (and, when asked, equalized) float model on `dataset`,
    choose the layer types (automatic mixed precision when `settings` asks for it; a
    per-layer map still wins for the layers it names), correct the biases (when
    asked) and quantize with `rewrite` (the ``quantize`` step and what follows)."""
    from synapc.quantization.bias_correction import correct_biases
    from synapc.quantization.mixed_precision import choose_precision

    types = layer_types(optimized.main, settings.data_type, field)
    histograms = settings.algorithm in HISTOGRAM_ALGORITHMS
    passes = iter(("ranges", "histograms"))

    def batches() -> Iterable[Sequence[np.ndarray]]:
        what = next(passes, "histograms")
        if progress is None:
            return dataset.batches()
        return progress.wrap(dataset.batches(), what)

    stats = collect_statistics(optimized, batches, histograms=histograms)

    def annotated_with(chosen: LayerTypes) -> Model:
        return annotate(
            optimized,
            stats,
            chosen,
            scheme=settings.scheme,
            algorithm=settings.algorithm,
            options=settings.range_options,
        )

    def prepared(chosen: LayerTypes) -> Model:
        # bias correction inside the mixed precision search: a raise must pay on top
        # of it, not instead of it
        annotated = annotated_with(chosen)
        if settings.bias_correction:
            annotated = correct_biases(annotated, rewrite, dataset, stats=stats)
        return annotated

    mixed = settings.mixed_precision
    if mixed is None:
        annotated = prepared(types)
        return Quantized(annotated, rewrite(annotated))
    named = named_layers(optimized.main, settings.data_type, field)
    choice = choose_precision(
        types, named, mixed, prepared, rewrite, dataset, reference=optimized
    )
    assert choice.annotated is not None and choice.quantized is not None
    return Quantized(choice.annotated, choice.quantized, choice.raised)


def quantize(
    model: Model,
    dataset: str | Sequence[str],
    data_type: DataType = "uint8",
    scheme: str = "default",
    algorithm: str = "standard",
    options: Mapping[str, Any] | None = None,
    mode: str = "standard",
    mixed_precision: MixedPrecision | Mapping[str, Any] | None = None,
) -> Model:
    """`model` (float) quantized after training on `dataset`: one glob per input
    (``.jpg`` / ``.png`` / ``.npy``) or ``"random"``. `data_type` is ``uint8``,
    ``int8``, ``int16``, ``float16`` or a per-layer map (pattern -> type, as the
    metafile's); `scheme`, `algorithm` (with `options`) and `mode` as in METAFILE.md.
    `options` also takes ``equalize`` and ``bias_correction`` (booleans; defaults:
    `DEFAULT_EQUALIZE`, `DEFAULT_BIAS_CORRECTION`); `mixed_precision` (a
    `MixedPrecision` or a mapping of its fields) raises the most sensitive layers.
    The model is optimized (and equalized), calibrated, annotated, rewritten by the
    ``quantize`` pass and optimized again."""
    from synapc.compiler import optimize
    from synapc.convert.pipeline import run_pipeline

    if isinstance(mixed_precision, Mapping):
        mixed_precision = _mixed_precision(mixed_precision)
    settings = Settings(
        data_type, scheme, mode, algorithm, dict(options or {}), mixed_precision
    )
    optimized = optimize(model)
    if settings.equalize:
        optimized = run_pipeline(optimized, "equalize-layers")
    data = Dataset(dataset, input_feeds(optimized), field="dataset")
    step = f"{quantize_step(settings)},optimize"
    result = calibrate_and_quantize(
        optimized,
        data,
        settings,
        lambda annotated: run_pipeline(annotated, step),
        field="data_type",
    )
    return result.quantized


def _mixed_precision(fields: Mapping[str, Any]) -> MixedPrecision:
    """`synapc.quantize`'s ``mixed_precision`` mapping checked as the metafile's is: a
    bad key or value is one `SynapcError` naming it, never a traceback."""
    from synapc.errors import SynapcError
    from synapc.quantization.mixed_precision import MixedPrecision

    known = ("data_type", "target_sqnr_db", "max_fraction")
    unknown = sorted(str(k) for k in fields if k not in known)
    if unknown:
        raise SynapcError(
            f"mixed_precision: unknown key {', '.join(unknown)} (expected "
            f"{', '.join(known)})"
        )
    result = MixedPrecision(**fields)
    if result.data_type not in ("int16", "float16"):
        raise SynapcError(
            f"mixed_precision.data_type: expected int16 or float16, got "
            f"{result.data_type!r}"
        )
    for name in ("target_sqnr_db", "max_fraction"):
        value = getattr(result, name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SynapcError(f"mixed_precision.{name}: expected a number, got {value!r}")
    if not 0 <= result.max_fraction <= 1:
        raise SynapcError(
            f"mixed_precision.max_fraction: expected a number in [0, 1], got "
            f"{result.max_fraction}"
        )
    return result


# -- the report ---------------------------------------------------------------------


def _scheme(data_type: str, scheme: str) -> str:
    if data_type in ("float16", "float32"):
        return "-"
    if scheme != "default":
        return scheme
    return "asymmetric_affine" if data_type == "uint8" else "dynamic_fixed_point"


def _storage(tensor_type: Any) -> str:
    element = tensor_type.element_type if isinstance(tensor_type, TensorType) else None
    if isinstance(element, UniformQuantizedType):
        return element.storage.data
    return str(element) if element is not None else "-"


def _scale_text(q: UniformQuantizedType | None) -> str:
    if q is None:
        return "-"
    if q.is_per_axis:
        return f"{q.scales.min():.6g}..{q.scales.max():.6g} (per channel)"
    return f"{q.scale:.6g} / {q.zero_point}"


def _weight_quantization(op: Operation) -> UniformQuantizedType | None:
    for operand in op.operands:
        if isinstance(operand.owner, ConstantOp) and isinstance(operand.type, TensorType):
            element = operand.type.element_type
            if isinstance(element, UniformQuantizedType):
                return element
    return None


def quantization_info(
    annotated: Model,
    quantized: Model,
    settings: Settings,
    sqnr: Mapping[str, float],
    title: str = "",
    raised: Sequence[str] | None = None,
) -> str:
    """The text of ``quantization_info.txt``: one row per input and per layer of the
    annotated model: name, op, data type, scheme, runs as (the quantized model's
    element type), scale / zero point of its output, weight scales (per channel:
    min..max), calibrated range, algorithm, SQNR against the float model. With
    automatic mixed precision (`raised` not None), a footer line names the layers it
    raised, in the order it raised them."""
    header = (
        "layer",
        "op",
        "data type",
        "scheme",
        "runs as",
        "scale / zero point",
        "weight scale",
        "calibrated range",
        "algorithm",
        "SQNR dB",
    )
    rows: list[tuple[str, ...]] = []
    func = annotated.main
    qfunc = quantized.main
    for i, info in enumerate(annotated.inputs):
        attrs = io_attributes(func, "input", i)
        kind = attrs.get(TYPE_ATTR)
        if not isinstance(kind, StringAttr):
            continue
        span = attrs.get(RANGE_ATTR)
        values = span.get_values() if span is not None else ()  # type: ignore[attr-defined]
        qtype = qfunc.body.block.args[i].type if i < len(qfunc.body.block.args) else None
        element = qtype.element_type if isinstance(qtype, TensorType) else None
        rows.append(
            (
                f"input '{info.name}'",
                "-",
                kind.data,
                _scheme(kind.data, settings.scheme),
                _storage(qtype),
                _scale_text(element if isinstance(element, UniformQuantizedType) else None),
                "-",
                f"[{values[0]:.6g}, {values[1]:.6g}]" if values else "-",
                settings.algorithm,
                "-",
            )
        )
    quant_ops = last_by_layer(qfunc)
    for p, op in enumerate(func.body.block.ops):
        kind = op.attributes.get(TYPE_ATTR)
        if not isinstance(kind, StringAttr):
            continue
        name = layer_key(op) or f"op #{p}"
        spans = range_shape(op.attributes[RANGE_ATTR])
        span = spans[0] if spans else None
        match = quant_ops.get(name)
        qop = match[0] if match is not None else None
        qtype = qop.results[0].type if qop is not None else None
        element = qtype.element_type if isinstance(qtype, TensorType) else None
        db = sqnr.get(name)
        rows.append(
            (
                name,
                op.name.removeprefix("synap."),
                kind.data,
                _scheme(kind.data, settings.scheme),
                _storage(qtype),
                _scale_text(element if isinstance(element, UniformQuantizedType) else None),
                _scale_text(_weight_quantization(qop)) if qop is not None else "-",
                f"[{span[0]:.6g}, {span[1]:.6g}]" if span else "-",
                settings.algorithm,
                "-" if db is None else "inf" if math.isinf(db) else f"{db:.1f}",
            )
        )
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()

    lines = [title] if title else []
    lines += [line(header), line(tuple("-" * w for w in widths))]
    lines += [line(r) for r in rows]
    if raised is not None and settings.mixed_precision is not None:
        mixed = settings.mixed_precision
        lines.append(
            f"mixed precision ({mixed.data_type}, target {mixed.target_sqnr_db:g} dB, at "
            f"most {mixed.max_fraction:g} of the layers): raised "
            + (", ".join(raised) if raised else "none")
        )
    return "\n".join(lines) + "\n"
