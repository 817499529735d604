"""ONNX spectral operators of audio front ends: `DFT`, `STFT` and `MelWeightMatrix`.

A DFT of length N is a linear map, so it is one `synap.matmul` with a constant matrix
of cosines and sines (exact up to float rounding, and what an NPU runs well). Complex
tensors are ONNX's: a trailing dimension of 2 (real, imaginary), or 1 for real values.
The transformed axis is moved next to that trailing dimension and both are flattened,
so a row ``[x0.re, x0.im, x1.re, ...]`` times the matrix gives the interleaved
``[y0.re, y0.im, y1.re, ...]``: zero padding or truncation to `dft_length`, the
one-sided spectrum, the inverse's 1/N and the IRFFT's Hermitian completion are all
folded into the matrix. `STFT` gathers the frames with constant indices, multiplies
them by the window and transforms each frame the same way. `MelWeightMatrix` is a
constant of its constant inputs.

Lengths decide output shapes, so `dft_length`, DFT's `axis` input, STFT's
`frame_step` / `frame_length` and all inputs of MelWeightMatrix must be constants.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from synapc.dialects.synap import elementwise as ew
from synapc.dialects.synap.base import element_of, is_float, shape_of
from synapc.dialects.synap.conv import MatMulOp
from synapc.dialects.synap.data_movement import GatherOp
from synapc.dtypes import numpy_dtype
from synapc.errors import SynapcError
from synapc.importers.onnx.checks import shown
from synapc.importers.onnx.helpers import cast_to, compute_element, output_datatype
from synapc.importers.onnx.reader import Importer, Node, converts
from synapc.importers.onnx.reduce import combine
from synapc.limits import check_tensor


# -- the DFT as a matrix ---------------------------------------------------------------
def check_host_array(node: Node, shape: tuple[int, ...], what: str) -> None:
    """Refuse a float64 host array of `shape` (`what`) beyond the tensor limits before
    it is built."""
    try:
        check_tensor(shape, 8, what)
    except SynapcError as error:
        raise node.fail(str(error)) from None


def dft_matrix(
    length: int, parts: int, size: int, inverse: bool, onesided: bool
) -> np.ndarray:
    """The float64 matrix mapping `length` interleaved input values of `parts` (1: real,
    2: complex) components to the DFT of size `size` (input truncated or zero-padded to
    it): ``[length * parts, bins * 2]``, or ``[length * parts, size]`` for the inverse
    one-sided transform (IRFFT: a real signal from a one-sided spectrum)."""
    if inverse and onesided:
        return _irfft_matrix(length, parts, size)
    bins = size // 2 + 1 if onesided else size
    n = np.arange(min(length, size))[:, None]
    angle = (n * np.arange(bins)[None, :] % size) * (2 * math.pi / size)
    cos, sin = np.cos(angle), np.sin(angle)
    sign = 1.0 if inverse else -1.0
    scale = 1.0 / size if inverse else 1.0
    matrix = np.zeros((length, parts, bins, 2))
    used = n.shape[0]
    matrix[:used, 0, :, 0] = cos * scale
    matrix[:used, 0, :, 1] = sign * sin * scale
    if parts == 2:
        matrix[:used, 1, :, 0] = -sign * sin * scale
        matrix[:used, 1, :, 1] = cos * scale
    return matrix.reshape(length * parts, bins * 2)


def _irfft_matrix(length: int, parts: int, size: int) -> np.ndarray:
    """The IRFFT of a one-sided spectrum of `length` bins as a matrix: bins past
    ``size // 2`` are ignored (zero-padded when missing), the imaginary parts of the
    constant and Nyquist bins do not contribute, the others count twice."""
    used = min(length, size // 2 + 1)
    k = np.arange(used)[:, None]
    angle = (k * np.arange(size)[None, :] % size) * (2 * math.pi / size)
    weight = np.where((k == 0) | (2 * k == size), 1.0, 2.0) / size
    matrix = np.zeros((length, parts, size))
    matrix[:used, 0] = weight * np.cos(angle)
    if parts == 2:
        matrix[:used, 1] = -weight * np.sin(angle)
    return matrix.reshape(length * parts, size)


def transform(
    imp: Importer,
    node: Node,
    value: SSAValue,
    axis: int,
    size: int,
    inverse: bool,
    onesided: bool,
) -> SSAValue:
    """The DFT of logical `value` (trailing dimension 1 or 2) along `axis`, of size
    `size`, in `value`'s element type: one matmul with a constant matrix."""
    shape = shape_of(value)
    rank = len(shape)
    element = element_of(value)
    compute = compute_element(element)
    perm = [*(i for i in range(rank - 1) if i != axis), axis, rank - 1]
    moved = imp.transpose(cast_to(imp, node, value, compute), perm)
    outer = shape_of(moved)[:-2]
    length, parts = shape[axis], shape[-1]
    rows = imp.reshape(moved, (math.prod(outer), length * parts))
    columns = size if inverse and onesided else 2 * (size // 2 + 1 if onesided else size)
    check_host_array(node, (length * parts, columns), "the DFT matrix")
    matrix = dft_matrix(length, parts, size, inverse, onesided)
    name = f"{node.outputs[0]}#dft{len(imp.ops)}"
    imp.bind_const(name, matrix.astype(numpy_dtype(compute)))  # type: ignore[arg-type]
    product = imp.append(MatMulOp.make(rows, imp.get(name), **node.source))
    out_parts = 1 if inverse and onesided else 2
    bins = shape_of(product)[1] // out_parts
    result = imp.reshape(product, (*outer, bins, out_parts))
    inverse_perm = [perm.index(i) for i in range(rank)]
    return cast_to(imp, node, imp.transpose(result, inverse_perm), element)


# -- operands --------------------------------------------------------------------------
def _signal(imp: Importer, node: Node, min_rank: int) -> str:
    """Input 0: a float tensor of rank `min_rank` or more whose last dimension is 1
    (real) or 2 (complex)."""
    name = node.input(0)
    if name is None:
        raise node.fail("input 0 is missing")
    element = imp.element_type(name)
    if not is_float(element):
        raise node.fail(f"input '{shown(name)}' is {element}; {node.op_type} takes floats")
    shape = imp.shape(name)
    if len(shape) < min_rank or shape[-1] not in (1, 2):
        raise node.fail(
            f"input '{shown(name)}' of shape {list(shape)} must have rank {min_rank} or "
            "more and a last dimension of 1 (real) or 2 (complex)"
        )
    return name


def _const_scalar(imp: Importer, node: Node, i: int, what: str) -> int | None:
    """Optional integer input `i` (`what`), which must be a constant scalar when given."""
    if node.input(i) is None:
        return None
    values = imp.const_ints(node, i, what)
    if len(values) != 1:
        raise node.fail(f"{what} (input {i}) must be a scalar, got {len(values)} values")
    return values[0]


def _flag(node: Node, name: str, default: int) -> bool:
    """Attribute `name`, 0 or 1."""
    value = node.int_attr(name, default)
    if value not in (0, 1):
        raise node.fail(f"attribute '{name}' must be 0 or 1, got {value}")
    return bool(value)


def _dft_axis(imp: Importer, node: Node, rank: int) -> int:
    """The signal axis: input 2 from opset 20 (default -2), attribute `axis` before
    (default 1); in ``[-r, -2]`` or ``[0, r - 2]``."""
    if node.opset >= 20:
        if "axis" in node.attrs:
            raise node.fail("from opset 20 the axis is input 2, not an attribute")
        axis = _const_scalar(imp, node, 2, "axis")
        axis = -2 if axis is None else axis
    else:
        axis = node.int_attr("axis", 1)
    if not (-rank <= axis <= -2 or 0 <= axis <= rank - 2):
        raise node.fail(
            f"axis {axis} is out of range for rank {rank}: the last dimension holds the "
            "real and imaginary parts"
        )
    return axis % rank


# -- converters ------------------------------------------------------------------------
@converts("DFT")
def dft(imp: Importer, node: Node) -> None:
    """DFT / IDFT / RFFT / IRFFT along one axis as a matmul with a constant matrix."""
    name = _signal(imp, node, 2)
    shape = imp.shape(name)
    axis = _dft_axis(imp, node, len(shape))
    inverse, onesided = _flag(node, "inverse", 0), _flag(node, "onesided", 0)
    size = _const_scalar(imp, node, 1, "dft_length")
    if size is None:
        size = 2 * (shape[axis] - 1) if inverse and onesided else shape[axis]
    if size < 1:
        raise node.fail(f"dft_length (input 1) must be positive, got {size}")
    imp.bind_output(
        node, transform(imp, node, imp.get(name), axis, size, inverse, onesided)
    )


def _frame_length(imp: Importer, node: Node, signal_length: int) -> int:
    """`frame_length` (input 3), else the window's length, else the signal's; a given
    window must have that length."""
    length = _const_scalar(imp, node, 3, "frame_length")
    window = node.input(2)
    if window is not None:
        window_shape = imp.shape(window)
        if len(window_shape) != 1 or (length is not None and window_shape[0] != length):
            raise node.fail(
                f"window '{shown(window)}' of shape {list(window_shape)} must be 1-D of "
                f"length frame_length {length}"
            )
        length = window_shape[0] if length is None else length
    length = signal_length if length is None else length
    if not 1 <= length <= signal_length:
        raise node.fail(
            f"frame_length {length} must be 1 to the signal length {signal_length}"
        )
    return length


@converts("STFT")
def stft(imp: Importer, node: Node) -> None:
    """Frames gathered at ``f * frame_step + t``, times the window, each transformed by
    a DFT of size frame_length (one-sided by default)."""
    name = _signal(imp, node, 3)
    shape = imp.shape(name)
    if len(shape) != 3:
        raise node.fail(
            f"signal '{shown(name)}' must be [batch, length, 1 or 2], got {list(shape)}"
        )
    step = _const_scalar(imp, node, 1, "frame_step")
    if step is None or step < 1:
        raise node.fail(f"frame_step (input 1) must be a positive constant, got {step}")
    length = _frame_length(imp, node, shape[1])
    onesided = _flag(node, "onesided", 1)
    frames = (shape[1] - length) // step + 1
    check_host_array(node, (frames, length), "the frame indices")
    starts = np.arange(frames)[:, None] * step + np.arange(length)[None, :]
    index_name = f"{node.outputs[0]}#frames"
    imp.bind_const(index_name, starts.astype(np.int32))
    gathered = imp.append(
        GatherOp.make(imp.get(name), imp.get(index_name), axis=1, **node.source)
    )
    window = node.input(2)
    if window is not None:
        if imp.element_type(window) != imp.element_type(name):
            raise node.fail(
                f"window '{shown(window)}' is {imp.element_type(window)}; the signal is "
                f"{imp.element_type(name)}"
            )
        weights = imp.reshape(imp.get(window), (1, 1, length, 1))
        gathered = combine(imp, node, ew.MulOp, gathered, weights)
    imp.bind_output(node, transform(imp, node, gathered, 2, length, False, onesided))


# -- MelWeightMatrix -------------------------------------------------------------------
def mel_edges(bins: int, size: int, rate: int, low_hz: float, high_hz: float) -> np.ndarray:
    """The ``bins + 2`` triangle edges of ONNX's mel filterbank as DFT bins: evenly
    spaced in mel (``2595 log10(1 + f / 700)``) in steps of ``1 / (bins + 2)`` of the
    range from `low_hz`, mapped to ``floor((size + 1) f / rate)``."""
    low_mel = 2595 * np.log1p(low_hz / 700) / np.log(10)
    high_mel = 2595 * np.log1p(high_hz / 700) / np.log(10)
    mels = np.arange(bins + 2) * ((high_mel - low_mel) / (bins + 2)) + low_mel
    edges = ((size + 1) * (700 * np.expm1(mels / 2595 * np.log(10)))) // rate
    return edges.astype(np.int64)


def mel_weight_matrix(edges: np.ndarray, rows: int) -> np.ndarray:
    """The filterbank ``[rows, len(edges) - 2]`` (float64) of triangle `edges`: triangle
    `i` rises from edge `i` to 1 at edge ``i + 1`` (a single 1 there when they
    coincide) and falls to 0 at edge ``i + 2``."""
    left, center, right = edges[:-2], edges[1:-1], edges[2:]
    j = np.arange(rows)[:, None]
    rising = np.where(center > left, (j - left) / np.maximum(center - left, 1), 1.0)
    rising = np.where((j >= left) & (j <= center), rising, 0.0)
    falling_rows = (j >= center) & (j < right)
    return np.where(falling_rows, (right - j) / np.maximum(right - center, 1), rising)


@converts("MelWeightMatrix")
def mel_weight(imp: Importer, node: Node) -> None:
    """The mel filterbank of the constant inputs, as a constant of `output_datatype`."""
    ints = [
        _const_scalar(imp, node, i, what)
        for i, what in enumerate(("num_mel_bins", "dft_length", "sample_rate"))
    ]
    if None in ints:
        raise node.fail("num_mel_bins, dft_length and sample_rate must be given")
    bins, size, rate = (int(v) for v in ints)  # type: ignore[arg-type]
    edges_hz = []
    for i, what in ((3, "lower_edge_hertz"), (4, "upper_edge_hertz")):
        array = imp.const(node.input(i))
        if array is None or np.asarray(array).size != 1:
            raise node.fail(f"{what} (input {i}) must be a constant scalar")
        edges_hz.append(float(np.asarray(array).reshape(-1)[0]))
    low, high = edges_hz
    if bins < 1 or size < 1 or rate < 1 or not 0 <= low < high:
        raise node.fail(
            f"need num_mel_bins, dft_length, sample_rate > 0 and 0 <= lower_edge_hertz < "
            f"upper_edge_hertz, got {bins}, {size}, {rate}, {low}, {high}"
        )
    rows = size // 2 + 1
    check_host_array(node, (rows, bins + 2), "the mel weight matrix")
    edges = mel_edges(bins, size, rate, low, high)
    if edges.min() < 0 or edges[:-1].max() >= rows:
        raise node.fail(
            f"upper_edge_hertz {high} lies beyond the {size // 2 + 1} DFT bins of "
            f"sample_rate {rate}"
        )
    dtype = output_datatype(node)
    matrix = mel_weight_matrix(edges, rows).astype(dtype)
    imp.bind_const(imp.out_name(node), matrix)
