"""`synapc.convert`: model file (+ metafile) -> `model.synap`, `model_info.txt` and
`cache/` in an output folder, as the vendor's `synap convert` writes them.

Everything is computed in memory first and written at the end (temporary names, then
renames), so bad input never leaves half-written files; the cache in ``out_dir/cache`` is
keyed by the model's hash, the metafile, the target, the profiling switch and the synapc
version, and is replaced when any of them changes. The output folder is locked for the
whole conversion, and concurrent or killed conversions never leave a mixed or partial
output: the protocol is described in `synapc.convert.output`.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from synapc.backends.package import StateSpec, build_package
from synapc.backends.targets import get_target
from synapc.convert import signature
from synapc.convert.description import describe_layers
from synapc.convert.executable import build_subgraphs, model_layers
from synapc.convert.model_info import layer_names, model_info
from synapc.convert.output import (
    INTERMEDIATE,
    MODEL_INFO,
    PACKAGE,
    REPORT,
    State,
    cache_key,
    file_sha256,
    open_output,
    output_state,
)
from synapc.convert.pipeline import (
    memory_step,
    metafile_errors,
    pipeline,
    placement_steps,
    run_pipeline,
)
from synapc.convert.progress import STEPS, StepProgress
from synapc.errors import SynapcError
from synapc.metafile import (
    Metafile,
    load_metafile,
    model_anchors,
    parse_metafile,
)
from synapc.model import Model
from synapc.passes.assign_delegates import record_delegate_map
from synapc.passes.insert_preprocess import package_metadata

__all__ = [
    "INTERMEDIATE",
    "MODEL_INFO",
    "PACKAGE",
    "Conversion",
    "conversion_pipeline",
    "convert",
    "package_files",
    "write_output",
]


@dataclass(frozen=True)
class Conversion:
    """What `convert` wrote: the package, the model info and whether the cache served
    them."""

    out_dir: Path
    package: Path
    model_info: Path
    cached: bool
    seconds: float


def convert(
    model: str | os.PathLike[str],
    target: str = "VS680",
    out_dir: str | os.PathLike[str] = "out",
    meta: str | os.PathLike[str] | None = None,
    *,
    profiling: bool = False,
    preserve: bool = False,
    log: Callable[[str], None] | None = None,
    progress: bool = False,
    report: bool = False,
) -> Conversion:
    """Convert the model file `model` for `target` (vendor aliases accepted) into
    `out_dir`, following the metafile `meta`; `profiling` also exports every layer on
    its own (for `synapc benchmark --profiling`), `preserve` writes the IR after each
    stage to ``out_dir/intermediate``, `report` writes ``report.html`` (`synapc.report`).
    Progress and warnings go to `log`; `progress` shows the steps (import, optimize,
    calibrate, compile, export) and calibration's batches: bars on a terminal, else
    lines through `log` (`synapc.convert.progress`).
    A metafile ``quantization`` section with a dataset quantizes the model (see
    `synapc.quantization.flow`) and writes ``quantization_info.txt`` too.

    The output folder is held under an exclusive lock (``out_dir/.synapc.lock``) from
    the cache check to the last rename; a conversion that waited for it while another
    conversion wrote a different model there fails with a `SynapcError` (the other's
    output stays), one that waited for the same conversion is served from the cache.
    See `synapc.convert.output` for the whole protocol."""
    start = time.perf_counter()
    say = log or (lambda message: None)
    out = Path(out_dir)
    # what the folder held when this conversion started: another conversion writing
    # it before this one gets the lock is a conflict (Output.check_unchanged)
    before = output_state(out)
    path = Path(model)
    if not path.is_file():
        raise SynapcError(f"{path}: no such model file")
    spec = get_target(target)
    metafile = _metafile(meta, path)
    metafile.require_supported()
    for warning in metafile.warnings():
        say(f"warning: {warning}")
    fields = {
        "model": file_sha256(path),
        "metafile": metafile.canonical(),
        "target": spec.name,
        "profiling": str(profiling),
        "synapc": version("synapc"),
    }
    quantization = metafile.quantization
    if quantization is not None and quantization.dataset:
        from synapc.quantization.dataset import dataset_digest

        where = str(metafile.path) if metafile.path is not None else "metafile"
        fields["dataset"] = dataset_digest(
            quantization.dataset, f"{where}: quantization.dataset"
        )
    timing: list[float] = []

    def written(cached: bool) -> None:
        timing.append(time.perf_counter() - start)
        say(f"converted {path.name} for {spec.name} in {timing[0]:.1f} s: {out / PACKAGE}")

    quantizing = quantization is not None and bool(quantization.dataset)
    steps = [s for s in STEPS if s != "calibrate" or quantizing]

    def make() -> dict[str, bytes]:
        with StepProgress(steps, progress, say) as shown:
            files = _convert(
                path, spec.name, metafile, fields, profiling, preserve, say, shown
            )
            if report:  # part of the export step; a cached conversion's comes from derive
                shown.detail(REPORT)
                files.update(_report(files))
            return files

    def derive(files: dict[str, bytes]) -> dict[str, bytes]:
        return _report(files) if report and REPORT not in files else {}

    cached = write_output(
        out,
        before,
        fields,
        make,
        say,
        use_cache=not preserve,
        written=written,
        derive=derive,
    )
    return Conversion(out, out / PACKAGE, out / MODEL_INFO, cached, timing[0])


def write_output(
    out: Path,
    before: State,
    fields: dict[str, str],
    make: Callable[[], dict[str, bytes]],
    say: Callable[[str], None],
    *,
    use_cache: bool = True,
    written: Callable[[bool], None] | None = None,
    derive: Callable[[dict[str, bytes]], dict[str, bytes]] | None = None,
) -> bool:
    """Write a conversion's files into the output folder `out` with the protocol of
    `synapc.convert.output` (lock, conflict check against `before`, the cache of
    `fields`, all or nothing): the cached files when they are this conversion's (and
    `use_cache`), else `make()`'s, with the files `derive` makes of them (not cached:
    the report). `written(cached)` runs once they are in place, still
    under the lock. Whether the cache served them. A failure or Ctrl-C at any point
    removes what this conversion wrote, and the folder if it created it."""
    key = cache_key(**fields)
    with open_output(out, say) as output:
        output.check_unchanged(before, key)
        cached = output.read_cache(key, fields) if use_cache else None
        if cached is not None:
            say("using the cached conversion")
        files = cached if cached is not None else make()
        if derive is not None:
            files = {**files, **derive(files)}
        output.write(key, fields, files)
        if written is not None:
            written(cached is not None)
    return cached is not None


def _report(files: dict[str, bytes]) -> dict[str, bytes]:
    """``report.html`` of a conversion's package."""
    from synapc.report import report_html_of_bytes

    return {REPORT: report_html_of_bytes(files[PACKAGE], PACKAGE).encode("utf-8")}


