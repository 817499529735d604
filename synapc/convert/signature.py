"""The converted model's signature: the metafile's `inputs` / `outputs` bound to the
model's tensors, and the package descriptions of the converted model's inputs and
outputs.

`import_with_metafile` imports the model with the metafile's input shapes and reports
any problem with them in the metafile's words (``inputs[0].shape``). The signature
rewrites the metafile asks for (`data_layout`, dequantized outputs, formats and
normalization) are passes (`apply-layout`, `dequantize-outputs`, `describe-io`) that
`synapc.convert.pipeline` puts in the conversion pipeline; they record what the runtime
needs on `@main`'s arguments and results, which `input_specs` / `output_specs` read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from synapc.backends.package import Quantization, TensorSpec
from synapc.errors import SynapcError
from synapc.io_attributes import (
    FORMAT,
    MEANS,
    SCALE,
    io_float,
    io_floats,
    io_string,
    layout_of,
)
from synapc.metafile import InputSpec, Metafile
from synapc.model import Model, TensorInfo
from synapc.passes.layer_patterns import close_names

if TYPE_CHECKING:
    import onnx


def source_layout(model_path: str) -> str:
    """The I/O layout a source framework uses: TFLite is channels-last, ONNX and
    TorchScript channels-first; synap IR files are channels-last like the dialect."""
    suffix = model_path.rsplit(".", 1)[-1].lower() if "." in model_path else ""
    return "nchw" if suffix in ("onnx", "pt", "pth", "torchscript") else "nhwc"


def bind_entries(names: Sequence[str], meta: Metafile, where: str) -> list[int | None]:
    """The index in `meta.inputs` of the entry of each model input named in `names`, in
    model order (None: not listed).

    Named entries must name model inputs; unnamed ones apply in order. Cutting the graph
    at an internal tensor is not supported yet and says so."""
    entries = list(meta.inputs)
    if not entries:
        return [None] * len(names)
    if entries[0].name is None:
        if len(entries) != len(names):
            raise SynapcError(
                f"{where}: inputs: {len(entries)} entries without names for "
                f"a model with {len(names)} inputs"
            )
        return list(range(len(entries)))
    bound: list[int | None] = [None] * len(names)
    for k, entry in enumerate(entries):
        assert entry.name is not None
        if entry.name not in names:
            raise SynapcError(
                f"{where}: inputs[{k}].name: '{entry.name}' is not an input of the model "
                f"(inputs: {close_names(entry.name, names)}); cutting the graph at an "
                "internal tensor is not supported by synapc yet"
            )
        bound[list(names).index(entry.name)] = k
    return bound


def bind_inputs(model: Model, meta: Metafile, where: str) -> list[InputSpec | None]:
    """The metafile input entry of each model input, in model order (None: not listed);
    see `bind_entries`."""
    return [
        None if k is None else meta.inputs[k]
        for k in bind_entries([i.name for i in model.inputs], meta, where)
    ]


def check_input_shapes(
    model: Model,
    bound: list[InputSpec | None],
    where: str,
    meta: Metafile | None = None,
) -> None:
    """Each given `shape` must be the input's shape (in the source model's layout). With
    `meta`, errors name the entry's own index in the metafile (named entries may come in
    another order than the model's inputs)."""
    for k, (info, entry) in enumerate(zip(model.inputs, bound, strict=True)):
        if entry is not None and entry.shape is not None and entry.shape != info.shape:
            index = k if meta is None else _entry_index(meta, entry, k)
            raise SynapcError(
                f"{where}: inputs[{index}].shape: {list(entry.shape)} does not "
                f"match input '{info.name}' of shape {list(info.shape)}"
            )


def _entry_index(meta: Metafile, entry: InputSpec, default: int) -> int:
    return next((i for i, e in enumerate(meta.inputs) if e is entry), default)


