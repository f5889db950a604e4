"""Checks shared by every backend for transcripts and hosted canvas documents.

A transcript entry is a JSON object kept as compact JSON text; a document is a set of files
under relative POSIX paths, `index.html` among them. Both are refused here, before any
backend writes, so a bad entry or file leaves the store as it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from ..errors import InputError

__all__ = ["INDEX_FILE", "check_document", "check_path", "encode_entries"]

INDEX_FILE: Final = "index.html"


def encode_entries(entries: Sequence[object]) -> list[str]:
    """Each transcript entry as compact JSON text, refusing what is not a JSON object."""
    encoded: list[str] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise InputError(
                f"transcript entry {index} must be a JSON object (a mapping), got {entry!r}."
            )
        try:
            text = json.dumps(
                dict(cast(Mapping[str, Any], entry)),
                ensure_ascii=False,
                separators=(",", ":"),
                allow_nan=False,
            )
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"transcript entry {index} is not JSON-serialisable ({exc}); store only "
                "strings, numbers, booleans, null, lists and string-keyed mappings."
            ) from exc
        encoded.append(text)
    return encoded


def check_path(path: object) -> str:
    """A document file path: relative, `/`-separated, with no empty, `.` or `..` segment."""
    if (
        not isinstance(path, str)
        or not path
        or "\\" in path
        or "\x00" in path
        or any(part in ("", ".", "..") for part in path.split("/"))
    ):
        raise InputError(
            f"document file path {path!r} must be a relative path like `assets/app.js` "
            "with no empty, `.` or `..` segments and no backslashes."
        )
    return path


def check_document(ref: object, files: Mapping[str, object]) -> dict[str, bytes]:
    """The document's files as `bytes`, with every path checked and `index.html` present."""
    if not isinstance(ref, str) or not ref:
        raise InputError(f"document ref must be a non-empty string, got {ref!r}.")
    checked: dict[str, bytes] = {}
    for path, data in files.items():
        if not isinstance(data, bytes | bytearray):
            raise InputError(f"document file {path!r} must be bytes, got {type(data).__name__}.")
        checked[check_path(path)] = bytes(data)
    if INDEX_FILE not in checked:
        raise InputError(
            f"document {ref!r} has no `{INDEX_FILE}`; include it with the other files "
            f"(got {sorted(checked)!r})."
        )
    return checked
