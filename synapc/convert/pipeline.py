"""The conversion pipeline: what `synapc convert` does to an imported model, as ONE pass
pipeline that `synapc-opt` can replay step by step.

`pipeline` turns a metafile (bound to an imported model's inputs and outputs) into a
``-p`` spec string, in this order:

1. ``describe-io{...}``: one per metafile entry with a format, means or scale: what the
   runtime needs, recorded on `@main`'s arguments / results;
2. ``apply-layout{layout=...}``: the metafile's `data_layout` (when not "default");
3. ``dequantize-outputs{outputs=...}``: the quantized outputs the metafile asks for as
   float32;
4. ``insert-preprocess{...}``: the metafile's `preprocess` of each input, after the
   signature passes (it reads the input's format, means, scale and layout from them),
   before `optimize`
5. ``optimize``: the default optimization pipeline, to a fixed point;
6. with a metafile ``quantization`` section that has a dataset: ``equalize-layers``
   (cross-layer equalization; unless ``options: {equalize: false}``),
   ``quantize{data_type=... scheme=... mode=...}`` and ``optimize`` again.
   Calibration is NOT a pass: before ``quantize``, `synapc convert` runs the
   optimized model on the dataset and annotates the IR with the ranges and per-layer
   types it decided (automatic mixed precision included) and the corrected biases
   (`synapc.quantization.flow.calibrate_and_quantize`;
   ``intermediate/NN_annotated.mlir`` of
   ``--preserve``); ``synapc-opt`` replays only the steps from ``quantize`` on that
   annotated IR.

`synapc convert --print-pipeline` prints the spec; ``synapc-opt -p '<spec>'`` run on the
imported IR (``synapc import``, or ``intermediate/00_imported.mlir`` of ``--preserve``)
gives the IR `synapc convert` compiles. Cutting the graph at named inputs / outputs is
not a pass: the importers cut the source graph before converting it (see
`synapc.importers.cut`), so that operators past the cut never need to be supported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException

from synapc.context import make_context
from synapc.convert import signature
from synapc.errors import SynapcError
from synapc.metafile import InputSpec, Metafile, OutputSpec, PreprocessSpec
from synapc.model import Model

if TYPE_CHECKING:
    from synapc.quantization.flow import Settings

_T = TypeVar("_T")

#: What a callback between passes receives: the pass that ran, the module, the next.
PassCallback = Callable[[ModulePass | None, ModuleOp, ModulePass | None], None]


def pipeline(model: Model, metafile: Metafile, where: str, source_layout: str) -> str:
    """The ``-p`` spec of the passes that turn the imported `model` into the IR
    `synapc convert` compiles, as the metafile asks (`where` names the metafile in
    errors; `source_layout` is the source framework's I/O layout, see
    `signature.source_layout`), up to the placement by delegate (`placement_steps`),
    which follows calibration. A streaming model's state inputs and outputs are bound
    to no metafile entry and keep their types and layout."""
    return ",".join(pipeline_steps(model, metafile, where, source_layout))


def placement_steps(metafile: Metafile, target: str, where: str) -> list[str]:
    """The steps that split the model by the metafile's ``delegate`` on `target`:
    ``default`` and ``npu`` keep the model on the target's first delegate (the NPU)
    except the layers the NPU cannot run, which fall back to the CPU (``place-layers``;
    a target without an NPU runs everything on its CPU); ``gpu`` /
    ``cpu`` put every layer there; a map assigns layers (``assign-delegates``), the
    NPU's rules applying to those on it. ``auto`` also moves NPU layers to the CPU
    where the latency model finds that faster than crossing between subgraphs."""
    from synapc.backends.targets import get_target

    spec = get_target(target)
    first = spec.delegates[0]
    delegate = metafile.delegate
    asked = [d for _, d in delegate] if isinstance(delegate, tuple) else [delegate]
    for name in asked:
        if name not in ("default", "auto") and name not in spec.delegates:
            raise SynapcError(
                f"{where}: delegate: {spec.name} has no '{name}' delegate (its "
                f"delegates: {', '.join(spec.delegates)})"
            )
    place = [f"place-layers{{target={spec.name}}}"] if spec.has_npu else []
    if delegate == "auto" and place:
        place = [f"place-layers{{target={spec.name} auto=true}}"]
    if delegate in ("default", "npu", "auto"):
        return [*place, f"partition{{default={first}}}"] if place else []
    if delegate in ("gpu", "cpu"):
        return [f"partition{{default={delegate}}}"]
    return [f"assign-delegates{{default={first}}}", *place, f"partition{{default={first}}}"]


#: Alignment of planned buffers on a target that publishes none (GENERIC's host).
HOST_ALIGNMENT = 64


def memory_step(target: str) -> str:
    """The ``plan-memory`` step for `target`: its alignment, on-chip SRAM and NPU float
    width (`backends/targets/descriptions.py`)."""
    from synapc.backends.targets import get_target

    spec = get_target(target)
    alignment = int(spec.arena_alignment.value) if spec.arena_alignment else HOST_ALIGNMENT
    sram = int(spec.sram_bytes.value) if spec.sram_bytes else 0
    return (
        f"plan-memory{{alignment={alignment} sram-bytes={sram} "
        f"npu-float-bytes={spec.npu_float_dtype.itemsize}}}"
    )


def pipeline_steps(
    model: Model, metafile: Metafile, where: str, source_layout: str
) -> list[str]:
    """The steps of `pipeline`, one ``-p`` item each (an option value may hold commas,
    so the joined spec does not split back into them)."""
    state_outputs = {s.output for s in model.state}
    inputs, outputs = bind(model, metafile, where)
    steps: list[str] = []
    for index, entry in enumerate(inputs):
        if entry is not None:
            steps += _describe("input", index, entry.format, entry.means, entry.scale)
    for index, entry in enumerate(outputs):
        if entry is not None:
            steps += _describe("output", index, entry.format, None, None)
    layout = metafile.data_layout
    if layout != "default":
        if model.state and layout != source_layout:
            raise SynapcError(
                f"{where}: data_layout: {layout} would transpose the state the model "
                f"keeps between runs; convert this streaming model in its own layout "
                f"({source_layout})"
            )
        steps.append(f"apply-layout{{layout={layout}}}")
    dequantized = [
        index
        for index, (info, entry) in enumerate(zip(model.outputs, outputs, strict=True))
        if index not in state_outputs
        and (metafile.dequantize_outputs or (entry is not None and entry.dequantize))
        and info.quantization is not None
    ]
    if dequantized:
        steps.append(f"dequantize-outputs{{outputs={','.join(map(str, dequantized))}}}")
    # in reverse order: replacing an input by its planes moves the inputs after it
    for index in reversed(range(len(inputs))):
        entry = inputs[index]
        if entry is not None and entry.preprocess is not None:
            steps.append(preprocess_step(index, entry.preprocess))
    steps.append("optimize")
    quantization = metafile.quantization
    if quantization is not None and quantization.dataset:
        from synapc.quantization.flow import quantize_step

        chosen = settings(metafile)
        if chosen.equalize:
            steps.append("equalize-layers")
        steps += [quantize_step(chosen), "optimize"]
    return steps


def settings(metafile: Metafile) -> Settings:
    """The quantization settings of the metafile's ``quantization`` section (which
    must be there)."""
    from synapc.quantization.flow import Settings

    q = metafile.quantization
    assert q is not None
    mixed = None
    if q.mixed_precision is not None:
        from synapc.quantization.mixed_precision import MixedPrecision

        m = q.mixed_precision
        mixed = MixedPrecision(m.data_type, m.target_sqnr_db, m.max_fraction)
    return Settings(q.data_type, q.scheme, q.mode, q.algorithm, dict(q.options), mixed)


def run_pipeline(model: Model, spec: str, callback: PassCallback | None = None) -> Model:
    """`model` after the passes of `spec` (a ``-p`` string), its inputs and outputs
    read back from the rewritten `@main`; `callback` runs between passes as xDSL's
    `PassPipeline` calls it. The module is checked first (`check_model`: passes never
    see IR the backend would refuse) and verified at the end."""
    from synapc.compiler import check_model
    from synapc.passes.registry import PASSES

    check_model(model)
    module: ModuleOp = model.module.clone()
    PassPipeline.parse_spec(PASSES, spec, callback).apply(
        make_context(model.weights), module
    )
    try:
        module.verify()
    except DiagnosticException as error:  # a pass broke the IR: a bug, said in one line
        problem = " ".join(str(error).split("\n", 1)[0].split())
        raise SynapcError(
            f"{model.source or 'model'}: the IR after '{spec}' does not verify, a synapc "
            f"bug to report: {problem}"
        ) from None
    return model.with_module(module)


@contextmanager
def metafile_errors(where: str | None) -> Iterator[None]:
    """Errors of the passes a metafile asked for (a preprocess type that does not fit an
    input, a layer that `mode: full` cannot quantize, ...) name the metafile `where`
    first, as every other metafile problem does; None (no metafile) leaves them as
    they are."""
    try:
        yield
    except SynapcError as error:
        message = str(error)
        if where is None or message.startswith(where):
            raise
        raise SynapcError(f"{where}: {message}") from None


def bind(
    model: Model, metafile: Metafile, where: str
) -> tuple[list[InputSpec | None], list[OutputSpec | None]]:
    """The metafile entry of each model input and output (None: not listed, and at
    every state input / output), after checking the entries' shapes against the
    inputs'."""
    user = _without_state(model)
    inputs = signature.bind_inputs(user, metafile, where)
    signature.check_input_shapes(user, inputs, where, metafile)
    outputs = _bind_outputs(user, metafile, where)
    return (
        _spread(inputs, {s.input for s in model.state}, len(model.inputs)),
        _spread(outputs, {s.output for s in model.state}, len(model.outputs)),
    )