def import_with_metafile(
    path: Path, meta: Metafile, where: str, outputs: Sequence[str] | None = None
) -> Model:
    """Import the model file `path` (cut at `outputs`) with the input shapes `meta` gives.

    Problems with those shapes are reported in the metafile's words, naming the field
    (``inputs[0].shape``) and the input, never the importer's `input_shapes` argument:
    an ONNX input's given shape must match its static dimensions, and an input whose
    shape is not static (an ONNX input with unknown dimensions past the batch one, every
    TorchScript input) needs `shape` in its entry; a named entry may leave `shape` out
    where the model's shape is static; a TFLite input's given shape must match the
    known dimensions of its shape_signature, and one with unknown (-1) dimensions past
    the batch one needs `shape`. An output name that is no tensor of the model is named as
    the metafile's ``outputs[k].name``."""
    from synapc.importers.cut import UnknownOutputError, one_line

    try:
        return _import_with_shapes(path, meta, where, outputs)
    except UnknownOutputError as error:
        index = next((k for k, e in enumerate(meta.outputs) if e.name == error.name), None)
        field = "outputs" if index is None else f"outputs[{index}].name"
        raise SynapcError(
            f"{where}: {field}: '{one_line(error.name)}' is not a tensor of "
            f"{path.name}; {error.hint}"
        ) from None


def _import_with_shapes(
    path: Path, meta: Metafile, where: str, outputs: Sequence[str] | None
) -> Model:
    """`import_with_metafile` without the rewording of unknown output names."""
    from synapc.importers import import_model

    suffix = path.suffix.lower()
    if suffix == ".onnx" and path.is_file():
        from synapc.importers.onnx import import_onnx, load_onnx

        proto = load_onnx(path)
        initializers = {init.name for init in proto.graph.initializer}
        graph_inputs = [i for i in proto.graph.input if i.name not in initializers]
        if not all(i.type.HasField("tensor_type") for i in graph_inputs):
            return import_onnx(path, None, proto=proto, outputs=outputs)  # says which
        names = [i.name for i in graph_inputs]
        declared = [_onnx_dims(i) for i in graph_inputs]
        shapes = _checked_shapes(path, names, declared, meta, where)
        return import_onnx(path, shapes or None, proto=proto, outputs=outputs)
    if suffix == ".tflite" and path.is_file():
        return _import_tflite(path, meta, where, outputs)
    if suffix not in (".torchscript", ".pt", ".pth"):
        return import_model(path, None, outputs)
    try:
        return import_model(path, _given_shapes(meta), outputs)
    except SynapcError as error:
        if "input_shapes" not in str(error):
            raise
        names = _torchscript_argument_names(path)
        try:
            _checked_shapes(path, names, [None] * len(names), meta, where)
        except SynapcError as problem:
            raise problem from None
        raise  # the metafile gave every shape: the importer's problem is another one


def _import_tflite(
    path: Path, meta: Metafile, where: str, outputs: Sequence[str] | None
) -> Model:
    """A TFLite model imported with the metafile's shapes, checked first against the
    inputs' shape_signature (-1: unknown). An unknown dimension needs the entry's
    `shape`, except a leading batch one of an input of rank 2 or more (it is 1)."""
    from synapc.importers import import_model
    from synapc.importers.tflite import input_dims

    names, declared = input_dims(path)
    shapes = _checked_shapes(path, names, declared, meta, where)
    bound = bind_entries(names, meta, where)
    for name, dims, k in zip(names, declared, bound, strict=True):
        if name not in shapes and dims == [None]:  # rank 1: no batch dimension
            raise SynapcError(_missing_shape(path, name, dims, k, meta, where))
    return import_model(path, shapes or None, outputs)


def _onnx_dims(value_info: onnx.ValueInfoProto) -> list[int | None]:
    """An ONNX graph input's dimensions, None where unknown (as the ONNX importer reads
    them)."""
    ttype = value_info.type.tensor_type
    return [
        d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None
        for d in ttype.shape.dim
    ]


