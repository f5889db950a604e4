"""The realm guard of widget and MCP App documents: WebRTC removed before the app's code runs.

Threat model: the app's code is hostile and WebRTC sends UDP to any host and port, past the
documents' `connect-src 'none'` (Chromium does not enforce CSP's `webrtc` directive). So the
canvas host serves every widget and MCP App document with `widget_assets/realm.js` as its first
script, which deletes every `RTC*` interface from the realm, and with a policy that requires
Trusted Types (`REALM_POLICY`), so the guard's `default` policy sees every HTML string the app
turns into markup and refuses frames: a `srcdoc` frame is the one way to run the app's script
in a fresh realm that still has WebRTC. Limits: a frame the app's static markup holds exists
until the guard's observer removes it (before the parser runs the next script).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Final

__all__ = ["REALM_POLICY", "REALM_SCRIPT", "with_realm_guard", "without_frames"]

REALM_SCRIPT: Final = (Path(__file__).with_name("widget_assets") / "realm.js").read_text("utf-8")
REALM_POLICY: Final = "require-trusted-types-for 'script'; trusted-types default"
_DOCTYPE: Final = re.compile(
    rb"\A(?:\xef\xbb\xbf)?(?:\s|<!--.*?-->)*<!doctype[^>]*>", re.IGNORECASE | re.DOTALL
)
_FRAMES: Final = frozenset(
    {"iframe", "frame", "frameset", "object", "embed", "portal", "fencedframe"}
)
_BLOCKED: Final = "blocked-"


class _FrameFinder(HTMLParser):
    """The offsets of the start tags of frame elements, as the browser's tokenizer reads them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, int]] = []  # line (1-based), column of each `<`

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _FRAMES:
            self.found.append(self.getpos())

    handle_startendtag = handle_starttag


def without_frames(document: str) -> str:
    """`document` with every frame element's start tag renamed (`<iframe` becomes
    `<blocked-iframe`, an unknown element that loads nothing).

    Chromium opens a TCP connection to a frame's URL before `frame-src 'none'` refuses the
    navigation, so frames in an app's static markup are never created at all (the realm guard
    refuses the ones a script would make)."""
    finder = _FrameFinder()
    finder.feed(document)
    finder.close()
    if not finder.found:
        return document
    starts = [0] + [at + 1 for at, char in enumerate(document) if char == "\n"]
    out: list[str] = []
    last = 0
    for line, column in finder.found:
        at = starts[line - 1] + column + 1  # after the `<`
        out += [document[last:at], _BLOCKED]
        last = at
    return "".join([*out, document[last:]])


def with_realm_guard(document: bytes) -> bytes:
    """`document` with the guard as its first script (after the doctype, which keeps the
    document out of quirks mode) and no frame in its markup (`without_frames`)."""
    tag = b"<script>\n" + REALM_SCRIPT.encode("utf-8") + b"</script>\n"
    document = without_frames(document.decode("utf-8", "replace")).encode("utf-8")
    found = _DOCTYPE.match(document)
    cut = found.end() if found else 0
    return document[:cut] + tag + document[cut:]
