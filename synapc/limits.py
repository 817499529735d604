"""Documented resource limits, checked before anything is allocated.

A model, metafile or package from the internet can ask for a 2**62-element tensor, a
loop folded a billion times or a zip member that inflates to a terabyte. synapc checks
every size it reads against these limits first and refuses with a `SynapcError` naming
the file, tensor or field and the limit, instead of allocating and dying.

Each limit is a setting: `SYNAPC_<FIELD>` in the environment (e.g.
`SYNAPC_MAX_TENSOR_ELEMENTS=1000000000`) sets the default of a process, and
`use_limits(field=value)` changes it for a block of code. The defaults and their reasons
are listed in docs/limits.md.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from synapc.errors import SynapcError

_KIB, _MIB, _GIB = 1 << 10, 1 << 20, 1 << 30


@dataclasses.dataclass(frozen=True)
class Limits:
    """The limits in force; every field is a count (of elements, bytes, iterations,
    dimensions, nesting levels, values, characters or members)."""

    #: elements of any one tensor (activation, weight or folded constant)
    max_tensor_elements: int = 1 << 28
    #: bytes of any one tensor
    max_tensor_bytes: int = 2 * _GIB
    #: bytes of all the constants (weights) of one model together
    max_constant_bytes: int = 4 * _GIB
    #: elements of a tensor that constant folding materializes; a larger result is left
    #: to run on the target instead
    max_fold_elements: int = 1 << 22
    #: iterations of a Loop / Scan (ONNX) or WHILE (TFLite) folded at import
    max_loop_iterations: int = 1 << 12
    #: body nodes converted by unrolling ONNX Loop / Scan nodes that run on the target
    #: (iterations x body nodes, nested bodies included), in one import
    max_unrolled_nodes: int = 1 << 15
    #: bytes of a model file read (ONNX protobufs cannot exceed 2 GiB anyway)
    max_model_file_bytes: int = 4 * _GIB
    #: bytes of a conversion metafile
    max_metafile_bytes: int = 1 * _MIB
    #: bytes of a file that `${FILE:path}` substitutes into a metafile
    max_substituted_file_bytes: int = 64 * _KIB
    #: bytes of a dataset (calibration) file
    max_dataset_file_bytes: int = 1 * _GIB
    #: bytes of a model.synap package
    max_package_bytes: int = 8 * _GIB
    #: bytes of one member of a package
    max_package_member_bytes: int = 4 * _GIB
    #: bytes of a JSON document inside a package or cache
    max_json_bytes: int = 16 * _MIB
    #: nesting depth of a JSON document inside a package or cache
    max_json_depth: int = 32
    #: dimensions of any one tensor (model, metafile or package); numpy itself holds at
    #: most 64 (32 before numpy 2)
    max_tensor_rank: int = 32
    #: tensors, operators, buffers, operator codes or subgraphs of one TFLite model, and
    #: the inputs or outputs of one of its subgraphs or operators
    max_graph_items: int = 1 << 20
    #: nesting depth of subgraphs (ONNX If / Loop / Scan bodies inside each other)
    max_graph_nesting: int = 16
    #: elements one constant fold computes in all (every result of every loop iteration,
    #: a matrix product's multiply-adds, a per-node overhead)
    max_fold_work_elements: int = 1 << 28
    #: values (YAML nodes) a metafile writes out, before aliases are expanded
    max_metafile_values: int = 20_000
    #: characters of a tensor name given in a metafile
    max_name_chars: int = 1024
    #: bytes that `${FILE:path}` and `${ANCHORS}` add to one metafile altogether
    max_substituted_text_bytes: int = 16 * _MIB
    #: members of a model.synap package
    max_package_members: int = 100_000
    #: bytes of the model_info.txt of a cached conversion, read back from the cache
    max_model_info_bytes: int = 256 * _MIB


def _from_environment() -> Limits:
    """The defaults, with `SYNAPC_<FIELD>` environment variables applied."""
    changes = {}
    for field in dataclasses.fields(Limits):
        name = f"SYNAPC_{field.name.upper()}"
        text = os.environ.get(name)
        if text is None:
            continue
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise SynapcError(f"{name}={text!r}: expected a whole number") from None
        if value < 1:
            raise SynapcError(f"{name}={text!r}: must be at least 1")
        changes[field.name] = value
    return Limits(**changes)


_current: ContextVar[Limits | None] = ContextVar("synapc_limits", default=None)


def limits() -> Limits:
    """The limits in force in this context."""
    current = _current.get()
    if current is None:
        current = _from_environment()
        _current.set(current)
    return current


@contextmanager
def use_limits(**changes: int) -> Iterator[Limits]:
    """Change limits (by field name) for the enclosed block."""
    unknown = set(changes) - {f.name for f in dataclasses.fields(Limits)}
    if unknown:
        raise TypeError(f"unknown limits: {', '.join(sorted(unknown))}")
    token = _current.set(dataclasses.replace(limits(), **changes))
    try:
        yield limits()
    finally:
        _current.reset(token)


def check_count(value: int, limit_name: str, what: str) -> None:
    """Refuse `value` (elements, bytes or iterations of `what`, which names the file
    and tensor, field or member) when it exceeds the limit `limit_name`."""
    limit = getattr(limits(), limit_name)
    if value > limit:
        raise SynapcError(
            f"{what}: {value:,} exceeds the limit of {limit:,} "
            f"(SYNAPC_{limit_name.upper()} raises it)"
        )


def check_tensor(shape: tuple[int, ...] | list[int], itemsize: int, what: str) -> None:
    """Refuse a tensor whose element or byte count exceeds the limits (computed in
    Python integers, so a 2**62 dimension cannot overflow), or with a negative
    dimension."""
    elements = 1
    for dim in shape:
        if dim < 0:
            raise SynapcError(f"{what}: negative dimension in shape {list(shape)}")
        elements *= int(dim)
    check_count(elements, "max_tensor_elements", f"{what} (elements of {list(shape)})")
    check_count(elements * itemsize, "max_tensor_bytes", f"{what} (bytes)")
