"""`synapc report` and `synapc convert --report` without a browser: the page is one
self-contained file built from the package alone, bad packages are one clear line and
no page, the report never outlives its conversion, and the conversion shows its steps
(a bar on a terminal, lines otherwise, nothing with --silent). The page in a real
browser: tests/test_report_browser.py."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from synapc.backends.package import read_package
from synapc.cli import main

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "tiny_classifier.onnx"
META = REPO / "examples" / "tiny_classifier.yaml"


def _convert(out: Path, *extra: str) -> None:
    args = ["convert", "--model", str(MODEL), "--meta", str(META), "--target", "VS680"]
    assert main([*args, "--out-dir", str(out), "--silent", *extra]) == 0


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example converted with --report."""
    out = tmp_path_factory.mktemp("report") / "out"
    _convert(out, "--report")
    return out


def _embedded(page: str) -> dict:
    match = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', page
    )
    assert match is not None
    return json.loads(match[1])


def test_the_page_is_self_contained_and_drawn_from_the_package(converted: Path) -> None:
    page = (converted / "report.html").read_text(encoding="utf-8")
    # no resource outside the file: no links, sources or imports; a CSP forbids them
    assert not re.search(r"<link|<img|<iframe|\bsrc=|@import|url\((?!#)", page, re.I)
    assert "default-src 'none'" in page
    assert set(re.findall(r"https?://[^\s\"')]+", page)) == {"http://www.w3.org/2000/svg"}
    document = _embedded(page)
    description = read_package(converted / "model.synap").description
    assert description is not None
    names = [layer["name"] for layer in document["layers"]]
    assert names == [layer["name"] for layer in description["layers"]]
    assert len(document["edges"]) == sum(
        len(layer["operands"]) for layer in description["layers"]
    ) + len(description["outputs"])
    # every layer and edge is placed by the layout
    assert all("x" in layer and "y" in layer for layer in document["layers"])
    assert all(edge["path"].startswith("M") for edge in document["edges"])
    summary = document["summary"]
    assert summary["target"] == "VS680"
    assert summary["inputs"][0]["format"] == "rgb"
    assert summary["inputs"][0]["means"] == [123.675, 116.28, 103.53]


