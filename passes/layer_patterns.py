"""The metafile's layer patterns, resolved on a function's ops: the syntax shared by
per-layer ``data_type`` maps (quantization) and ``delegate`` maps (partitioning).

A pattern is a layer name (any of the source layers an op computes: its
``layer_name`` and its ``fused_layers``), ``'name...'`` (every layer downstream of
`name`, itself excluded) or ``'@id'`` (the layer with that operator index). Unknown names
and indices are errors that list the closest existing ones.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

import networkx as nx
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Operation

from synapc.dialects.synap.constant import ConstantOp
from synapc.errors import SynapcError

_INDEX = re.compile(r"@(\d+)")


def source_layers(op: Operation) -> list[str]:
    """The source layers an op computes: its own `layer_name` and its `fused_layers`."""
    names = []
    own = op.attributes.get("layer_name")
    if isinstance(own, StringAttr):
        names.append(own.data)
    fused = op.attributes.get("fused_layers")
    if isinstance(fused, ArrayAttr):
        names += [a.data for a in fused.data if isinstance(a, StringAttr)]
    return names


def close_names(name: str, candidates: Sequence[str]) -> str:
    """``'a', 'b'`` — the candidates closest to `name`, for error messages."""
    close = difflib.get_close_matches(name, list(candidates), n=5, cutoff=0.3)
    return ", ".join(f"'{c}'" for c in close or list(candidates)[:5])


def dataflow_graph(ops: list[Operation]) -> nx.DiGraph:
    """The def-use graph of a body's ops (by position; constants and the return
    left out). An op reads what its operands hold and what the ops inside its regions
    read from outside them (an If's branches)."""
    where = {op: p for p, op in enumerate(ops)}
    graph = nx.DiGraph()
    for p, op in enumerate(ops):
        if isinstance(op, ConstantOp | ReturnOp):
            continue
        graph.add_node(p)
        inner = [v for region in op.regions for o in region.walk() for v in o.operands]
        for operand in (*op.operands, *inner):
            owner = operand.owner
            if owner in where and owner is not op and not isinstance(owner, ConstantOp):
                graph.add_edge(where[owner], p)
    return graph


def match_layers(
    pattern: str, ops: list[Operation], graph: nx.DiGraph, field: str
) -> set[int]:
    """Op positions a name, ``name...`` or ``@id`` pattern selects (`graph` from
    `dataflow_graph`); `field` names the metafile field in errors."""
    index = _INDEX.fullmatch(pattern)
    if index is not None:
        wanted = int(index.group(1))
        found = {
            p
            for p, op in enumerate(ops)
            if isinstance(a := op.attributes.get("layer_index"), IntegerAttr)
            and a.value.data == wanted
        }
        if not found:
            indices = sorted(
                {
                    f"@{a.value.data}"
                    for op in ops
                    if isinstance(a := op.attributes.get("layer_index"), IntegerAttr)
                },
                key=lambda s: abs(int(s[1:]) - wanted),
            )
            raise SynapcError(
                f"{field}: '{pattern}': no layer has operator index {wanted} (closest: "
                f"{', '.join(indices[:5]) or 'none'})"
            )
        return found
    descendants = pattern.endswith("...")
    name = pattern[:-3] if descendants else pattern
    found = {p for p, op in enumerate(ops) if name in source_layers(op)}
    if not found:
        names = list(dict.fromkeys(n for op in ops for n in source_layers(op)))
        raise SynapcError(
            f"{field}: '{pattern}': no layer named '{name}' (closest: "
            f"{close_names(name, names) or 'none'})"
        )
    if not descendants:
        return found
    below: set[int] = set()
    for p in found:
        below |= nx.descendants(graph, p)
    return below - found
