"""Virtual `.d.ts` files behind `API.list` / `API.read` (spec §3.5, §8.3).

`results.d.ts` ships as package data next to this module. Its text is clawcell's own: it
declares the saved-results contract and, unlike the recorded release, the session store
(`store`/`load`, which clawcell provides). Its size is held at the recorded release's 2,182
UTF-8 bytes and it opens with the same type declaration, because the recorded conformance
case reads both.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Final

from ..._lazy import value_class
from ...errors import InputError

__all__ = ["ApiFile", "normalize_api_path", "normalize_api_prefix", "results_api_file"]

INVALID_PATH: Final = "invalid API file path"
RESULTS_DESCRIPTION: Final = "Temporary JSON results shared across cells in the current agent run."


@value_class
class ApiFile:
    """One virtual file; `content` is `None` for tool files generated only on read."""

    path: str
    description: str | None = None
    content: str | None = None

    def listing(self) -> dict[str, object]:
        """The `API.list` entry: path, and description/bytes when known."""
        entry: dict[str, object] = {"path": self.path}
        if self.description is not None:
            entry["description"] = self.description
        if self.content is not None:
            entry["bytes"] = len(self.content.encode("utf-8"))
        return entry

    def read(self) -> dict[str, object]:
        """The `API.read` result: path, description?, content and bytes."""
        content = self.content or ""
        entry: dict[str, object] = {"path": self.path}
        if self.description is not None:
            entry["description"] = self.description
        entry["content"] = content
        entry["bytes"] = len(content.encode("utf-8"))
        return entry


@cache
def results_api_file() -> ApiFile:
    """The recorded `results.d.ts` file."""
    text = resources.files("clawcell.catalog").joinpath("results.d.ts").read_text("utf-8")
    return ApiFile(path="results.d.ts", description=RESULTS_DESCRIPTION, content=text.rstrip("\n"))


def normalize_api_path(path: object) -> str:
    """Trim, strip leading `/`, and reject empty, `.` and `..` segments.

    Raises:
        InputError: `invalid API file path`.
    """
    if not isinstance(path, str):
        raise InputError(INVALID_PATH)
    normalized = path.strip().lstrip("/")
    segments = normalized.split("/")
    if not normalized or any(segment in ("", ".", "..") for segment in segments):
        raise InputError(INVALID_PATH)
    return normalized


def normalize_api_prefix(prefix: object) -> str:
    """`""` (everything) for `None`/blank; otherwise a trimmed, validated path without `/` tail."""
    if prefix is None:
        return ""
    if not isinstance(prefix, str):
        raise InputError(INVALID_PATH)
    trimmed = prefix.strip().rstrip("/")
    return normalize_api_path(trimmed) if trimmed else ""


def matches_prefix(path: str, prefix: str) -> bool:
    """`path` equals `prefix` or lies below it."""
    return not prefix or path == prefix or path.startswith(prefix + "/")
