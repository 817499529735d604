"""The one exception type users see: a message that names the file, field or layer."""

from __future__ import annotations


class SynapcError(Exception):
    """Bad input (corrupt model, unsupported operator, wrong metafile field, ...).

    Command-line tools print its message on one line and exit non-zero; no traceback.
    """
