"""`synapc report`: a `model.synap` drawn as one self-contained HTML page.

The page shows the compiled graph laid out top to bottom by Graphviz's ``dot``
(`layout`), coloured by engine and delegate with subgraph boundaries, pan, zoom and a
click on a layer for its details; each subgraph's memory plan as a chart; every
layer's estimated time, and for quantized models its SQNR; and the summary (target,
inputs and outputs with formats and preprocessing, totals). Everything comes from the
package alone (its `description.json`, written by ``synapc convert``), read and checked
by `read_package`; the page needs no network.
"""

from __future__ import annotations

import os
from importlib.metadata import version
from pathlib import Path

from synapc.backends.package import package_from_bytes, read_package
from synapc.report.document import report_document
from synapc.report.page import render_page

__all__ = ["REPORT", "report_html", "report_html_of_bytes", "write_report"]

#: The report's default file name, next to its package.
REPORT = "report.html"


def report_html(package: str | os.PathLike[str]) -> str:
    """The report page of the package file `package`; a bad package raises
    `PackageError` naming the file."""
    return render_page(report_document(read_package(package)), version("synapc"))


def report_html_of_bytes(data: bytes, name: str) -> str:
    """The report page of a package still in memory (its bytes `data`; `name` names it
    in messages and on the page)."""
    return render_page(report_document(package_from_bytes(data, name)), version("synapc"))


def write_report(
    package: str | os.PathLike[str], out: str | os.PathLike[str] | None = None
) -> Path:
    """Write the report of the package file `package` to `out` (default: `REPORT`
    next to the package), all or nothing; the path written."""
    target = Path(out) if out is not None else Path(package).with_name(REPORT)
    page = report_html(package)
    partial = target.with_name(f".{target.name}.partial")
    partial.write_text(page, encoding="utf-8")
    os.replace(partial, target)
    return target
