"""The report page in a real browser (headless Debian Chromium through Playwright):
reports of a float, a quantized and a partitioned conversion of a real model open
without a script error, every layer node is there and answers a mouse click with its
details, the memory chart and the bars are drawn and hovering a tensor names it. Each
test keeps a screenshot of the whole page in ``test-artifacts/report/``.

Chromium is the system's (``.ci/run`` installs Debian's); without it these tests skip
with that reason, except under CI, where they fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import synapc
from synapc.backends.package import read_package
from synapc.testing.browser import chromium_path, click_layer, open_report, report_browser
from synapc.testing.models import model_path

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts" / "report"
MODEL = "face_detection_short_range"
CONVERSIONS = {
    "float": "",
    "quantized": "quantization:\n  dataset: random\n  data_type: uint8\n",
    "partitioned": (
        "delegate:\n  '*': npu\n  conv2d_5: cpu\n  'depthwise_conv2d_9...': gpu\n"
    ),
}

if os.environ.get("CI"):  # CI installs both: their absence is a failure there
    import playwright  # noqa: F401

    if chromium_path() is None:
        raise RuntimeError("CI must have Debian's chromium: .ci/run installs it")
pytest.importorskip("playwright", reason="Playwright comes with the test extra")
if chromium_path() is None:
    pytest.skip(
        "no chromium on the PATH: install Debian's chromium (.ci/run does) to run the "
        "report's browser tests",
        allow_module_level=True,
    )


class Reports:
    """Conversions of the real model with --report, made on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[str, Path] = {}

    def __getitem__(self, kind: str) -> Path:
        if kind not in self.made:
            folder = self.root / kind
            folder.mkdir()
            meta = None
            if CONVERSIONS[kind]:
                meta = folder / "meta.yaml"
                meta.write_text(CONVERSIONS[kind])
            synapc.convert(model_path(MODEL), "VS680", folder / "out", meta, report=True)
            self.made[kind] = folder / "out"
        return self.made[kind]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    """The report conversions of this module, by kind."""
    return Reports(tmp_path_factory.mktemp("reports"))


@pytest.mark.parametrize("kind", list(CONVERSIONS))
def test_report_opens_and_every_layer_answers_a_click(reports: Reports, kind: str) -> None:
    out = reports[kind]
    description = read_package(out / "model.synap").description
    assert description is not None
    layers = description["layers"]
    delegates = {layer["delegate"] for layer in layers}
    assert delegates == ({"npu", "cpu", "gpu"} if kind == "partitioned" else {"npu"})
    with report_browser() as page:
        open_report(page, out / "report.html")
        nodes = page.locator(".node[data-layer]")
        assert nodes.count() == len(layers)
        for k, layer in enumerate(layers):
            assert click_layer(page, k) == layer["name"], f"layer {k} did not answer"
        # the details name the engine, the support reason and the estimated time
        details = page.inner_text("#details")
        assert layers[-1]["support"] in details and "estimated time" in details
        # subgraph boundaries: one box per subgraph of a partitioned model
        boxes = page.locator(".cluster").count()
        assert boxes == (
            len({layer["subgraph"] for layer in layers}) if kind == "partitioned" else 0
        )
        # the memory chart: one rectangle per planned tensor, the lower bound line
        package = read_package(out / "model.synap")
        plans = [s.memory_plan for s in package.subgraphs if s.memory_plan is not None]
        planned = sum(len(plan.tensors) for plan in plans)
        assert planned > 0
        assert page.locator("rect.tensor").count() == planned
        assert page.locator("line.bound").count() == sum(1 for p in plans if p.tensors)
        tensor = page.locator("rect.tensor").first
        tensor.scroll_into_view_if_needed()
        tensor.hover()
        assert page.is_visible("#tip")
        assert any(layer["name"] in page.inner_text("#tip") for layer in layers)
        # per-layer time bars, and SQNR bars with the worst layers for a quantized model
        assert page.locator("svg.times rect.bar").count() == len(layers)
        measured = [layer for layer in layers if layer["sqnr_db"] is not None]
        if kind == "quantized":
            assert measured
            assert page.locator("svg.sqnr rect.bar").count() == len(measured)
            assert page.locator(".node.worst").count() == min(5, len(measured))
        else:
            assert not measured and not page.is_visible("#sqnr-section")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{MODEL}_{kind}.png"), full_page=True)
        assert page.synapc_errors == []


def test_pan_zoom_and_find(reports: Reports) -> None:
    out = reports["float"]
    with report_browser() as page:
        open_report(page, out / "report.html")
        page.locator("#graph-box").scroll_into_view_if_needed()
        before = page.get_attribute("#viewport", "transform")
        page.click("#zoom-in")
        zoomed = page.get_attribute("#viewport", "transform")
        assert zoomed != before
        box = page.locator("#graph").bounding_box()
        page.mouse.move(box["x"] + 30, box["y"] + 200)
        page.mouse.down()
        page.mouse.move(box["x"] + 130, box["y"] + 260, steps=5)
        page.mouse.up()
        assert page.get_attribute("#viewport", "transform") != zoomed
        page.mouse.wheel(0, -300)
        page.fill("#find", "conv2d_3")
        page.press("#find", "Enter")
        assert page.inner_text("#details h3") == "conv2d_3"
        assert page.synapc_errors == []


def test_hostile_layer_names_are_text(tmp_path: Path) -> None:
    """Names come from the model file: markup in them is shown, never run."""
    import onnx
    from onnx import TensorProto, helper

    names = ['<img src=x onerror="alert(1)">', '"><script>alert(2)</script>', "a&b <i>"]
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name=names[0]),
        helper.make_node("Sigmoid", ["r"], ["s"], name=names[1]),
        helper.make_node("Add", ["s", "x"], ["y"], name=names[2]),
    ]
    shape = [1, 4, 8, 8]
    graph = helper.make_graph(
        nodes,
        "hostile",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )
    model = tmp_path / "hostile.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), model)
    synapc.convert(model, "VS680", tmp_path / "out", report=True)
    layers = read_package(tmp_path / "out" / "model.synap").description["layers"]
    with report_browser() as page:
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        open_report(page, tmp_path / "out" / "report.html")
        shown = [click_layer(page, k) for k in range(len(layers))]
        assert set(names) <= set(shown)
        assert page.locator("#details img, #graph img, script[src]").count() == 0
        assert dialogs == [] and page.synapc_errors == []
