"""Zips of documents uploaded from the browser, unpacked safely.

Every unsafe member (a link, an absolute path, ``..``) is named, not only the first;
then the zip is refused whole. Sizes are counted while writing, so a lying header
does not help a zip bomb.
"""

from __future__ import annotations

import re
import shutil
import stat
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

from nuggets_app.errors import DomainError

_CHUNK = 1024 * 1024


class UploadError(DomainError):
    """An upload refused before any parsing: too large, unsafe zip, bad name.

    ``lines`` holds every problem found, one line each.
    """

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        super().__init__("\n".join(lines))


def _unsafe_member(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if "\\" in name or name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return "has an absolute path"
    if ".." in PurePosixPath(name).parts:
        return "climbs out of the folder with '..'"
    if "\x00" in name:
        return "has a NUL in its name"
    return None


def zip_extract(
    *, path: str | Path, dest: str | Path, max_bytes: int, max_files: int
) -> int:
    """Unpack the ``.txt``/``.html`` members of a zip into ``dest``; returns how many.

    Refuses the whole zip (UploadError naming every such member, nothing left in
    ``dest``) when a member is a link or has an absolute or ``..`` path, when more than ``max_files`` documents or
    more than ``max_bytes`` unpacked bytes would come out (counted while writing, so a
    lying header does not help), or when it is not a zip.
    """
    shown = Path(path).name
    dest = Path(dest)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UploadError(f"{shown}: not a readable zip file ({exc})") from None
    written = 0
    count = 0
    try:
        with archive:
            members = archive.infolist()
            unsafe = [
                f"{shown}: member {info.filename!r} {problem}"
                for info in members
                if (problem := _unsafe_member(info))
            ]
            if unsafe:
                raise UploadError(*unsafe)
            wanted = [
                info
                for info in members
                if not info.is_dir()
                and PurePosixPath(info.filename).suffix.lower()
                in (".txt", ".html", ".htm")
                and not info.filename.startswith("__MACOSX/")
            ]
            if len(wanted) > max_files:
                raise UploadError(
                    f"{shown}: {len(wanted)} documents, more than the limit of "
                    f"{max_files} (UPLOAD_MAX_ZIP_FILES)"
                )
            declared = sum(info.file_size for info in wanted)
            if declared > max_bytes:
                raise UploadError(too_big(shown, max_bytes))
            root = dest.resolve()
            for info in wanted:
                target = (dest / info.filename).resolve()
                if root not in target.parents:
                    raise UploadError(f"{shown}: member {info.filename!r} escapes")
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, target.open("wb") as out:
                    written = _copy_limited(src, out, written, max_bytes, shown)
                count += 1
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise UploadError(f"{shown}: corrupt zip file ({exc})") from None
    except UploadError:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    if count == 0:
        raise UploadError(f"{shown}: no .txt or .html file in the zip")
    return count


def too_big(shown: str, max_bytes: int) -> str:
    return (
        f"{shown}: unpacks to more than the limit of {max_bytes} bytes "
        "(UPLOAD_MAX_UNCOMPRESSED_BYTES)"
    )


def _copy_limited(
    src: IO[bytes], out: IO[bytes], written: int, limit: int, shown: str
) -> int:
    while True:
        chunk = src.read(_CHUNK)
        if not chunk:
            return written
        written += len(chunk)
        if written > limit:
            raise UploadError(too_big(shown, limit))
        out.write(chunk)