def _describe(
    side: str,
    index: int,
    format: str | None,
    means: Sequence[float] | None,
    scale: float | None,
) -> list[str]:
    """The ``describe-io`` step of one entry (none when it says nothing)."""
    options = []
    if format:
        options.append(f"format={_string(format)}")
    if means is not None:
        options.append("means=" + ",".join(_number(m) for m in means))
    if scale is not None:
        options.append(f"scale={_number(scale)}")
    if not options:
        return []
    return [f"describe-io{{{side}={index} {' '.join(options)}}}"]


def preprocess_step(index: int, spec: PreprocessSpec) -> str:
    """The ``insert-preprocess`` step of input `index` (its means, scale and colour
    order come from its ``describe-io`` attributes); `synapc preprocess` uses it too."""
    options = [
        f"input={index}",
        f"type={_string(spec.type)}",
        f"crop={'true' if spec.crop else 'false'}",
        f"color_range={_string(spec.color_range)}",
        f"color_matrix={_string(spec.color_matrix)}",
        f"resize={_string(spec.resize)}",
    ]
    if spec.size is not None:
        options.append(f"size={spec.size[0]},{spec.size[1]}")
    return f"insert-preprocess{{{' '.join(options)}}}"


def _number(value: float) -> str:
    """A float as the pass-option lexer reads it back exactly (a float needs a ``.``:
    ``1e-05`` is spelled ``1.0e-05``)."""
    text = repr(float(value))
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


