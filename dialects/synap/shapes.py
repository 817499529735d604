"""Shape rules of the synap ops, as plain functions on shape tuples.

One source of truth: op verifiers check result types against these rules, and importers
and passes call them to compute result shapes. Every rule raises `ShapeError` with a
message that says which quantity is wrong and why. Layout is NHWC throughout.
"""

from __future__ import annotations

from collections.abc import Sequence

Shape = tuple[int, ...]


class ShapeError(ValueError):
    """An operand shape or attribute that a shape rule rejects."""


def require(condition: bool, message: str) -> None:
    """Raise `ShapeError(message)` unless `condition`: the one check every shape rule of
    the dialect states its requirements with."""
    if not condition:
        raise ShapeError(message)


def _rank(shape: Shape, rank: int, what: str) -> None:
    require(len(shape) == rank, f"{what} must have rank {rank}, got shape {list(shape)}")


def _pairs(values: Sequence[int], count: int, what: str) -> None:
    require(len(values) == count, f"{what} needs {count} values, got {list(values)}")


def _window_extent(
    size: int, kernel: int, stride: int, dilation: int, lo: int, hi: int, what: str
) -> int:
    require(stride >= 1, f"{what}: strides must be >= 1, got {stride}")
    require(dilation >= 1, f"{what}: dilations must be >= 1, got {dilation}")
    require(lo >= 0 and hi >= 0, f"{what}: padding must be >= 0, got [{lo}, {hi}]")
    effective = dilation * (kernel - 1) + 1
    extent = (size + lo + hi - effective) // stride + 1
    require(
        extent >= 1,
        f"{what}: window of {effective} does not fit into {size} + padding {lo}+{hi}",
    )
    return extent


def _spatial(
    input_shape: Shape,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pad: Sequence[int],
) -> tuple[int, int]:
    _pairs(strides, 2, "strides")
    _pairs(dilations, 2, "dilations")
    _pairs(pad, 4, "pad [top, bottom, left, right]")
    height = _window_extent(
        input_shape[1], kernel[0], strides[0], dilations[0], pad[0], pad[1], "height"
    )
    width = _window_extent(
        input_shape[2], kernel[1], strides[1], dilations[1], pad[2], pad[3], "width"
    )
    return height, width


def conv2d(
    input_shape: Shape,
    filter_shape: Shape,
    strides: Sequence[int],
    dilations: Sequence[int],
    pad: Sequence[int],
    groups: int,
) -> Shape:
    """NHWC input, OHWI filter [Cout, KH, KW, Cin/groups] -> NHWC output."""
    _rank(input_shape, 4, "input")
    _rank(filter_shape, 4, "filter")
    require(groups >= 1, f"groups must be >= 1, got {groups}")
    cout, kh, kw, cin_per_group = filter_shape
    require(
        cin_per_group * groups == input_shape[3],
        f"filter input channels ({cin_per_group}) x groups ({groups}) must equal input "
        f"channels ({input_shape[3]})",
    )
    require(
        cout % groups == 0,
        f"output channels ({cout}) must be divisible by groups ({groups})",
    )
    height, width = _spatial(input_shape, (kh, kw), strides, dilations, pad)
    return (input_shape[0], height, width, cout)


def depthwise_conv2d(
    input_shape: Shape,
    filter_shape: Shape,
    strides: Sequence[int],
    dilations: Sequence[int],
    pad: Sequence[int],
) -> Shape:
    """NHWC input, filter [1, KH, KW, Cin x multiplier] -> NHWC output."""
    _rank(input_shape, 4, "input")
    _rank(filter_shape, 4, "filter")
    one, kh, kw, cout = filter_shape
    require(one == 1, f"depthwise filter must be [1, KH, KW, C], got {list(filter_shape)}")
    require(
        input_shape[3] >= 1 and cout % input_shape[3] == 0,
        f"filter channels ({cout}) must be a multiple of input channels ({input_shape[3]})",
    )
    height, width = _spatial(input_shape, (kh, kw), strides, dilations, pad)
    return (input_shape[0], height, width, cout)


