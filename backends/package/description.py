"""The ``description.json`` member of a `model.synap`: the compiled graph described for
people (`synapc report`), written by `synapc convert` (`synapc.convert.description`).

``{"layers": [layer], "outputs": [[k, j]], "quantized": bool}``; a layer is ``{"name",
"type", "subgraph": k, "delegate", "engine", "support", "sources": [str], "operands":
[[k, j]], "outputs": [{"shape", "type"}], "weights": [{"shape", "type"}], "time_us",
"sqnr_db": number | "inf" | null}``. Layers are listed subgraph by subgraph, each in its
layer order (the order its memory plan counts layers in); ``[-1, i]`` is model input
i, ``[k, j]`` result j of layer k, an earlier layer. ``outputs`` names the value of
each model output.

Like the rest of a package it is untrusted: `check_description` checks every field
(types, ranges, string lengths, references, agreement with the subgraphs) before the
report uses it, so a hostile description can at worst show wrong text, escaped.
"""

from __future__ import annotations

import math
from typing import Any

from synapc.backends.package.spec import (
    DELEGATES,
    FieldError,
    array,
    choice,
    integer,
    item_path,
    key_path,
    number,
    obj,
    string,
)
from synapc.limits import limits

#: The member's name.
DESCRIPTION = "description.json"
_FIELDS = ("layers", "outputs", "quantized")
_LAYER_FIELDS = (
    "name", "type", "subgraph", "delegate", "engine", "support", "sources", "operands",
    "outputs", "weights", "time_us", "sqnr_db",
)  # fmt: skip
#: The longest text a description field may hold (layer names, support reasons).
MAX_TEXT = 4096


def _text(value: Any, at: str) -> str:
    text = string(value, at)
    if len(text) > MAX_TEXT:
        raise FieldError(at, f"longer than {MAX_TEXT} characters")
    return text


def _texts(value: Any, at: str) -> list[str]:
    return [_text(v, item_path(at, i)) for i, v in enumerate(array(value, at))]


def _tensors(value: Any, at: str) -> list[dict[str, Any]]:
    tensors = []
    rank = limits().max_tensor_rank
    for i, item in enumerate(array(value, at)):
        where = item_path(at, i)
        item = obj(item, where, ("shape", "type"))
        shape = array(item["shape"], key_path(where, "shape"))
        if len(shape) > rank:
            raise FieldError(key_path(where, "shape"), f"rank above {rank}")
        for d, dim in enumerate(shape):
            integer(dim, item_path(key_path(where, "shape"), d), 0)
        _text(item["type"], key_path(where, "type"))
        tensors.append(item)
    return tensors


def _ref(
    value: Any, at: str, layers: list[dict[str, Any]], inputs: int, before: int
) -> None:
    """`value` is ``[-1, i]`` for a model input or ``[k, j]`` for result j of a layer
    k < `before`."""
    pair = array(value, at)
    if len(pair) != 2:
        raise FieldError(at, "expected [layer, result]")
    k = integer(pair[0], item_path(at, 0), -1, before - 1)
    limit = inputs if k == -1 else len(layers[k]["outputs"])
    integer(pair[1], item_path(at, 1), 0, limit - 1)


def check_description(
    value: Any, delegates: list[str], inputs: int, outputs: int, plan_layers: list[int]
) -> dict[str, Any]:
    """`value` checked as a description of a package whose subgraphs run on
    `delegates` and whose model has `inputs` inputs and `outputs` outputs;
    `plan_layers[k]` is the largest
    layer index subgraph k's memory plan names (-1 for none). The document itself."""
    doc = obj(value, "", _FIELDS)
    if not isinstance(doc["quantized"], bool):
        raise FieldError("quantized", "expected a boolean")
    raw = array(doc["layers"], "layers")
    if len(raw) > limits().max_graph_items:
        raise FieldError("layers", f"more than {limits().max_graph_items} layers")
    layers: list[dict[str, Any]] = []
    counts = [0] * len(delegates)
    last = 0
    for index, item in enumerate(raw):
        at = item_path("layers", index)
        layer = obj(item, at, _LAYER_FIELDS)
        for key in ("name", "type", "engine", "support"):
            _text(layer[key], key_path(at, key))
        k = integer(layer["subgraph"], key_path(at, "subgraph"), 0, len(delegates) - 1)
        if k < last:
            raise FieldError(
                key_path(at, "subgraph"), "layers are listed subgraph by subgraph"
            )
        last = k
        counts[k] += 1
        delegate = choice(
            layer["delegate"], key_path(at, "delegate"), DELEGATES, "delegate"
        )
        if delegate != delegates[k]:
            raise FieldError(
                key_path(at, "delegate"), f"subgraph {k} runs on {delegates[k]}"
            )
        _texts(layer["sources"], key_path(at, "sources"))
        _tensors(layer["outputs"], key_path(at, "outputs"))
        _tensors(layer["weights"], key_path(at, "weights"))
        for j, ref in enumerate(array(layer["operands"], key_path(at, "operands"))):
            _ref(ref, item_path(key_path(at, "operands"), j), layers, inputs, index)
        time = number(layer["time_us"], key_path(at, "time_us"))
        if not (math.isfinite(time) and time >= 0):
            raise FieldError(key_path(at, "time_us"), "expected a non-negative time")
        sqnr = layer["sqnr_db"]
        if sqnr is not None and sqnr != "inf":
            number(sqnr, key_path(at, "sqnr_db"))
        layers.append(layer)
    for k, largest in enumerate(plan_layers):
        if largest >= counts[k]:
            raise FieldError(
                "layers",
                f"subgraph {k} has {counts[k]} layers, its memory plan names layer "
                f"{largest}",
            )
    refs = array(doc["outputs"], "outputs")
    if len(refs) != outputs:
        raise FieldError("outputs", f"{len(refs)} references for {outputs} model outputs")
    for j, ref in enumerate(refs):
        _ref(ref, item_path("outputs", j), layers, inputs, len(layers))
    return doc