#: How a string travels in an xDSL pass-option literal: backslash, quote, newline and tab
#: are escaped; a carriage return, form feed or vertical tab has no escape there and
#: becomes a space (in a `format` string, as in its `${FILE:...}` substitutions, they
#: only separate words).
_OPTION_ESCAPES = str.maketrans(
    {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": " ", "\f": " ", "\v": " "}
)


def _string(value: str) -> str:
    """A string as a quoted pass-option value."""
    return '"' + value.translate(_OPTION_ESCAPES) + '"'


def _without_state(model: Model) -> Model:
    """`model` as the user sees it: its inputs and outputs less the state's (for
    binding metafile entries; the module is shared, not rewritten)."""
    if not model.state:
        return model
    state_inputs = {s.input for s in model.state}
    state_outputs = {s.output for s in model.state}
    return Model(
        model.module,
        model.weights,
        [info for i, info in enumerate(model.inputs) if i not in state_inputs],
        [info for i, info in enumerate(model.outputs) if i not in state_outputs],
        model.source,
        dict(model.metadata),
    )


def _spread(bound: list[_T | None], skipped: set[int], total: int) -> list[_T | None]:
    """`bound` (one entry per user input or output) at its place among `total`, with
    None at the `skipped` (state) positions."""
    entries = iter(bound)
    return [None if i in skipped else next(entries) for i in range(total)]


def _bind_outputs(model: Model, metafile: Metafile, where: str) -> list[OutputSpec | None]:
    """The metafile output entry of each model output (None: not listed). Named entries
    already chose and ordered the outputs (the importer cut the model there)."""
    entries = list(metafile.outputs)
    if not entries:
        return [None] * len(model.outputs)
    if entries[0].name is None and len(entries) != len(model.outputs):
        raise SynapcError(
            f"{where}: outputs: {len(entries)} entries without names for a model with "
            f"{len(model.outputs)} outputs"
        )
    return list(entries)
