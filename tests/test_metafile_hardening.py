"""Hostile metafiles (`synapc.metafile`): every refusal is one clear `MetafileError` line
naming the file and the field, nothing is read beyond the limits, `${FILE:..}` stays in
the metafile's folder tree and never echoes a file's content, `${ENV:..}` in comments is
left alone, and YAML alias bombs, merge bombs and deep nesting are refused before they are
built. Findings of the metafile fuzzer (benchmarks/fuzz/metafile.py) have their
regression tests here too."""

from __future__ import annotations

import builtins
import io
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from benchmarks.fuzz.harness import PYTHON_TEXT
from synapc.errors import SynapcError
from synapc.limits import use_limits
from synapc.metafile import MetafileError, load_metafile, model_anchors, parse_metafile
from synapc.testing.tflite_builder import ModelBuilder

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "tiny_classifier.onnx"
BIN = Path(sys.executable).parent


def clear(error: BaseException) -> str:
    """The message of a refusal, checked to be what a user must get: a SynapcError on
    one line without Python's own exception text."""
    assert isinstance(error, SynapcError), repr(error)
    message = str(error)
    assert message and "\n" not in message, message
    assert not PYTHON_TEXT.search(message), message
    return message


def error_of(text: str, path: Path | None = Path("m.yaml"), **kwargs: object) -> str:
    """The one-line message parsing dedented `text` raises."""
    with pytest.raises(MetafileError) as info:
        parse_metafile(textwrap.dedent(text), path, **kwargs)  # type: ignore[arg-type]
    return clear(info.value)


def load_error(path: Path) -> str:
    """The one-line message loading the metafile `path` raises."""
    with pytest.raises(MetafileError) as info:
        load_metafile(path)
    return clear(info.value)


@pytest.fixture
def never_opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    """`forbid(path)`: opening `path` (by os.open, open or io.open, through any symbolic
    link) fails the test at once instead of blocking on a FIFO or reading a device."""
    forbidden: set[str] = set()
    real_os_open, real_open = os.open, builtins.open

    def check(target: object) -> None:
        if isinstance(target, int):
            return
        resolved = os.path.realpath(os.fspath(target))  # type: ignore[arg-type]
        if resolved in forbidden or os.fspath(target) in forbidden:  # type: ignore[arg-type]
            raise AssertionError(f"{target} was opened")

    def os_open(path: object, *args: object, **kwargs: object) -> int:
        check(path)
        return real_os_open(path, *args, **kwargs)  # type: ignore[arg-type]

    def open_(file: object, *args: object, **kwargs: object) -> object:
        check(file)
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(io, "open", open_)

    def forbid(path: Path) -> None:
        forbidden.add(os.path.realpath(path))
        forbidden.add(str(path))

    yield forbid