def _shown(dims: Sequence[int | None]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def _checked_shapes(
    path: Path,
    names: Sequence[str],
    declared: Sequence[list[int | None] | None],
    meta: Metafile,
    where: str,
) -> dict[str, list[int]]:
    """The metafile's shape of each input, by name, after checking them against the
    `declared` dimensions (None: no shape recorded); an input whose shape is not static
    must have one (an unknown leading batch dimension defaults to 1)."""
    bound = bind_entries(names, meta, where)
    shapes: dict[str, list[int]] = {}
    for name, dims, k in zip(names, declared, bound, strict=True):
        given = None if k is None else meta.inputs[k].shape
        if given is not None:
            if dims is not None and (
                len(given) != len(dims)
                or any(d is not None and d != g for d, g in zip(dims, given, strict=True))
            ):
                raise SynapcError(
                    f"{where}: inputs[{k}].shape: {list(given)} does not match input "
                    f"'{name}' of shape {_shown(dims)}"
                )
            shapes[name] = list(given)
        elif dims is None or any(d is None for d in dims[1:]):
            raise SynapcError(_missing_shape(path, name, dims, k, meta, where))
    return shapes


def _missing_shape(
    path: Path,
    name: str,
    dims: list[int | None] | None,
    k: int | None,
    meta: Metafile,
    where: str,
) -> str:
    """The message for input `name` (entry `k`, None: not listed) whose shape is not
    static and that the metafile gives no shape."""
    why = (
        "TorchScript models record no input shapes"
        if dims is None
        else f"its shape {_shown(dims)} is not static"
    )
    if k is not None:
        return f"{where}: inputs[{k}].shape: required for input '{name}' ({why})"
    if meta.path is None and not meta.inputs:
        return (
            f"{path}: input '{name}' needs a static shape ({why}); give it in a metafile "
            f"(--meta) as inputs[0].shape, with inputs[0].name: {name}"
        )
    return (
        f"{where}: inputs: input '{name}' has no entry and needs a static shape ({why}); "
        f"add inputs[{len(meta.inputs)}] with name: {name} and its shape"
    )


def _given_shapes(meta: Metafile) -> dict[str, list[int]] | list[list[int]] | None:
    """The metafile's shapes as the importer's `input_shapes`: by name, or in order when
    the entries have no names (None when an unnamed entry has no shape)."""
    entries = list(meta.inputs)
    if not entries:
        return None
    if entries[0].name is None:
        if any(e.shape is None for e in entries):
            return None
        return [list(e.shape) for e in entries]  # type: ignore[arg-type]
    return {e.name: list(e.shape) for e in entries if e.shape is not None}  # type: ignore[misc]


def _torchscript_argument_names(path: Path) -> list[str]:
    """The forward-argument names of a TorchScript archive, as its importer names the
    model inputs."""
    from synapc.importers.torchscript.loader import frozen_graph, load_torchscript
    from synapc.importers.torchscript.translator import _argument_names

    inputs = list(frozen_graph(path, load_torchscript(path)).inputs())
    if inputs and inputs[0].type().kind() == "ClassType":
        inputs = inputs[1:]  # the frozen module itself
    return _argument_names(inputs)


def _normalization(
    info: TensorInfo, means: tuple[float, ...] | None, scale: float | None
) -> tuple[tuple[float, ...] | None, float | None]:
    """means / scale for the runtime's assign(): the metafile's (recorded in the IR by
    `describe-io`), or for an 8-bit quantized input without them its own quantization
    (mean = zero point, scale = 1 / quantization scale: assigning raw 8-bit data then
    stores it unchanged)."""
    q = info.quantization
    inferred = means is None and scale is None and q is not None
    if inferred and not q.is_per_axis and q.bitwidth == 8:
        return (float(q.zero_point),), float(1.0 / np.float64(q.scale))
    return means, scale


def quantization_of(info: TensorInfo) -> Quantization | None:
    """The package description of a tensor's quantization."""
    q = info.quantization
    if q is None:
        return None
    return Quantization(
        scale=tuple(float(s) for s in q.scales),
        zero_point=tuple(int(z) for z in q.zero_points),
        axis=q.quantized_dimension,
    )


def input_specs(model: Model) -> list[TensorSpec]:
    """Package descriptions of the model inputs, as `@main` describes them: name,
    type, layout, format, means and scale (see `synapc.io_attributes`)."""
    func = model.main
    specs = []
    for index, info in enumerate(model.inputs):
        means, scale = _normalization(
            info,
            io_floats(func, "input", index, MEANS),
            io_float(func, "input", index, SCALE),
        )
        specs.append(
            TensorSpec(
                name=info.name,
                shape=info.shape,
                data_type=info.dtype.name,
                layout=layout_of(func, "input", index),
                format=io_string(func, "input", index, FORMAT) or "",
                quantization=quantization_of(info),
                means=means,
                scale=scale,
            )
        )
    return specs


def output_specs(model: Model) -> list[TensorSpec]:
    """Package descriptions of the model outputs, as `@main` describes them (the
    metafile format kept as metadata)."""
    func = model.main
    return [
        TensorSpec(
            name=info.name,
            shape=info.shape,
            data_type=info.dtype.name,
            layout=layout_of(func, "output", index),
            format=io_string(func, "output", index, FORMAT) or "",
            quantization=quantization_of(info),
        )
        for index, info in enumerate(model.outputs)
    ]