def test_synapc_report_writes_next_to_the_package_or_where_asked(
    converted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "model.synap"
    package.write_bytes((converted / "model.synap").read_bytes())
    assert main(["report", str(package)]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 'report.html'}\n"
    elsewhere = tmp_path / "pages" / "x.html"
    elsewhere.parent.mkdir()
    assert main(["report", str(package), "-o", str(elsewhere), "--silent"]) == 0
    assert capsys.readouterr().out == ""
    assert elsewhere.read_bytes() == (tmp_path / "report.html").read_bytes()
    # the page of a package is the page its conversion wrote
    assert elsewhere.read_bytes() == (converted / "report.html").read_bytes()


def _repack(source: Path, target: Path, change: Callable[[dict[str, bytes]], None]) -> None:
    """`source` with its members changed by `change` and bundle.json's checksums
    recomputed, so that only the change can be refused."""
    with zipfile.ZipFile(source) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    change(members)
    bundle = json.loads(members.pop("bundle.json"))
    if "bundle" in members:
        bundle.update(json.loads(members.pop("bundle")))
    bundle["members"] = {
        name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for name, data in sorted(members.items())
    }
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("bundle.json", json.dumps(bundle))
        for name in sorted(members):
            archive.writestr(name, members[name])


def _description(change: Callable[[dict], None]) -> Callable[[dict[str, bytes]], None]:
    def apply(members: dict[str, bytes]) -> None:
        document = json.loads(members["description.json"])
        change(document)
        members["description.json"] = json.dumps(document).encode()

    return apply


def _forward_operand(d: dict) -> None:
    d["layers"][1]["operands"] = [[5, 0]]


def _drop_description(members: dict[str, bytes]) -> None:
    del members["description.json"]


BAD_PACKAGES = [
    (
        lambda m: m.update(bundle=b'{"version": 1}'),
        "package version 1 is not supported (this synapc reads version 2)",
    ),
    (lambda m: m.update(bundle=b'{"version": 3}'), "package version 3 is not supported"),
    (
        _description(_forward_operand),
        "description.json: layers[1].operands[0][0]: 5 is out of range",
    ),
    (
        _description(lambda d: d["layers"][0].update(delegate="gpu")),
        "description.json: layers[0].delegate: subgraph 0 runs on npu",
    ),
    (
        _description(lambda d: d["layers"][2].update(time_us=-1)),
        "description.json: layers[2].time_us: expected a non-negative time",
    ),
    (
        _description(lambda d: d["layers"].pop()),
        "description.json: outputs[0][0]: 7 is out of range",
    ),
    (_drop_description, "the package has no description.json"),
]


@pytest.mark.parametrize(("change", "message"), BAD_PACKAGES)
def test_a_bad_package_is_one_line_and_no_page(
    converted: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, bytes]], None],
    message: str,
) -> None:
    package = tmp_path / "model.synap"
    _repack(converted / "model.synap", package, change)
    assert main(["report", str(package)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"synapc: error: {package}") and err.count("\n") == 1, err
    assert message in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.synap"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "No such file or directory"),
        (b"", "not a synapc package"),
        (b"PK\x03\x04 truncated", "not a synapc package"),
    ],
)
def test_a_missing_or_corrupt_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, message: str
) -> None:
    package = tmp_path / "model.synap"
    if content is not None:
        package.write_bytes(content)
    assert main(["report", str(package)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("synapc: error: ") and err.count("\n") == 1 and message in err
    assert not (tmp_path / "report.html").exists()


def test_a_truncated_conversion_package_is_refused(converted: Path, tmp_path: Path) -> None:
    data = (converted / "model.synap").read_bytes()
    package = tmp_path / "model.synap"
    package.write_bytes(data[: len(data) // 2])
    assert main(["report", str(package), "--silent"]) == 1
    assert not (tmp_path / "report.html").exists()


def test_the_report_follows_its_conversion(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _convert(out, "--report")
    first = (out / "report.html").read_bytes()
    # served from the cache, the report is made again from the cached package
    _convert(out, "--report")
    assert (out / "report.html").read_bytes() == first
    # a conversion without --report leaves no report of an earlier one behind
    _convert(out)
    assert not (out / "report.html").exists()
    assert sorted(p.name for p in out.iterdir()) == [
        "cache",
        "model.synap",
        "model_info.txt",
    ]


def test_names_from_the_model_cannot_end_the_data_script(tmp_path: Path) -> None:
    from synapc.report.page import render_page

    hostile = "</script><script>alert(1)</script><!--"
    page = render_page({"title": hostile, "layers": [{"name": hostile}]}, "0")
    assert page.count("</script>") == 2  # the data's and the program's own ends
    assert _embedded(page)["layers"][0]["name"] == hostile


# -- progress ----------------------------------------------------------------------


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "synapc.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        **kwargs,
    )


def test_steps_are_lines_when_not_on_a_terminal(tmp_path: Path) -> None:
    meta = tmp_path / "meta.yaml"
    meta.write_text(
        META.read_text() + "quantization:\n  dataset: random\n  data_type: uint8\n"
    )
    result = _cli(
        "convert", "--model", str(MODEL), "--meta", str(meta), "--target", "VS680",
        "--out-dir", str(tmp_path / "out"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    steps = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert [line.split(":")[0] for line in steps] == [
        "[1/5] import",
        "[2/5] optimize",
        "[3/5] calibrate",
        "[4/5] compile",
        "[5/5] export",
    ]
    assert "calibration: SQNR batch" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("converted tiny_classifier.onnx")


def test_silent_prints_nothing(tmp_path: Path) -> None:
    result = _cli(
        "convert", "--model", str(MODEL), "--meta", str(META), "--target", "VS680",
        "--out-dir", str(tmp_path / "out"), "--report", "--silent",
    )  # fmt: skip
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert (tmp_path / "out" / "report.html").is_file()


def test_a_terminal_gets_a_progress_bar(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    # a terminal of 30 rows and 100 columns (a new pty has none: tqdm draws nothing)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    try:
        result = subprocess.run(
            [sys.executable, "-m", "synapc.cli", "convert", "--model", str(MODEL),
             "--meta", str(META), "--target", "VS680", "--out-dir", str(tmp_path / "out")],
            stdout=subprocess.PIPE, stderr=follower, timeout=300, cwd=REPO,
        )  # fmt: skip
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert result.returncode == 0
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert "convert: import" in screen and "convert: done" in screen
    assert "4/4" in screen and "\r" in screen  # one bar, redrawn in place
    # on a terminal the steps are the bar, not lines
    assert not any(line.startswith("[") for line in result.stdout.decode().splitlines())


def test_malformed_preprocessing_metadata_is_left_out() -> None:
    from synapc.report.document import _preprocessing

    good = {"type": "nv12", "inputs": ["y", "uv"]}
    text = json.dumps([good, 3, "x", {"inputs": "y"}, {"inputs": [1]}, {"type": "gray"}])
    assert _preprocessing({"preprocess": text}) == [good, {"type": "gray"}]
    assert _preprocessing({"preprocess": "{"}) == []
    assert _preprocessing({"preprocess": '{"a": 1}'}) == []
    assert _preprocessing({}) == []
