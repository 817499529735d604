"""`model_info.txt`: what a conversion produced, for people reading it on a terminal, as
`synap convert` writes one: inputs and outputs (shapes, types, quantization), subgraphs,
the layer table (which source layers each layer of the converted model computes), the
operation table and memory usage.

Types are the types tensors have on the target, not the IR's:

* float tensors show the float type they are computed in: `f16` in a float model on
  VS680 / VS640 (their NPUs run float models as float16), `f32` on GENERIC and in any
  model with quantized tensors (its float tensors are float32 on every target), as the
  lowering chooses (`delegate_float_dtype`); a line under the title says which;
* quantized tensors show their storage type and quantization,
  `uint8 scale=0.0235 zero_point=128`, or per channel
  `int8 per-channel axis=0 (16 channels)`;
* other integers show the type they run as (int64 runs as int32).

The application exchanges inputs and outputs in the package's data type. Where that
differs from the type on the target, the inputs / outputs tables add it in brackets:
`f16 (I/O f32)` is a tensor the application reads or writes as float32 and the target
computes in float16 (converted at the boundary).

Lines stay within `WIDTH` characters. The layer table's `layer` column holds the
layer's own source layer name, cut by `shorten` to at most `NAME_WIDTH` characters
(fewer when the other columns are wide): TFLite's `;`-joined names keep their first
name (`a/b/Relu;...`), others lose their middle (`/model/fe...block3/expand/Conv`); the
full names of the shortened ones are listed in a table after the layer table. The other
source layers a fused layer computes are listed once, in full: in the last column,
`fused with` (`-` for none), wrapped onto continuation lines indented under that column,
when every name fits there (no layer fusing any: no such column); otherwise each
layer's list follows its row, on lines starting with `fused with:` indented under the
`layer` column. Names are never cut in these lists, so only a single name longer than a
whole line makes a line longer than `WIDTH`.

Memory usage counts weights, and inputs and outputs in the types the application
exchanges; then each subgraph's memory plan (``plan-memory``): its tensors in their
types on the target (float16 activations take half the bytes of float32 ones).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue

from synapc.backends.jax.lowering import delegate_float_dtype
from synapc.backends.package import Subgraph, TensorSpec
from synapc.backends.targets import Target
from synapc.backends.targets.latency import layer_time
from synapc.dialects.quant import UniformQuantizedType
from synapc.dialects.synap.base import is_float
from synapc.dialects.synap.constant import ConstantOp
from synapc.dtypes import device_dtype, numpy_dtype
from synapc.passes.layer_patterns import source_layers
from synapc.passes.partition import FALLBACK

#: The line width model_info.txt keeps to.
WIDTH = 120
#: The widest layer name in the layer table; longer ones are cut by `shorten`.
NAME_WIDTH = 40
#: The narrowest the layer column gets when the other columns are wide.
MIN_NAME_WIDTH = 16
#: The narrowest `fused with` column that takes lists that need wrapping.
MIN_FUSED_WIDTH = 24
#: What stands for the cut-out middle of a shortened name.
ELLIPSIS = "..."

_FLOAT_NAMES = {"float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16"}


def layer_names(func: FuncOp) -> list[str]:
    """Every source layer name of a function's ops, in op order (imported models)."""
    return [n for op in func.body.block.ops for n in source_layers(op)]


def shorten(name: str, width: int = NAME_WIDTH) -> str:
    """`name` cut to at most `width` characters: the first of TFLite's `;`-joined names
    followed by `;...`, or else `ELLIPSIS` in the middle, keeping a third of the rest
    from the start and two thirds from the end (paths of exported layers share their
    starts and differ towards the end)."""
    if len(name) <= width:
        return name
    first = name.split(";")[0]
    if first != name and len(first) + len(";" + ELLIPSIS) <= width:
        return first + ";" + ELLIPSIS
    keep = max(width - len(ELLIPSIS), 2)
    head = keep // 3
    return name[:head] + ELLIPSIS + name[len(name) - (keep - head) :]


def _dtype_text(dtype: np.dtype) -> str:
    """`f16` / `f32` for floats, numpy's name (`int8`, `uint8`, `bool`) otherwise."""
    return _FLOAT_NAMES.get(dtype.name, dtype.name)


def _quantization_text(
    storage: np.dtype, scales: Sequence[float], zero_points: Sequence[int], axis: int | None
) -> str:
    if axis is None:
        return f"{storage.name} scale={scales[0]:.6g} zero_point={int(zero_points[0])}"
    return f"{storage.name} per-channel axis={axis} ({len(scales)} channels)"


