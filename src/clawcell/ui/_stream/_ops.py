"""The page operations the server sends (`static/stream.js` applies them)."""

from __future__ import annotations

from typing import Literal, TypedDict

__all__ = ["Op"]


class Op(TypedDict, total=False):
    """One page operation (`append`/`before`/`replace` take `html`, `text` takes `text`;
    `fold` closes a disclosure and sets its summary to `text`; `remove` drops the target)."""

    op: Literal["append", "before", "replace", "remove", "text", "fold"]
    target: str
    html: str
    text: str
    keepOpen: bool
