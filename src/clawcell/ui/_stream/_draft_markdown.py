"""The streaming draft as Markdown: `DraftMarkdown` turns the draft's text into page operations.

The draft's text (what `DraftFilter` lets the page show) is cut into blocks as it arrives:

* **Finished blocks.** Text up to a blank line outside a code fence cannot change any more
  (to a draft's eyes: a loose list or a link defined further down may still render a little
  differently in the finished reply, which replaces the draft anyway). It is rendered once,
  with the reply's own renderer (`render_markdown`: sanitized the same way), and inserted
  before the draft's tail.
* **The tail.** The text since the last finished block is rendered again on every call
  (the server coalesces deltas, so at most every 50 ms) and replaces the tail element. It
  is kept at most `TAIL_CHARS` long: a longer one gives up its start as a block, cut at a
  line end, else at a space, else anywhere, so each call costs what its delta and a bounded
  tail do, never what the draft so far does (a table cut this way goes on under its header
  again, shown without it).
* **An unfinished code fence** is a code block whose lines go to the page as plain text as
  they arrive (the page appends text, it does not re-render), so a fence of any length is
  readable at once and costs what its text does; when the fence closes, the block is
  replaced once by its highlighted rendering.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from ._ops import Op

__all__ = ["TAIL_CHARS", "DraftMarkdown"]

TAIL_CHARS: Final = 2_000
"""The most Markdown the tail holds (and so the most rendered again per call)."""
_HEAD: Final = 64
_FENCE_OPEN: Final = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_RENDERED_FENCE_CHARS: Final = 50_000
"""A closed fence up to this long is rendered again, highlighted (the renderer highlights no
longer one); a longer one stays as it streamed until the reply replaces the draft."""
_FENCE_SHELL: Final = (
    '<div class="code-block draft-code" id="{id}"><pre tabindex="0"><code '
    'class="draft-text" id="{id}-text"></code></pre></div>'
)


@dataclass(kw_only=True)
class DraftMarkdown:
    """Feeds the draft's text; each call returns the operations that show it as Markdown."""

    draft: str
    """The draft element's id (its tail is `<draft>-tail`)."""
    render: Callable[[str], str]
    """Markdown source to sanitized HTML."""
    pending: str = ""
    """The text since the last finished block (the tail's source; at most `TAIL_CHARS`)."""
    shown: str = ""
    """The tail's source as the page shows it."""
    head: str = ""
    """The current line's first characters."""
    blank: bool = True
    """Whether the current line so far is only spaces and tabs."""
    fence: str | None = None
    """The run of backticks or tildes that opened the fence the text is in, if any."""
    fence_text: list[str] = field(default_factory=list[str])
    """The open fence's source so far (while it is short enough to render again)."""
    held: str = ""
    """The start of a line in a fence that may still close it (not sent yet)."""
    fence_chars: int = 0
    fences: int = 0
    line_start: int = 0
    """Where the current line starts in `pending` (0 when its start was cut off)."""
    _ops: list[Op] = field(default_factory=list[Op])

    @property
    def tail(self) -> str:
        """The id of the element that shows the tail."""
        return f"{self.draft}-tail"

    @property
    def _code(self) -> str:
        return f"{self.draft}-code-{self.fences}"

    def feed(self, text: str) -> list[Op]:
        """The operations that show `text` (the next piece of the draft)."""
        *lines, last = text.split("\n")
        for line in lines:
            self._line(line, complete=True)
        if last:
            self._line(last, complete=False)
        return self._flush()

    def block(self, html: str) -> list[Op]:
        """Everything so far as finished blocks, then `html` (a placeholder) after them."""
        if self.fence is None:
            self._commit(len(self.pending))
        else:
            self._send_code(self.held)
            self.held = ""
        self._ops.append({"op": "before", "target": self.tail, "html": html})
        return self._flush()

    # -- lines ------------------------------------------------------------------------------

    def _line(self, piece: str, *, complete: bool) -> None:
        if len(self.head) < _HEAD:
            self.head += piece[: _HEAD - len(self.head)]
        self.blank = self.blank and not piece.strip(" \t")
        if self.fence is not None:
            self._fence_line(piece, complete=complete)
        else:
            self.pending += piece + ("\n" if complete else "")
            if complete:
                self._ended()
                self.line_start = len(self.pending)
            self._bound()
        if complete:
            self.head, self.blank = "", True

    def _ended(self) -> None:
        """A line outside a fence ended (it starts at `line_start` in `pending`)."""
        opening = _FENCE_OPEN.fullmatch(self.head)
        if self.blank:
            self._commit(len(self.pending))
        elif opening and not ("`" in opening.group(1) and "`" in opening.group(2)):
            self._commit(self.line_start)
            self.fence, self.fence_text = opening.group(1), [self.pending]
            self.fence_chars, self.fences = len(self.pending), self.fences + 1
            self.pending = ""
            html = _FENCE_SHELL.format(id=self._code)
            self._ops.append({"op": "before", "target": self.tail, "html": html})

    def _closes(self, *, complete: bool) -> bool:
        """Whether the current line closes the fence (or, unfinished, still may)."""
        fence = self.fence or ""
        stripped = self.head.lstrip(" ")
        if len(self.head) >= _HEAD or len(self.head) - len(stripped) > 3:
            return False
        run = stripped.rstrip(" \t")
        if run.strip(fence[0]) or (run != stripped and len(run) < len(fence)):
            return False  # other text; or white space after too short a run
        return len(run) >= len(fence) or not complete

    def _fence_line(self, piece: str, *, complete: bool) -> None:
        closes = self._closes(complete=complete)
        if not complete:
            if closes:
                self.held += piece
            else:
                self._send_code(self.held + piece)
                self.held = ""
            return
        line, self.held = self.held + piece + "\n", ""
        if not closes:
            self._send_code(line)
            return
        source, self.fence = "".join(self.fence_text) + line, None
        if self.fence_chars <= _RENDERED_FENCE_CHARS:  # longer: nothing to highlight
            self._ops.append({"op": "replace", "target": self._code, "html": self.render(source)})
        self.fence_text = []

    def _send_code(self, text: str) -> None:
        if text:
            self.fence_chars += len(text)
            if self.fence_chars <= _RENDERED_FENCE_CHARS:
                self.fence_text.append(text)
            self._ops.append({"op": "text", "target": f"{self._code}-text", "text": text})

    # -- blocks -----------------------------------------------------------------------------

    def _bound(self) -> None:
        """Cut finished blocks off a tail longer than `TAIL_CHARS`."""
        while len(self.pending) > TAIL_CHARS:
            window = self.pending[:TAIL_CHARS]
            cut = max(window.rfind("\n"), window.rfind(" "))
            self._commit(cut + 1 if cut >= TAIL_CHARS // 2 else TAIL_CHARS)

    def _commit(self, end: int) -> None:
        """`pending[:end]` becomes a finished block."""
        block, self.pending = self.pending[:end], self.pending[end:]
        self.line_start = max(self.line_start - end, 0)
        if block.strip():
            self._ops.append({"op": "before", "target": self.tail, "html": self.render(block)})

    def _flush(self) -> list[Op]:
        if self.pending != self.shown:
            self.shown = self.pending
            html = f'<div class="draft-md-tail" id="{self.tail}">{self.render(self.pending)}</div>'
            self._ops.append({"op": "replace", "target": self.tail, "html": html})
        ops, self._ops = _grouped(self._ops, self.tail), []
        return ops


def _grouped(ops: list[Op], tail: str) -> list[Op]:
    """`ops` with each run of blocks inserted before the tail as one `draft-block` element (a
    page lays out one block a flush near the viewport only, not every paragraph of it)."""
    out: list[Op] = []
    run: list[str] = []
    for op in [*ops, None]:
        if op is not None and op.get("op") == "before" and op.get("target") == tail:
            run.append(op.get("html", ""))
            continue
        if run:
            html = f'<div class="draft-block">{"".join(run)}</div>'
            out.append({"op": "before", "target": tail, "html": html})
            run = []
        if op is not None:
            out.append(op)
    return out
