"""Session ids: what the store and the decision ledger accept as one.

A session's decisions and audit trail live under derived ids (`<session>\\x1fapprovals`), so
a session id with control characters could name another session's ledger; such ids are
refused wherever a session id comes in.

Every row a package keeps for one session (its live turn row, play runs, ledgers, sub-agent
records, …) is a derived id `<session>\\x1f<what>`, and every store-wide row (an index of all
sessions' running turns, the workers' heartbeats) begins with the separator itself. Since no
session id is empty or holds a control character, the ids from `derived_bounds(session)[0]`
up to (not including) `[1]`, in code point order, are exactly that session's derived rows:
neither another session's (`ab` is not derived from `a`) nor a store-wide one.
"""

from __future__ import annotations

import re
from typing import Final

from .errors import ConfigurationError

__all__ = ["DERIVED_SEPARATOR", "check_session_id", "derived_bounds"]

_REFUSED: Final = "[\x00-\x1f\x7f-\x9f\ud800-\udfff]"
"""Unicode's control characters (category `Cc`: U+0000–001F, U+007F–009F) and surrogates
(`Cs`), in one search instead of a category lookup per character. Kept as text: a class with
ranges past U+00FF costs `re` about a millisecond to compile (1% of a process's cold start),
and an ASCII id (nearly every one) is checked without it (`check_session_id`)."""

DERIVED_SEPARATOR = "\x1f"
"""What joins a session id and the name of one of its derived rows (`<session>\\x1flive`)."""


def check_session_id(session_id: object) -> str:
    """A session id: a non-empty string without control characters or lone surrogates.

    Raises:
        ConfigurationError: naming the id and the first offending character.
    """
    if not isinstance(session_id, str) or not session_id:
        raise ConfigurationError(f"`session_id` must be a non-empty string, got {session_id!r}.")
    if session_id.isascii() and session_id.isprintable():
        return session_id  # the only ASCII characters `isprintable` refuses are `Cc`'s
    refused = re.search(_REFUSED, session_id)  # compiled on first use, then `re`'s cache
    if refused is not None:
        raise ConfigurationError(
            f"`session_id` {session_id!r} contains the control character {refused[0]!r}; use "
            "printable characters only (ids such as `user-42` or a UUID)."
        )
    return session_id


def derived_bounds(session_id: str) -> tuple[str, str]:
    """The half-open range of ids holding exactly `session_id`'s derived rows: every id `d`
    with `low <= d < high` in code point order (also UTF-8 byte order, as SQLite's default
    collation and PostgreSQL's `COLLATE "C"` compare) begins `<session>\\x1f`, and no other."""
    low = check_session_id(session_id) + DERIVED_SEPARATOR
    return low, session_id + chr(ord(DERIVED_SEPARATOR) + 1)