# --------------------------------------------------------------------------------------
# 1. Numbers: non-finite, out of range, too long -- named by field
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # was OverflowError: int too large to convert to float
        ("inputs: [{scale: " + "9" * 400 + "}]\n", "m.yaml: inputs[0].scale: expected a "),
        ("inputs: [{means: [1, " + "9" * 400 + "]}]\n", "m.yaml: inputs[0].means[1]: "),
        ("inputs: [{scale: 1.0e+400}]\n", "m.yaml: inputs[0].scale: expected a finite"),
        ("inputs: [{means: [-1.0e+400]}]\n", "m.yaml: inputs[0].means[0]: expected a fin"),
        ("inputs: [{scale: .nan}]\n", "m.yaml: inputs[0].scale: expected a finite"),
        # was accepted: a 10**40 dimension reached the importer
        ("inputs: [{shape: [1, " + "9" * 40 + "]}]\n", "m.yaml: inputs[0].shape[1]: "),
        ("inputs: [{shape: [1, 0x" + "f" * 30 + "]}]\n", "m.yaml: inputs[0].shape[1]: "),
        ("outputs: [{shape: [65536, 65536, 2]}]\n", "m.yaml: outputs[0].shape: 3 dim"),
        (
            "inputs: [{shape: [" + ", ".join(["1"] * 33) + "]}]\n",
            "m.yaml: inputs[0].shape: 33 dimensions (at most 32; "
            "SYNAPC_MAX_TENSOR_RANK raises it)",
        ),
        (
            "inputs: [{preprocess: {type: rgb, size: [1, 4294967296]}}]\n",
            "m.yaml: inputs[0].preprocess.size[1]: 4294967296 is over the limit",
        ),
        ("inputs: [{shape: [1, 1.0e+400]}]\n", "m.yaml: inputs[0].shape: expected a list"),
        ("inputs: [{shape: [1, -3]}]\n", "m.yaml: inputs[0].shape: expected a list of pos"),
        # was ValueError: Exceeds the limit (4300 digits) for integer string conversion
        ("inputs: [{shape: [1, " + "9" * 5000 + "]}]\n", "m.yaml: line 1: a number writ"),
        ("custom: " + ":".join(["59"] * 400) + "\n", "m.yaml: line 1: a number written"),
        (
            "inputs: [{format: rgb fill_color=" + "9" * 5000 + "}]\n",
            "m.yaml: inputs[0].format: fill_color must be an integer of at most 32 bits",
        ),
        ("delegate: {" + "7" * 30 + ": cpu}\n", "m.yaml: delegate[" + "7" * 30 + "]: "),
        # were ValueError / KeyError from the YAML constructors
        ("custom: 2001-02-30\n", "m.yaml: line 1, column 9: invalid YAML: not a valid "),
        ("custom: !!bool maybe\n", "m.yaml: line 1, column 9: invalid YAML: not a valid"),
        ("custom: !!int abc\n", "m.yaml: line 1, column 9: invalid YAML: not a valid '!!"),
    ],
)
def test_numbers_out_of_range_are_refused_by_field(text: str, expected: str) -> None:
    assert error_of(text).startswith(expected)


def test_huge_dimension_message_does_not_print_the_number() -> None:
    message = error_of("inputs: [{shape: [1, " + "9" * 900 + "]}]\n")
    assert message.startswith("m.yaml: inputs[0].shape[1]: a number of 900 digits")
    assert "SYNAPC_MAX_TENSOR_ELEMENTS" in message
    with use_limits(max_tensor_elements=100):
        assert "inputs[0].shape: 2 dimensions of more than 100 elements" in error_of(
            "inputs: [{shape: [11, 10]}]\n"
        )
        parse_metafile("inputs: [{shape: [10, 10]}]\n")


# --------------------------------------------------------------------------------------
# 2. --meta: a regular file within max_metafile_bytes
# --------------------------------------------------------------------------------------


def test_meta_device_is_refused_without_reading(
    never_opened: Callable[[Path], None],
) -> None:
    never_opened(Path("/dev/zero"))
    start = time.monotonic()
    assert load_error(Path("/dev/zero")) == (
        "/dev/zero: metafile is a character device, not a regular file"
    )
    assert time.monotonic() - start < 5


def test_meta_fifo_is_refused_without_opening(
    tmp_path: Path, never_opened: Callable[[Path], None]
) -> None:
    fifo = tmp_path / "meta.yaml"
    os.mkfifo(fifo)
    never_opened(fifo)
    assert (
        load_error(fifo) == f"{fifo}: metafile is a FIFO (named pipe), not a regular file"
    )
    link = tmp_path / "link.yaml"  # through a symbolic link just the same
    link.symlink_to(fifo)
    assert "is a FIFO" in load_error(link)


