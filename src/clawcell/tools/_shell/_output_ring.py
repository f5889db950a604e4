"""`OutputRing`: the bounded text buffer a shell session keeps for one output stream.

It keeps the last `capacity` characters and counts everything ever written, so a reader that
holds an absolute offset (a `poll` cursor, a `log` offset) knows when the text it asks for was
dropped, instead of silently reading something else.
"""

from __future__ import annotations

import threading

from ..._lazy import value_class

__all__ = ["OutputRing", "Slice"]


@value_class
class Slice:
    """Text read from a ring.

    Attributes:
        text: The characters read.
        start: Absolute offset of the first character returned.
        end: Absolute offset just past the last character returned (the next cursor).
        dropped: Characters between the asked offset and `start` that the ring no longer holds.
    """

    text: str
    start: int
    end: int
    dropped: int


class OutputRing:
    """The last `capacity` characters of a stream, thread-safe, with absolute offsets."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._text = ""
        self._written = 0
        self._lines = 0
        self._lock = threading.Lock()

    def append(self, text: str) -> None:
        """Add `text`; the oldest characters fall out past `capacity`."""
        if not text:
            return
        with self._lock:
            self._written += len(text)
            self._lines += text.count("\n")
            self._text = (self._text + text)[-self.capacity :]

    @property
    def written(self) -> int:
        """Characters ever written (the absolute offset of the end)."""
        with self._lock:
            return self._written

    @property
    def lines(self) -> int:
        """Newlines ever written."""
        with self._lock:
            return self._lines

    @property
    def truncated(self) -> bool:
        """Whether some written characters are no longer held."""
        with self._lock:
            return self._written > len(self._text)

    def read(self, offset: int = 0, limit: int | None = None) -> Slice:
        """Up to `limit` characters from absolute `offset` (clamped to what is held)."""
        with self._lock:
            first = self._written - len(self._text)
            start = min(max(offset, first), self._written)
            stop = self._written if limit is None else min(self._written, start + max(limit, 0))
            text = self._text[start - first : stop - first]
            return Slice(text=text, start=start, end=stop, dropped=max(0, start - max(offset, 0)))

    def tail(self, chars: int) -> str:
        """The last `chars` characters held."""
        with self._lock:
            return self._text[-chars:] if chars > 0 else ""
