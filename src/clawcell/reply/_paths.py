"""Local media references: which path spellings a reply may attach, and how they are cleaned.

Threat model: a `MEDIA:` reference names a file the gateway will read and send to a chat. An
attacker wants it to escape the places the agent may read: `..` traversal (`../../.env`,
`/tmp/../etc/shadow`, `C:\\x\\..\\y`), other users' homes (`~bob/…`), or bare `~`. Such references
are refused here (and hidden from the visible text by the splitter); accepted ones still pass the
agent's file-read policy and media-type checks downstream. Remote references are routed to the
URL policy in `_urls`. Lengths are UTF-16 code units; at most 4,096 are accepted.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from ._text import JS_SPACE_CLASS, js_trim, require_str, utf16_len
from ._urls import is_allowed_remote_media_url

__all__ = [
    "MAX_MEDIA_REFERENCE_LENGTH",
    "clean_candidate",
    "has_traversal_or_unsupported_home_dir_prefix",
    "is_likely_local_path",
    "is_relative_assistant_media_reference",
    "is_valid_media",
    "looks_like_local_file_path",
    "normalize_media_source",
    "resolve_user_path",
    "split_unquoted_media_directive_parts",
    "unwrap_quoted",
]

MAX_MEDIA_REFERENCE_LENGTH: Final = 4096

_FILE_URL_PREFIX: Final = re.compile(r"file:(?://)?", re.IGNORECASE)
_LEADING_WRAPPERS: Final = re.compile(r"\A[`\"'\[{(]+")
_TRAILING_WRAPPERS: Final = re.compile(r"[`\"'\\})\],]+$")
_SERIALIZED_JSON_TAIL: Final = re.compile(r"(.*\.\w{1,10})\\?\"(?=[\]},:]|$).*", re.DOTALL)
_WINDOWS_DRIVE: Final = re.compile(r"[a-zA-Z]:[\\/]")
_SOURCE_ROOT: Final = re.compile(r"(?:[a-zA-Z]:[\\/]|[/~]|\.{1,2}[\\/]|\\\\)")
_SCHEME: Final = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_FILE_EXT: Final = re.compile(r"\.[0-9A-Za-z_]{1,10}$")
_TRAVERSAL: Final = re.compile(r"(?:^|[/\\])\.\.(?:[/\\]|$)")
_HTTP_PREFIX: Final = re.compile(r"https?://", re.IGNORECASE)
_SPACE: Final = re.compile(f"[{JS_SPACE_CLASS}]")
_TOKEN: Final = re.compile(f"[^{JS_SPACE_CLASS}]+")
_RENDERABLE_PREFIX: Final = re.compile(
    r"(?:https?://|data:(?:image|audio|video)/|file:|~|/|[a-z]:[\\/])", re.IGNORECASE
)
_QUOTES: Final = frozenset("\"'`")


def normalize_media_source(source: str) -> str:
    """Strip a leading `file:` / `file://` (any case) so the path can be classified."""
    return _FILE_URL_PREFIX.sub("", require_str(source, "source"), count=1)


def _strip_file_prefix(source: str) -> str:
    return _FILE_URL_PREFIX.sub("", source, count=1) if source[:5].lower() == "file:" else source


def clean_candidate(raw: str) -> str:
    """Strip wrapping quotes, brackets and trailing commas; salvage a path from JSON debris."""
    stripped = _LEADING_WRAPPERS.sub("", require_str(raw, "raw"), count=1)
    stripped = _TRAILING_WRAPPERS.sub("", stripped, count=1)
    salvage = _SERIALIZED_JSON_TAIL.match(stripped) if '"' in stripped else None
    return salvage.group(1) if salvage else stripped


def unwrap_quoted(value: str) -> str | None:
    """The trimmed inside of a value wrapped in one pair of `"`, `'` or backticks, else `None`."""
    trimmed = js_trim(require_str(value, "value"))
    if len(trimmed) < 2 or trimmed[0] != trimmed[-1] or trimmed[0] not in _QUOTES:
        return None
    return js_trim(trimmed[1:-1])


def _is_supported_home_path(candidate: str) -> bool:
    return candidate.startswith(("~/", "~\\"))


def has_traversal_or_unsupported_home_dir_prefix(candidate: str) -> bool:
    """`..` as a path segment anywhere, or a `~` that is not `~/` (`~`, `~user/x`)."""
    require_str(candidate, "candidate")
    if candidate.startswith("~") and not _is_supported_home_path(candidate):
        return True
    return ".." in candidate and _TRAVERSAL.search(candidate) is not None


def looks_like_local_file_path(candidate: str) -> bool:
    """Structural check only: does this *spell* a local path (traversal included)?"""
    require_str(candidate, "candidate")
    if candidate.startswith(("/", "./", "../", "~", "\\\\")) or _WINDOWS_DRIVE.match(candidate):
        return True
    return _SCHEME.match(candidate) is None and ("/" in candidate or "\\" in candidate)


def is_likely_local_path(candidate: str) -> bool:
    """A local path spelling that is safe to approve: no traversal, no foreign home."""
    if has_traversal_or_unsupported_home_dir_prefix(candidate):
        return False
    if candidate.startswith("../"):
        return False
    return looks_like_local_file_path(candidate)


def is_valid_media(
    candidate: str, *, allow_spaces: bool = False, allow_bare_filename: bool = False
) -> bool:
    """Whether one media reference is acceptable (public `https:` URL or safe local path)."""
    value = _strip_file_prefix(require_str(candidate, "candidate"))
    if not value or utf16_len(value) > MAX_MEDIA_REFERENCE_LENGTH:
        return False
    if not allow_spaces and _SPACE.search(value):
        return False
    if _HTTP_PREFIX.match(value):
        return is_allowed_remote_media_url(value)
    if has_traversal_or_unsupported_home_dir_prefix(value):
        return False
    if looks_like_local_file_path(value):
        return True
    return allow_bare_filename and not _SCHEME.match(value) and bool(_FILE_EXT.search(value))


def _begins_independent_source(candidate: str) -> bool:
    return bool(_SOURCE_ROOT.match(candidate) or _SCHEME.match(candidate))


def split_unquoted_media_directive_parts(payload: str) -> list[str]:
    """Split a `MEDIA:` payload on whitespace, re-joining fragments of one spaced path.

    A fragment joins the previous one when the previous starts at a path root, the fragment does
    not start a new reference itself, and either the previous has no file extension yet or the
    fragment would not be valid alone: `/Users/pete/My Files/a b.png` stays one reference while
    `/tmp/a.png /tmp/b.png` gives two.
    """
    parts: list[str] = []
    previous_end = 0
    previous_root = False
    previous_ext = False
    for match in _TOKEN.finditer(require_str(payload, "payload")):
        candidate = _strip_file_prefix(clean_candidate(match.group()))
        if (
            previous_root
            and not _begins_independent_source(candidate)
            and (not previous_ext or not is_valid_media(candidate))
        ):
            parts[-1] += payload[previous_end : match.end()]
        else:
            parts.append(match.group())
        joined = _strip_file_prefix(clean_candidate(parts[-1]))
        previous_root = _SOURCE_ROOT.match(joined) is not None
        previous_ext = _FILE_EXT.search(joined) is not None
        previous_end = match.end()
    return parts


def is_relative_assistant_media_reference(url: str) -> bool:
    """A non-blank reference the Control UI cannot render as an attachment (shown as text)."""
    trimmed = js_trim(require_str(url, "url"))
    return bool(trimmed) and _RENDERABLE_PREFIX.match(trimmed) is None


def resolve_user_path(value: str, *, home: str, cwd: str) -> str:
    """Resolve a user-supplied path like a POSIX shell user would mean it.

    `~` and `~/…` expand to `home`, `\\ ` (an escaped space) becomes a space, and relative paths
    resolve against `cwd`; `~bob/x` is not expanded. Blank input gives `""`.
    """
    trimmed = js_trim(require_str(value, "value"))
    if not trimmed:
        return ""
    expanded = trimmed.replace("\\ ", " ")
    if expanded == "~" or expanded.startswith(("~/", "~\\")):
        expanded = home + expanded[1:]
    return posixpath.normpath(posixpath.join(cwd, expanded))
