"""Streaming line reader shared by the parsers.

Lines are counted on ``\\n`` bytes, as ``wc -l`` and trec_eval count (a lone ``\\r`` is not
a line break). Files ending in ``.gz`` are read through gzip. Decoding is strict by default:
an undecodable byte stops the file with its line, byte offset and a guess of the encoding.
"""

from __future__ import annotations

import codecs
import gzip
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from nuggets_app.importers.errors import ImportOptionError

from .errors import ImportFormatError, escape_text

MAX_LINE_BYTES = 64 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024
_BOMS_UTF16_32 = (
    codecs.BOM_UTF32_LE,
    codecs.BOM_UTF32_BE,
    codecs.BOM_UTF16_LE,
    codecs.BOM_UTF16_BE,
)
_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


@dataclass
class ReadStats:
    """What the reader saw: lines, (uncompressed) bytes, characters replaced."""

    lines: int = 0
    bytes: int = 0
    replaced: int = 0


def open_binary(path: str | Path) -> BinaryIO:
    """Open ``path`` for binary reading, through gzip when it ends in ``.gz``."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def check_encoding(encoding: str, encoding_errors: str = "strict") -> str:
    """The codec's canonical name; ValueError for an unknown codec or error mode."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        raise ImportOptionError(f"unknown encoding {encoding!r}") from None
    if encoding_errors not in ("strict", "replace"):
        raise ImportOptionError(
            f"encoding errors must be 'strict' or 'replace', not {encoding_errors!r}"
        )
    return name


def _ascii_compatible(codec: str) -> bool:
    """True when ``\\n`` is the single byte 0x0A and never part of a multi-byte char."""
    return not codec.startswith(("utf-16", "utf-32"))


def guess_encoding(path: str | Path, limit: int = 256 * 1024) -> str | None:
    """charset-normalizer's best guess for the start of the file, or None."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - optional helper for messages
        return None
    try:
        with open_binary(path) as handle:
            sample = handle.read(limit)
    except (OSError, *_GZIP_ERRORS):
        return None
    best = from_bytes(sample).best()
    return best.encoding if best is not None else None


def _decode_error(
    path: str | Path,
    line: int,
    offset: int,
    raw: bytes,
    exc: UnicodeDecodeError,
    codec: str,
) -> ImportFormatError:
    guess = guess_encoding(path)
    hint = (
        f"; it looks like {guess}: try --encoding {guess}"
        if guess and guess != codec
        else ""
    )
    return ImportFormatError(
        path,
        line,
        f"cannot decode as {codec} at byte offset {offset + exc.start}"
        f" (column {exc.start + 1}){hint}",
        expected=f"valid {codec}",
        got=raw[max(0, exc.start - 10) : exc.end + 10],
    )


def _decode_replacing(raw: bytes, codec: str) -> tuple[str, int]:
    """Decode with one U+FFFD per bad sequence, counting the replacements."""
    parts: list[str] = []
    count = 0
    pos = 0
    while True:
        try:
            parts.append(raw[pos:].decode(codec))
            return "".join(parts), count
        except UnicodeDecodeError as exc:
            parts.append(raw[pos : pos + exc.start].decode(codec))
            parts.append("\ufffd")
            count += 1
            pos += exc.end


def iter_lines(
    path: str | Path,
    *,
    encoding: str = "utf-8",
    encoding_errors: str = "strict",
    stats: ReadStats | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` with the ``\\n`` removed (a ``\\r`` before it is kept).

    A UTF-8 byte order mark is skipped. Raises :class:`ImportFormatError` for undecodable
    bytes, lines longer than ``max_line_bytes``, and truncated or corrupt gzip data.
    """
    codec = check_encoding(encoding, encoding_errors)
    stats = stats if stats is not None else ReadStats()
    if not _ascii_compatible(codec):
        yield from _iter_lines_wide(path, codec, encoding_errors, stats)
        return
    yield from _iter_lines_narrow(path, codec, encoding_errors, stats, max_line_bytes)


def _read_chunk(handle: BinaryIO, path: str | Path, line: int) -> bytes:
    try:
        return handle.read(CHUNK_BYTES)
    except _GZIP_ERRORS as exc:
        raise ImportFormatError(
            path, line + 1, "truncated or corrupt gzip data", got=str(exc)
        ) from None


def _too_long(path: str | Path, line: int, limit: int, raw: bytes) -> ImportFormatError:
    return ImportFormatError(
        path,
        line,
        f"line longer than {limit} bytes",
        expected="one record per line",
        got=raw[:40],
    )


