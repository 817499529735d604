"""Subgraphs other than the main one: read on demand, and imported through a view.

CALL_ONCE (`variables`), IF and WHILE (`control_flow`) name other subgraphs of the file
by index. `read_subgraph` reads one with the same bounds checks as subgraph 0, and
`subgraph_view` makes an `Importer` over it that shares the file, the weights and the op
list of the importer it comes from (so what it converts lands in the same function), but
has its own tensor tables, since tensor indices are local to a subgraph.
"""

from __future__ import annotations

import copy

from synapc.errors import SynapcError
from synapc.importers.tflite import flatbuffer
from synapc.importers.tflite.reader import Importer, TfliteOp
from synapc.limits import check_count


def read_subgraph(
    imp: Importer, op: TfliteOp, index: int, field: str
) -> flatbuffer.Subgraph:
    """Subgraph `index` of the file (named by `op`'s option `field`), read with the same
    checks as subgraph 0; it must not be the main subgraph."""
    if not 0 < index < imp.file.subgraph_count:
        raise op.fail(
            f"{field} {index} is not a subgraph other than the main one "
            f"(the model has {imp.file.subgraph_count} subgraphs)"
        )
    reader = flatbuffer.Reader(imp.path, imp.data)
    model = reader.table(reader.get(flatbuffer._U32, 0, "root table offset"), "model")
    positions = model.tables(flatbuffer._MODEL_SUBGRAPHS, "subgraphs")
    return flatbuffer._subgraph(reader, reader.table(positions[index], f"subgraph {index}"))


def subgraph_view(
    imp: Importer, op: TfliteOp, graph: flatbuffer.Subgraph, where: str
) -> Importer:
    """An importer over `graph` (called `where` in messages, e.g. "body subgraph 2")
    that emits into `imp`'s op list and weights; its tensor, buffer and type indices
    are checked before it is used."""
    view = copy.copy(imp)
    view.graph, view.current = graph, None
    view.values, view._element_types, view.shapes, view.folded = {}, {}, {}, {}
    view.nesting = imp.nesting + 1
    check_count(
        view.nesting, "max_graph_nesting", f"{imp.path}: {op.label}: {where}: nesting"
    )
    view.resolving = imp.resolving or any(-1 in t.shape_signature for t in graph.tensors)
    try:
        view._check_references()
    except SynapcError as error:
        raise op.fail(f"{where}: {error}".replace(f"{imp.path}: ", "")) from None
    return view
