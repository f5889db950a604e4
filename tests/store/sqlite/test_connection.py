"""Opening an SQLite file: the switch to WAL is retried while another opener holds the file.

SQLite runs no busy handler for a journal-mode change, so two connections opening a new file
at the same moment can get "database is locked" at once (CI saw it: four threads, one file).
The race itself is rare and timing-bound, so these tests drive the retry with a stand-in.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from clawcell.store._sqlite import _connection  # pyright: ignore[reportPrivateUsage]
from clawcell.store._sqlite._connection import _enable_wal  # pyright: ignore[reportPrivateUsage]


class Flaky:
    """A connection whose first `failures` journal-mode changes fail with `error`."""

    def __init__(self, failures: int, error: str = "database is locked") -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    def execute(self, sql: str, *_: Any) -> None:
        assert sql == "PRAGMA journal_mode = WAL"
        self.calls += 1
        if self.calls <= self.failures:
            raise sqlite3.OperationalError(self.error)


def test_a_locked_journal_mode_change_is_retried_until_it_succeeds() -> None:
    conn = Flaky(failures=3)
    _enable_wal(conn, timeout=30)  # type: ignore[arg-type]
    assert conn.calls == 4


class Clock:
    """A clock that only `sleep` moves, so the retry schedule is the same on any machine."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_lock_that_outlasts_the_timeout_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(_connection, "time", clock)
    conn = Flaky(failures=10**9)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        _enable_wal(conn, timeout=0.05)  # type: ignore[arg-type]
    # pauses of 1, 2, 4, 8, 16 ms fit in 50 ms; the next (32 ms) would pass the deadline
    assert conn.calls == 6
    assert clock.now == pytest.approx(0.031)


def test_other_errors_are_not_retried() -> None:
    conn = Flaky(failures=5, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        _enable_wal(conn, timeout=30)  # type: ignore[arg-type]
    assert conn.calls == 1