def transpose_conv2d(
    input_shape: Shape,
    filter_shape: Shape,
    strides: Sequence[int],
    dilations: Sequence[int],
    pad: Sequence[int],
) -> Shape:
    """NHWC input, filter [Cout, KH, KW, Cin] -> NHWC output.

    The full output is ``(in - 1) * stride + dilation * (k - 1) + 1``; `pad` crops that
    many rows/columns from each side. A negative end crop extends the output (ONNX's
    output_padding): the extra cells receive only the bias.
    """
    _rank(input_shape, 4, "input")
    _rank(filter_shape, 4, "filter")
    _pairs(strides, 2, "strides")
    _pairs(dilations, 2, "dilations")
    _pairs(pad, 4, "pad [top, bottom, left, right]")
    cout, kh, kw, cin = filter_shape
    require(
        cin == input_shape[3],
        f"filter input channels ({cin}) must equal input channels ({input_shape[3]})",
    )
    require(min(strides) >= 1 and min(dilations) >= 1, "strides and dilations must be >= 1")
    require(pad[0] >= 0 and pad[2] >= 0, f"leading crop must be >= 0, got {list(pad)}")
    extents = []
    for what, size, k, s, d, lo, hi in (
        ("height", input_shape[1], kh, strides[0], dilations[0], pad[0], pad[1]),
        ("width", input_shape[2], kw, strides[1], dilations[1], pad[2], pad[3]),
    ):
        extent = (size - 1) * s + d * (k - 1) + 1 - lo - hi
        require(extent >= 1, f"{what}: crop {lo}+{hi} leaves no output")
        extents.append(extent)
    return (input_shape[0], extents[0], extents[1], cout)


def pool2d(
    input_shape: Shape, kernel: Sequence[int], strides: Sequence[int], pad: Sequence[int]
) -> Shape:
    """NHWC pooling window [KH, KW] -> NHWC output with the same channels."""
    _rank(input_shape, 4, "input")
    _pairs(kernel, 2, "kernel")
    require(min(kernel) >= 1, f"kernel must be >= 1, got {list(kernel)}")
    height, width = _spatial(input_shape, kernel, strides, (1, 1), pad)
    return (input_shape[0], height, width, input_shape[3])


def fully_connected(input_shape: Shape, weight_shape: Shape) -> Shape:
    """[..., K] x weight [N, K] -> [..., N]."""
    require(len(input_shape) >= 1, "input must have rank >= 1")
    _rank(weight_shape, 2, "weight")
    require(
        input_shape[-1] == weight_shape[1],
        f"weight inner dimension ({weight_shape[1]}) must equal input features "
        f"({input_shape[-1]})",
    )
    return (*input_shape[:-1], weight_shape[0])


def broadcast(*shapes: Shape) -> Shape:
    """NumPy broadcasting of several shapes."""
    rank = max(len(s) for s in shapes)
    result = []
    for axis in range(rank):
        sizes = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0}
        sizes.discard(1)
        require(
            len(sizes) <= 1,
            f"shapes {[list(s) for s in shapes]} are not broadcast-compatible",
        )
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def matmul(lhs: Shape, rhs: Shape, transpose_lhs: bool, transpose_rhs: bool) -> Shape:
    """[..., M, K] x [..., K, N] -> [..., M, N] with broadcast batch dimensions."""
    require(len(lhs) >= 2 and len(rhs) >= 2, "matmul operands must have rank >= 2")
    m, k = (lhs[-1], lhs[-2]) if transpose_lhs else (lhs[-2], lhs[-1])
    k2, n = (rhs[-1], rhs[-2]) if transpose_rhs else (rhs[-2], rhs[-1])
    require(k == k2, f"contracting dimensions differ: {k} vs {k2}")
    return (*broadcast(lhs[:-2], rhs[:-2]), m, n)


