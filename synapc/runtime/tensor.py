"""`Tensor`: one input or output of a loaded network, with its stored values.

`assign` takes user data: values already of the tensor's data type are copied as they
are; anything else is taken as real numbers, normalized with the metafile's means / scale
and, for a quantized tensor, quantized to its storage integers. Quantization rounds half
away from zero (TFLite's ``std::round``, what TFLite-converted preprocessing expects) and
saturates to the storage type's range.
"""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np

from synapc.backends.package import Quantization, TensorSpec
from synapc.errors import SynapcError
from synapc.runtime.preprocessed import PreprocessedInput, assign_crop


def channel_axis(layout: str, rank: int) -> int:
    """The channel axis of a tensor: 1 for NCHW, the last one otherwise."""
    return 1 if layout == "nchw" and rank >= 2 else rank - 1


def _per_axis(
    values: tuple[float, ...] | tuple[int, ...], axis: int, rank: int
) -> np.ndarray:
    """Per-channel values shaped to broadcast along `axis` of a rank-`rank` array."""
    shape = [1] * rank
    shape[axis] = len(values)
    return np.asarray(values, np.float64).reshape(shape)


def _quantization_arrays(
    quant: Quantization, rank: int, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """Scale and zero point, broadcastable against the tensor."""
    if quant.axis is None or len(quant.scale) == 1:
        return np.float64(quant.scale[0]), np.float64(quant.zero_point[0])
    if not -rank <= quant.axis < rank:
        raise SynapcError(f"tensor '{name}': quantization axis {quant.axis} out of range")
    axis = quant.axis % rank
    return _per_axis(quant.scale, axis, rank), _per_axis(quant.zero_point, axis, rank)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


class Tensor:
    """A network input or output: name, shape, layout, data type, quantization and the
    values it currently holds (zeros until assigned or predicted)."""

    def __init__(self, spec: TensorSpec):
        self.spec = spec
        self.name = spec.name
        self.shape = tuple(spec.shape)
        self.layout = spec.layout
        self.format = spec.format
        self.data_type = np.dtype(spec.data_type)
        self.quantization = spec.quantization
        self.means = spec.means
        self.scale = spec.scale
        #: the preprocessed input this tensor is a plane or crop scalar of (the package
        #: metadata's "preprocess"; its `format` is "<type> plane=<role>" / "crop
        #: field=<field>"), set by `Network`; None for other tensors
        self.preprocess: PreprocessedInput | None = None
        self._value = np.zeros(self.shape, self.data_type)

    def __repr__(self) -> str:
        quant = "" if self.quantization is None else f", quantization={self.quantization}"
        return (
            f"Tensor('{self.name}', shape={self.shape}, data_type={self.data_type.name}"
            f", layout={self.layout}{quant})"
        )

    @property
    def size(self) -> int:
        """The number of bytes the values take."""
        return int(self._value.nbytes)

    def assign(self, data: np.ndarray | str | os.PathLike[str] | int) -> None:
        """Store `data`: copied as is when its dtype is the tensor's data type, otherwise
        normalized ``(x - means[c]) / scale`` and quantized (or cast) to the data type.
        A wrong shape is a `SynapcError` naming the tensor.

        On the first plane of a preprocessed input (`preprocess`), an image file path or
        an H x W x 3 (or N x H x W x 3) uint8 RGB array of the planes' size is converted
        into every plane of the input (`synapc.runtime.images`); an array of the plane's
        own shape sets that plane only; a crop scalar takes an integer."""
        group = self.preprocess
        if group is not None and self in group.crop.values():
            assign_crop(group, self, data)
            return
        if group is not None and group.takes_image(self, data):
            group.assign(self, data)
            return
        if isinstance(data, (str, os.PathLike)):
            raise SynapcError(
                f"tensor '{self.name}': an image file is assigned only to the first plane "
                "of a preprocessed input; give an array"
            )
        try:
            array = np.asarray(data)
        except (ValueError, TypeError):  # ragged nested lists and the like
            raise SynapcError(
                f"tensor '{self.name}': the data is not an array of numbers"
            ) from None
        if array.shape != self.shape:
            what = f"tensor '{self.name}'" if group is None else group.describe(self)
            raise SynapcError(
                f"{what}: data of shape {list(array.shape)}, expected {list(self.shape)}"
            )
        if array.dtype == self.data_type:
            self._value = array.copy()
            return
        if array.dtype.kind not in "biuf":
            raise SynapcError(f"tensor '{self.name}': cannot assign {array.dtype} data")
        self._value = self._convert(self._normalize(array.astype(np.float64)))

    def _normalize(self, x: np.ndarray) -> np.ndarray:
        if self.means is not None:
            means = self.means
            if len(means) == 1 or x.ndim == 0:
                x = x - means[0]
            else:
                axis = channel_axis(self.layout, x.ndim)
                if len(means) != x.shape[axis]:
                    raise SynapcError(
                        f"tensor '{self.name}': {len(means)} means for "
                        f"{x.shape[axis]} channels"
                    )
                x = x - _per_axis(means, axis, x.ndim)
        if self.scale is not None:
            x = x / self.scale
        return x

    def _convert(self, x: np.ndarray) -> np.ndarray:
        dtype = self.data_type
        if dtype.kind == "f" or dtype.name.startswith(("bfloat", "float")):
            return x.astype(dtype)  # ml_dtypes' floats (bfloat16, float8) round to nearest
        if dtype.kind == "b":
            return x != 0
        if self.quantization is not None:
            scale, zero_point = _quantization_arrays(self.quantization, x.ndim, self.name)
            x = _round_half_away(x / scale) + zero_point
        else:
            x = _round_half_away(x)
        info = ml_dtypes.iinfo(dtype)  # numpy's, and ml_dtypes' int4 / int2
        return np.clip(x, info.min, info.max).astype(dtype)

    def to_numpy(self) -> np.ndarray:
        """A copy of the stored values, in the tensor's data type."""
        return self._value.copy()

    def as_float(self) -> np.ndarray:
        """The values as float32 real numbers: dequantized ``(q - zero_point) * scale``
        for a quantized tensor, otherwise cast."""
        if self.quantization is None:
            return self._value.astype(np.float32)
        scale, zero_point = _quantization_arrays(
            self.quantization, self._value.ndim, self.name
        )
        return ((self._value.astype(np.float64) - zero_point) * scale).astype(np.float32)

    def _set(self, value: np.ndarray) -> None:
        """Store a result of `predict` (already of the tensor's shape)."""
        self._value = np.asarray(value).astype(self.data_type, copy=False)
