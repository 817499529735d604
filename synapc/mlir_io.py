"""Reading and writing synap IR as MLIR text, with weights in a WeightStore.

Golden tests print handles only (`dense_resource<w0>`); full dumps append MLIR's
``{-# dialect_resources: { builtin: { w0: "0x04000000..." } } #-}`` section. The resource
section is written and read here, streamed in chunks, never by xDSL: xDSL keeps blobs in a
process-global store as hex strings (twice the weight bytes) and renames a handle when the
same text is parsed twice. xDSL's store is cleared around every parse, so handles stay
exactly as written and the WeightStore owns the only copy of the values.

Text is checked before xDSL sees it (`_check_text`) for what xDSL's parser does not
refuse cleanly: bytes that are not UTF-8, string literals that are unterminated or hold
an invalid escape (xDSL's lexer backtracks exponentially on them: a hang), and integer
types wider than MLIR allows (xDSL computes ``1 << width``). Numbers beyond their float
type and nesting beyond Python's recursion limit are refused as they are met.
"""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Iterable, Iterator
from typing import IO

import numpy as np
from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.printer import Printer

from synapc.context import make_context
from synapc.dtypes import numpy_dtype
from synapc.errors import SynapcError
from synapc.weights import WeightStore

_MARKER = b"{-#"
_CHUNK = 1 << 22  # 4 MiB of text per read or write


#: The widest integer type MLIR has (``IntegerType::kMaxWidth``).
MAX_INTEGER_WIDTH = (1 << 24) - 1


class MLIRTextError(SynapcError, ValueError):
    """MLIR text that synapc refuses outside xDSL's parser (whose `ParseError`s name a
    line and column themselves); the message names the text and, where known, a line."""


class ResourceError(MLIRTextError):
    """A malformed `{-# ... #-}` resource section or a blob that does not fit its type."""


def _clear_xdsl_blobs(ctx: Context) -> None:
    interface = ctx.get_dialect("builtin").get_interface(OpAsmDialectInterface)
    if interface is not None:
        interface._blob_storage.clear()


# -- which resources a module uses -----------------------------------------------------
def resource_uses(module: Operation) -> Iterator[DenseResourceAttr]:
    """Every `dense_resource` attribute on the ops of `module`, in program order."""
    for op in module.walk():
        for attr in (*op.properties.values(), *op.attributes.values()):
            if isinstance(attr, DenseResourceAttr):
                yield attr


# -- printing --------------------------------------------------------------------------
def print_module(
    module: ModuleOp, store: WeightStore | None = None, with_weights: bool = False
) -> str:
    """The module as MLIR text; with `with_weights`, plus the blobs of its handles."""
    out = io.StringIO()
    write_module(module, out, store, with_weights)
    return out.getvalue()


def write_module(
    module: ModuleOp,
    target: IO[str] | str | os.PathLike[str],
    store: WeightStore | None = None,
    with_weights: bool = True,
    print_generic: bool = False,
) -> None:
    """Write the module (and, with `with_weights`, its blobs) to a stream or a file.

    Blobs are hex-encoded in chunks straight into the output, so a dump costs no more
    memory than one chunk on top of the weights.
    """
    if not hasattr(target, "write"):
        with open(target, "w", encoding="utf-8") as stream:  # type: ignore[arg-type]
            write_module(module, stream, store, with_weights, print_generic)
        return
    stream: IO[str] = target  # type: ignore[assignment]
    Printer(stream=stream, print_generic_format=print_generic).print_op(module)
    stream.write("\n")
    if with_weights and store is not None:
        handles = sorted({a.resource_handle.data for a in resource_uses(module)})
        _write_resources(stream, [(h, store[h]) for h in handles if h in store])


