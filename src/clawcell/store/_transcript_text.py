"""`transcript_text`: the text of a transcript entry, the one reading every caller shares.

A stored entry (`{"role", "content": [...], …}`, see `clawcell.agent`'s transcript) holds its
text in `{"type": "text", "text": …}` content blocks beside images, files, reasoning and tool
calls. Session titles, transcript search, the model adapters' replay, a sub-agent's reply and
the sessions tools all read that text, and read it the same way here:

* the `text` blocks, in order, joined by a newline (two blocks are two paragraphs: joined
  with nothing, the last word of one and the first of the next would run together);
* a string `content` (an entry written by hand or by an older client) is its text;
* anything else is left out: other block types, blocks that are not objects, and a
  `text` that is not a string (an entry from another writer never raises here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["transcript_text"]


def transcript_text(entry: Mapping[str, Any]) -> str:
    """The text of a transcript entry: its `text` content blocks joined by newlines.

    >>> transcript_text({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    'hi'
    """
    content = entry.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list | tuple):
        return ""
    blocks = [
        cast(Mapping[str, Any], b) for b in cast(list[Any], content) if isinstance(b, Mapping)
    ]
    return "\n".join(
        text
        for block in blocks
        if block.get("type") == "text" and isinstance(text := block.get("text"), str)
    )