def test_meta_over_the_limit_is_refused_before_reading(
    tmp_path: Path, never_opened: Callable[[Path], None]
) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("custom: " + "x" * 200 + "\n")
    never_opened(path)
    with use_limits(max_metafile_bytes=100):
        assert load_error(path) == (
            f"{path}: metafile is 209 bytes, over the limit of 100 bytes "
            "(SYNAPC_MAX_METAFILE_BYTES raises it)"
        )
        assert "over the limit of 100 bytes" in error_of("custom: " + "x" * 200 + "\n")


def test_meta_that_grows_while_read_is_read_with_a_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "growing.yaml"
    path.write_text("custom: " + "x" * 5000 + "\n")
    real_stat, real_fstat, real_read = os.stat, os.fstat, os.read
    reads: list[int] = []

    def small(info: os.stat_result) -> os.stat_result:
        values = list(info)
        values[6] = 10  # st_size as it was when stat ran
        return os.stat_result(values)

    monkeypatch.setattr(os, "stat", lambda *a, **k: small(real_stat(*a, **k)))
    monkeypatch.setattr(os, "fstat", lambda fd: small(real_fstat(fd)))
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    with use_limits(max_metafile_bytes=100):
        message = load_error(path)
    assert message == (
        f"{path}: metafile grew past the limit of 100 bytes while it was read "
        "(SYNAPC_MAX_METAFILE_BYTES raises it)"
    )
    assert sum(reads) <= 101


def test_meta_directory_missing_and_binary(tmp_path: Path) -> None:
    assert load_error(tmp_path) == f"{tmp_path}: is a directory, not a metafile"
    assert (
        load_error(tmp_path / "nope.yaml") == f"{tmp_path / 'nope.yaml'}: no such metafile"
    )
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"a: 1\n\x00\x01")
    assert load_error(binary) == (
        f"{binary}: line 2: invalid YAML: unacceptable character #x0000 (control "
        "characters are not allowed)"
    )


# --------------------------------------------------------------------------------------
# 3. ${FILE:..}: confined, bounded, never echoed
# --------------------------------------------------------------------------------------


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A metafile folder with a file inside, a FIFO, symbolic links out and in."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "fmt.txt").write_text("bgr keep_proportions=1\n")
    (tmp_path / "fifo").parent.mkdir(exist_ok=True)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "out").symlink_to("/etc/passwd")
    (tmp_path / "up").symlink_to("..")
    (tmp_path / "in").symlink_to("sub/fmt.txt")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "big.txt").write_text("a" * 70_000)
    return tmp_path


def file_error(folder: Path, name: str, field: str = "input_format") -> str:
    """The message of a metafile in `folder` whose `field` is `${FILE:name}`."""
    path = folder / "m.yaml"
    path.write_text(f"{field}: '${{FILE:{name}}}'\n")
    return load_error(path)


@pytest.mark.parametrize(
    ("name", "problem", "forbidden"),
    [
        ("/etc/passwd", "absolute paths are not allowed", "/etc/passwd"),
        ("/dev/zero", "absolute paths are not allowed", "/dev/zero"),
        ("/proc/self/environ", "absolute paths are not allowed", "/proc/self/environ"),
        ("../x", "is outside the metafile's folder", None),
        ("sub/../../etc/passwd", "is outside the metafile's folder", "/etc/passwd"),
        ("out", "is outside the metafile's folder", "/etc/passwd"),
        ("up/x", "is outside the metafile's folder", None),
        ("zero", "is outside the metafile's folder", "/dev/zero"),
        ("fifo", "is a FIFO (named pipe), not a regular file", "fifo"),
        ("sub", "is a directory, not a regular file", None),
        (
            "big.txt",
            "is 70,000 bytes, over the limit of 65,536 bytes "
            "(SYNAPC_MAX_SUBSTITUTED_FILE_BYTES raises it)",
            "big.txt",
        ),
        ("gone.txt", "no such file", None),
    ],
)
def test_file_substitution_is_confined(
    folder: Path,
    never_opened: Callable[[Path], None],
    name: str,
    problem: str,
    forbidden: str | None,
) -> None:
    if forbidden is not None:
        never_opened(
            folder / forbidden if not forbidden.startswith("/") else Path(forbidden)
        )
    message = file_error(folder, name)
    assert message.startswith(f"{folder / 'm.yaml'}: input_format: ${{FILE:{name}}}: ")
    assert problem in message
    assert "root:" not in message