def _write_resources(stream: IO[str], blobs: list[tuple[str, np.ndarray]]) -> None:
    if not blobs:
        return
    stream.write("\n{-#\n  dialect_resources: {\n    builtin: {\n")
    for index, (handle, array) in enumerate(blobs):
        alignment = max(array.dtype.itemsize, 1)
        stream.write(f'      {handle}: "0x{alignment.to_bytes(4, "little").hex().upper()}')
        flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        for start in range(0, flat.size, _CHUNK // 2):
            stream.write(flat[start : start + _CHUNK // 2].tobytes().hex().upper())
        stream.write('"' + ("," if index + 1 < len(blobs) else "") + "\n")
    stream.write("    }\n  }\n#-}\n")


# -- parsing ---------------------------------------------------------------------------
def parse_module(
    text: str, store: WeightStore, ctx: Context | None = None, name: str = "<text>"
) -> ModuleOp:
    """Parse MLIR text; blobs of its resource section go into `store`."""
    return _parse(_chunks_of(text.encode()), store, ctx or make_context(store), name)


def read_module(
    path: str | os.PathLike[str], store: WeightStore, ctx: Context | None = None
) -> ModuleOp:
    """Parse an MLIR file, streaming its resource section into `store`."""
    with open(path, "rb") as stream:
        return read_stream(stream, store, ctx, os.fspath(path))


def read_stream(
    stream: IO[bytes],
    store: WeightStore,
    ctx: Context | None = None,
    name: str = "<stream>",
) -> ModuleOp:
    """Parse MLIR from a binary stream, streaming its resource section into `store`."""
    chunks = iter(lambda: stream.read(_CHUNK), b"")
    return _parse(chunks, store, ctx or make_context(store), name)


def _chunks_of(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), _CHUNK):
        yield data[start : start + _CHUNK]


def _parse(
    chunks: Iterator[bytes], store: WeightStore, ctx: Context, name: str
) -> ModuleOp:
    reader = _Reader(chunks)
    module_text = reader.read_until_marker()
    try:
        blobs = _parse_resources(reader) if reader.at_marker else {}
    except ResourceError as error:
        raise ResourceError(f"{name}: {error}") from None
    text = _decoded(module_text, name)
    _check_text(text, name)
    _clear_xdsl_blobs(ctx)
    parser = Parser(ctx, text, name)
    try:
        module = parser.parse_module()
    except OverflowError as error:  # a float attribute beyond its type: struct.pack
        line = _line_of(text, parser.pos)
        raise MLIRTextError(
            f"{name}: line {line}: a number is out of range of its type ({error})"
        ) from None
    except NotImplementedError as error:  # xDSL packs no values of, e.g., i74
        line = _line_of(text, parser.pos)
        raise MLIRTextError(f"{name}: line {line}: {error}") from None
    except RecursionError:
        line = _line_of(text, parser.pos)
        raise MLIRTextError(
            f"{name}: line {line}: types or attributes nested too deeply"
        ) from None
    finally:
        _clear_xdsl_blobs(ctx)
    if blobs:
        try:
            _attach_blobs(module, blobs, store)
        except ResourceError as error:
            raise ResourceError(f"{name}: {error}") from None
    return module


def _line_of(text: str | bytes, index: int) -> int:
    return text.count("\n" if isinstance(text, str) else b"\n", 0, index) + 1


def _decoded(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = _line_of(data, error.start)
        raise MLIRTextError(
            f"{name}: line {line}: not UTF-8 text (byte 0x{data[error.start]:02x})"
        ) from None


#: A string literal's start, or a comment (whose quotes are not strings).
_QUOTE_OR_COMMENT = re.compile(r'"|//[^\n]*')
#: A whole string literal as MLIR (and xDSL) accept it, matched in linear time.
_STRING = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
#: An integer type outside string literals and comments.
_INTEGER_TYPE = re.compile(r"(?:(?<=[\d?\]]x)|(?<![\w$.%@^#!-]))[su]?i(\d+)(?![\w$.])")


def _check_text(text: str, name: str) -> None:
    """Refuse what xDSL's lexer and parser do not refuse cleanly (see the module's
    docstring), naming the line."""
    pos = 0
    while True:
        match = _QUOTE_OR_COMMENT.search(text, pos)
        end = len(text) if match is None else match.start()
        for width in _INTEGER_TYPE.finditer(text, pos, end):
            digits = width.group(1)
            if len(digits) > 8 or int(digits) > MAX_INTEGER_WIDTH:
                line = _line_of(text, width.start())
                raise MLIRTextError(
                    f"{name}: line {line}: integer type '{width.group()[:40]}' is wider"
                    f" than MLIR's {MAX_INTEGER_WIDTH} bits"
                )
        if match is None:
            return
        if match.group() != '"':
            pos = match.end()
            continue
        string = _STRING.match(text, match.start())
        if string is None:
            line = _line_of(text, match.start())
            raise MLIRTextError(
                f"{name}: line {line}: a string literal is not closed on its line or"
                ' holds an escape other than \\n, \\t, \\\\, \\" or two hex digits'
            )
        pos = string.end()


def _attach_blobs(
    module: ModuleOp, blobs: dict[str, bytearray], store: WeightStore
) -> None:
    types: dict[str, Attribute] = {}
    for attr in resource_uses(module):
        handle = attr.resource_handle.data
        if handle in types and types[handle] != attr.type:
            raise ResourceError(
                f"resource '{handle}' is used as both {types[handle]} and {attr.type}"
            )
        types[handle] = attr.type
    for handle, tensor in types.items():
        if handle not in blobs:
            continue
        shape = tensor.get_shape() if isinstance(tensor, TensorType) else (-1,)
        try:
            dtype = numpy_dtype(tensor.element_type)  # type: ignore[attr-defined]
        except (AttributeError, TypeError):
            dtype = None
        if dtype is None or any(d < 0 for d in shape):
            raise ResourceError(
                f"resource '{handle}' has a type without fixed storage: {tensor}"
            )
        need = dtype.itemsize * math.prod(shape)  # Python ints: no overflow
        blob = blobs.pop(handle)
        if len(blob) != need:
            raise ResourceError(
                f"resource '{handle}' has {len(blob)} bytes but {tensor} needs {need}"
            )
        store[handle] = np.frombuffer(blob, dtype=dtype).reshape(shape)


#: Bytes of an unquoted resource key.
_KEY_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.")


def _key_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ResourceError("a resource key is not UTF-8 text") from None


class _Reader:
    """Bytes from a chunk iterator, with look-ahead for the small tokens of the
    resource section and chunked hex decoding for blobs."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._buffer = b""
        self._pos = 0
        self.at_marker = False

    def _fill(self) -> bool:
        chunk = next(self._chunks, b"")
        if not chunk:
            return False
        self._buffer = self._buffer[self._pos :] + chunk
        self._pos = 0
        return True

    def read_until_marker(self) -> bytes:
        """Everything before a `{-#` that starts a line, or up to the end."""
        parts: list[bytes] = []
        while True:
            index = self._buffer.find(_MARKER, self._pos)
            while index > 0 and self._buffer[index - 1 : index] not in (b"\n", b"\r"):
                index = self._buffer.find(_MARKER, index + 1)
            if index >= 0:
                parts.append(self._buffer[self._pos : index])
                self._pos = index + len(_MARKER)
                self.at_marker = True
                return b"".join(parts)
            keep = max(self._pos, len(self._buffer) - len(_MARKER))
            parts.append(self._buffer[self._pos : keep])
            self._pos = keep
            if not self._fill():
                parts.append(self._buffer[self._pos :])
                self._pos = len(self._buffer)
                return b"".join(parts)

    def skip_space(self) -> None:
        while True:
            while self._pos < len(self._buffer) and self._buffer[self._pos] in b" \t\r\n":
                self._pos += 1
            if self._buffer.startswith(b"//", self._pos):
                end = self._buffer.find(b"\n", self._pos)
                if end < 0:
                    if not self._fill():
                        self._pos = len(self._buffer)
                        return
                    continue
                self._pos = end + 1
                continue
            if self._pos < len(self._buffer) or not self._fill():
                return

    def peek(self, count: int = 1) -> bytes:
        self.skip_space()
        while len(self._buffer) - self._pos < count and self._fill():
            pass
        return self._buffer[self._pos : self._pos + count]

    def expect(self, token: bytes) -> None:
        if self.peek(len(token)) != token:
            found = " ".join(self.peek(20).decode("utf-8", "replace").split())
            raise ResourceError(
                f"expected '{token.decode()}' in resource section, found '{found}'"
            )
        self._pos += len(token)

    def identifier(self) -> str:
        self.peek()
        if self._buffer[self._pos : self._pos + 1] == b'"':
            self._pos += 1
            end = self._find(b'"')
            value = _key_text(self._buffer[self._pos : end])
            self._pos = end + 1
            return value
        start = self._pos
        while True:
            while self._pos < len(self._buffer) and (self._buffer[self._pos] in _KEY_BYTES):
                self._pos += 1
            if self._pos < len(self._buffer) or not self._fill_keeping(start):
                break
            start = 0
        value = _key_text(self._buffer[start : self._pos])
        if not value:
            raise ResourceError("expected a resource key")
        return value

    def _fill_keeping(self, start: int) -> bool:
        # refill, keeping the partial token that begins at `start`
        chunk = next(self._chunks, b"")
        if not chunk:
            return False
        self._buffer = self._buffer[start:] + chunk
        self._pos -= start
        return True

    def _find(self, token: bytes) -> int:
        while (index := self._buffer.find(token, self._pos)) < 0:
            if not self._fill():
                raise ResourceError("unterminated string in resource section")
        return index

    def hex_blob(self) -> bytearray:
        """A quoted `"0x<alignment><data>"` blob, decoded; the alignment is dropped."""
        self.expect(b'"0x')
        data = bytearray()
        pending = b""
        header_left = 8
        while True:
            end = self._buffer.find(b'"', self._pos)
            stop = end if end >= 0 else len(self._buffer)
            piece = pending + self._buffer[self._pos : stop]
            if header_left:
                taken = min(header_left, len(piece))
                header_left -= taken
                piece = piece[taken:]
            usable = len(piece) - len(piece) % 2
            try:
                data += bytes.fromhex(piece[:usable].decode("ascii"))
            except ValueError:
                raise ResourceError("resource blob is not a hex string") from None
            pending = piece[usable:]
            self._pos = stop
            if end >= 0:
                self._pos = end + 1
                break
            if not self._fill():
                raise ResourceError("unterminated blob in resource section")
        if pending or header_left:
            raise ResourceError("resource blob has an odd number of hex digits")
        return data


def _parse_resources(reader: _Reader) -> dict[str, bytearray]:
    """The builtin blobs of a `{-# dialect_resources: {...} #-}` section."""
    blobs: dict[str, bytearray] = {}
    while reader.peek(3) != b"#-}":
        section = reader.identifier()
        reader.expect(b":")
        reader.expect(b"{")
        if section != "dialect_resources":
            raise ResourceError(f"unsupported resource section '{section}'")
        while reader.peek() != b"}":
            dialect = reader.identifier()
            reader.expect(b":")
            reader.expect(b"{")
            if dialect != "builtin":
                raise ResourceError(f"resources of dialect '{dialect}' are not supported")
            while reader.peek() != b"}":
                key = reader.identifier()
                reader.expect(b":")
                blobs[key] = reader.hex_blob()
                if reader.peek() == b",":
                    reader.expect(b",")
            reader.expect(b"}")
            if reader.peek() == b",":
                reader.expect(b",")
        reader.expect(b"}")
        if reader.peek() == b",":
            reader.expect(b",")
    reader.expect(b"#-}")
    return blobs