def _metafile(meta: str | os.PathLike[str] | None, model: Path) -> Metafile:
    if meta is None:
        return parse_metafile("{}")
    return load_metafile(meta, anchors=lambda: model_anchors(model))


def _convert(
    path: Path,
    target: str,
    metafile: Metafile,
    fields: dict[str, str],
    profiling: bool,
    preserve: bool,
    say: Callable[[str], None],
    steps: StepProgress,
) -> dict[str, bytes]:
    """The files of a fresh conversion, by relative name; each step shown on `steps`."""
    from synapc.mlir_io import write_module

    stages: dict[str, bytes] = {}

    def keep(stage: str, model_module: object) -> None:
        if preserve:
            text = io.StringIO()
            write_module(model_module, text, with_weights=False)  # type: ignore[arg-type]
            index = sum(name.endswith(".mlir") for name in stages)
            stages[f"{INTERMEDIATE}/{index:02d}_{stage}.mlir"] = text.getvalue().encode()

    where = str(metafile.path) if metafile.path is not None else "metafile"
    spec = get_target(target)
    steps.start("import", path.name)
    tick = time.perf_counter()
    model, passes, placement = _imported(path, metafile, where, spec.name)
    say(f"imported {path.name} in {time.perf_counter() - tick:.1f} s")
    keep("imported", model.module)
    if preserve:
        stages.update({f"{INTERMEDIATE}/{n}": data for n, data in model.artifacts.items()})
    source_names = layer_names(model.main)
    say(f"pipeline: {passes}")
    steps.start("optimize")

    def between(
        previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
    ) -> None:
        # the stages --preserve writes: the signature passes, then optimize
        if following is not None and following.name == "optimize":
            keep("signature", module)
        if previous is not None and previous.name == "optimize":
            keep("optimized", module)

    tick = time.perf_counter()
    with metafile_errors(None if metafile.path is None else where):
        optimized, report, sqnr = _optimized(
            model, passes, metafile, where, between, keep, say, steps
        )
        if placement:
            optimized = run_pipeline(optimized, placement)
            keep("placed", optimized.module)
    say(f"optimized in {time.perf_counter() - tick:.1f} s")
    files = package_files(
        optimized,
        spec.name,
        path.name,
        fields,
        source_names,
        {"metafile": fields["metafile"]},
        profiling,
        say,
        sqnr,
        steps,
    )
    if report:
        title = f"synapc {fields['synapc']}: {path.name} quantized for {spec.name}"
        report = {name: title.encode() + b"\n" + data for name, data in report.items()}
    return {**files, **report, **stages}


