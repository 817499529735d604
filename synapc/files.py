"""Writing a file all or nothing: the old file or the whole new one, never a part."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO


@contextmanager
def replacing(target: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """A text stream whose content replaces the file `target` when the block ends, and
    is thrown away if the block fails or is interrupted: it goes to a new file beside
    `target` (0666 less the umask, like any new file), renamed over `target` at the end,
    so `target` is either the old file or the whole new one, and no temporary file is
    left behind. Through a symlink the file it points to is replaced; a target that is
    not a regular file (a FIFO, /dev/stdout) is written in place."""
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "w", encoding="utf-8") as stream:
            yield stream
        return
    path = Path(os.path.realpath(target))
    temporary = os.fspath(path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp"))
    try:
        # "x": a new file, with the mode the umask gives (mkstemp's would be 0600)
        with open(temporary, "x", encoding="utf-8") as stream:
            yield stream
        os.replace(temporary, path)
    except BaseException as error:
        # whenever it came, the temporary file (if any) is ours, unless its name was
        # taken already
        if not (isinstance(error, FileExistsError) and error.filename == temporary):
            with suppress(OSError):
                os.unlink(temporary)
        if isinstance(error, OSError) and error.filename == temporary:
            # report the file the user named, not the temporary one
            raise type(error)(error.errno, error.strerror, os.fspath(target)) from None
        raise
