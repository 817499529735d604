"""TorchScript importer: a `.torchscript` / `.pt` / `.pth` archive saved by
`torch.jit.script(model).save(path)` or `torch.jit.trace(model, example).save(path)`
becomes a `synapc.Model` in the synap dialect. Needs the optional dependency
``torch==2.13.0`` (the `torch` extra).

Design: the module is loaded on the CPU, frozen (`torch.jit.freeze`: parameters and
attributes become constants, conv + batch-norm pairs are folded, ``if self.x is None``
branches disappear), inlined and cleaned of tensor mutation. The frozen aten graph is then
walked directly and every aten node is translated into equivalent in-memory ONNX nodes;
the resulting `onnx.ModelProto` goes to the ONNX importer (`import_onnx(path,
proto=...)`), so one layout machinery (NCHW tracked by a permutation, stored
channels-last) and one set of converters serve both formats. We do not go through
`torch.onnx.export`: in torch 2.13 it defaults to the dynamo exporter, which needs
`onnxscript` and cannot export ScriptModules, and the legacy TorchScript exporter is
deprecated. Walking aten keeps the dependency to torch alone.

TorchScript carries no shapes, so `input_shapes` is required. The graph is executed once,
node by node, on zeros of those shapes (each aten node runs as a one-node TorchScript
function, so every overload behaves exactly as in torch); this gives every value a
concrete counterpart. Values that do not depend on the input data are *static*: shape
arithmetic (``aten::size``, ``prim::ListConstruct`` of ints, ``aten::Int``), constant
subgraphs, and the conditions of ``prim::If`` / trip counts of ``prim::Loop`` (so the
control flow a scripted ``F.interpolate`` compiles into is resolved at import). Only
nodes that compute on input data become ONNX nodes; shapes they need (``view``,
``flatten``, ``interpolate`` sizes) are read from the concrete results. An aten op with
no translation, or a value that depends on input data where a static one is needed,
fails with one line naming the op and its source line.

A cut (`outputs=`, a metafile's output names) names TorchScript values (see
`import_torchscript`). The whole graph is still executed, but a data-dependent node that
cannot be translated no longer fails at once: its tensor results get stand-in names that
remember the error, which is raised only when a requested output depends on them.

Layout: `loader` loads, checks and freezes the archive; `translator` walks the graph and
owns the registry of aten translations; each sibling module translates one family of
aten ops and registers them on import.
"""

from synapc.importers.torchscript import (  # noqa: F401  (registers the translations)
    conv,
    data_movement,
    elementwise,
    reduce,
    resize,
)
from synapc.importers.torchscript.loader import frozen_graph, load_torchscript
from synapc.importers.torchscript.translator import (
    IR_VERSION,
    OPSET,
    InputShapes,
    Translation,
    import_torchscript,
    torchscript_to_onnx,
)

__all__ = [
    "IR_VERSION",
    "OPSET",
    "InputShapes",
    "Translation",
    "frozen_graph",
    "import_torchscript",
    "load_torchscript",
    "torchscript_to_onnx",
]
