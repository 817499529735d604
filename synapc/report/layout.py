"""The compiled graph laid out top to bottom by Graphviz's ``dot`` (through
`pygraphviz`, whose wheels carry Graphviz): node centres, edge splines and the boxes of
subgraph clusters, in SVG coordinates (y grows downwards), for the report to draw.

Nodes have a fixed size and no text for ``dot`` (the report writes their text), so the
layout needs no fonts and takes well under a second for a few thousand layers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pygraphviz

#: Node box size in points (the report draws nodes at this size).
NODE_WIDTH, NODE_HEIGHT = 180.0, 44.0
#: Size of the model input / output nodes.
PORT_WIDTH, PORT_HEIGHT = 150.0, 30.0


@dataclass(frozen=True)
class Edge:
    """A drawn edge from node `tail` to node `head` (node ids as given to `layout`)."""

    tail: str
    head: str


@dataclass(frozen=True)
class Layout:
    """Where everything goes: node id -> centre, edge index -> SVG path and the
    middle of the edge (for its label), cluster (subgraph) -> box ``(x, y, width,
    height)``, and the drawing's size."""

    nodes: dict[str, tuple[float, float]]
    paths: list[tuple[str, tuple[float, float]]]
    clusters: dict[int, tuple[float, float, float, float]]
    width: float
    height: float


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(v) for v in text.split(","))


def layout(
    nodes: Sequence[tuple[str, bool]],
    edges: Sequence[Edge],
    clusters: dict[int, Sequence[str]],
) -> Layout:
    """Lay out `nodes` (id, whether it is a model input / output port), `edges` and
    `clusters` (subgraph index -> its node ids; drawn as boxes) top to bottom."""
    graph = pygraphviz.AGraph(directed=True, strict=False)
    graph.graph_attr.update(
        rankdir="TB", nodesep="0.3", ranksep="0.45", outputorder="edgesfirst"
    )
    graph.node_attr.update(shape="box", fixedsize="true", label="")
    for name, port in nodes:
        w, h = (PORT_WIDTH, PORT_HEIGHT) if port else (NODE_WIDTH, NODE_HEIGHT)
        graph.add_node(name, width=str(w / 72), height=str(h / 72))
    for k, edge in enumerate(edges):
        graph.add_edge(edge.tail, edge.head, key=str(k))
    for index, members in clusters.items():
        graph.add_subgraph(list(members), name=f"cluster_{index}", margin="14")
    graph.layout(prog="dot")
    _, _, right, top = _floats(graph.graph_attr["bb"])
    positions = {}
    for node in graph.nodes_iter():
        x, y = _floats(node.attr["pos"])
        positions[str(node)] = (round(x, 1), round(top - y, 1))
    paths: list[tuple[str, tuple[float, float]]] = [("", (0.0, 0.0))] * len(edges)
    for k, edge in enumerate(edges):
        paths[k] = _path(graph.get_edge(edge.tail, edge.head, str(k)).attr["pos"], top)
    boxes = {}
    for index in clusters:
        x0, y0, x1, y1 = _floats(graph.get_subgraph(f"cluster_{index}").graph_attr["bb"])
        boxes[index] = (x0, top - y1, x1 - x0, y1 - y0)
    return Layout(positions, paths, boxes, right, top)


def _path(spline: str, top: float) -> tuple[str, tuple[float, float]]:
    """An SVG path for a ``dot`` edge position ("e,x,y" arrow end, then the cubic
    Bézier points), with y flipped, and the middle control point."""
    end = None
    points = []
    for item in spline.split():
        if item.startswith("e,"):
            end = _floats(item[2:])
        elif not item.startswith("s,"):  # no arrow at the tail: the report draws none
            points.append(_floats(item))
    middle = points[len(points) // 2]
    flipped = [f"{x:.1f},{top - y:.1f}" for x, y in points]
    path = f"M{flipped[0]}"
    for k in range(1, len(flipped) - 2, 3):
        path += f"C{flipped[k]} {flipped[k + 1]} {flipped[k + 2]}"
    if end is not None:
        path += f"L{end[0]:.1f},{top - end[1]:.1f}"
    return path, (round(middle[0], 1), round(top - middle[1], 1))