def normalize_axis(axis: int, rank: int) -> int:
    """Map a possibly negative axis into [0, rank)."""
    require(-rank <= axis < rank, f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def reduce(input_shape: Shape, axes: Sequence[int], keep_dims: bool) -> Shape:
    """Reduction over `axes` (distinct, in range)."""
    norm = [normalize_axis(a, len(input_shape)) for a in axes]
    require(len(set(norm)) == len(norm), f"axes {list(axes)} repeat an axis")
    if keep_dims:
        return tuple(1 if i in norm else d for i, d in enumerate(input_shape))
    return tuple(d for i, d in enumerate(input_shape) if i not in norm)


def arg_reduce(input_shape: Shape, axis: int, keep_dims: bool) -> Shape:
    """argmax / argmin along one axis."""
    return reduce(input_shape, (axis,), keep_dims)


def concat(shapes: Sequence[Shape], axis: int) -> Shape:
    """Concatenation along `axis`; all other dimensions must agree."""
    require(len(shapes) >= 1, "concat needs at least one input")
    rank = len(shapes[0])
    axis = normalize_axis(axis, rank)
    for i, s in enumerate(shapes):
        require(len(s) == rank, f"input #{i} has rank {len(s)}, expected {rank}")
        for d in range(rank):
            require(
                d == axis or s[d] == shapes[0][d],
                f"input #{i} has size {s[d]} in dimension {d}, expected {shapes[0][d]}",
            )
    total = sum(s[axis] for s in shapes)
    return (*shapes[0][:axis], total, *shapes[0][axis + 1 :])


def split(input_shape: Shape, axis: int, sizes: Sequence[int]) -> list[Shape]:
    """Split along `axis` into pieces of the given sizes (they must add up)."""
    axis = normalize_axis(axis, len(input_shape))
    require(min(sizes, default=0) >= 1, f"split sizes must be >= 1, got {list(sizes)}")
    require(
        sum(sizes) == input_shape[axis],
        f"split sizes {list(sizes)} add up to {sum(sizes)}, not the axis size "
        f"{input_shape[axis]}",
    )
    return [(*input_shape[:axis], s, *input_shape[axis + 1 :]) for s in sizes]


def slice_(input_shape: Shape, start: Sequence[int], size: Shape) -> Shape:
    """A window of `size` starting at `start` (both per dimension, in range)."""
    require(
        len(start) == len(input_shape),
        f"start has {len(start)} values for rank {len(input_shape)}",
    )
    require(
        len(size) == len(input_shape),
        f"result rank {len(size)} differs from input rank {len(input_shape)}",
    )
    for d, (b, n, dim) in enumerate(zip(start, size, input_shape, strict=True)):
        require(
            b >= 0 and n >= 0 and b + n <= dim,
            f"dimension {d}: start {b} + size {n} exceeds {dim}",
        )
    return tuple(size)


def strided_slice(
    input_shape: Shape, begin: Sequence[int], end: Sequence[int], strides: Sequence[int]
) -> Shape:
    """Python slicing ``x[b0:e0:s0, ...]`` with resolved (non-negative) begin indices.

    `end` may be -1 with a negative stride (run to the front). Importers resolve masks
    and negative indices before building the op.
    """
    rank = len(input_shape)
    for name, values in (("begin", begin), ("end", end), ("strides", strides)):
        require(len(values) == rank, f"{name} has {len(values)} values for rank {rank}")
    result = []
    for d, (b, e, s, dim) in enumerate(zip(begin, end, strides, input_shape, strict=True)):
        require(s != 0, f"dimension {d}: stride must not be 0")
        require(0 <= b <= dim, f"dimension {d}: begin {b} is outside [0, {dim}]")
        require(-1 <= e <= dim, f"dimension {d}: end {e} is outside [-1, {dim}]")
        # ceil((e - b) / s) elements, or none when the range runs the other way
        result.append(max(0, -((b - e) // s)))
    return tuple(result)


def transpose(input_shape: Shape, perm: Sequence[int]) -> Shape:
    """Permutation of dimensions: result[i] = input[perm[i]]."""
    require(
        sorted(perm) == list(range(len(input_shape))),
        f"perm {list(perm)} is not a permutation of {len(input_shape)} dimensions",
    )
    return tuple(input_shape[p] for p in perm)


def pad(input_shape: Shape, pads: Sequence[int]) -> Shape:
    """`pads` = [before0, after0, before1, after1, ...], each >= 0."""
    require(
        len(pads) == 2 * len(input_shape),
        f"pads needs {2 * len(input_shape)} values, got {len(pads)}",
    )
    require(min(pads, default=0) >= 0, f"pads must be >= 0, got {list(pads)}")
    return tuple(d + pads[2 * i] + pads[2 * i + 1] for i, d in enumerate(input_shape))


def tile(input_shape: Shape, multiples: Sequence[int]) -> Shape:
    """Repeat each dimension `multiples[i]` times."""
    require(
        len(multiples) == len(input_shape),
        f"multiples has {len(multiples)} values for rank {len(input_shape)}",
    )
    require(
        min(multiples, default=1) >= 1, f"multiples must be >= 1, got {list(multiples)}"
    )
    return tuple(d * m for d, m in zip(input_shape, multiples, strict=True))


def gather(data_shape: Shape, indices_shape: Shape, axis: int) -> Shape:
    """data[..., indices, ...] along `axis`."""
    axis = normalize_axis(axis, len(data_shape))
    return (*data_shape[:axis], *indices_shape, *data_shape[axis + 1 :])


def depth_to_space(input_shape: Shape, block: int) -> Shape:
    """NHWC [N, H, W, C] -> [N, H*b, W*b, C/b^2]."""
    _rank(input_shape, 4, "input")
    require(block >= 1, f"block size must be >= 1, got {block}")
    n, h, w, c = input_shape
    require(
        c % (block * block) == 0,
        f"channels ({c}) must be divisible by block size squared ({block * block})",
    )
    return (n, h * block, w * block, c // (block * block))


def space_to_depth(input_shape: Shape, block: int) -> Shape:
    """NHWC [N, H, W, C] -> [N, H/b, W/b, C*b^2]."""
    _rank(input_shape, 4, "input")
    require(block >= 1, f"block size must be >= 1, got {block}")
    n, h, w, c = input_shape
    require(
        h % block == 0 and w % block == 0,
        f"height ({h}) and width ({w}) must be divisible by block size ({block})",
    )
    return (n, h // block, w // block, c * block * block)


def broadcast_to(input_shape: Shape, target: Shape) -> Shape:
    """Broadcast `input_shape` to exactly `target`."""
    require(
        broadcast(input_shape, target) == tuple(target),
        f"shape {list(input_shape)} does not broadcast to {list(target)}",
    )
    return tuple(target)


def element_count(shape: Shape) -> int:
    """Number of elements of a static shape."""
    count = 1
    for d in shape:
        count *= d
    return count


def detection_postprocess(
    boxes: Shape,
    scores: Shape,
    anchors: Shape,
    max_detections: int,
    max_classes_per_detection: int,
    num_classes: int,
) -> list[Shape]:
    """TFLite detection post-processing: box encodings [1, N, >=4], class predictions
    [1, N, num_classes (+1 background)], anchors [N, 4] -> boxes [1, M, 4], classes
    [1, M], scores [1, M], num_detections [1], M = max_detections *
    max_classes_per_detection."""
    _rank(boxes, 3, "box encodings")
    _rank(scores, 3, "class predictions")
    _rank(anchors, 2, "anchors")
    require(boxes[0] == 1, f"box encodings must have batch 1, got {list(boxes)}")
    require(boxes[2] >= 4, f"box encodings need >= 4 values per box, got {list(boxes)}")
    count = boxes[1]
    require(
        tuple(scores[:2]) == (1, count),
        f"class predictions {list(scores)} must be [1, {count}, classes]",
    )
    require(tuple(anchors) == (count, 4), f"anchors {list(anchors)} must be [{count}, 4]")
    require(num_classes >= 1, f"num_classes must be >= 1, got {num_classes}")
    require(
        scores[2] - num_classes in (0, 1),
        f"class predictions have {scores[2]} classes, num_classes is {num_classes} "
        "(one more for a background class is allowed)",
    )
    require(
        max_classes_per_detection >= 1,
        f"max_classes_per_detection must be >= 1, got {max_classes_per_detection}",
    )
    rows = max(max_detections, 0) * max_classes_per_detection
    return [(1, rows, 4), (1, rows), (1, rows), (1,)]