def test_file_substitution_inside_the_folder_still_works(folder: Path) -> None:
    for name in ("sub/fmt.txt", "in", "./sub/../sub/fmt.txt", "up/" + folder.name + "/in"):
        path = folder / "m.yaml"
        path.write_text(f"input_format: '${{FILE:{name}}}'\ninputs: [{{}}]\n")
        meta = load_metafile(path)
        assert meta.inputs[0].format == "bgr keep_proportions=1", name


def test_file_substitution_symlinked_metafile_folder(
    folder: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # The metafile's folder is reached through a symbolic link: paths resolve against
    # the resolved folder, and the tree is that folder's.
    elsewhere = tmp_path_factory.mktemp("links") / "meta"
    elsewhere.symlink_to(folder, target_is_directory=True)
    (folder / "m.yaml").write_text("input_format: '${FILE:sub/fmt.txt}'\n")
    assert load_metafile(elsewhere / "m.yaml").input_format == "bgr keep_proportions=1"


def test_file_substitution_limit_is_a_setting(folder: Path) -> None:
    with use_limits(max_substituted_file_bytes=10):
        assert "is 23 bytes, over the limit of 10 bytes" in file_error(
            folder, "sub/fmt.txt"
        )


def test_file_that_is_not_text(folder: Path) -> None:
    (folder / "bin.txt").write_bytes(b"\xff\xfe rgb")
    (folder / "nul.txt").write_bytes(b"rgb\x00")
    assert file_error(folder, "bin.txt").endswith(
        f"'{folder / 'bin.txt'}' is not UTF-8 text"
    )
    assert file_error(folder, "nul.txt").endswith("is not a text file (it holds NUL bytes)")


def test_file_substitution_needs_a_metafile_folder() -> None:
    message = error_of("input_format: '${FILE:fmt.txt}'\n", path=None)
    assert message.startswith("metafile: input_format: ${FILE:fmt.txt}: refused: the ")
    assert "given as text" in message


def test_file_content_is_never_quoted(folder: Path) -> None:
    # These used to quote the file's words: "unknown input format 'root:x:0:0:...'".
    (folder / "s.txt").write_text("root:x:0:0:SECRET-LINE\n")
    (folder / "a.txt").write_text("rgb keep_proportions=SECRET\n")
    path = folder / "m.yaml"
    for text, problem in (
        ("input_format: '${FILE:s.txt}'\n", "unknown input format word 1"),
        ("inputs: [{format: 'rgb ${FILE:s.txt}'}]\n", "got word 2"),
        ("input_format: '${FILE:a.txt}'\n", "keep_proportions must be 0 or 1, got word 2"),
    ):
        path.write_text(text)
        message = load_error(path)
        assert "SECRET" not in message and "root:" not in message, message
        assert problem in message, message
        assert "(not quoted: the format holds ${FILE:} content)" in message


def test_file_read_once_and_substituted_text_bounded(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = folder / "m.yaml"
    path.write_text("outputs: [{format: '" + "${FILE:sub/fmt.txt}" * 2000 + "'}]\n")
    opened: list[str] = []
    real = os.open
    monkeypatch.setattr(os, "open", lambda p, *a: opened.append(str(p)) or real(p, *a))
    assert load_metafile(path).outputs[0].format.count("bgr") == 2000
    assert opened.count(os.path.realpath(folder / "sub" / "fmt.txt")) == 1
    with use_limits(max_substituted_text_bytes=1000):
        message = load_error(path)
        anchors = error_of(
            "outputs: [{format: '" + "${ANCHORS}" * 100 + "'}]\n",
            anchors=lambda: "[" * 50,
        )
    assert message.startswith(f"{path}: outputs[0].format: the substitutions of this ")
    assert "more than 1,000 bytes" in message
    assert "SYNAPC_MAX_SUBSTITUTED_TEXT_BYTES raises it)" in message
    assert "more than 1,000 bytes" in anchors


# --------------------------------------------------------------------------------------
# 4. ${ENV:..}: not in comments, bounded
# --------------------------------------------------------------------------------------


def test_env_in_comments_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNAPC_TEST_UNSET", raising=False)
    monkeypatch.setenv("SYNAPC_TEST_LAYOUT", "nhwc")
    meta = parse_metafile(
        "# set ${ENV:SYNAPC_TEST_UNSET} first; ${ENV:not a name}\n"
        "data_layout: ${ENV:SYNAPC_TEST_LAYOUT}  # or ${ENV:SYNAPC_TEST_UNSET}\n"
        "outputs:\n"
        "  - format: 'a # ${ENV:SYNAPC_TEST_LAYOUT}'  # ${ENV:SYNAPC_TEST_UNSET}\n"
        "  - format: |\n"
        "      # ${ENV:SYNAPC_TEST_LAYOUT} is content here\n",
        Path("m.yaml"),
    )
    assert meta.data_layout == "nhwc"
    assert meta.outputs[0].format == "a # nhwc"
    assert meta.outputs[1].format == "# nhwc is content here\n"
    # Outside comments -- in a quoted string, a block scalar, after a '#' that starts
    # no comment -- an unset variable is still an error.
    for text, line in (
        ("outputs: [{format: 'x ${ENV:SYNAPC_TEST_UNSET}'}]\n", 1),
        ("outputs:\n  - format: |\n      # ${ENV:SYNAPC_TEST_UNSET}\n", 3),
        ("outputs: [{format: a#${ENV:SYNAPC_TEST_UNSET}}]\n", 1),
    ):
        assert error_of(text) == (
            f"m.yaml: line {line}: environment variable 'SYNAPC_TEST_UNSET' is not set "
            "(used as ${ENV:SYNAPC_TEST_UNSET})"
        )


def test_metafile_that_is_not_yaml_is_not_quoted(tmp_path: Path) -> None:
    # `--meta /etc/passwd` used to quote the file's first line back (fuzzer finding).
    path = tmp_path / "passwd"
    path.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n")
    assert load_error(path) == (
        f"{path}: expected a mapping at the top level, got text (is this a YAML metafile?)"
    )


def test_env_messages_stay_short(monkeypatch: pytest.MonkeyPatch) -> None:
    name = "X" * 300
    monkeypatch.delenv(name, raising=False)
    message = error_of(f"a: ${{ENV:{name}}}\n")
    assert message.startswith("m.yaml: line 1: environment variable 'XXXX")
    assert len(message) < 250


def test_env_substitution_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNAPC_TEST_BIG", "x" * 1000)
    text = "custom: [" + ", ".join(["${ENV:SYNAPC_TEST_BIG}"] * 200) + "]\n"
    with use_limits(max_metafile_bytes=100_000):
        message = error_of(text)
    assert message.startswith("m.yaml: line 1: the metafile is over the limit of 100,000 ")
    assert "once ${ENV:SYNAPC_TEST_BIG} is substituted" in message


# --------------------------------------------------------------------------------------
# YAML: bombs, depth, keys
# --------------------------------------------------------------------------------------


def test_merge_key_bomb_is_refused_before_it_is_built() -> None:
    # Each level merges the previous one four times: PyYAML's `<<` handling copies the
    # node lists, 4**40 pairs, before any dict exists (this used to run out of memory).
    text = "custom:\n  m0: &m0 {k0: 1, k1: 2}\n"
    for i in range(1, 40):
        text += f"  m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * 4) + "]}\n"
    start = time.monotonic()
    assert error_of(text) == (
        "m.yaml: invalid YAML: more than 100000 values once aliases are expanded (or an "
        "alias refers to itself)"
    )
    assert time.monotonic() - start < 5
    # Merges within the limit work as YAML says.
    meta = parse_metafile("custom:\n  a: &a {x: 1}\n  b: {<<: [*a, *a], y: 2}\n")
    assert meta.custom == {"a": {"x": 1}, "b": {"x": 1, "y": 2}}


