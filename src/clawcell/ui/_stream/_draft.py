"""The streamed draft without raw directives: `DraftFilter` turns a reply's text deltas into the
text the page may show at once and placeholders for what the finished reply will render.

While a reply streams, the page shows its text as it comes (`TurnStream`); the Markdown and the
rich output protocol (`clawcell.reply`) are applied once, when the reply is complete. Raw
directives would show in between, so the draft shows instead:

* a `MEDIA:` line (a whole line, any case, outside a code fence): a placeholder
  `attaching <name>…`, named after the last segment of its path;
* an `[embed …]` shortcode: `embedding <title>…` (`a canvas` without a title); a block embed's
  body, up to `[/embed]`, is not shown;
* a reply or voice tag (`[[reply_to_current]]`, `[[reply_to:<id>]]`, `[[audio_as_voice]]`):
  nothing (a line that held only tags goes entirely); other `[[…]]` text stays.

Text that could still become one of these — a line so far a prefix of `MEDIA:`, a `[` that may
open a tag or an embed, a first line that may be the silent `NO_REPLY` — is held back until it
is decided (at the latest when its line ends), so no raw directive ever reaches the page, and
ordinary text goes out at once. Inside a fenced code block every line is text. The rendered
reply replaces the draft when it is complete, whatever the draft showed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal
from urllib.parse import unquote, urlsplit

from ...reply import strip_inline_directive_tags_for_display

__all__ = ["DraftFilter", "DraftPiece", "Placeholder"]

_MEDIA: Final = "media:"
_EMBED: Final = "[embed"
_SILENT: Final = "NO_REPLY"
_MEDIA_LINE: Final = re.compile(r"[ \t]*media:[ \t]*`?([^`\n]*)`?[ \t]*\Z", re.IGNORECASE)
_EMBED_OPEN: Final = re.compile(r"\[embed[\s\]/]", re.IGNORECASE)
_EMBED_CLOSE: Final = re.compile(r"\[/embed\]", re.IGNORECASE)
_TITLE: Final = re.compile(r"""\btitle\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_FENCE: Final = re.compile(r"[ \t]{0,3}(```|~~~)")
_NAME_CHARS: Final = 80
_HEAD: Final = 32
_MAX_HELD: Final = 16_384


@dataclass(frozen=True)
class Placeholder:
    """What stands in the draft for a directive until the reply is rendered."""

    kind: Literal["media", "embed"]
    label: str


DraftPiece = str | Placeholder
"""Text the draft shows as it is, or a `Placeholder`."""


