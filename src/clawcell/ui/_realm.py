"""The realm guard of widget and MCP App documents: WebRTC removed before the app's code runs.

Threat model: the app's code is hostile and WebRTC sends UDP to any host and port, past the
documents' `connect-src 'none'` (Chromium does not enforce CSP's `webrtc` directive). So the
canvas host serves every widget and MCP App document with `widget/realm.js` as its first
script, which deletes every `RTC*` interface from the realm, and with a policy that requires
Trusted Types (`REALM_POLICY`), so the guard's `default` policy sees every HTML string the app
turns into markup and refuses frames: a `srcdoc` frame is the one way to run the app's script
in a fresh realm that still has WebRTC. Limits: a frame the app's static markup holds exists
until the guard's observer removes it (before the parser runs the next script).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

__all__ = ["REALM_POLICY", "REALM_SCRIPT", "with_realm_guard"]

REALM_SCRIPT: Final = (Path(__file__).with_name("widget") / "realm.js").read_text("utf-8")
REALM_POLICY: Final = "require-trusted-types-for 'script'; trusted-types default"
_DOCTYPE: Final = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*<!doctype[^>]*>", re.IGNORECASE)


def with_realm_guard(document: bytes) -> bytes:
    """`document` with the guard as its first script (after the doctype, which keeps the
    document out of quirks mode)."""
    tag = b"<script>\n" + REALM_SCRIPT.encode("utf-8") + b"</script>\n"
    found = _DOCTYPE.match(document)
    cut = found.end() if found else 0
    return document[:cut] + tag + document[cut:]
