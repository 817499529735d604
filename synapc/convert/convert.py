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
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import TypeVar

from synapc.backends.package import StateSpec, build_package
from synapc.backends.targets import get_target
from synapc.convert import signature
from synapc.convert.executable import build_subgraph, layer_ops
from synapc.convert.model_info import layer_names, model_info
from synapc.convert.output import (
    INTERMEDIATE,
    MODEL_INFO,
    PACKAGE,
    cache_key,
    file_sha256,
    open_output,
    output_state,
)
from synapc.errors import SynapcError
from synapc.metafile import (
    Metafile,
    OutputSpec,
    load_metafile,
    model_anchors,
    parse_metafile,
)
from synapc.model import Model

__all__ = ["INTERMEDIATE", "MODEL_INFO", "PACKAGE", "Conversion", "convert"]


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
) -> Conversion:
    """Convert the model file `model` for `target` (vendor aliases accepted) into
    `out_dir`, following the metafile `meta`; `profiling` also exports every layer on
    its own (for `synapc benchmark --profiling`), `preserve` writes the IR after each
    stage to ``out_dir/intermediate``. Progress and warnings go to `log`.

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
    key = cache_key(**fields)
    # a failure or Ctrl-C at any point removes what this conversion wrote, and the
    # folder if it created it
    with open_output(out, say) as output:
        output.check_unchanged(before, key)
        cached = None if preserve else output.read_cache(key, fields)
        if cached is not None:
            say("using the cached conversion")
            files = cached
        else:
            files = _convert(path, spec.name, metafile, fields, profiling, preserve, say)
        output.write(key, fields, files)
        seconds = time.perf_counter() - start
        # said under the lock: what this process wrote is in the folder
        say(f"converted {path.name} for {spec.name} in {seconds:.1f} s: {out / PACKAGE}")
    return Conversion(out, out / PACKAGE, out / MODEL_INFO, cached is not None, seconds)


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
) -> dict[str, bytes]:
    """The files of a fresh conversion, by relative name."""
    from synapc.compiler import optimize
    from synapc.mlir_io import write_module

    where = str(metafile.path) if metafile.path is not None else "metafile"
    spec = get_target(target)
    stages: dict[str, bytes] = {}

    def keep(stage: str, model_module: object) -> None:
        if preserve:
            text = io.StringIO()
            write_module(model_module, text, with_weights=False)  # type: ignore[arg-type]
            index = sum(name.endswith(".mlir") for name in stages)
            stages[f"{INTERMEDIATE}/{index:02d}_{stage}.mlir"] = text.getvalue().encode()

    tick = time.perf_counter()
    model = signature.import_with_metafile(path, metafile, where, _cut(metafile) or None)
    say(f"imported {path.name} in {time.perf_counter() - tick:.1f} s")
    keep("imported", model.module)
    if preserve:
        stages.update({f"{INTERMEDIATE}/{n}": data for n, data in model.artifacts.items()})
    # the metafile describes the user's inputs and outputs: a streaming model's state
    # inputs and outputs are bound to no entry and keep their types and layout
    state = model.state
    user = _without_state(model)
    bound_inputs = signature.bind_inputs(user, metafile, where)
    signature.check_input_shapes(user, bound_inputs, where, metafile)
    bound_outputs = _bind_outputs(user, metafile, where)
    bound_inputs = _spread(bound_inputs, {s.input for s in state}, len(model.inputs))
    bound_outputs = _spread(bound_outputs, {s.output for s in state}, len(model.outputs))
    have = signature.source_layout(path.name)
    layout = have if metafile.data_layout == "default" else metafile.data_layout
    if state and layout not in ("default", have):
        raise SynapcError(
            f"{where}: data_layout: {layout} would transpose the state the model keeps "
            f"between runs; convert this streaming model in its own layout ({have})"
        )
    model = signature.apply_layout(model, layout, have)
    model = signature.dequantize_outputs(
        model,
        [
            metafile.dequantize_outputs or (e is not None and e.dequantize)
            if i not in {s.output for s in state}
            else False
            for i, e in enumerate(bound_outputs)
        ],
    )
    model.state = list(state)  # the signature rewrites keep every input / output index
    keep("signature", model.module)
    source_names = layer_names(model.main)

    tick = time.perf_counter()
    optimized = optimize(model)
    say(f"optimized in {time.perf_counter() - tick:.1f} s")
    keep("optimized", optimized.module)
    inputs = signature.input_specs(optimized, bound_inputs, layout)
    outputs = signature.output_specs(optimized, bound_outputs, layout)

    tick = time.perf_counter()
    subgraph = build_subgraph(optimized, spec, inputs, outputs, profiling, say)
    say(f"compiled and exported in {time.perf_counter() - tick:.1f} s")
    package = build_package(
        target=spec.name,
        source={"model": path.name, "sha256": fields["model"], "synapc": fields["synapc"]},
        inputs=inputs,
        outputs=outputs,
        output_refs=[(0, j) for j in range(len(outputs))],
        subgraphs=[subgraph],
        metadata={"metafile": fields["metafile"]},
        state=[StateSpec(s.name, s.input, s.output, s.initial) for s in optimized.state],
    )
    info = model_info(
        title=f"synapc {fields['synapc']}: {path.name} converted for {spec.name}\n"
        f"model sha256: {fields['model']}",
        func=optimized.main,
        target=spec,
        source_layer_names=source_names,
        inputs=inputs,
        outputs=outputs,
        subgraphs=[subgraph],
        layers=layer_ops(optimized.main),
    )
    return {PACKAGE: package, MODEL_INFO: info.encode(), **stages}


_T = TypeVar("_T")


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


def _cut(metafile: Metafile) -> list[str]:
    """Output tensor names where the metafile cuts the graph."""
    return [e.name for e in metafile.outputs if e.name is not None]


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
