"""How fast a big report opens (issue 23: a page with 2,000 layers interactive in under
3 s): an ONNX model of `--layers` layers (1x1 convolutions and residual additions on an
8x8x8 tensor, every layer its own, with skip edges that the layout must route) converted
for VS680 with ``--report``, then opened `--runs` times in headless Chromium (Debian's,
through Playwright: `synapc.testing.browser`), each time in a new page.

Per run: the page's own time from the start of navigation to interactive (everything
drawn, handlers attached, first frame painted: ``synapcReport.readyAt``), and the time a
mouse click on a layer in the middle of the graph takes to show its details. Also the
report's generation time (reading the package, ``dot`` layout, page) and its size.

    python -m benchmarks.report_page [--layers 2000] [--runs 5] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import synapc
from synapc.backends.package import read_package
from synapc.report import report_html
from synapc.testing.browser import click_layer, open_report, report_browser

CHANNELS = 8


def chain_model(layers: int, path: Path) -> None:
    """Write an ONNX model of `layers` layers: pairs of a 1x1 convolution and an
    addition of the pair's input before the previous one (a skip edge per pair)."""
    rng = np.random.default_rng(0)
    nodes, weights = [], []
    x = previous = "x"
    for i in range(layers // 2):
        w = (rng.standard_normal((CHANNELS, CHANNELS, 1, 1)) * 0.3).astype(np.float32)
        weights.append(numpy_helper.from_array(w, f"w{i}"))
        nodes.append(helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], name=f"b{i}/conv"))
        nodes.append(
            helper.make_node("Add", [f"c{i}", previous], [f"a{i}"], name=f"b{i}/add")
        )
        previous, x = x, f"a{i}"
    shape = [1, CHANNELS, 8, 8]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, path)


def measure(layers: int, runs: int, folder: Path) -> list[str]:
    """The Markdown lines of one measurement in `folder`."""
    model = folder / f"chain{layers}.onnx"
    chain_model(layers, model)
    tick = time.perf_counter()
    result = synapc.convert(model, "VS680", folder / "out", report=True)
    convert_s = time.perf_counter() - tick
    page = folder / "out" / "report.html"
    description = read_package(result.package).description
    assert description is not None
    count = len(description["layers"])
    tick = time.perf_counter()
    report_html(result.package)
    report_s = time.perf_counter() - tick
    ready, clicks = [], []
    with report_browser() as browser_page:
        for _ in range(runs):
            ready.append(open_report(browser_page, page))
            tick = time.perf_counter()
            assert (
                click_layer(browser_page, count // 2)
                == description["layers"][count // 2]["name"]
            )
            clicks.append(1000 * (time.perf_counter() - tick))
        errors = browser_page.synapc_errors
    assert not errors, errors

    def spread(values: list[float]) -> str:
        return f"{min(values):.0f} / {statistics.median(values):.0f} / {max(values):.0f}"

    header = [
        "layers", "page", "convert --report", "report alone",
        "interactive ms (min / median / max)", "click to details ms",
    ]  # fmt: skip
    row = [
        str(count), f"{page.stat().st_size / 1e6:.2f} MB", f"{convert_s:.1f} s",
        f"{report_s:.2f} s", spread(ready), spread(clicks),
    ]  # fmt: skip
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---:|" * len(header),
        "| " + " | ".join(row) + " |",
    ]


def main(argv: list[str] | None = None) -> None:
    """Build, convert, open and print the table (and write it to --out)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        lines = measure(args.layers, args.runs, Path(folder))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
