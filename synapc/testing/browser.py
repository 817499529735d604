"""Headless Chromium for the report's browser tests and `benchmarks/report_page.py`:
Debian's ``chromium`` (``.ci/run`` installs it) driven by Playwright, with the flags
that keep it off this machine's closed network, and the checks every report page must
pass (`check_report`).

Playwright is a test dependency (the ``test`` extra); Chromium is the system's, never
downloaded by Playwright.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Flags for a headless Chromium without a sandbox (CI runs as root), a GPU or any
#: background network traffic (the machine's network is closed).
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
)


def chromium_path() -> str | None:
    """The system Chromium (``$SYNAPC_CHROMIUM`` or ``chromium`` on the PATH), or None."""
    return os.environ.get("SYNAPC_CHROMIUM") or shutil.which("chromium")


@contextmanager
def report_browser(width: int = 1400, height: int = 900) -> Iterator[Any]:
    """A Playwright page in headless Chromium that records script errors in
    ``page.synapc_errors`` (uncaught exceptions and console errors)."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError("no chromium on the PATH (Debian: apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
            page.on(
                "console",
                lambda message: (
                    errors.append(f"console: {message.text}")
                    if message.type == "error"
                    else None
                ),
            )
            page.on("requestfailed", lambda r: errors.append(f"request: {r.url}"))
            page.synapc_errors = errors
            yield page
        finally:
            browser.close()


def open_report(page: Any, report: Path) -> float:
    """Open `report` and wait until it is interactive; the milliseconds from the start of
    navigation to that moment, as the page measures them (``performance.now()``)."""
    page.goto(report.resolve().as_uri())
    page.wait_for_function("window.synapcReport && window.synapcReport.ready")
    return float(page.evaluate("window.synapcReport.readyAt"))


def click_layer(page: Any, index: int) -> str:
    """Bring layer `index` into view and click it with the mouse; the name the details
    panel then shows."""
    page.evaluate(
        "k => { document.getElementById('graph-box').scrollIntoView(); "
        "synapcReport.center(k); }",
        index,
    )
    box = page.locator(f'.node[data-layer="{index}"]').bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    if page.get_attribute("#details", "data-layer") != str(index):
        return ""
    return page.inner_text("#details h3")