def test_values_written_out_are_bounded_before_they_are_built() -> None:
    # PyYAML takes ~70 us a node: a 1 MiB list of 300,000 scalars used to take ~20 s.
    start = time.monotonic()
    message = error_of("custom: [" + ", ".join(["1"] * 300_000) + "]\n")
    assert message == (
        "m.yaml: invalid YAML: more than 20000 values written out (a metafile needs far "
        "fewer; SYNAPC_MAX_METAFILE_VALUES raises it)"
    )
    assert time.monotonic() - start < 10
    parse_metafile("custom: [" + ", ".join(["1"] * 19_000) + "]\n")


def test_deep_nesting_is_refused_at_the_limit() -> None:
    assert error_of("custom: " + "[" * 5000 + "]" * 5000 + "\n") == (
        "m.yaml: line 1: invalid YAML: nested more than 32 levels deep "
        "(SYNAPC_MAX_JSON_DEPTH raises it)"
    )
    parse_metafile("custom: " + "[" * 31 + "]" * 31 + "\n")
    # Aliases multiply depth too.
    deep = "[" * 20 + "]" * 20
    message = error_of(f"custom:\n  a: &a {deep}\n  b: {'[' * 20}*a{']' * 20}\n")
    assert "nested more than 32 levels deep once aliases are expanded" in message