def _iter_lines_narrow(
    path: str | Path,
    codec: str,
    encoding_errors: str,
    stats: ReadStats,
    max_line_bytes: int,
) -> Iterator[tuple[int, str]]:
    """ASCII-compatible codecs: read blocks of whole lines, decode each block at once."""
    line = 0
    offset = 0
    pending = b""
    try:
        with open_binary(path) as handle:
            while True:
                chunk = _read_chunk(handle, path, line)
                data = pending + chunk
                if offset == 0 and data:
                    data = _strip_bom(path, data, codec)
                    offset = len(pending + chunk) - len(data)
                cut = data.rfind(b"\n") + 1 if chunk else len(data)
                block, pending = data[:cut], data[cut:]
                if len(pending) > max_line_bytes:
                    raise _too_long(
                        path, line + block.count(b"\n") + 1, max_line_bytes, pending
                    )
                for body in _block_lines(
                    path, line, offset, block, codec, encoding_errors, stats
                ):
                    line += 1
                    yield line, body
                offset += len(block)
                stats.lines = line
                stats.bytes = offset
                if not chunk:
                    return
    except OSError as exc:
        raise ImportFormatError(
            path, line + 1, "cannot read file", got=str(exc)
        ) from None


def _block_lines(
    path: str | Path,
    line: int,
    offset: int,
    block: bytes,
    codec: str,
    encoding_errors: str,
    stats: ReadStats,
) -> list[str]:
    """The lines of a block of whole lines (the last may lack its newline)."""
    if not block:
        return []
    try:
        text = block.decode(codec)
    except UnicodeDecodeError:
        # Find the exact line and byte offset, or replace and count, line by line.
        raws = block.split(b"\n")
        if block.endswith(b"\n"):
            raws.pop()
        lines = []
        for index, raw in enumerate(raws):
            lines.append(
                _decode_line(
                    path, line + index + 1, offset, raw, codec, encoding_errors, stats
                )
            )
            offset += len(raw) + 1
        return lines
    parts = text.split("\n")
    return parts[:-1] if text.endswith("\n") else parts


def _decode_line(
    path: str | Path,
    line: int,
    offset: int,
    body: bytes,
    codec: str,
    encoding_errors: str,
    stats: ReadStats,
) -> str:
    try:
        return body.decode(codec)
    except UnicodeDecodeError as exc:
        if encoding_errors == "strict":
            raise _decode_error(path, line, offset, body, exc, codec) from None
        text, count = _decode_replacing(body, codec)
        stats.replaced += count
        return text


def _strip_bom(path: str | Path, raw: bytes, codec: str) -> bytes:
    if raw.startswith(codecs.BOM_UTF8):
        return raw[len(codecs.BOM_UTF8) :]
    for bom in _BOMS_UTF16_32:
        if raw.startswith(bom):
            kind = "utf-32" if len(bom) == 4 else "utf-16"
            raise ImportFormatError(
                path,
                1,
                f"the file starts with a {kind} byte order mark: try --encoding {kind}",
                expected=f"{codec} text",
                got=raw[:8],
            )
    return raw


def _iter_lines_wide(
    path: str | Path, codec: str, encoding_errors: str, stats: ReadStats
) -> Iterator[tuple[int, str]]:
    """UTF-16/32: decode incrementally in chunks and split on ``\\n`` characters."""
    decoder = codecs.getincrementaldecoder(codec)(errors=encoding_errors)
    line = 1
    pending = ""
    first = True
    try:
        with open_binary(path) as handle:
            while True:
                try:
                    chunk = handle.read(CHUNK_BYTES)
                    text = decoder.decode(chunk, final=not chunk)
                except _GZIP_ERRORS as exc:
                    raise ImportFormatError(
                        path, line, "truncated or corrupt gzip data", got=str(exc)
                    ) from None
                except UnicodeDecodeError as exc:
                    raise ImportFormatError(
                        path,
                        line,
                        f"cannot decode as {codec}",
                        expected=f"valid {codec}",
                        got=escape_text(exc.object[exc.start : exc.end + 10]),
                    ) from None
                stats.bytes += len(chunk)
                stats.replaced += (
                    text.count("\ufffd") if encoding_errors == "replace" else 0
                )
                if first:
                    text = text.removeprefix("\ufeff")
                    first = False
                pending += text
                *complete, pending = pending.split("\n")
                for body in complete:
                    stats.lines = line
                    yield line, body
                    line += 1
                if not chunk:
                    break
    except OSError as exc:
        raise ImportFormatError(path, line, "cannot read file", got=str(exc)) from None
    if pending:
        stats.lines = line
        yield line, pending
