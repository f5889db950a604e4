"""Session ids: what the store and the decision ledger accept as one.

A session's decisions and audit trail live under derived ids (`<session>\\x1fapprovals`), so
a session id with control characters could name another session's ledger; such ids are
refused wherever a session id comes in.
"""

from __future__ import annotations

import unicodedata

from .errors import ConfigurationError

__all__ = ["check_session_id"]


def check_session_id(session_id: object) -> str:
    """A session id: a non-empty string without control characters or lone surrogates.

    Raises:
        ConfigurationError: naming the id and the first offending character.
    """
    if not isinstance(session_id, str) or not session_id:
        raise ConfigurationError(f"`session_id` must be a non-empty string, got {session_id!r}.")
    for char in session_id:
        if unicodedata.category(char) in ("Cc", "Cs"):
            raise ConfigurationError(
                f"`session_id` {session_id!r} contains the control character {char!r}; use "
                "printable characters only (ids such as `user-42` or a UUID)."
            )
    return session_id
