"""`benchmarks/compare.py` end to end on two small real models (one `.tflite`, one
`.onnx`) with `--quick`: every column measured, a row per model with numeric ratios and
PTQ SQNR (the `.onnx` one calibrated on synthetic inputs, by synapc and onnxruntime),
the chart a parseable SVG with one bar per model and figure."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from synapc.testing.models import model_path

TFLITE, ONNX = "face_detection_short_range", "silero_vad"
SVG = "{http://www.w3.org/2000/svg}"


def _section(text: str, title: str) -> list[list[str]]:
    """The body rows (cells) of the Markdown table under the heading `title` (up to
    the next heading; the first table there)."""
    after = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    table = after.split("\n\n|", 1)[1].split("\n\n", 1)[0]
    lines = ("|" + table).splitlines()[2:]  # without the header and the separator
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_quick_compare_two_models(tmp_path: Path) -> None:
    """A row per model with numeric speed ratios in the overview, a measured TFLite
    arena for the TFLite model and n/a for the ONNX one, numeric PTQ SQNR for both
    (the ONNX one's on synthetic inputs, from synapc and onnxruntime), and the chart's
    bars."""
    for name in (TFLITE, ONNX):
        try:
            model_path(name)
        except FileNotFoundError as error:
            pytest.skip(str(error))
    from benchmarks import compare

    out = tmp_path / "compare.md"
    assert compare.main(["--quick", "--only", TFLITE, ONNX, "--out", str(out)]) == 0
    text = out.read_text()
    overview = {row[0]: row for row in _section(text, "Overview")}
    assert set(overview) == {TFLITE, ONNX}
    ratio = re.compile(r"^\d+\.\d\dx$")
    for name, row in overview.items():
        steady, first = row[3], row[4]
        assert ratio.match(steady), (name, steady)
        assert ratio.match(first), (name, first)
        assert float(row[5]) > 0  # convert seconds
        assert float(row[8]) > 0  # the cost model's estimated VS680 ms
    assert ratio.match(overview[TFLITE][6]), overview[TFLITE][6]  # arena ratio
    assert overview[ONNX][6] == "n/a (no TFLite arena)"
    memory = {row[0]: row for row in _section(text, "Memory: activation arena (KiB)")}
    assert float(memory[TFLITE][3]) > 0 and float(memory[TFLITE][2]) > 0
    # face_detection_short_range is a benchmarks/ptq.py model (photos): synapc's SQNR,
    # no ORT; silero_vad is not (synthetic inputs): both tools' SQNR of both outputs
    ptq = {row[0]: row for row in _section(text, "Post-training quantization")}
    sqnr = re.compile(r"^-?\d+\.\d( / -?\d+\.\d)*$")
    assert ptq[TFLITE][1] in (compare.PHOTOS_DATA, compare.SYNTHETIC_PHOTOS_DATA)
    assert sqnr.match(ptq[TFLITE][2]), ptq[TFLITE]
    assert ptq[TFLITE][5] == "n/a (TFLite model)"
    assert ptq[ONNX][1] == compare.SYNTHETIC_DATA
    for cell, seconds in ((ptq[ONNX][2], ptq[ONNX][3]), (ptq[ONNX][5], ptq[ONNX][6])):
        assert sqnr.match(cell) and cell.count(" / ") == 1, ptq[ONNX]  # output, stateN
        assert float(seconds) >= 0, ptq[ONNX]
    assert re.match(r"^\S+ / \S+ vs \S+ / \S+ \(synthetic\)$", overview[ONNX][7])
    assert "not a benchmarks/ptq.py model" not in text
    assert "error:" not in text

    svg = ET.parse(tmp_path / "compare.svg").getroot()
    assert svg.tag == f"{SVG}svg"
    bars = svg.findall(f"{SVG}rect[@data-model]")
    for kind in ("steady", "first"):
        marked = sorted(b.get("data-model") for b in bars if b.get("class") == kind)
        assert marked == sorted([TFLITE, ONNX]), kind
    for bar in bars:
        assert float(bar.get("width", "0")) >= 1.0
        assert float(bar.get("data-ratio", "0")) > 0
    assert len(svg.findall(f"{SVG}line[@class='unity']")) == 1