@dataclass
class DraftFilter:
    """Feeds a reply's text deltas; each `feed` returns what the draft may show now.

    A delta costs what its own length does, however long the draft or its line: the filter
    keeps only the line's first `_HEAD` characters (enough to classify it) and the text it
    holds back, in pieces; held text past `_MAX_HELD` that is not a `MEDIA:` line or an
    embed's body goes out as it is (no tag or shortcode is that long).
    """

    head: str = ""
    """The current line's first characters."""
    held: list[str] = field(default_factory=list[str])
    """The current line's text not sent yet, in pieces."""
    held_chars: int = 0
    sent: bool = False
    """Whether some of the current line went out."""
    visible: bool = False
    """Whether some of it that went out was more than white space."""
    tagged: bool = False
    """Whether a tag was dropped from what went out of it."""
    fence: str | None = None
    """The fence (```` ``` ```` or `~~~`) of the code block the text is in, if any."""
    in_embed: bool = False
    """Inside a block embed's body (until `[/embed]`)."""
    started: bool = False
    """Whether any text went out (the silent token can only be the first)."""
    _out: list[DraftPiece] = field(default_factory=list[DraftPiece])

    def feed(self, text: str) -> list[DraftPiece]:
        """The pieces `text` (the next delta) lets the draft show."""
        *done, last = text.split("\n")
        for piece in done:
            self._add(piece)
            self._finish()
        self._add(last)
        self._partial()
        out, self._out = self._out, []
        return [piece for piece in out if piece != ""]

    def _add(self, piece: str) -> None:
        if len(self.head) < _HEAD:
            self.head += piece[: _HEAD - len(self.head)]
        if piece:
            self.held.append(piece)
            self.held_chars += len(piece)

    def _take(self) -> str:
        """The held text, joined (and no longer held)."""
        text = "".join(self.held)
        self.held, self.held_chars = [], 0
        return text

    # -- a finished line ----------------------------------------------------------------

    def _finish(self) -> None:
        rest, sent, visible, head = self._take(), self.sent, self.visible, self.head
        tagged = self.tagged
        self.head, self.sent, self.visible, self.tagged = "", False, False, False
        if self.in_embed:
            self.in_embed = _EMBED_CLOSE.search(rest) is None
            return
        fence = _FENCE.match(head)
        if self.fence is not None or fence is not None:
            if fence is not None and (self.fence is None or fence.group(1) == self.fence):
                self.fence = None if self.fence is not None else fence.group(1)
            self._text(rest + "\n")
            return
        media = _MEDIA_LINE.match(rest) if not sent else None
        if media is not None:
            self._out.append(Placeholder("media", f"attaching {_media_name(media.group(1))}…"))
            return
        shown, placed = self._inline(rest)
        tagged = tagged or _without_tags(rest) != rest
        if shown.strip() or visible or not (placed or tagged):  # a line of only tags goes
            self._text(shown + "\n")

    def _inline(self, text: str) -> tuple[str, bool]:
        """`text` (the end of a line) without tags, and whether an embed in it became a
        placeholder (the text before it has gone out then)."""
        opening = _EMBED_OPEN.search(text)
        if opening is None:
            return _without_tags(text), False
        self._text(_without_tags(text[: opening.start()]))
        tail = text[opening.start() :]
        title = _TITLE.search(tail)
        name = (title.group(1) or title.group(2) or "").strip() if title else ""
        label = f"embedding {name[:_NAME_CHARS] or 'a canvas'}…"
        self._out.append(Placeholder("embed", label))
        end = tail.find("]")
        self_closing = end > 0 and tail[end - 1] == "/"
        closed = _EMBED_CLOSE.search(tail)
        self.in_embed = end > 0 and not self_closing and closed is None
        after = tail[end + 1 :] if self_closing else tail[closed.end() :] if closed else ""
        return _without_tags(after), True

    # -- the line still streaming ----------------------------------------------------------

    def _partial(self) -> None:
        if self.in_embed or not self.held:
            return
        if self.fence is not None:
            self._send(self._take())
            return
        if not self.sent and _may_be_directive_line(self.head, first=not self.started):
            return
        text = self._take()
        safe = _safe_end(text) if len(text) <= _MAX_HELD else len(text)
        shown = _without_tags(text[:safe])
        self.tagged = self.tagged or len(shown) != safe
        self._send(shown)
        if safe < len(text):
            self.held, self.held_chars = [text[safe:]], len(text) - safe

    def _send(self, text: str) -> None:
        self.sent = True
        self.visible = self.visible or bool(text.strip())
        self._text(text)

    def _text(self, text: str) -> None:
        if not self.started:  # the reply's leading space (a tag's, say) is trimmed as it will be
            text = text.lstrip()
        if text:
            self.started = True
            self._out.append(text)


def _may_be_directive_line(line: str, *, first: bool) -> bool:
    """Whether the line so far may still become a `MEDIA:` line, a fence or the silent token."""
    head = line.lstrip(" \t").lower()
    if _MEDIA.startswith(head) or head.startswith(_MEDIA):
        return True
    if first and line.strip() and _SILENT.startswith(line.strip()):
        return True
    stripped = line.lstrip(" ")
    return len(stripped) < 3 and stripped != "" and set(stripped) <= {"`", "~"}


def _safe_end(line: str) -> int:
    """How far `line` may go out: up to a `[` that may still open a tag or an embed; a
    complete `[[…]]` goes out (without the tag) once its `]]` has come."""
    index = 0
    while (bracket := line.find("[", index)) >= 0:
        rest = line[bracket:]
        if rest.startswith("[["):
            close = rest.find("]]")
            if close < 0:
                return bracket
            index = bracket + close + 2
            continue
        lowered = rest.lower()
        if lowered.startswith(_EMBED) or _EMBED.startswith(lowered):
            return bracket
        index = bracket + 1
    return len(line)


def _without_tags(text: str) -> str:
    return strip_inline_directive_tags_for_display(text)["text"] if "[[" in text else text


def _media_name(source: str) -> str:
    """The last path segment of a media URL or path (`a file` when it has none)."""
    path = urlsplit(source.strip()).path if "://" in source else source.strip()
    name = unquote(path.rstrip("/").rsplit("/", 1)[-1])
    return name[:_NAME_CHARS] or "a file"