def _optimized(
    model: Model,
    passes: str,
    metafile: Metafile,
    where: str,
    between: Callable[[ModulePass | None, ModuleOp, ModulePass | None], None],
    keep: Callable[[str, object], None],
    say: Callable[[str], None],
    steps: StepProgress | None = None,
) -> tuple[Model, dict[str, bytes], dict[str, float] | None]:
    """The pipeline `passes` run on the imported `model`, calibrating and quantizing
    when the metafile asks (`_quantized`: then with ``quantization_info.txt`` and the
    SQNR of each layer)."""
    quantization = metafile.quantization
    if quantization is not None and quantization.dataset:
        return _quantized(model, passes, metafile, where, between, keep, say, steps)
    return run_pipeline(model, passes, between), {}, None


def _quantized(
    model: Model,
    passes: str,
    metafile: Metafile,
    where: str,
    between: Callable[[ModulePass | None, ModuleOp, ModulePass | None], None],
    keep: Callable[[str, object], None],
    say: Callable[[str], None],
    steps: StepProgress | None,
) -> tuple[Model, dict[str, bytes], dict[str, float]]:
    """The pipeline `passes` with calibration between its first ``optimize`` and its
    ``quantize`` step (calibration is not a pass), ``quantization_info.txt`` and the
    SQNR of each layer (by layer key)."""
    from synapc.convert.pipeline import settings
    from synapc.quantization.dataset import Dataset, input_feeds
    from synapc.quantization.flow import (
        HISTOGRAM_ALGORITHMS,
        QUANTIZATION_INFO,
        Progress,
        calibrate_and_quantize,
        layer_sqnr,
        quantization_info,
        quantize_step,
    )

    quantization = metafile.quantization
    assert quantization is not None
    chosen = settings(metafile)
    step = quantize_step(chosen)
    head, found, tail = passes.partition(f",{step},")
    if not found:
        raise SynapcError(f"internal error: no quantize step in the pipeline {passes}")
    optimized = run_pipeline(model, head, between)
    data = Dataset(
        quantization.dataset, input_feeds(optimized), field=f"{where}: quantization.dataset"
    )
    histograms = chosen.algorithm in HISTOGRAM_ALGORITHMS
    show = steps is not None and steps.show
    if steps is not None:
        steps.start("calibrate", f"{data.batch_count} batches")
    bar = Progress(data.batch_count * (3 if histograms else 2), show, say)
    tick = time.perf_counter()
    try:
        # mixed precision and bias correction quantize trial mixes: only the final
        # one is --preserve'd (as "annotated" and the stages after it)
        result = calibrate_and_quantize(
            optimized,
            data,
            chosen,
            lambda trial: run_pipeline(trial, f"{step},{tail}"),
            field=f"{where}: quantization.data_type",
            progress=bar,
        )
        annotated = result.annotated
        keep("annotated", annotated.module)
        quantized = run_pipeline(annotated, f"{step},{tail}", _after(keep))
        sqnr = layer_sqnr(annotated, quantized, data, progress=bar)
    finally:
        bar.close()
    say(f"quantized in {time.perf_counter() - tick:.1f} s")
    info = quantization_info(annotated, quantized, chosen, sqnr, raised=result.raised)
    return quantized, {QUANTIZATION_INFO: info.encode()}, sqnr


def _after(
    keep: Callable[[str, object], None],
) -> Callable[[ModulePass | None, ModuleOp, ModulePass | None], None]:
    """The --preserve callback of the passes after calibration: the IR after each
    (``quantized``, then ``quantized_optimized`` for the final optimize)."""

    def callback(
        previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
    ) -> None:
        if previous is not None:
            keep(
                "quantized" if previous.name == "quantize" else "quantized_optimized",
                module,
            )

    return callback