def test_odd_keys_and_names_stay_on_one_line() -> None:
    assert error_of('inputs: [{"ke\\ny": 1}]\n').startswith("m.yaml: inputs[0].'ke\\ny': ")
    assert error_of("k" * 1000 + ": 1\n").startswith("m.yaml: 'kkkk")
    assert len(error_of("k" * 1000 + ": 1\n")) < 500
    assert error_of('inputs: [{name: "a\\nb"}]\n') == (
        "m.yaml: inputs[0].name: expected a tensor name without control characters, "
        "got 'a\\nb'"
    )
    assert "a tensor name of 1,193 characters (at most 1,024; " in error_of(
        "outputs: [{name: 0x" + "f" * 990 + "}]\n"  # an integer, as YAML reads it
    )
    assert "a tensor name of 5,000 characters (at most 1,024; " in error_of(
        "inputs: [{name: " + "n" * 5000 + "}]\n"
    )
    assert len(error_of("data_layout: " + "x" * 100_000 + "\n")) < 300
    assert error_of('delegate: {"a\\nb": tpu}\n').startswith("m.yaml: delegate['a\\nb']: ")


# --------------------------------------------------------------------------------------
# ${ANCHORS}: the model is read within the limits, corrupt ones are clear
# --------------------------------------------------------------------------------------


