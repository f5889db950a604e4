"""The quick index embedded in the `exec` description (spec §8.1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..._lazy import value_class
from .._names import locale_key

__all__ = ["IndexLine", "format_quick_index"]

MAX_INDEX_CHARS: Final = 8_000
HEADING: Final = (
    "Enabled async tool globals (descriptions are intentionally deferred):\n"
    "Each line is `callableName input -> output`; `-> ?` means unknown output."
)


@value_class
class IndexLine:
    """One binding as the index shows it."""

    callable_name: str
    input: str
    output: str | None


def _footer(included: int, total: int) -> str:
    omitted = total - included
    if omitted > 0:
        return (
            f"{omitted} additional tools omitted from this prompt index. "
            "Use catalog.search(query); results are callable."
        )
    return "Call these globals directly; use catalog.search(query) when lookup is ambiguous."


def _render(lines: Sequence[str], total: int) -> str:
    return "\n".join([HEADING, *lines, "", _footer(len(lines), total)])


def format_quick_index(entries: Sequence[IndexLine], *, max_chars: int = MAX_INDEX_CHARS) -> str:
    """Render the index: tools with an output hint first, each group by callable name.

    When the full index exceeds `max_chars`, lines are packed greedily in order, skipping any
    line that does not fit, and the footer counts the omissions. An empty catalog gives `""`.
    """
    ordered = sorted(entries, key=lambda e: (e.output is None, locale_key(e.callable_name)))
    lines = [f"- {e.callable_name} {e.input or 'unknown'} -> {e.output or '?'}" for e in ordered]
    if not lines:
        return ""
    full = _render(lines, len(lines))
    if len(full) <= max_chars:
        return full
    included: list[str] = []
    used = 0
    for line in lines:
        candidate = used + 1 + len(line)
        size = len(HEADING) + candidate + 2 + len(_footer(len(included) + 1, len(lines)))
        if size <= max_chars:
            included.append(line)
            used = candidate
    return _render(included, len(lines))
