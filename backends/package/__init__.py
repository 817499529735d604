"""The `model.synap` package: a deterministic zip writer and a checked reader.

Layout (an uncompressed ZIP_STORED archive; every entry dated 1980-01-01 00:00:00, mode
0o644, Unix creator; `bundle.json` first, then the other members in sorted order):

- `bundle.json`: ``{"format": "synapc.model", "version": 2, "target", "source": {"model",
  "sha256", "synapc"}, "inputs": [tensor], "outputs": [tensor], "graph": [{"model":
  "0/model.json", "inputs": [{"subgraph": -1, "out": 0}, ...]}], "outputs_from":
  [{"subgraph": k, "out": j}], "metadata": {str: str}, "members": {name: {"size",
  "sha256"}}}``, and for a streaming model ``"state": [{"name", "input": i, "output": j,
  "initial": {"dtype", "shape", "offset", "nbytes"}}]`` with the initial values in the
  member `state.bin`: model input i takes the state before a run, model output j gives
  it after (`synapc.Network` carries it and shows the other inputs / outputs only).
  A graph input ``{"subgraph": -1, "out": i}`` is model input i, otherwise
  output j of an earlier subgraph k. `members` lists every other member with its size and
  SHA-256; the reader refuses unlisted, missing or altered members.
- per subgraph i: `i/model.json` ``{"delegate": "npu"|"gpu"|"cpu", "executable":
  "i/model.stablehlo", "weights_file": "i/weights.bin", "weights": [{"dtype", "shape",
  "offset", "nbytes"}], "inputs": [tensor], "outputs": [tensor]}``; `i/model.stablehlo`,
  the `jax.export` serialization of ``f(weights: list, *inputs) -> list`` (StableHLO,
  lowered for CPU); `i/weights.bin`, the weights little-endian, each at a 64-byte aligned
  offset. An entry may add ``"stored": "float16"``: a float32 weight whose values are
  all float16 values (a float16 program's), stored in half the bytes and widened on
  reading, bit for bit.
- `description.json` (optional; `synapc convert` writes it): the compiled graph
  described for people, layer by layer (`synapc.backends.package.description`), what
  `synapc report` draws.
- profiling builds: model.json also has ``"layers": [{"name", "type", "executable":
  "i/layers/k.stablehlo", "weights_file": "i/layers/k.weights.bin", "weights": [...],
  "operands": [{"layer": -1 | k, "out": j}]}]`` and ``"layer_outputs": [{"layer", "out"}]``
  (which layer result is each subgraph output); one program per fused layer.

A tensor is ``{"name", "shape", "data_type", "layout", "format", "quantization": {"scale":
[...], "zero_point": [...], "axis"} | null, "means": [...] | null, "scale": float | null}``.
JSON is written with sorted keys, one-space indent, Python's shortest float repr and a
final newline, so the same content is the same bytes.

The reader (`read_package`) treats a package as untrusted and checks all of it before
anything uses it (the order is in `reader.py`): the zip structure from its central
directory (stored members only, sizes within `synapc.limits`, local headers agreeing with
the central directory, CRCs), JSON size and nesting depth before parsing, every field of
bundle.json and model.json against the layout above (types, ranges, shapes within the
tensor limits, no unknown fields, member names exactly as above, nothing listed that no
subgraph uses), checksums before any member is parsed, references and the tensors that
connect subgraphs. `synapc.Network` then checks each program against model.json. Every
refusal is one `PackageError` line naming the file, the member and the field path
(``model.synap: 0/model.json: inputs[1].shape[2]: ...``).

Importing this package needs neither xDSL nor the compiler: only numpy and the stdlib.
"""

from synapc.backends.package.reader import (
    Package,
    SubgraphModel,
    package_from_bytes,
    read_package,
)
from synapc.backends.package.spec import (
    FieldError,
    PackageError,
    ProfiledLayer,
    Quantization,
    StateSpec,
    Subgraph,
    TensorSpec,
)
from synapc.backends.package.writer import build_package

__all__ = [
    "FieldError",
    "Package",
    "PackageError",
    "ProfiledLayer",
    "Quantization",
    "StateSpec",
    "Subgraph",
    "SubgraphModel",
    "TensorSpec",
    "build_package",
    "package_from_bytes",
    "read_package",
]
