"""Control tokens in reply text: the silent `NO_REPLY` and the heartbeat `HEARTBEAT_OK`."""

from __future__ import annotations

import functools
import json
import re
import sys
import unicodedata
from typing import Final, Literal, TypedDict

from ._text import JS_SPACE, JS_SPACE_CLASS, as_record, js_trim, js_trim_end, require_str, utf16_len

__all__ = [
    "HEARTBEAT_TOKEN",
    "SILENT_REPLY_TOKEN",
    "HeartbeatStrip",
    "is_silent_reply_directive_text",
    "is_silent_reply_payload_text",
    "is_silent_reply_text",
    "strip_heartbeat_token",
]

SILENT_REPLY_TOKEN: Final = "NO_REPLY"
HEARTBEAT_TOKEN: Final = "HEARTBEAT_OK"
DEFAULT_MAX_ACK_CHARS: Final = 300

_NBSP_ENTITY: Final = re.compile(r"&nbsp;", re.IGNORECASE)
_EDGE_MARKUP: Final = "*`~_"
_TOKEN_AT_END: Final = re.compile(re.escape(HEARTBEAT_TOKEN) + r"[^0-9A-Za-z_]{0,4}$")
_TOKEN_LENGTH: Final = len(HEARTBEAT_TOKEN)
_END_WINDOW: Final = _TOKEN_LENGTH + 4
_SPACE_SET: Final = frozenset(JS_SPACE)
_SPACE_RUNS: Final = re.compile(f"[{JS_SPACE_CLASS}]+")
_JSON_SPACE: Final = " \t\n\r"


class HeartbeatStrip(TypedDict):
    """Result of `strip_heartbeat_token`."""

    shouldSkip: bool
    text: str
    didStrip: bool


def is_silent_reply_text(text: str | None, token: str | None = None) -> bool:
    """Whether the whole text is the silent token (default `NO_REPLY`), any case."""
    if not text:
        return False
    expected = (token or SILENT_REPLY_TOKEN).lower()
    trimmed = js_trim(require_str(text, "text"))
    # Lower-casing never shortens a string, so a longer text cannot equal the token.
    return len(trimmed) <= len(expected) and trimmed.lower() == expected


def is_silent_reply_payload_text(text: str | None, token: str | None = None) -> bool:
    """`is_silent_reply_text`, or a JSON object `{"action": "<token>"}` and nothing else."""
    if not text:
        return False
    if is_silent_reply_text(text, token):
        return True
    if not text.lstrip(_JSON_SPACE).startswith("{"):
        return False  # `json.loads` would give no object (or fail), so skip the parse
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return False
    record = as_record(parsed)
    if record is None or list(record) != ["action"]:
        return False
    action = record["action"]
    return isinstance(action, str) and is_silent_reply_text(action, token)


