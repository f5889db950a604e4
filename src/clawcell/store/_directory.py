"""`SessionDirectory`: the sessions a person browses, with a title, a pin and an archive flag.

A role of its own, like `TranscriptSearch`: every backend (memory, SQLite, PostgreSQL) offers
it, and the Control UI's session drawer reads only it. The metadata lives on the `sessions`
row of the store that every worker shares (schema version 4 of both durable backends), so a
rename on one worker is what every other worker lists next.

* **Titles.** A session gets a default title from the text of its first user message, set by
  the same transaction that appends that message (only while it has none); `rename`
  replaces it. Titles are one line of at most `MAX_TITLE` characters. A session listed
  before this schema had titles has none (`title = ""`) and keeps showing its id until
  renamed: its first message is not re-read.
* **The list is bounded.** `session_page` returns at most `MAX_PAGE` sessions, pinned first,
  then most recently updated; `next` is an opaque keyset cursor (the last row's sort key), so
  a page stays correct while other sessions are appended to. `query` keeps the sessions
  whose title or id contains it, case-folded; it scans the `sessions` rows (one per session,
  not per message), which is cheap at the thousands of sessions a person keeps.
* **Archived** sessions are listed only when asked for (`archived=True`), never mixed in.
* **Deleting** removes the transcript, the session row and its search index rows; the
  session's stored entries, parked runs and saved results are the Code Mode state of that
  id, which a deleted chat must not leave behind, so they go too, and so do its **derived
  rows** (`<session>\\x1f…`: the turn lease, the UI's live row and play runs, the approval
  ledger and audit trail, sub-agent records, send windows), all in one transaction. Rows of
  other sessions stay, whatever their id shares with this one (`ab`, `a/sub/1` for `a`), and
  so do the store-wide rows, which begin with the separator: a package that lists sessions
  in one (the UI's running turns) takes the session out itself. An id that is no session id
  (empty, or holding a control character, as a derived row's does) raises
  `ConfigurationError`. It is the caller's job not to delete a session whose turn runs (the
  UI holds the session's turn lease while it deletes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol, runtime_checkable

from .._lazy import value_class
from ..errors import InputError
from ._transcript_text import transcript_text

__all__ = [
    "DEFAULT_TITLE_CHARS",
    "MAX_PAGE",
    "MAX_TITLE",
    "SessionDirectory",
    "SessionPage",
    "SessionRecord",
    "check_page",
    "check_title",
    "decode_cursor",
    "default_title",
    "encode_cursor",
    "record_from_row",
]

MAX_TITLE: Final = 200
"""Characters a session title may have."""
DEFAULT_TITLE_CHARS: Final = 80
"""Characters of the first message kept as a session's default title."""
MAX_PAGE: Final = 100
"""Sessions one `session_page` call returns at most."""
_SPACE: Final = re.compile(r"\s+")


@value_class
class SessionRecord:
    """A session as the session list shows it.

    Attributes:
        session_id: The session id.
        title: Its title (`""` when it has none yet: show the id).
        pinned: Whether it is pinned to the top of the list.
        archived: Whether it is archived (listed only among the archived).
        updated_at: When a message was last appended, in seconds since the epoch.
        entries: How many transcript entries it has.
    """

    session_id: str
    title: str
    pinned: bool
    archived: bool
    updated_at: float
    entries: int

    def to_json(self) -> dict[str, Any]:
        """The record as camelCase JSON data."""
        return {
            "sessionId": self.session_id,
            "title": self.title,
            "pinned": self.pinned,
            "archived": self.archived,
            "updatedAt": self.updated_at,
            "entries": self.entries,
        }


@value_class
class SessionPage:
    """One page of the session list and the cursor of the next (`None`: it was the last)."""

    sessions: Sequence[SessionRecord]
    next: str | None


@runtime_checkable
class SessionDirectory(Protocol):
    """A store that lists its sessions with their metadata, and edits and deletes them."""

    async def session_page(
        self, *, query: str = "", archived: bool = False, limit: int = 50, after: str | None = None
    ) -> SessionPage:
        """Sessions pinned first, then most recently updated, at most `limit` (1–`MAX_PAGE`);
        only those whose title or id contains `query` (case-folded), only archived ones or
        only the others; `after` is the `next` cursor of the page before.

        Raises:
            InputError: for a `limit` out of range or a cursor this store did not make.
        """
        ...

    async def session_record(self, session_id: str) -> SessionRecord | None:
        """One session's record, or `None` when it has none (no message yet)."""
        ...

    async def update_session(
        self,
        session_id: str,
        *,
        title: str | None = None,
        pinned: bool | None = None,
        archived: bool | None = None,
    ) -> SessionRecord | None:
        """Change what is given; the record after, or `None` for an unknown session.

        Raises:
            InputError: for a title that is empty, too long or more than one line.
        """
        ...

    async def delete_session(self, session_id: str) -> bool:
        """Delete the session's transcript, record, entries, parked runs, saved results and
        derived rows (`<session>\\x1f…`); whether it had a record.

        Raises:
            ConfigurationError: for an id that is no session id (see `check_session_id`).
        """
        ...


def check_title(title: object) -> str:
    """A title as stored: trimmed, one line, 1–`MAX_TITLE` characters."""
    if not isinstance(title, str):
        raise InputError(f"A session title must be a string, got {title!r:.80}.")
    trimmed = title.strip()
    if not trimmed or len(trimmed) > MAX_TITLE or any(c in trimmed for c in "\r\n\x00"):
        raise InputError(
            f"A session title must be one line of 1 to {MAX_TITLE} characters, got "
            f"{title!r:.80}; shorten it or remove its line breaks."
        )
    return trimmed


def default_title(entries: Sequence[Mapping[str, Any]]) -> str | None:
    """The title a session gets from its first user message: the text of the first user
    entry among `entries`, on one line, cut to `DEFAULT_TITLE_CHARS` (`None` without one)."""
    for entry in entries:
        if entry.get("role") != "user":
            continue
        text = _SPACE.sub(" ", transcript_text(entry)).strip().replace("\x00", "")
        if text:
            cut = DEFAULT_TITLE_CHARS
            return text if len(text) <= cut else text[: cut - 1].rstrip() + "…"
    return None


def record_from_row(row: Sequence[Any]) -> SessionRecord:
    """A record from the columns of `_directory_sql.COLUMNS`."""
    session_id, title, pinned, archived, updated_at, entries = row
    return SessionRecord(
        session_id=str(session_id),
        title=str(title),
        pinned=bool(pinned),
        archived=bool(archived),
        updated_at=float(updated_at),
        entries=int(entries),
    )


def check_page(limit: object) -> int:
    """A `session_page` limit: a count from 1 to `MAX_PAGE`."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InputError(f"`limit` must be a count from 1 to {MAX_PAGE}, got {limit!r:.40}.")
    return limit


def encode_cursor(record: SessionRecord) -> str:
    """The cursor of the page after `record`: its sort key (pinned, updated at, id)."""
    return json.dumps([int(record.pinned), record.updated_at, record.session_id])


def decode_cursor(cursor: str) -> tuple[int, float, str]:
    """The sort key in a cursor `encode_cursor` made."""
    try:
        key: object = json.loads(cursor)
    except ValueError:
        key = None
    match key:
        case [int() as pinned, int() | float() as updated, str() as session_id] if pinned in (
            0,
            1,
        ) and not isinstance(updated, bool):
            return pinned, float(updated), session_id
        case _:
            raise InputError(
                f"`after` must be the `next` cursor of an earlier page, got {cursor!r:.80}; "
                "start again from the first page."
            )
