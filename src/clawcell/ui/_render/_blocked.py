"""`MEDIA:` directives the parser kept as text, shown as "blocked" attachments instead.

`expand_text_content` leaves a `MEDIA:` line in the text when it refuses its reference (a
remote URL that fails the media policy, plain `http:`, a bare name). Drawn as Markdown, that
would show the raw directive; the chat shows a "blocked: … (reason)" line in its place, as the
original's docs promise. Only directive lines count, as the parser reads them: the trimmed
line starts with `MEDIA:` (any case), indented by at most three spaces and outside fenced code;
`**MEDIA:/x**`, inline code and "see MEDIA:/x" stay text.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

__all__ = ["BLOCKED_KEY", "blocked_directives", "refusal_of"]

BLOCKED_KEY: Final = "blockedReason"
"""The attachment field that carries why a directive is not loaded (the UI's own)."""

_DIRECTIVE: Final = re.compile(r"^ {0,3}media:", re.IGNORECASE)
_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SCHEME: Final = re.compile(r"^([a-z][a-z0-9+.-]*):", re.IGNORECASE)
_WINDOWS_DRIVE: Final = re.compile(r"^[a-z]:[\\/]", re.IGNORECASE)
_MAX_LABEL: Final = 200
_KINDS: Final = ("image", "audio", "video")


def refusal_of(reference: str) -> str:
    """Why a reference the parser kept as text is not loaded, in people's words."""
    lowered = reference.lower()
    if not reference:
        return "no media reference after MEDIA:"
    if lowered.startswith("https://"):
        return "remote media blocked by the media policy"
    if lowered.startswith("http://"):
        return "plain http media is not loaded"
    scheme = _SCHEME.match(reference)
    if scheme and not _WINDOWS_DRIVE.match(reference):
        return f"{scheme.group(1).lower()}: media is not loaded"
    if not reference.startswith(("/", "~")) and not _WINDOWS_DRIVE.match(reference):
        return "not a URL or an absolute path"
    return "not a media reference the UI loads"


def _reference(line: str) -> str:
    """The payload of a directive line: after `MEDIA:`, unquoted."""
    payload = line.strip()[len("MEDIA:") :].strip()
    if len(payload) >= 2 and payload[0] == payload[-1] and payload[0] in "`\"'":
        payload = payload[1:-1].strip()
    return payload


def _kind(reference: str) -> str:
    base = reference.split("?", 1)[0].split("#", 1)[0]
    guessed, _ = mimetypes.guess_type(base, strict=False)
    family = guessed.split("/", 1)[0] if guessed else ""
    return family if family in _KINDS else "document"


def _blocked(reference: str) -> dict[str, Any]:
    label = reference if len(reference) <= _MAX_LABEL else reference[: _MAX_LABEL - 1] + "…"
    attachment = {"url": reference, "kind": _kind(reference), "label": label or "MEDIA:"}
    return {"type": "attachment", "attachment": {**attachment, BLOCKED_KEY: refusal_of(reference)}}


def _split(text: str) -> Iterator[dict[str, Any]]:
    """A text item's runs of text and its directive lines as blocked attachments."""
    kept: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
        elif opening:
            fence = opening.group(1)
        elif _DIRECTIVE.match(line):
            if "".join(kept).strip():
                yield {"type": "text", "text": "\n".join(kept)}
            kept = []
            yield _blocked(_reference(line))
            continue
        kept.append(line)
    if "".join(kept).strip():
        yield {"type": "text", "text": "\n".join(kept)}


def blocked_directives(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Render items with each `MEDIA:` line left in their text turned into a blocked item."""
    out: list[dict[str, Any]] = []
    for item in items:
        text = item.get("text")
        if item.get("type") == "text" and isinstance(text, str) and "media:" in text.lower():
            out.extend(_split(text))
        else:
            out.append(dict(item))
    return out
