"""The scheduling hint in tests/conftest.py names files that exist (a renamed file would
silently fall back to its usual place and bring back the long tail it was listed to avoid)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import SLOW_FIRST

ROOT = Path(__file__).resolve().parents[1]


def test_every_slow_first_file_exists_once() -> None:
    missing = [path for path in SLOW_FIRST if not (ROOT / path).is_file()]
    assert missing == []
    assert len(set(SLOW_FIRST)) == len(SLOW_FIRST)
