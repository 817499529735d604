"""The metafile's substitutions: `${ENV:name}` on the raw text, before YAML parsing, and
`${FILE:path}` / `${ANCHORS}` inside `format` strings, after it; and the bounded reader
of regular files that both the metafile and `${FILE:..}` go through.

FILE and ANCHORS run on the parsed strings so that a file's content (or the anchors JSON)
may hold characters YAML treats specially without breaking the metafile; their results are
not scanned again. ENV runs on the raw text, as the vendor's converter does, so a variable
may supply any part of the document; a `${ENV:..}` inside a YAML comment is left alone
(an unset variable there is no error).

`${FILE:path}` is confined: a relative path to a regular UTF-8 text file inside the
metafile's folder tree (after resolving symbolic links), of at most
`limits().max_substituted_file_bytes`. Its type and size are checked with `stat` before
it is opened, so a device, FIFO or oversized file is refused without reading a byte, and
no message ever quotes a substituted file's content.
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

import yaml

from synapc.limits import limits
from synapc.metafile.model import MetafileError

__all__ = ["FormatSubstituter", "ReadProblem", "read_regular_file", "substitute_env"]

_ENV = re.compile(r"\$\{ENV:([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FORMAT_TOKEN = re.compile(r"\$\{([^}]*)\}")
#: Characters of a substitution's own text quoted in a message.
_SHOWN_CHARS = 60
_READ_CHUNK = 1 << 20
#: YAML tokens scanned per value the loader accepts (`max_metafile_values`), to tell
#: comments from content: a metafile with more is refused by the loader anyway (a node
#: takes at most about 5 tokens).
_TOKENS_PER_VALUE = 6

_FILE_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
}


def shown(text: str, limit: int = _SHOWN_CHARS) -> str:
    """`text` quoted for a one-line message (repr, so control characters and newlines are
    escaped), cut to about `limit` characters."""
    quoted = repr(text[: limit + 1])
    return quoted if len(text) <= limit else quoted[:-1] + "..." + quoted[-1]


# --------------------------------------------------------------------------------------
# Bounded reading of regular files
# --------------------------------------------------------------------------------------


class ReadProblem(Exception):
    """Why a file was not read, as a phrase after its name ("is a FIFO (named pipe),
    not a regular file"); `missing` when it does not exist. Callers turn it into a
    `MetafileError` with their own prefix."""

    def __init__(self, reason: str, missing: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.missing = missing


def _kind(mode: int) -> str:
    """What a non-regular file is, for messages."""
    return _FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")


def _check_regular(info: os.stat_result, limit: int, limit_name: str) -> None:
    """Raise `ReadProblem` unless `info` is a regular file of at most `limit` bytes."""
    if not stat.S_ISREG(info.st_mode):
        raise ReadProblem(f"is {_kind(info.st_mode)}, not a regular file")
    if info.st_size > limit:
        raise ReadProblem(
            f"is {info.st_size:,} bytes, over the limit of {limit:,} bytes "
            f"(SYNAPC_{limit_name.upper()} raises it)"
        )


def read_regular_file(
    path: str | os.PathLike[str],
    limit: int,
    limit_name: str,
    *,
    follow_symlinks: bool = True,
) -> bytes:
    """The bytes of the regular file `path`, at most `limit` bytes (the `limits()` field
    `limit_name`, named in the message). Its type and size are checked with `stat` before
    it is opened, so a device, FIFO, socket or directory is refused without being opened
    (opening a FIFO without a writer would block) and an oversized file without reading
    it; the open is non-blocking, the opened file is checked again (it may have been
    replaced in between) and read with a bound (it may grow). Without `follow_symlinks`
    a symbolic link is refused. Problems raise `ReadProblem`."""
    try:
        info = os.stat(path, follow_symlinks=follow_symlinks)
    except (FileNotFoundError, NotADirectoryError):
        raise ReadProblem("does not exist", missing=True) from None
    except OSError as error:
        raise ReadProblem(f"cannot be read ({error.strerror})") from None
    _check_regular(info, limit, limit_name)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise ReadProblem("does not exist", missing=True) from None
    except OSError as error:
        raise ReadProblem(f"cannot be read ({error.strerror})") from None
    try:
        _check_regular(os.fstat(fd), limit, limit_name)
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, _READ_CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as error:
        raise ReadProblem(f"cannot be read ({error.strerror})") from None
    finally:
        os.close(fd)
    if remaining <= 0:
        raise ReadProblem(
            f"grew past the limit of {limit:,} bytes while it was read "
            f"(SYNAPC_{limit_name.upper()} raises it)"
        )
    return b"".join(chunks)


# --------------------------------------------------------------------------------------
# ${ENV:name}
# --------------------------------------------------------------------------------------


def substitute_env(text: str, label: str) -> str:
    """`text` with every `${ENV:name}` replaced by the variable's value; an unset variable
    or a malformed name raises `MetafileError` naming it and its line, unless it stands
    in a YAML comment (then it is left as it is). The substituted text may not exceed
    `limits().max_metafile_bytes`."""
    limit = limits().max_metafile_bytes
    size = len(text.encode("utf-8", "surrogatepass"))
    pieces: list[str] = []
    # (index in pieces, offset in the new text, message, original text)
    problems: list[tuple[int, int, str, str]] = []
    offset = last = 0
    line = 1
    for match in _ENV.finditer(text):
        before = text[last : match.start()]
        pieces.append(before)
        offset += len(before)
        line += before.count("\n")
        last = match.end()
        name, whole = match.group(1), match.group(0)
        problem = None
        value = None
        if not _ENV_NAME.match(name):
            problem = (
                f"{label}: line {line}: invalid environment variable name {shown(name)} "
                f"in {shown(whole)}"
            )
        else:
            value = os.environ.get(name)
            if value is None:
                used = (
                    whole if len(name) <= _SHOWN_CHARS else f"${{ENV:{shown(name)[1:-1]}}}"
                )
                problem = (
                    f"{label}: line {line}: environment variable {shown(name)} is not set "
                    f"(used as {used})"
                )
        if value is None:  # scanned as it is: it decides nothing but its own span
            value = whole
            problems.append((len(pieces), offset, problem or "", whole))
        else:
            size += len(value.encode("utf-8", "surrogatepass")) - len(whole.encode())
            if size > limit:
                raise MetafileError(
                    f"{label}: line {line}: the metafile is over the limit of {limit:,} "
                    f"bytes once {whole} is substituted (SYNAPC_MAX_METAFILE_BYTES "
                    "raises it)"
                )
        pieces.append(value)
        offset += len(value)
        line += whole.count("\n")
    pieces.append(text[last:])
    result = "".join(pieces)
    if not problems:
        return result
    # An unset or malformed one is an error unless it stands in a comment: it starts
    # with "$", so outside a comment a token covers at least that character.
    spans = [(start, start + len(whole)) for _, start, _, whole in problems]
    in_use = _in_tokens(result, spans)
    for (_, _, message, _), used in zip(problems, in_use, strict=True):
        if used:
            raise MetafileError(message)
    return result


def _in_tokens(text: str, spans: list[tuple[int, int]]) -> list[bool]:
    """For each character span of `text` (in increasing order), whether it overlaps a
    YAML token (anything but whitespace and comments). Text YAML cannot scan, or more
    tokens than a metafile the loader accepts can hold, counts as all tokens, so the
    caller reports the variable rather than guessing."""
    end_of_spans = spans[-1][1]
    most = _TOKENS_PER_VALUE * limits().max_metafile_values
    tokens: list[tuple[int, int]] = []
    try:
        for count, token in enumerate(yaml.scan(text, Loader=yaml.SafeLoader)):
            start, end = token.start_mark.index, token.end_mark.index
            if count > most:
                return [True] * len(spans)
            if start >= end_of_spans:  # the rest cannot overlap
                break
            if end > start:
                tokens.append((start, end))
    except yaml.YAMLError:
        return [True] * len(spans)
    covered: list[tuple[int, int]] = []  # disjoint, in order
    for start, end in sorted(tokens):
        if covered and start <= covered[-1][1]:
            covered[-1] = (covered[-1][0], max(covered[-1][1], end))
        else:
            covered.append((start, end))
    starts = [a for a, _ in covered]
    result = []
    for start, end in spans:
        k = bisect.bisect_left(starts, end) - 1  # the last interval starting before end
        result.append(k >= 0 and covered[k][1] > start)
    return result


# --------------------------------------------------------------------------------------
# ${FILE:path} and ${ANCHORS}
# --------------------------------------------------------------------------------------


class FormatSubstituter:
    """Replaces `${FILE:path}` and `${ANCHORS}` in format strings of one metafile.

    `folder` is the metafile's folder: FILE paths are relative to it and must stay
    inside it (None: the metafile was given as text, and FILE is refused). `anchors` is
    called at most once, on the first `${ANCHORS}`; without it the anchors are "[]".
    `file_fields` collects the fields whose value holds a file's content, so that their
    messages do not quote it. All substitutions of one metafile together add at most
    `limits().max_substituted_text_bytes` bytes (UTF-8): each file is read once however
    often it is named, but a format string naming it a thousand times would otherwise
    multiply it.
    """

    def __init__(
        self, label: str, folder: Path | None, anchors: Callable[[], str] | None
    ) -> None:
        self.label = label
        self.folder = folder
        self._anchors = anchors
        self._anchors_text: str | None = None
        self._files: dict[str, str] = {}
        self._limit = limits().max_substituted_text_bytes
        self._budget = self._limit
        self.file_fields: set[str] = set()

    def __call__(self, value: str, field: str) -> str:
        """`value` (the string at `field`) with its substitutions done."""
        pieces: list[str] = []
        last = 0
        for match in _FORMAT_TOKEN.finditer(value):
            pieces.append(value[last : match.start()])
            last = match.end()
            text = self._replace(match, field)
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > self._budget:
                raise MetafileError(
                    f"{self.label}: {field}: the substitutions of this metafile add more "
                    f"than {self._limit:,} bytes (at {shown(match.group(0))}; "
                    "SYNAPC_MAX_SUBSTITUTED_TEXT_BYTES raises it)"
                )
            self._budget -= size
            pieces.append(text)
        pieces.append(value[last:])
        return "".join(pieces)

    def _replace(self, match: re.Match[str], field: str) -> str:
        token = match.group(1)
        if token == "ANCHORS":
            return self.anchors()
        if token.startswith("FILE:"):
            text = self._file(token[len("FILE:") :], field)
            self.file_fields.add(field)
            return text
        raise MetafileError(
            f"{self.label}: {field}: unknown substitution {shown(match.group(0))} "
            "(expected ${ENV:name}, ${FILE:path} or ${ANCHORS})"
        )

    def anchors(self) -> str:
        """The anchors JSON, computed on first use."""
        if self._anchors_text is None:
            self._anchors_text = self._anchors() if self._anchors is not None else "[]"
        return self._anchors_text

    def _file(self, name: str, field: str) -> str:
        """The content of `${FILE:name}` (read once per metafile), confined to the
        metafile's folder tree."""
        if name in self._files:
            return self._files[name]
        where = f"{self.label}: {field}: ${{FILE:{shown(name)[1:-1]}}}"
        if not name:
            raise MetafileError(f"{self.label}: {field}: ${{FILE:}} names no file")
        if self.folder is None:
            raise MetafileError(
                f"{where}: refused: the metafile was given as text, not read from a "
                "file, so there is no folder that ${FILE:} paths are confined to"
            )
        if "\0" in name:
            raise MetafileError(f"{where}: not a valid path (it holds a NUL character)")
        if os.path.isabs(name):
            raise MetafileError(
                f"{where}: absolute paths are not allowed; ${{FILE:}} reads files inside "
                f"the metafile's folder {shown(str(self.folder), 300)}, by a path relative "
                "to it"
            )
        path = self.folder / name
        root = os.path.realpath(self.folder)
        real = os.path.realpath(path)
        if os.path.commonpath([root, real]) != root:
            raise MetafileError(
                f"{where}: {shown(str(path), 300)} is outside the metafile's folder "
                f"{shown(root, 300)} (through '..' or a symbolic link); ${{FILE:}} reads "
                "only files inside it"
            )
        limit = limits().max_substituted_file_bytes
        shown_path = shown(str(path), 300)
        try:
            data = read_regular_file(
                real, limit, "max_substituted_file_bytes", follow_symlinks=False
            )
        except ReadProblem as problem:
            if problem.missing:
                raise MetafileError(f"{where}: no such file {shown_path}") from None
            raise MetafileError(f"{where}: {shown_path} {problem.reason}") from None
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError:
            raise MetafileError(f"{where}: {shown_path} is not UTF-8 text") from None
        if "\0" in content:
            raise MetafileError(
                f"{where}: {shown_path} is not a text file (it holds NUL bytes)"
            )
        content = content.rstrip("\r\n")
        self._files[name] = content
        return content
