"""The report page: one self-contained HTML file (styles, script and data inlined; no
network), drawn by ``assets/report.js`` from the report document
(`synapc.report.document`)."""

from __future__ import annotations

import html
import json
import re
from importlib.resources import files
from typing import Any

_ASSETS = files("synapc.report") / "assets"


def _json_in_html(document: dict[str, Any]) -> str:
    """`document` as JSON that cannot end its <script> element early."""
    text = json.dumps(document, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_page(document: dict[str, Any], version: str) -> str:
    """The HTML page of a report document (`report_document`); `version` is synapc's.
    ``assets/report.html`` with its ``{{name}}`` slots filled in one pass (a slot's
    text never fills another)."""
    values = {
        "version": html.escape(version),
        "title": html.escape(document["title"]),
        "css": (_ASSETS / "report.css").read_text(encoding="utf-8"),
        "script": (_ASSETS / "report.js").read_text(encoding="utf-8"),
        "data": _json_in_html(document),
    }
    template = (_ASSETS / "report.html").read_text(encoding="utf-8")
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m[1]], template)
