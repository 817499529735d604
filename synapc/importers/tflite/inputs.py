"""The shapes of a TFLite model's inputs: the file's, or its shape_signature's with the
unknown (-1) dimensions given by the caller.

LiteRT allocates every input with its `shape` field until the caller resizes it, and
`ResizeInputTensorStrict` only lets the caller change the dimensions that the input's
`shape_signature` marks -1; on a resize every other tensor's shape is worked out again by
the operators. Where the signature says -1, `shape` only holds the converter's placeholder
(1): for the number of audio samples or frames that placeholder is no shape anyone means,
so synapc asks for those dimensions instead of compiling the placeholder. The one
exception is a leading -1 of an input of rank 2 or more, the batch dimension, which is 1
as for ONNX inputs (the ONNX importer's convention, and LiteRT's own placeholder there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from synapc.errors import SynapcError
from synapc.importers.tflite.flatbuffer import display, read_model
from synapc.limits import check_tensor

if TYPE_CHECKING:
    from synapc.importers.tflite.reader import Importer, InputShapes


def shown(dims: Sequence[int | None]) -> str:
    """``[?, 16000]`` for dimensions with unknown ones (-1 or None)."""
    return "[" + ", ".join("?" if d is None or d < 0 else str(d) for d in dims) + "]"


def resolve_input_shapes(imp: Importer, inputs: Sequence[int]) -> None:
    """Record the shape of each model input in `imp.shapes`, from `imp.input_shapes`
    where given; refuse what LiteRT's strict resize would refuse and unknown dimensions
    nothing gives."""
    names = [imp.tensor_name(t) for t in inputs]
    given = _given_by_input(imp, names)
    for t, name, shape in zip(inputs, names, given, strict=True):
        tensor = imp.tensor(t)
        signature = imp.fixed_dims(t)
        where = f"{imp.path}: input '{display(name)}'"
        if len(signature) != len(tensor.shape) or any(d < -1 for d in signature):
            raise SynapcError(
                f"{where}: shape_signature {list(signature)} does not fit shape "
                f"{list(tensor.shape)}"
            )
        if any(s >= 0 and s != d for s, d in zip(signature, tensor.shape, strict=True)):
            raise SynapcError(
                f"{where}: shape_signature {list(signature)} contradicts shape "
                f"{list(tensor.shape)}"
            )
        resolved = (
            _default_shape(where, name, signature)
            if shape is None
            else _given_shape(where, shape, signature)
        )
        itemsize = imp.numpy_dtype(t).itemsize
        check_tensor(resolved, itemsize, where)
        imp.shapes[t] = resolved


def _given_by_input(imp: Importer, names: list[str]) -> list[Sequence[int] | None]:
    """`imp.input_shapes` as one entry (None: not given) per model input."""
    given: InputShapes = imp.input_shapes
    if given is None:
        return [None] * len(names)
    if isinstance(given, Mapping):
        unknown = [n for n in given if n not in names]
        if unknown:
            listed = ", ".join(f"'{display(n)}'" for n in names)
            raise SynapcError(
                f"{imp.path}: input_shapes names '{display(str(unknown[0]))}', which is "
                f"not an input of the model (inputs: {listed})"
            )
        return [given.get(n) for n in names]
    if len(given) > len(names):
        raise SynapcError(
            f"{imp.path}: input_shapes gives {len(given)} shapes for a model with "
            f"{len(names)} inputs"
        )
    return [*given, *[None] * (len(names) - len(given))]


def _default_shape(where: str, name: str, signature: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of an input nothing gives: its signature, a leading (batch) -1 of rank
    2 or more being 1; any other -1 is refused with how to give it."""
    shape = [
        1 if d == -1 and i == 0 and len(signature) > 1 else d
        for i, d in enumerate(signature)
    ]
    if -1 in shape:
        unknown = [i for i, d in enumerate(shape) if d == -1]
        which = "dimension" if len(unknown) == 1 else "dimensions"
        raise SynapcError(
            f"{where} has shape {shown(signature)}: the size of {which} "
            f"{', '.join(map(str, unknown))} is unknown (-1 in its shape_signature); "
            f"give its shape with input_shapes={{'{display(name)}': [...]}} (synapc "
            "convert: the metafile's inputs[].shape)"
        )
    return tuple(shape)


def _given_shape(
    where: str, given: Sequence[int], signature: tuple[int, ...]
) -> tuple[int, ...]:
    """A given shape, checked against the signature as `ResizeInputTensorStrict` does:
    same rank, the known dimensions unchanged, unknown ones at least 1."""
    try:
        shape = tuple(int(d) for d in given)
    except (TypeError, ValueError):
        raise SynapcError(f"{where}: input_shapes gives {given!r}, not a shape") from None
    what = f"{where}: input_shapes gives {list(shape)}"
    if len(shape) != len(signature):
        raise SynapcError(
            f"{what}, but the input has rank {len(signature)} (shape {shown(signature)})"
        )
    for i, (size, fixed) in enumerate(zip(shape, signature, strict=True)):
        if fixed >= 0 and size != fixed:
            raise SynapcError(
                f"{what}, but dimension {i} of the input is {fixed} (shape "
                f"{shown(signature)}; only the -1 dimensions of its shape_signature "
                "can be chosen)"
            )
        if size < 1:
            raise SynapcError(f"{what}: dimension {i} must be at least 1")
    return shape


def input_dims(path: Path) -> tuple[list[str], list[list[int | None]]]:
    """The names of a `.tflite` file's inputs and their dimensions, None where the
    shape_signature says -1 (for checking a metafile's shapes before import)."""
    from synapc.importers.tflite.reader import read_tflite_file

    model = read_model(path, read_tflite_file(path)).main
    names: list[str] = []
    dims: list[list[int | None]] = []
    for t in model.inputs:
        if not 0 <= t < len(model.tensors):
            raise SynapcError(
                f"{path}: model input is tensor {t}, but the subgraph has "
                f"{len(model.tensors)} tensors"
            )
        tensor = model.tensors[t]
        names.append(tensor.name or f"tensor_{t}")
        signature = tensor.shape_signature
        signature = signature if -1 in signature else tensor.shape
        dims.append([None if d < 0 else d for d in signature])
    return names, dims
