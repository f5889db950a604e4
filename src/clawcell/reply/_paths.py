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

from ._text import JS_SPACE, JS_SPACE_CLASS, js_trim, require_str, utf16_len
from ._urls import allowed_remote_media_href, parse_whatwg_url

__all__ = [
    "MAX_MEDIA_REFERENCE_LENGTH",
    "clean_candidate",
    "has_traversal_or_unsupported_home_dir_prefix",
    "is_likely_local_path",
    "is_relative_assistant_media_reference",
    "is_valid_media",
    "looks_like_local_file_path",
    "media_reference",
    "normalize_media_source",
    "resolve_user_path",
    "split_unquoted_media_directive_parts",
    "unwrap_quoted",
]

MAX_MEDIA_REFERENCE_LENGTH: Final = 4096

_FILE_URL_PREFIX: Final = re.compile(r"\Afile:(?://)?", re.IGNORECASE)  # a prefix only
_LEADING_WRAPPERS: Final = "`\"'[{("
_TRAILING_WRAPPERS: Final = "`\"'\\})],"
# A salvageable `name.ext"` followed by a JSON delimiter (what `_SERIALIZED_JSON_TAIL` keeps).
_JSON_NAME_END: Final = re.compile(r"\.\w{1,10}(?=\\?\"[\]},:])")
_SHORT_PART: Final = 256
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
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
# Percent-encoded dots and separators: WHATWG removes `%2e%2e` segments, and path decoders
# (`urllib.request.url2pathname`) turn `%2f` and `%5c` into separators.
_ENCODED_PATH_CHARS: Final = re.compile("%(2e|2f|5c)", re.IGNORECASE)
_DECODED: Final = {"2e": ".", "2f": "/", "5c": "\\"}


def normalize_media_source(source: str) -> str:
    """Strip a leading `file:` / `file://` (any case) so the path can be classified; one
    later in the path (`./a/file://b.png`) is part of a name and stays."""
    return _FILE_URL_PREFIX.sub("", require_str(source, "source"), count=1)


def _strip_file_prefix(source: str) -> str:
    return _FILE_URL_PREFIX.sub("", source, count=1) if source[:5].lower() == "file:" else source


def clean_candidate(raw: str) -> str:
    """Strip wrapping quotes, brackets and trailing commas; salvage a path from JSON debris."""
    # `str.strip` on the wrapper sets: a `[…]+$` regex rescans runs of wrappers (quadratic).
    stripped = require_str(raw, "raw").lstrip(_LEADING_WRAPPERS).rstrip(_TRAILING_WRAPPERS)
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


def media_reference(
    candidate: str, *, allow_spaces: bool = False, allow_bare_filename: bool = False
) -> str | None:
    """The reference to emit for an acceptable media `candidate`, or `None` when refused.

    Local paths are emitted as written; remote URLs as `allowed_remote_media_href` gives them.
    """
    if _CONTROL.search(require_str(candidate, "candidate")):
        return None  # WHATWG parsers drop C0 controls and tabs: `\x00https://…` (issue 17, R3)
    is_file_url = candidate[:5].lower() == "file:"
    value = _FILE_URL_PREFIX.sub("", candidate, count=1) if is_file_url else candidate
    if not value or utf16_len(value) > MAX_MEDIA_REFERENCE_LENGTH:
        return None
    if not allow_spaces and _SPACE.search(value):
        return None
    if _HTTP_PREFIX.match(value):
        return allowed_remote_media_href(value)
    if has_traversal_or_unsupported_home_dir_prefix(value) or value.startswith("//"):
        return None  # `//host/x` is a protocol-relative URL to any renderer
    if is_file_url and not _is_local_file_url(candidate, value):
        return None
    if looks_like_local_file_path(value):
        return candidate
    if allow_bare_filename and not _SCHEME.match(value) and _FILE_EXT.search(value):
        return candidate
    return None