class _Rest:
    """`text[start:stop] + tail`: the remainder while tokens are stripped, without copying.

    Stripping one token at a time from a copied string is quadratic on `HEARTBEAT_OK` repeated
    (issue 17, R2); the remainder is therefore a window on the text plus the at most four
    punctuation characters a stripped end token leaves behind.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.start = 0
        self.stop = len(text)
        self.tail: str = ""
        self.trim()

    def trim(self) -> None:
        text = self.text
        while self.start < self.stop and text[self.start] in _SPACE_SET:
            self.start += 1
        if self.start == self.stop:
            self.tail = js_trim(self.tail)
            return
        self.tail = js_trim_end(self.tail)
        if not self.tail:
            while self.stop > self.start and text[self.stop - 1] in _SPACE_SET:
                self.stop -= 1

    def __bool__(self) -> bool:
        return self.start < self.stop or bool(self.tail)

    def strip_head(self) -> bool:
        head = self.text[self.start : min(self.stop, self.start + _TOKEN_LENGTH)] + self.tail
        if not head.startswith(HEARTBEAT_TOKEN):
            return False
        taken = min(_TOKEN_LENGTH, self.stop - self.start)
        self.start += taken
        self.tail = self.tail[_TOKEN_LENGTH - taken :]
        self.trim()
        return True

    def strip_end(self) -> bool:
        window_start = max(self.start, self.stop - _END_WINDOW)
        window = self.text[window_start : self.stop] + self.tail
        match = _TOKEN_AT_END.search(window)
        if match is None:
            return False
        # A token is longer than the tail, so it always begins in the text part.
        self.stop = window_start + match.start()
        while self.stop > self.start and self.text[self.stop - 1] in _SPACE_SET:
            self.stop -= 1
        self.tail = window[match.start() + _TOKEN_LENGTH :]
        self.trim()
        return True

    def value(self) -> str:
        return self.text[self.start : self.stop] + self.tail


def _is_edge(char: str) -> bool:
    """JavaScript `[\\s\\p{P}]`: whitespace or Unicode punctuation."""
    return char in _SPACE_SET or unicodedata.category(char).startswith("P")


@functools.cache
def _punctuation_class() -> str:
    """A regex class body of every Unicode punctuation character (computed once, on demand)."""
    return "".join(
        re.escape(chr(code))
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)).startswith("P")
    )


@functools.cache
def _silent_directive_pattern(token: str) -> re.Pattern[str]:
    word = re.escape(token)
    body = f"{word}(?:[{JS_SPACE_CLASS}]+{word})*"
    if _is_edge(token[0]) or _is_edge(token[-1]):
        # Edge characters could belong to the token: let the regex backtrack over them.
        edge = f"[{JS_SPACE_CLASS}{_punctuation_class()}]*"
        body = f"{edge}{body}{edge}"
    return re.compile(body, re.I)


def _without_edges(text: str, token: str) -> str:
    if _is_edge(token[0]) or _is_edge(token[-1]):
        return text
    start, end = 0, len(text)
    while start < end and _is_edge(text[start]):
        start += 1
    while end > start and _is_edge(text[end - 1]):
        end -= 1
    return text[start:end]


@functools.cache
def _case_free_char(token: str) -> str | None:
    """A character of `token` that no case mapping changes (`_` of `NO_REPLY`), if any.

    Its absence from a text proves the token absent without lower-casing the whole text.
    """
    return next((c for c in token if c.lower() == c == c.upper() and not c.isspace()), None)


def is_silent_reply_directive_text(text: str, token: str) -> bool:
    """The final-reply silence check: the token (repeated, any case) amid punctuation only.

    The release's `parseReplyDirectives` accepts `]] NO_REPLY`, `(no_reply)` and
    `NO_REPLY NO_REPLY`, unlike `is_silent_reply_text`; an empty token never matches.
    """
    if not token or not text:
        return False
    anchor = _case_free_char(token)
    if (anchor is not None and anchor not in text) or token.lower() not in text.lower():
        # Only a JSON object with an escaped token (`"NO\\u005fREPLY"`) could still match.
        return "{" in text and is_silent_reply_payload_text(text, token)
    core = _without_edges(text, token)
    matched = _silent_directive_pattern(token).fullmatch(core) is not None
    return matched or is_silent_reply_payload_text(text, token)


def _strip_edges(text: str) -> tuple[str, bool]:
    rest = _Rest(text)
    stripped = False
    while rest and (rest.strip_head() or rest.strip_end()):
        stripped = True
    return js_trim(_SPACE_RUNS.sub(" ", rest.value())), stripped


def _replace_html_tags(text: str) -> str:
    """`text.replace(/<[^>]*>/g, " ")` in one pass (the regex rescans on `<` without `>`)."""
    pieces: list[str] = []
    cursor = 0
    while (opening := text.find("<", cursor)) >= 0:
        closing = text.find(">", opening)
        if closing < 0:
            break
        pieces.append(text[cursor:opening])
        pieces.append(" ")
        cursor = closing + 1
    if not pieces:
        return text
    pieces.append(text[cursor:])
    return "".join(pieces)


def _without_markup(text: str) -> str:
    plain = _replace_html_tags(text)
    plain = _NBSP_ENTITY.sub(" ", plain) if "&" in plain else plain
    return js_trim(plain).lstrip(_EDGE_MARKUP).rstrip(_EDGE_MARKUP)


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
