"""Window ops over 1 to 3 spatial axes with dilations: channels-last ``[N, S..., C]``
tensors of rank 3 to 5.

The 2-D ops of `conv.py` and `pool.py` are the forms the NPU passes optimise (pad
folding, conv + pool fusion); these N-D ops serve what those cannot express: 3-D
(volumetric) convolution and pooling, dilated max / average pooling, MaxPool's argmax
indices and grouped transposed convolution. Everywhere `pad` holds one ``(begin, end)``
pair per spatial axis, ``[b0, e0, b1, e1, ...]`` (the 2-D ops' ``[top, bottom, left,
right]`` generalised), and windows span ``dilation * (kernel - 1) + 1`` cells.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from synapc.dialects.synap.base import (
    Shape,
    SynapOp,
    bool_prop,
    element_of,
    float_prop,
    int_array_prop,
    int_prop,
    shape_of,
)
from synapc.dialects.synap.conv import BiasedLayer
from synapc.dialects.synap.shapes import require


def spatial_rank(input_shape: Shape) -> int:
    """The number of spatial axes of a channels-last input, checked to be 1 to 3."""
    require(
        3 <= len(input_shape) <= 5,
        f"input must have rank 3 to 5 ([N, spatial..., C]), got {list(input_shape)}",
    )
    return len(input_shape) - 2


def _per_axis(values: Sequence[int], count: int, what: str, least: int) -> None:
    require(
        len(values) == count and all(v >= least for v in values),
        f"{what} must be {count} values >= {least}, got {list(values)}",
    )


def window_extents(
    input_shape: Shape,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pad: Sequence[int],
) -> list[int]:
    """Output sizes of the spatial axes of a (dilated, padded) window op."""
    n = spatial_rank(input_shape)
    _per_axis(kernel, n, "kernel", 1)
    _per_axis(strides, n, "strides", 1)
    _per_axis(dilations, n, "dilations", 1)
    _per_axis(pad, 2 * n, "pad [b0, e0, ...]", 0)
    extents = []
    for axis in range(n):
        size, lo, hi = input_shape[axis + 1], pad[2 * axis], pad[2 * axis + 1]
        span = dilations[axis] * (kernel[axis] - 1) + 1
        extent = (size + lo + hi - span) // strides[axis] + 1
        require(
            extent >= 1,
            f"spatial axis {axis}: window of {span} does not fit into {size} + padding "
            f"{lo}+{hi}",
        )
        extents.append(extent)
    return extents


class _PoolND(SynapOp):
    """A ``kernel`` window over each spatial axis, sliding with `strides`, its cells
    `dilations` apart, over the input padded by `pad`."""

    input = operand_def(TensorType)
    output = result_def(TensorType)
    kernel = int_array_prop()
    strides = int_array_prop()
    dilations = int_array_prop()
    pad = int_array_prop()

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        x = operand_shapes[0]
        extents = window_extents(
            x, props["kernel"], props["strides"], props["dilations"], props["pad"]
        )
        return [(x[0], *extents, x[-1])]


@irdl_op_definition
class MaxPoolNDOp(_PoolND):
    """Maximum over each window; padded cells never win."""

    name = "synap.max_pool_nd"


@irdl_op_definition
class AvgPoolNDOp(_PoolND):
    """Mean over each window. With `count_include_pad` the divisor is the full window
    (padding counts as zeros); without, only the cells inside the input count."""

    name = "synap.avg_pool_nd"

    count_include_pad = bool_prop(False)


@irdl_op_definition
class LpPoolNDOp(_PoolND):
    """Lp norm of each window, ``(sum |x| ** p) ** (1 / p)``, padded cells counting as
    zeros."""

    name = "synap.lp_pool_nd"

    p = float_prop(2.0)

    def verify_semantics(self) -> None:
        order = self.props()["p"]
        if not (math.isfinite(order) and order > 0):
            self.fail(f"p must be a positive number, got {order:g}")


@irdl_op_definition
class MaxPoolIndicesNDOp(_PoolND):
    """Where each window's maximum is (ONNX MaxPool's Indices): the flat index of the
    winning cell in the input laid out channels-first, ``[N, C, S...]``, of the first
    maximum in row-major window order. `storage_order` 0 numbers the spatial axes
    row-major (last fastest), 1 column-major (first fastest). Padded cells never win.
    The result is i32 or i64."""

    name = "synap.max_pool_indices_nd"

    storage_order = int_prop(0)

    SAME_ELEMENT_KIND: ClassVar[bool] = False

    def verify_semantics(self) -> None:
        element = element_of(self.output)
        if not (isinstance(element, IntegerType) and element.width.data in (32, 64)):
            self.fail(f"result element type must be i32 or i64, got {element}")
        if self.props()["storage_order"] not in (0, 1):
            self.fail(f"storage_order must be 0 or 1, got {self.props()['storage_order']}")


def _filter_fits(
    input_shape: Shape, filter_shape: Shape, groups: int
) -> tuple[int, list[int]]:
    """Output channels and spatial kernel of a ``[Cout, K..., Cin / groups]`` filter."""
    n = spatial_rank(input_shape)
    require(
        len(filter_shape) == n + 2,
        f"filter {list(filter_shape)} must have rank {n + 2} ([Cout, K..., Cin/groups])",
    )
    require(groups >= 1, f"groups must be >= 1, got {groups}")
    cout, cin_per_group = filter_shape[0], filter_shape[-1]
    require(
        cin_per_group * groups == input_shape[-1],
        f"filter input channels ({cin_per_group}) x groups ({groups}) must equal input "
        f"channels ({input_shape[-1]})",
    )
    require(
        cout % groups == 0,
        f"output channels ({cout}) must be divisible by groups ({groups})",
    )
    return cout, list(filter_shape[1:-1])


class _ConvND(BiasedLayer):
    """A convolution over 1 to 3 spatial axes: the window properties and the output
    shape ``[N, S..., Cout]`` that both kinds share; `_extents` gives ``S...``."""

    strides = int_array_prop()
    dilations = int_array_prop()
    pad = int_array_prop()
    groups = int_prop(1)

    @classmethod
    def infer_shapes(
        cls, operand_shapes: list[Shape], props: dict[str, Any]
    ) -> list[Shape]:
        x = operand_shapes[0]
        cout, kernel = _filter_fits(x, operand_shapes[1], props["groups"])
        return [(x[0], *cls._extents(x, kernel, props), cout)]

    @classmethod
    def _extents(cls, x: Shape, kernel: list[int], props: dict[str, Any]) -> list[int]:
        """The output's spatial sizes for input shape `x` and spatial `kernel`."""
        raise NotImplementedError