def package_files(
    optimized: Model,
    target: str,
    source: str,
    fields: dict[str, str],
    source_layer_names: list[str],
    metadata: dict[str, str],
    profiling: bool = False,
    say: Callable[[str], None] | None = None,
    sqnr: Mapping[str, float] | None = None,
    steps: StepProgress | None = None,
) -> dict[str, bytes]:
    """`PACKAGE` and `MODEL_INFO` of the converted model `optimized` (after the
    pipeline) for `target`: compiled, exported and described; `source` names the model
    (file), `fields` are the conversion's cache fields (its "model" hash and "synapc"
    version go into the package), `metadata` is added to the package's (with the
    preprocessing description of `insert-preprocess`); `sqnr` is a quantized model's
    per-layer SQNR, for the package's description (`describe_layers`); `steps` shows
    the compile and export steps."""
    say = say or (lambda message: None)
    spec = get_target(target)
    inputs = signature.input_specs(optimized)
    outputs = signature.output_specs(optimized)

    tick = time.perf_counter()
    if steps is not None:
        steps.start("compile")
    subgraphs, output_refs = build_subgraphs(
        optimized, spec, inputs, outputs, profiling, say if steps is None else steps.detail
    )
    say(f"compiled in {time.perf_counter() - tick:.1f} s")
    if steps is not None:
        steps.start("export")
    package = build_package(
        target=spec.name,
        source={"model": source, "sha256": fields["model"], "synapc": fields["synapc"]},
        inputs=inputs,
        outputs=outputs,
        output_refs=output_refs,
        subgraphs=subgraphs,
        metadata={**metadata, **package_metadata(optimized.main)},
        state=[StateSpec(s.name, s.input, s.output, s.initial) for s in optimized.state],
        description=describe_layers(optimized.main, spec, sqnr),
    )
    info = model_info(
        title=f"synapc {fields['synapc']}: {source} converted for {spec.name}\n"
        f"model sha256: {fields['model']}",
        func=optimized.main,
        target=spec,
        source_layer_names=source_layer_names,
        inputs=inputs,
        outputs=outputs,
        subgraphs=subgraphs,
        layers=model_layers(optimized.main, spec),
    )
    return {PACKAGE: package, MODEL_INFO: info.encode()}


def conversion_pipeline(
    model: str | os.PathLike[str],
    meta: str | os.PathLike[str] | None = None,
    target: str = "VS680",
) -> str:
    """The pass pipeline (a ``-p`` spec for `synapc-opt`) that `convert` runs on the
    imported model file `model` for the metafile `meta` and `target`: the model is
    imported and the metafile checked against it, nothing is compiled or written."""
    path, metafile, where = _opened(model, meta)
    _, passes, placement = _imported(path, metafile, where, target)
    return f"{passes},{placement}" if placement else passes


def converted_model(
    model: str | os.PathLike[str],
    meta: str | os.PathLike[str] | None = None,
    target: str = "VS680",
    say: Callable[[str], None] = lambda _: None,
) -> Model:
    """The IR `convert` compiles for the model file `model` and the metafile `meta`:
    imported (cut where the metafile says), with its signature, preprocessing and
    optimizations, and quantized when the metafile asks (calibration included), not
    yet split by delegate. Nothing is compiled or written."""
    path, metafile, where = _opened(model, meta)
    imported, passes, _ = _imported(path, metafile, where, target)
    with metafile_errors(None if metafile.path is None else where):
        return _optimized(imported, passes, metafile, where, _ignore, _ignore, say)[0]


def _ignore(*_: object) -> None:
    """A --preserve callback that keeps nothing."""


def _opened(
    model: str | os.PathLike[str], meta: str | os.PathLike[str] | None
) -> tuple[Path, Metafile, str]:
    """The model file's path (which must exist), its metafile read and checked, and
    how errors name the metafile."""
    path = Path(model)
    if not path.is_file():
        raise SynapcError(f"{path}: no such model file")
    metafile = _metafile(meta, path)
    metafile.require_supported()
    return path, metafile, str(metafile.path) if metafile.path is not None else "metafile"


def _imported(
    path: Path, metafile: Metafile, where: str, target: str
) -> tuple[Model, str, str]:
    """The model file imported (cut where the metafile says) with the metafile's
    shapes (and its delegate map, for ``assign-delegates``), the pipeline that
    converts it, and the steps run after calibration: the placement steps that split
    it by delegate for `target` (none when the model stays whole) and the memory
    plan."""
    model = signature.import_with_metafile(path, metafile, where, _cut(metafile) or None)
    if isinstance(metafile.delegate, tuple):
        record_delegate_map(model.module, metafile.delegate)
    layout = signature.source_layout(path.name)
    passes = pipeline(model, metafile, where, layout)
    return (
        model,
        passes,
        ",".join([*placement_steps(metafile, target, where), memory_step(target)]),
    )


def _cut(metafile: Metafile) -> list[str]:
    """Output tensor names where the metafile cuts the graph."""
    return [e.name for e in metafile.outputs if e.name is not None]
