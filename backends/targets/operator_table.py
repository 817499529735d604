"""The vendor's NPU operator support table (``npu_operator_support.csv``, package data):
which NPU engines run an operator for a given combination of tensor types.

Rows are ``category,operator,types,engines``; `types` is ``input->output`` or, for the
weighted layers, ``input->weight->output``, each position a type class (``asym-u8``,
``asym-i8``, ``pc-sym-i8``, ``fp16``, ``fp32``, ``bool8``, ``int16``, ``int32``; a
position may list alternatives separated by ``/``); `engines` are ``NN`` (convolution
cores), ``TP`` (tensor processors) and ``PPU`` (shader) separated by ``|``, in the
vendor's order of preference; ``-`` for either means the row supports nothing. An
operator / type combination missing from the table is not supported on the NPU
(``TARGETS.md``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import cache
from importlib import resources

from synapc.errors import SynapcError

#: The NPU engines the table names.
NPU_ENGINES = ("NN", "TP", "PPU")
#: Where the table ships.
TABLE_FILE = "npu_operator_support.csv"


@dataclass(frozen=True)
class Row:
    """One supported combination: the operator, the allowed type classes at each
    position (input, [weight,] output), and the engines in order of preference."""

    category: str
    operator: str
    types: tuple[frozenset[str], ...]
    engines: tuple[str, ...]

    def matches(self, signature: tuple[str, ...]) -> bool:
        """Whether `signature` (one type class per position) is this row's."""
        return len(signature) == len(self.types) and all(
            t in allowed for t, allowed in zip(signature, self.types, strict=True)
        )

    @property
    def types_text(self) -> str:
        """The row's types as the table writes them."""
        return "->".join("/".join(sorted(p)) for p in self.types)


def parse_table(text: str, where: str = TABLE_FILE) -> dict[str, list[Row]]:
    """The table's rows by operator; a malformed row is a `SynapcError` naming it."""
    rows: dict[str, list[Row]] = {}
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or [h.strip() for h in header[:2]] != ["category", "operator"]:
        raise SynapcError(f"{where}: the header must start with 'category,operator'")
    for line, fields in enumerate(reader, start=2):
        if not fields:
            continue
        if len(fields) != 4:
            raise SynapcError(f"{where}:{line}: expected 4 fields, got {len(fields)}")
        category, operator, types, engines = (f.strip() for f in fields)
        if "-" in (types, engines):
            continue  # listed without a type combination or without an engine
        parts = tuple(frozenset(p.split("/")) for p in types.split("->"))
        if len(parts) not in (2, 3) or any("" in p for p in parts):
            raise SynapcError(f"{where}:{line}: types {types!r} are not in->[w->]out")
        chosen = tuple(engines.split("|"))
        unknown = [e for e in chosen if e not in NPU_ENGINES]
        if unknown:
            raise SynapcError(
                f"{where}:{line}: unknown engine {unknown[0]!r} "
                f"(expected {', '.join(NPU_ENGINES)})"
            )
        rows.setdefault(operator, []).append(Row(category, operator, parts, chosen))
    return rows


@cache
def operator_table() -> dict[str, list[Row]]:
    """The shipped table, read once."""
    text = resources.files(__package__).joinpath(TABLE_FILE).read_text("utf-8")
    return parse_table(text)


def lookup(operator: str, signature: tuple[str, ...]) -> Row | None:
    """The table's row for `operator` with these type classes, or None."""
    for row in operator_table().get(operator, []):
        if row.matches(signature):
            return row
    return None