@irdl_op_definition
class ConvNDOp(_ConvND):
    """Convolution over 1 to 3 spatial axes: ``[N, S..., Cin]`` input, filter ``[Cout,
    K..., Cin / groups]``, bias ``[Cout]``; `groups` > 1 gives a grouped convolution."""

    name = "synap.conv_nd"

    @classmethod
    def _extents(cls, x: Shape, kernel: list[int], props: dict[str, Any]) -> list[int]:
        return window_extents(x, kernel, props["strides"], props["dilations"], props["pad"])


@irdl_op_definition
class TransposeConvNDOp(_ConvND):
    """Transposed convolution over 1 to 3 spatial axes: filter ``[Cout, K..., Cin /
    groups]`` (output channels of group g read input channels of group g).

    `pad` crops ``(begin, end)`` from each axis of the full output ``(in - 1) * stride +
    dilation * (k - 1) + 1``; a negative end crop extends it (ONNX output_padding; the
    extra cells receive only the bias)."""

    name = "synap.transpose_conv_nd"

    @classmethod
    def _extents(cls, x: Shape, kernel: list[int], props: dict[str, Any]) -> list[int]:
        n = len(kernel)
        strides, dilations, pad = props["strides"], props["dilations"], props["pad"]
        _per_axis(kernel, n, "kernel", 1)
        _per_axis(strides, n, "strides", 1)
        _per_axis(dilations, n, "dilations", 1)
        require(len(pad) == 2 * n, f"pad must have {2 * n} values, got {list(pad)}")
        extents = []
        for axis in range(n):
            lo, hi = pad[2 * axis], pad[2 * axis + 1]
            require(lo >= 0, f"leading crop must be >= 0, got {list(pad)}")
            full = (x[axis + 1] - 1) * strides[axis] + dilations[axis] * (kernel[axis] - 1)
            extent = full + 1 - lo - hi
            require(extent >= 1, f"spatial axis {axis}: crop {lo}+{hi} leaves no output")
            extents.append(extent)
        return extents


def filter_window(op: ConvNDOp | TransposeConvNDOp) -> list[int]:
    """The spatial kernel of a convolution's filter."""
    return list(shape_of(op.filter)[1:-1])


OPS = [
    MaxPoolNDOp,
    AvgPoolNDOp,
    LpPoolNDOp,
    MaxPoolIndicesNDOp,
    ConvNDOp,
    TransposeConvNDOp,
]
