"""`WeightStore`: the numpy arrays behind `dense_resource<handle>` constants.

Weights never live in the IR: a `synap.constant` names its array by handle, and the
store maps handles to arrays. Keeping them out of xDSL attributes keeps modules small,
printing fast and memory at one copy of the weights. Arrays are stored read-only so a pass
cannot change a weight that another op still shares; a pass that needs new values adds a
new array.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from synapc.dtypes import element_type_for, numpy_dtype

_HANDLE = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


class WeightStore:
    """Arrays keyed by resource handle; the handles are valid MLIR identifiers."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}
        self._counters: dict[str, int] = {}

    # -- mapping interface -----------------------------------------------------------
    def __getitem__(self, handle: str) -> np.ndarray:
        try:
            return self._arrays[handle]
        except KeyError:
            raise KeyError(f"no weight with handle '{handle}' in the WeightStore") from None

    def __setitem__(self, handle: str, array: np.ndarray) -> None:
        if not _HANDLE.fullmatch(handle):
            raise ValueError(f"'{handle}' is not a valid resource handle")
        array = np.asarray(array)
        if array.flags.writeable:
            array = array.view()
            array.flags.writeable = False
        self._arrays[handle] = array

    def __contains__(self, handle: object) -> bool:
        return handle in self._arrays

    def __len__(self) -> int:
        return len(self._arrays)

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __delitem__(self, handle: str) -> None:
        del self._arrays[handle]

    def items(self) -> Iterator[tuple[str, np.ndarray]]:
        """(handle, array) pairs in insertion order."""
        return iter(self._arrays.items())

    @property
    def nbytes(self) -> int:
        """Total bytes of all arrays."""
        return sum(a.nbytes for a in self._arrays.values())

    # -- adding ----------------------------------------------------------------------
    def new_handle(self, hint: str = "w") -> str:
        """A handle not used yet, derived from `hint` (sanitized to an identifier)."""
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint) or "w"
        if not (base[0].isalpha() or base[0] == "_"):
            base = "w_" + base
        count = self._counters.get(base, 0)
        handle = base
        while handle in self._arrays:
            handle = f"{base}_{count}"
            count += 1
        self._counters[base] = count
        return handle

    def add(self, array: np.ndarray, hint: str = "w") -> str:
        """Store `array` under a fresh handle derived from `hint` and return the handle."""
        handle = self.new_handle(hint)
        self[handle] = array
        return handle

    def constant(
        self,
        array: np.ndarray,
        hint: str = "w",
        result_type: TensorType[Attribute] | None = None,
        layer_name: str | None = None,
    ):  # -> ConstantOp (imported lazily to keep this module dialect-free at import)
        """Store `array` and return a `synap.constant` op that refers to it.

        `result_type` is needed for quantized tensors (the array then holds the stored
        integers); otherwise it follows from the array's dtype and shape.
        """
        from synapc.dialects.synap.constant import ConstantOp

        array = np.asarray(array)
        if result_type is None:
            result_type = TensorType(element_type_for(array.dtype), array.shape)
        check_array_fits(array, result_type)
        return ConstantOp(self.add(array, hint), result_type, layer_name)


def check_array_fits(array: np.ndarray, tensor_type: TensorType[Attribute]) -> None:
    """Raise ValueError unless `array` has the dtype and shape `tensor_type` stores."""
    want = numpy_dtype(tensor_type.element_type)
    if array.dtype != want or tuple(array.shape) != tensor_type.get_shape():
        raise ValueError(
            f"array of {array.dtype}{list(array.shape)} does not fit {tensor_type} "
            f"(needs {want}{list(tensor_type.get_shape())})"
        )
