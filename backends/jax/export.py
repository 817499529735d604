"""Serialize a lowered subgraph with `jax.export`, for the `model.synap` package.

`lower()` gives a jitted ``f(params: dict, *inputs)``; the package stores weights apart
from the program, so the exported program takes them as a *list* instead of a dict, in an
order given by their content: no param key (the lowering's keys embed object ids) and no
dict or set order reaches the bytes, and the same function, weights and input types give
the same bytes in every process. Source locations that JAX records are file:line
positions of the kernels, which are stable for one installation.

Only jax is imported here: loading and running a package must not need xDSL.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

#: The platform the exported programs are lowered for (the runtime runs them on the host).
EXPORT_PLATFORMS = ("cpu",)


def export_program(
    function: Callable[..., Any],
    params: dict[str, jax.Array],
    inputs: Sequence[jax.ShapeDtypeStruct],
) -> tuple[bytes, list[np.ndarray]]:
    """The serialized `jax.export` program of ``f(weights, *xs)`` and its weights.

    The program calls `function` (the Python body of a jitted one) with the params dict
    rebuilt from `weights`: one numpy array per distinct param value (identical params
    are stored once), sorted by dtype, shape and content hash, so neither param keys nor
    their order reach the bytes. `inputs` gives the shape and dtype of each ``x``.
    """
    keys = list(params)
    arrays = [np.asarray(params[key]) for key in keys]
    # one weight per distinct content, ordered by content: the order (and so the bytes)
    # depends neither on the params' insertion order nor on their keys
    digests = [_digest(a) for a in arrays]
    first = {}
    for digest, array in zip(digests, arrays, strict=True):
        first.setdefault(digest, array)
    unique = sorted(first)
    slot = {digest: i for i, digest in enumerate(unique)}
    weights = [first[digest] for digest in unique]
    index = [slot[digest] for digest in digests]
    # trace the Python body of a jitted function: a nested jit would become a private
    # function whose arguments follow the sorted param keys, which need not be stable
    body = getattr(function, "__wrapped__", function)

    def program(weights: list[jax.Array], *xs: jax.Array) -> Any:
        return body({key: weights[i] for key, i in zip(keys, index, strict=True)}, *xs)

    weight_specs = [jax.ShapeDtypeStruct(w.shape, w.dtype) for w in weights]
    exporter = jax.export.export(jax.jit(program), platforms=EXPORT_PLATFORMS)
    return _on_fresh_stack(
        lambda: bytes(exporter(weight_specs, *inputs).serialize())
    ), weights


def _on_fresh_stack(work: Callable[[], bytes]) -> bytes:
    """Run `work` in a new thread: JAX records the Python stack of each traced operation
    as its source location, and a new thread's stack does not hold our caller's frames,
    so where `export_program` is called from (a script, the CLI, a test) cannot change
    the bytes."""
    result: list[bytes] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(work())
        except BaseException as error:  # re-raised in the calling thread
            errors.append(error)

    thread = threading.Thread(target=target, name="synapc-export")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]


def _digest(array: np.ndarray) -> tuple[str, tuple[int, ...], str]:
    """What identifies a weight's content: dtype, shape and a hash of its bytes."""
    data = np.ascontiguousarray(array).tobytes()
    return (array.dtype.str, array.shape, hashlib.sha256(data).hexdigest())
