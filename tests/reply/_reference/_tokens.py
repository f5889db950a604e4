"""Control tokens in reply text: the silent `NO_REPLY` and the heartbeat `HEARTBEAT_OK`."""

from __future__ import annotations

import json
import re
from typing import Final, Literal, TypedDict

from ._text import JS_SPACE_CLASS, as_record, js_trim, js_trim_end, require_str, utf16_len

__all__ = [
    "HEARTBEAT_TOKEN",
    "SILENT_REPLY_TOKEN",
    "HeartbeatStrip",
    "is_silent_reply_payload_text",
    "is_silent_reply_text",
    "strip_heartbeat_token",
]

SILENT_REPLY_TOKEN: Final = "NO_REPLY"
HEARTBEAT_TOKEN: Final = "HEARTBEAT_OK"
DEFAULT_MAX_ACK_CHARS: Final = 300

_HTML_TAG: Final = re.compile(r"<[^>]*>")
_NBSP_ENTITY: Final = re.compile(r"&nbsp;", re.IGNORECASE)
_EDGE_MARKUP: Final = re.compile(r"^[*`~_]+|[*`~_]+$")
_TOKEN_AT_END: Final = re.compile(re.escape(HEARTBEAT_TOKEN) + r"[^0-9A-Za-z_]{0,4}$")
_SPACE_RUNS: Final = re.compile(f"[{JS_SPACE_CLASS}]+")


class HeartbeatStrip(TypedDict):
    """Result of `strip_heartbeat_token`."""

    shouldSkip: bool
    text: str
    didStrip: bool


def is_silent_reply_text(text: str | None, token: str | None = None) -> bool:
    """Whether the whole text is the silent token (default `NO_REPLY`), any case."""
    if not text:
        return False
    word = token or SILENT_REPLY_TOKEN
    return js_trim(require_str(text, "text")).lower() == word.lower()


def is_silent_reply_payload_text(text: str | None, token: str | None = None) -> bool:
    """`is_silent_reply_text`, or a JSON object `{"action": "<token>"}` and nothing else."""
    if not text:
        return False
    if is_silent_reply_text(text, token):
        return True
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return False
    record = as_record(parsed)
    if record is None or list(record) != ["action"]:
        return False
    action = record["action"]
    return isinstance(action, str) and is_silent_reply_text(action, token)


def _strip_edges(text: str) -> tuple[str, bool]:
    rest = js_trim(text)
    stripped = False
    while rest:
        if rest.startswith(HEARTBEAT_TOKEN):
            rest = js_trim(rest[len(HEARTBEAT_TOKEN) :])
            stripped = True
            continue
        tail = _TOKEN_AT_END.search(rest)
        if tail is None:
            break
        after = rest[tail.start() + len(HEARTBEAT_TOKEN) :]
        rest = js_trim(js_trim_end(rest[: tail.start()]) + after)
        stripped = True
    return js_trim(_SPACE_RUNS.sub(" ", rest)), stripped


def _without_markup(text: str) -> str:
    plain = _NBSP_ENTITY.sub(" ", _HTML_TAG.sub(" ", text))
    return _EDGE_MARKUP.sub("", js_trim(plain))


def strip_heartbeat_token(
    raw: str | None,
    *,
    mode: Literal["message", "heartbeat"] = "message",
    max_ack_chars: int | None = None,
) -> HeartbeatStrip:
    """Strip `HEARTBEAT_OK` at the start or end of a reply and say whether to skip it.

    In `heartbeat` mode a short remainder (at most `max_ack_chars`, default 300) is an
    acknowledgement and the reply is skipped as well.
    """
    if raw is None or not js_trim(require_str(raw, "raw")):
        return {"shouldSkip": True, "text": "", "didStrip": False}
    trimmed = js_trim(raw)
    plain = _without_markup(trimmed)
    if HEARTBEAT_TOKEN not in trimmed and HEARTBEAT_TOKEN not in plain:
        return {"shouldSkip": False, "text": trimmed, "didStrip": False}
    text, stripped = _strip_edges(trimmed)
    if not (stripped and text):
        text, stripped = _strip_edges(plain)
    if not stripped:
        return {"shouldSkip": False, "text": trimmed, "didStrip": False}
    limit = DEFAULT_MAX_ACK_CHARS if max_ack_chars is None else max_ack_chars
    if not text or (mode == "heartbeat" and utf16_len(text) <= limit):
        return {"shouldSkip": True, "text": "", "didStrip": True}
    return {"shouldSkip": False, "text": text, "didStrip": True}