def test_anchors_model_fifo_and_corrupt(
    tmp_path: Path, never_opened: Callable[[Path], None]
) -> None:
    fifo = tmp_path / "m.tflite"
    os.mkfifo(fifo)
    never_opened(fifo)
    with pytest.raises(SynapcError) as info:
        model_anchors(fifo)
    assert clear(info.value) == (
        f"{fifo}: cannot read the model file: it is a FIFO (named pipe), not a regular file"
    )
    b = ModelBuilder()
    boxes = b.input("boxes", [1, 3, 4], np.float32)
    scores = b.input("scores", [1, 3, 2], np.float32)
    table = b.constant("anchors", np.ones((3, 4), np.float32))
    outputs = [b.tensor(f"o{i}", [1], np.float32) for i in range(4)]
    b.custom_op("TFLite_Detection_PostProcess", [boxes, scores, table], outputs)
    b.output(*outputs)
    good = b.save(tmp_path / "ssd.tflite")
    assert model_anchors(good) == "[[1.0,1.0,1.0,1.0],[1.0,1.0,1.0,1.0],[1.0,1.0,1.0,1.0]]"
    data = good.read_bytes()
    for cut in (12, 40, len(data) // 2):
        bad = tmp_path / f"cut{cut}.tflite"
        bad.write_bytes(data[:cut])
        try:
            model_anchors(bad)
        except SynapcError as error:
            assert clear(error).startswith(f"{bad}: ")


# --------------------------------------------------------------------------------------
# Through the command line
# --------------------------------------------------------------------------------------


def test_cli_refuses_hostile_metafiles_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "fifo").parent.mkdir(exist_ok=True)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "out").symlink_to("/etc/passwd")
    metas = {
        "passwd.yaml": "input_format: '${FILE:/etc/passwd}'\n",
        "up.yaml": "input_format: '${FILE:../x}'\n",
        "link.yaml": "outputs: [{format: '${FILE:out}'}]\n",
        "fifo.yaml": "outputs: [{format: '${FILE:fifo}'}]\n",
    }
    for name, text in metas.items():
        (tmp_path / name).write_text(text)
    for meta, expected in [
        *((tmp_path / name, f"{tmp_path / name}: ") for name in metas),
        (Path("/dev/zero"), "/dev/zero: metafile is a character device"),
        (tmp_path / "fifo", f"{tmp_path / 'fifo'}: metafile is a FIFO"),
    ]:
        out = tmp_path / f"out-{meta.name}"
        result = subprocess.run(
            [
                *(str(BIN / "synapc"), "convert", "--model", str(MODEL)),
                *("--meta", str(meta), "--target", "VS680", "--out-dir", str(out)),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 1, (meta, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith(f"synapc: error: {expected}"), lines[0]
        assert "root:" not in result.stderr
        assert not out.exists()


def test_a_format_with_control_characters_reaches_the_package(tmp_path: Path) -> None:
    """Fuzzer finding (metafile case 1-46): a `format` holding a tab, a newline, a
    carriage return and an escape character made an unparsable pass pipeline (xDSL's
    option strings have no escape for a carriage return). Escaped or, for the
    carriage return, form feed and vertical tab, turned into the spaces they mean there,
    the format reaches the package."""
    import synapc
    from synapc.runtime import Network

    example = Path(__file__).resolve().parents[1] / "examples" / "tiny_classifier.onnx"
    meta = tmp_path / "meta.yaml"
    text = r"line1\nline2\ttab\r\u001b[31m \"q\" \\"
    meta.write_text(f'outputs:\n  - format: "{text}"\n')
    synapc.convert(example, "GENERIC", tmp_path / "out", meta)
    network = Network(tmp_path / "out" / "model.synap")
    assert network.outputs[0].spec.format == 'line1\nline2\ttab \x1b[31m "q" \\'


def test_a_pass_refusing_the_metafile_names_the_metafile(tmp_path: Path) -> None:
    """Fuzzer finding (metafile campaign of 34d6566, e.g. case 2613-1303): a refusal by
    a pass the metafile asked for (here insert-preprocess: four means for a 3-channel
    input) did not name the metafile, as every other metafile problem does."""
    import synapc

    example = Path(__file__).resolve().parents[1] / "examples" / "tiny_classifier.onnx"
    meta = tmp_path / "meta.yaml"
    meta.write_text("inputs:\n  - means: [1, 2, 3, 4]\n    preprocess: {type: rgb}\n")
    with pytest.raises(SynapcError) as caught:
        synapc.convert(example, "GENERIC", tmp_path / "out", meta)
    message = str(caught.value)
    assert message.startswith(f"{meta}: ") and "means" in message and "\n" not in message
    assert not (tmp_path / "out").exists()