def target_dtype(element_type: Attribute, float_dtype: np.dtype) -> np.dtype:
    """The numpy dtype values of `element_type` have on the target: `float_dtype` for
    floats, the storage type of quantized types, the device type of integers."""
    if is_float(element_type):
        return np.dtype(float_dtype)
    return device_dtype(numpy_dtype(element_type))


def type_text(element_type: Attribute, float_dtype: np.dtype) -> str:
    """How model_info.txt shows a tensor element type on a target whose float tensors
    compute in `float_dtype`: `f16`, `int32`, `uint8 scale=0.0235 zero_point=128`,
    `int8 per-channel axis=0 (16 channels)`."""
    if isinstance(element_type, UniformQuantizedType):
        return _quantization_text(
            element_type.storage_dtype,
            element_type.scales.tolist(),
            element_type.zero_points.tolist(),
            element_type.quantized_dimension,
        )
    try:
        return _dtype_text(target_dtype(element_type, float_dtype))
    except TypeError:  # an element type without a numpy dtype: its IR spelling
        return str(element_type)


def _io_type(
    spec: TensorSpec, element: Attribute | None, float_dtype: np.dtype
) -> tuple[str, str | None]:
    """The type of an input or output on the target, with the type the application
    exchanges in brackets when that differs; and then a line explaining the brackets."""
    io = np.dtype(spec.data_type)
    if element is None:  # no IR type to go by: the package's
        q = spec.quantization
        if q is None:
            return _dtype_text(io), None
        return _quantization_text(io, q.scale, q.zero_point, q.axis), None
    text = type_text(element, float_dtype)
    try:
        on_target = target_dtype(element, float_dtype)
    except TypeError:
        return text, None
    if on_target == io:
        return text, None
    return f"{text} (I/O {_dtype_text(io)})", (
        f"{text} (I/O {_dtype_text(io)}): the application reads and writes "
        f"{_dtype_text(io)}, the target computes in {text} (converted at the boundary)"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _wrap(names: Sequence[str], width: int) -> list[str]:
    """`names` joined with ", " in lines of at most `width` characters, broken only
    between names (a name longer than `width` gets a line of its own)."""
    lines: list[str] = []
    line = ""
    for i, name in enumerate(names):
        piece = name + ("," if i < len(names) - 1 else "")
        if line and len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = piece
        else:
            line = f"{line} {piece}" if line else piece
    return [*lines, line]


def text_table(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    after: Sequence[Sequence[str]] | None = None,
) -> list[str]:
    """A left-aligned text table. A last cell of several lines (joined with newlines)
    continues on lines indented under its column; `after[k]` are lines printed as they
    are after row `k`."""
    cells = [list(header)] + [[str(c) for c in row] for row in rows]
    last = len(header) - 1
    widths = [
        max(len(line) for r in cells for line in r[i].split("\n"))
        for i in range(len(header))
    ]
    indent = " " * (sum(widths[:last]) + 2 * last)
    lines = []
    for k, r in enumerate(cells):
        first, *more = r[last].split("\n")
        cols = [*r[:last], first]
        lines.append(
            "  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()
        )
        lines += [indent + m for m in more]
        if after is not None and k > 0:
            lines += after[k - 1]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def _io_rows(
    specs: Sequence[TensorSpec],
    elements: Sequence[Attribute | None],
    float_dtype: np.dtype,
    inputs: bool,
    notes: list[str],
) -> list[list[object]]:
    """The rows of the inputs or outputs table; the lines explaining their types go to
    `notes` (once each)."""
    rows = []
    for i, (s, element) in enumerate(zip(specs, elements, strict=True)):
        text, note = _io_type(s, element, float_dtype)
        if note is not None and note not in notes:
            notes.append(note)
        row: list[object] = [
            i,
            s.name,
            "x".join(map(str, s.shape)),
            s.layout,
            text,
            s.format or "-",
        ]
        if inputs:
            means = "-" if s.means is None else ",".join(f"{m:g}" for m in s.means)
            row += [means, "-" if s.scale is None else f"{s.scale:g}"]
        rows.append(row)
    return rows


def _elements(types: Sequence[Attribute], count: int) -> list[Attribute | None]:
    """The element types of a function signature's tensors, or Nones when the
    signature does not match the package's `count` tensors."""
    if len(types) != count:
        return [None] * count
    return [t.element_type if isinstance(t, TensorType) else None for t in types]


def _shape(value: SSAValue) -> str:
    t = value.type
    return "x".join(map(str, t.get_shape())) if isinstance(t, TensorType) else "?"


def _output_type(op: Operation, float_dtype: np.dtype) -> str:
    if not op.results:
        return "-"
    t = op.results[0].type
    return type_text(t.element_type, float_dtype) if isinstance(t, TensorType) else "?"


def _layer_section(
    layers: Sequence[tuple[int, Operation, str]],
    float_dtype: np.dtype,
    seconds: Sequence[float],
) -> list[str]:
    """The layer table (with each layer's estimated time), followed by the full names
    of the layer names it shortened."""
    header = ["#", "layer", "type", "output shape", "output type", "delegate", "est. us"]
    rows: list[list[str]] = []
    fused: list[list[str]] = []
    for k, ((_, op, delegate), t) in enumerate(zip(layers, seconds, strict=True)):
        names = list(dict.fromkeys(source_layers(op)))
        rows.append(
            [
                str(k),
                names[0] if names else "-",
                op.name.removeprefix("synap."),
                _shape(op.results[0]) if op.results else "-",
                _output_type(
                    op, np.dtype(np.float32) if delegate == "cpu" else float_dtype
                ),
                delegate,
                f"{1e6 * t:.1f}",
            ]
        )
        fused.append(names[1:])

    # Columns other than `layer`, and the two spaces after each of the columns.
    others = [max(len(r[i]) for r in [header, *rows]) for i in (0, 2, 3, 4, 5, 6)]
    base = sum(others) + 2 * len(header)
    label_width = NAME_WIDTH
    room = WIDTH - base - max(len(shorten(r[1], label_width)) for r in [header, *rows])
    longest = max((len(n) for names in fused for n in names), default=0)
    one_line = all(len(", ".join(names)) <= room for names in fused)
    in_column = any(fused) and (
        one_line or (room >= MIN_FUSED_WIDTH and longest + 1 <= room)
    )
    if not in_column:
        label_width = min(NAME_WIDTH, max(MIN_NAME_WIDTH, WIDTH - base + 2))

    shortened: list[tuple[str, str]] = []
    for r in rows:
        label = shorten(r[1], label_width)
        if label != r[1]:
            shortened.append((r[0], r[1]))
            r[1] = label

    if in_column:
        for r, names in zip(rows, fused, strict=True):
            r.append("\n".join(_wrap(names, room)) if names else "-")
        lines = text_table([*header, "fused with"], rows)
    else:
        indent = " " * (len(str(len(rows) - 1)) + 2)
        prefix = "fused with: "
        after = []
        for names in fused:
            wrapped = _wrap(names, WIDTH - len(indent) - len(prefix)) if names else []
            after.append(
                [
                    indent + (prefix if j == 0 else " " * len(prefix)) + line
                    for j, line in enumerate(wrapped)
                ]
            )
        lines = text_table(header, rows, after)
    if shortened:
        lines += ["", "Full names of the layer names shortened above"]
        lines += text_table(["#", "layer"], shortened)
    return lines


def model_info(
    *,
    title: str,
    func: FuncOp,
    target: Target,
    source_layer_names: Sequence[str],
    inputs: Sequence[TensorSpec],
    outputs: Sequence[TensorSpec],
    subgraphs: Sequence[Subgraph],
    layers: Sequence[tuple[int, Operation, str]],
) -> str:
    """The text of model_info.txt for `func` converted for `target`, and its package
    parts; `source_layer_names` are the layer names of the model as imported; `layers`
    are ``(subgraph, op, delegate)`` of every layer the package runs."""
    float_dtype = delegate_float_dtype(func, target)
    why = (
        " (the model has quantized tensors: its float tensors are f32 on every target)"
        if float_dtype != target.npu_float_dtype
        else ""
    )
    lines = [
        title,
        f"float tensors compute in {_dtype_text(float_dtype)} on {target.name}{why}",
        "",
    ]
    signature = func.function_type
    notes: list[str] = []
    input_rows = _io_rows(
        inputs, _elements(signature.inputs.data, len(inputs)), float_dtype, True, notes
    )
    output_rows = _io_rows(
        outputs, _elements(signature.outputs.data, len(outputs)), float_dtype, False, notes
    )
    lines += [
        "Inputs",
        *text_table(
            ["#", "name", "shape", "layout", "type", "format", "means", "scale"],
            input_rows,
        ),
        "",
        "Outputs",
        *text_table(["#", "name", "shape", "layout", "type", "format"], output_rows),
        *notes,
        "",
    ]
    seconds = [layer_time(op, target, delegate) for _, op, delegate in layers]
    per_subgraph = [0.0] * len(subgraphs)
    for (k, _, _), t in zip(layers, seconds, strict=True):
        per_subgraph[k] += t
    sub_rows = [
        [
            i,
            s.delegate,
            len(s.inputs),
            len(s.outputs),
            sum(1 for k, _, _ in layers if k == i),
            sum(w.nbytes for w in s.weights),
            f"{1000 * per_subgraph[i]:.3f}",
        ]
        for i, s in enumerate(subgraphs)
    ]
    lines += [
        f"Subgraphs (estimated {1000 * sum(seconds):.3f} ms on {target.name}: "
        "backends/targets/latency.py)",
        *text_table(
            ["#", "delegate", "inputs", "outputs", "layers", "weight bytes", "est. ms"],
            sub_rows,
        ),
        "",
    ]

    lines += [
        f"Layers ({_count(len(layers), 'layer')} computing "
        f"{_count(len(source_layer_names), 'source layer')})",
        *_layer_section(layers, float_dtype, seconds),
    ]
    fallbacks = [
        [str(k), shorten((source_layers(op) or ["-"])[0]), reason.data]
        for k, (_, op, _) in enumerate(layers)
        if isinstance(reason := op.attributes.get(FALLBACK), StringAttr)
    ]
    if fallbacks:
        lines += [
            "",
            "Layers on the CPU because the NPU cannot run them",
            *text_table(["#", "layer", "reason"], fallbacks),
        ]
    found = {n for _, op, _ in layers for n in source_layers(op)}
    gone = [n for n in dict.fromkeys(source_layer_names) if n not in found]
    if gone:
        prefix = "source layers folded into constants or removed: "
        wrapped = _wrap(gone, WIDTH - len(prefix))
        lines += [prefix + wrapped[0], *(" " * len(prefix) + w for w in wrapped[1:])]
    lines.append("")

    counts = Counter(op.name.removeprefix("synap.") for _, op, _ in layers)
    lines += ["Operations", *text_table(["operation", "count"], sorted(counts.items())), ""]

    weight_bytes = sum(w.nbytes for s in subgraphs for w in s.weights)
    io_bytes = sum(
        int(np.prod(s.shape, dtype=np.int64)) * np.dtype(s.data_type).itemsize
        for s in (*inputs, *outputs)
    )
    lines += [
        "Memory usage (bytes; each subgraph's plan follows)",
        f"weights: {weight_bytes}",
        f"inputs and outputs (as the application exchanges them): {io_bytes}",
        "",
    ]
    for i, subgraph in enumerate(subgraphs):
        if subgraph.memory_plan is not None:
            schedule = [
                op for k, op, _ in layers if k == i and not isinstance(op, ConstantOp)
            ]
            lines += [*_plan_section(i, subgraph, schedule, target), ""]
    return "\n".join(lines)


def _plan_section(
    index: int, subgraph: Subgraph, schedule: Sequence[Operation], target: Target
) -> list[str]:
    """The memory plan of subgraph `index` (``plan-memory``): its arena against the
    lower bound, where the peak is, what the SRAM holds, and the buffers placed by
    rule; `schedule` are its layers in the order they run."""
    assert subgraph.memory_plan is not None
    f = subgraph.memory_plan.figures
    bound, arena = f["lower_bound"], f["arena"]
    overhead = 100.0 * (arena - bound) / bound if bound else 0.0
    peak = schedule[f["peak_step"]] if f["peak_step"] < len(schedule) else None
    peak_name = shorten((source_layers(peak) or [peak.name])[0]) if peak else "-"
    capacity = f"{int(target.sram_bytes.value)}" if target.sram_bytes else "0"
    return [
        f"Memory plan of subgraph {index} ({subgraph.delegate}; bytes, buffers aligned to "
        f"{f['alignment']})",
        f"DDR arena lower bound (largest sum of its buffers live at once): {bound}",
        f"DDR arena planned: {arena} (overhead {overhead:.1f} %; "
        f"without reuse {f['no_reuse']})",
        f"peak of live tensors at layer {f['peak_step']}: {peak_name}",
        f"SRAM: {f['sram']} of {capacity} bytes hold {f['sram_resident']} bytes of "
        "tensors (most bytes moved per byte)",
        f"weights: {f['weights']}; inputs: {f['inputs']}; outputs: {f['outputs']} "
        "(buffers of their own)",
    ]
