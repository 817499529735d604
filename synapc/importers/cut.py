"""Cutting a model at named tensors: the checks and the graph walk the importers share.

A metafile's ``outputs[].name`` names a tensor where conversion stops; everything after
it is pruned. The importers do not convert the whole graph and drop the rest afterwards:
they first find the operators the requested tensors depend on (`ancestors`) and convert
only those, so an operator synapc does not support downstream of the cut (typically a
detection model's post-processing) never fails the import.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from synapc.errors import SynapcError

#: A tensor key: an ONNX tensor name or a TFLite tensor index.
T = TypeVar("T", bound=Hashable)

#: How many close names an unknown-output error lists.
CLOSE_NAMES = 5


def check_requested(path: str | os.PathLike[str], outputs: Sequence[str]) -> list[str]:
    """The requested output names as a list: non-empty strings, at least one, none twice
    (each model output is one tensor with a distinct name)."""
    if isinstance(outputs, str | bytes):
        raise SynapcError(f"{path}: outputs must be a list of tensor names, not one string")
    names = list(outputs)
    if not names:
        raise SynapcError(f"{path}: outputs is empty; name at least one tensor")
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name:
            raise SynapcError(f"{path}: output name {name!r} is not a non-empty string")
        if name in seen:
            raise SynapcError(f"{path}: output '{name}' is requested twice")
        seen.add(name)
    return names


def unknown_output(
    path: str | os.PathLike[str], name: str, known: Iterable[str]
) -> SynapcError:
    """The one-line error for an output name that is no tensor of the model, listing
    the closest tensor names so that a typo is easy to fix."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=CLOSE_NAMES, cutoff=0.4)
    hint = (
        "closest names: " + ", ".join(f"'{one_line(c)}'" for c in close)
        if close
        else "no tensor has a similar name"
    )
    return UnknownOutputError(path, name, hint)


class UnknownOutputError(SynapcError):
    """An output name that is no tensor of the model; `name` and `hint` (the closest
    names) let a caller that took the name from elsewhere (a metafile) say so."""

    def __init__(self, path: str | os.PathLike[str], name: str, hint: str) -> None:
        self.name, self.hint = name, hint
        super().__init__(
            f"{path}: output '{one_line(name)}' is not a tensor of the model; {hint}"
        )


def one_line(name: str) -> str:
    """A tensor name from a model file as a message quotes it: control characters
    (a line break would split the one-line error) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(name))


def ancestors(
    targets: Iterable[T],
    producer: Mapping[T, int],
    node_inputs: Callable[[int], Iterable[T]],
) -> set[int]:
    """Indices of the nodes the `targets` tensors depend on, the producers of the
    targets included. `producer` maps a tensor to the node that writes it (inputs and
    constants have none); `node_inputs(k)` gives the tensors node `k` reads."""
    needed: set[int] = set()
    stack = list(targets)
    seen: set[T] = set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        k = producer.get(name)
        if k is None or k in needed:
            continue
        needed.add(k)
        stack.extend(n for n in node_inputs(k) if n not in seen)
    return needed
