"""The metafile's substitutions: `${ENV:name}` on the raw text, before YAML parsing, and
`${FILE:path}` / `${ANCHORS}` inside `format` strings, after it.

FILE and ANCHORS run on the parsed strings so that a file's content (or the anchors JSON)
may hold characters YAML treats specially without breaking the metafile; their results are
not scanned again. ENV runs on the raw text, as the vendor's converter does, so a variable
may supply any part of the document.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from synapc.metafile.model import MetafileError

__all__ = ["FormatSubstituter", "substitute_env"]

_ENV = re.compile(r"\$\{ENV:([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FORMAT_TOKEN = re.compile(r"\$\{([^}]*)\}")


def _line_of(text: str, offset: int) -> int:
    """1-based line number of character `offset` in `text`."""
    return text.count("\n", 0, offset) + 1


def substitute_env(text: str, label: str) -> str:
    """`text` with every `${ENV:name}` replaced by the variable's value; an unset variable
    or a malformed name raises `MetafileError` naming it and its line."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        line = _line_of(text, match.start())
        if not _ENV_NAME.match(name):
            raise MetafileError(
                f"{label}: line {line}: invalid environment variable name {name!r} in "
                f"{match.group(0)}"
            )
        value = os.environ.get(name)
        if value is None:
            raise MetafileError(
                f"{label}: line {line}: environment variable '{name}' is not set "
                f"(used as {match.group(0)})"
            )
        return value

    return _ENV.sub(replace, text)


class FormatSubstituter:
    """Replaces `${FILE:path}` and `${ANCHORS}` in format strings of one metafile.

    `folder` is where relative FILE paths start (the metafile's folder; None = the current
    directory). `anchors` is called at most once, on the first `${ANCHORS}`; without it
    the anchors are "[]".
    """

    def __init__(
        self, label: str, folder: Path | None, anchors: Callable[[], str] | None
    ) -> None:
        self.label = label
        self.folder = folder
        self._anchors = anchors
        self._anchors_text: str | None = None

    def __call__(self, value: str, field: str) -> str:
        """`value` (the string at `field`) with its substitutions done."""
        return _FORMAT_TOKEN.sub(lambda match: self._replace(match, field), value)

    def _replace(self, match: re.Match[str], field: str) -> str:
        token = match.group(1)
        if token == "ANCHORS":
            return self.anchors()
        if token.startswith("FILE:"):
            return self._file(token[len("FILE:") :], field)
        raise MetafileError(
            f"{self.label}: {field}: unknown substitution {match.group(0)!r} (expected "
            "${ENV:name}, ${FILE:path} or ${ANCHORS})"
        )

    def anchors(self) -> str:
        """The anchors JSON, computed on first use."""
        if self._anchors_text is None:
            self._anchors_text = self._anchors() if self._anchors is not None else "[]"
        return self._anchors_text

    def _file(self, name: str, field: str) -> str:
        if not name:
            raise MetafileError(f"{self.label}: {field}: ${{FILE:}} names no file")
        path = Path(name)
        if not path.is_absolute() and self.folder is not None:
            path = self.folder / path
        try:
            content = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise MetafileError(
                f"{self.label}: {field}: ${{FILE:{name}}}: no such file {str(path)!r}"
            ) from None
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or type(error).__name__
            raise MetafileError(
                f"{self.label}: {field}: ${{FILE:{name}}}: cannot read {str(path)!r} "
                f"({reason})"
            ) from None
        return content.rstrip("\r\n")