def _is_local_file_url(candidate: str, path: str) -> bool:
    """A `file:` URL names a local file: no remote host, no dot segment WHATWG would remove."""
    decoded = _ENCODED_PATH_CHARS.sub(lambda m: _DECODED[m.group(1).lower()], path)
    if "%" in path and _TRAVERSAL.search(decoded):
        return False  # `file:///tmp/%2e%2e/etc/passwd` is `/etc/passwd` (issue 17, R4)
    parsed = parse_whatwg_url(candidate)
    # `file://server/share/x` names a network share (an SMB fetch on Windows).
    return parsed is not None and parsed.hostname in ("", "localhost")


def is_valid_media(
    candidate: str, *, allow_spaces: bool = False, allow_bare_filename: bool = False
) -> bool:
    """Whether one media reference is acceptable (public `https:` URL or safe local path)."""
    reference = media_reference(
        candidate, allow_spaces=allow_spaces, allow_bare_filename=allow_bare_filename
    )
    return reference is not None


def _begins_independent_source(candidate: str) -> bool:
    return bool(_SOURCE_ROOT.match(candidate) or _SCHEME.match(candidate))


class _Part:
    """The reference being assembled from payload fragments, as a window on the payload.

    Whether it starts at a path root and whether it ends in a file extension are tracked as
    fragments join, so that a long spaced path is never re-cleaned as a whole (linear time).
    """

    def __init__(self, payload: str, start: int, end: int) -> None:
        self.payload = payload
        self.start = start
        self.end = end
        self.quote = -1  # the last `"` in the part
        # `(end of name.ext, index of the delimiter)` of each salvageable JSON name, in order.
        self.salvage: list[tuple[int, int]] = []
        self._scan(start, end)
        joined = _strip_file_prefix(clean_candidate(payload[start:end]))
        self.root = _SOURCE_ROOT.match(joined) is not None
        self.ext = _FILE_EXT.search(joined) is not None

    def _scan(self, start: int, end: int) -> None:
        quote = self.payload.rfind('"', start, end)
        self.quote = max(self.quote, quote)
        for match in _JSON_NAME_END.finditer(self.payload, start, end):
            quote = match.end() + (2 if self.payload[match.end()] == "\\" else 1)
            self.salvage.append((match.end(), quote))

    def join(self, end: int, fragment_start: int) -> None:
        self._scan(fragment_start, end)
        self.end = end
        if end - self.start < _SHORT_PART:
            joined = _strip_file_prefix(clean_candidate(self.payload[self.start : end]))
            self.ext = _FILE_EXT.search(joined) is not None
            return
        # A long part keeps its start (and so its root); only its end can change.
        fragment = self.payload[fragment_start:end]
        stripped_end = fragment_start + len(fragment.rstrip(_TRAILING_WRAPPERS))
        cleaned_end = stripped_end
        if self.start <= self.quote < stripped_end:
            usable = [end for end, delimiter in self.salvage[-8:] if delimiter < stripped_end]
            cleaned_end = usable[-1] if usable else stripped_end
        tail = self.payload[max(self.start, cleaned_end - 11) : cleaned_end]
        self.ext = _FILE_EXT.search(tail) is not None

    def text(self) -> str:
        return self.payload[self.start : self.end]


def split_unquoted_media_directive_parts(payload: str) -> list[str]:
    """Split a `MEDIA:` payload on whitespace, re-joining fragments of one spaced path.

    A fragment joins the previous one when the previous starts at a path root, the fragment does
    not start a new reference itself, and either the previous has no file extension yet or the
    fragment would not be valid alone: `/Users/pete/My Files/a b.png` stays one reference while
    `/tmp/a.png /tmp/b.png` gives two.
    """
    trimmed = require_str(payload, "payload").strip(JS_SPACE)
    if not _SPACE.search(trimmed):
        return [trimmed] if trimmed else []  # one token: nothing to join
    parts: list[_Part] = []
    for match in _TOKEN.finditer(payload):
        candidate = _strip_file_prefix(clean_candidate(match.group()))
        previous = parts[-1] if parts else None
        if (
            previous is not None
            and previous.root
            and not _begins_independent_source(candidate)
            and (not previous.ext or not is_valid_media(candidate))
        ):
            previous.join(match.end(), match.start())
        else:
            parts.append(_Part(payload, match.start(), match.end()))
    return [part.text() for part in parts]


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
