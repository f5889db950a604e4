"""Narrowing a browser observation: `query` lines, then `maxChars`, then the untrusted wrapper."""

from __future__ import annotations

from typing import Any

from ..._lazy import value_class
from ...envelope import wrap_untrusted

__all__ = ["Observation", "narrow"]


@value_class
class Observation:
    """What a `snapshot` or `text` action returns about its text."""

    text: str
    truncated: bool
    total_chars: int
    returned_chars: int
    matches: int | None

    def fields(self) -> dict[str, Any]:
        """The observation's result fields (camelCase)."""
        out: dict[str, Any] = {
            "text": self.text,
            "truncated": self.truncated,
            "totalChars": self.total_chars,
            "returnedChars": self.returned_chars,
        }
        if self.matches is not None:
            out["matches"] = self.matches
        return out


def narrow(raw: str, *, query: str | None, max_chars: int) -> Observation:
    """Keep the lines holding every `query` token (any case), cut to `max_chars`, wrap.

    `totalChars` counts the text after the query filter and before the cut, so
    `truncated` and `returnedChars` say exactly what the cut removed.
    """
    matches: int | None = None
    text = raw
    if query is not None and query.strip():
        tokens = query.lower().split()
        kept = [line for line in raw.splitlines() if all(t in line.lower() for t in tokens)]
        matches = len(kept)
        text = "\n".join(kept)
    cut = text[:max_chars]
    return Observation(
        text=wrap_untrusted(cut),
        truncated=len(cut) < len(text),
        total_chars=len(text),
        returned_chars=len(cut),
        matches=matches,
    )
