"""`delegate: auto`'s NPU / CPU split (`place_layers.cheapest_placement`): on random
DAGs with random layer times, crossing costs and CPU-only layers, the minimum cut finds
the least total cost that trying every split finds."""

from __future__ import annotations

import itertools

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from synapc.backends.targets.place_layers import cheapest_placement

_TIME = st.floats(min_value=1e-6, max_value=1e-3)


@st.composite
def _placements(draw: st.DrawFn) -> tuple:
    n = draw(st.integers(min_value=1, max_value=9))
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    for v in range(1, n):
        for u in draw(st.sets(st.integers(min_value=0, max_value=v - 1), max_size=3)):
            graph.add_edge(u, v)
    on_cpu = draw(st.sets(st.integers(min_value=0, max_value=n - 1), max_size=n))
    movable = [k for k in range(n) if k not in on_cpu]
    npu_s = {k: draw(_TIME) for k in movable}
    cpu_s = {k: draw(_TIME) for k in movable}
    crossing_s = {e: draw(_TIME) for e in graph.edges}
    return graph, npu_s, cpu_s, crossing_s, on_cpu


def _total(placement: set[int], npu_s, cpu_s, crossing_s) -> float:
    layers = sum(cpu_s[k] if k in placement else npu_s[k] for k in npu_s)
    crossings = sum(
        c for (u, v), c in crossing_s.items() if (u in placement) != (v in placement)
    )
    return layers + crossings


@settings(max_examples=300, deadline=None)
@given(_placements())
def test_the_cut_is_the_cheapest_split(case: tuple) -> None:
    graph, npu_s, cpu_s, crossing_s, on_cpu = case
    found = cheapest_placement(graph, npu_s, cpu_s, crossing_s, on_cpu)
    assert on_cpu <= found <= set(graph.nodes)
    movable = sorted(npu_s)
    best = min(
        _total(on_cpu | set(chosen), npu_s, cpu_s, crossing_s)
        for r in range(len(movable) + 1)
        for chosen in itertools.combinations(movable, r)
    )
    # the cut counts picoseconds: within 0.1 ns of the best split
    assert _total(found, npu_s, cpu_s, crossing_s) <= best + 1e-10


def test_nothing_pinned_and_the_npu_faster_keeps_everything_on_the_npu() -> None:
    graph = nx.path_graph(4, create_using=nx.DiGraph)
    npu_s = dict.fromkeys(range(4), 1e-5)
    cpu_s = dict.fromkeys(range(4), 1e-4)
    crossing = dict.fromkeys(graph.edges, 1e-5)
    assert cheapest_placement(graph, npu_s, cpu_s, crossing, set()) == set()
