"""Key files are read once while they stay the same, and again as soon as they change."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path
from typing import TextIO

import pytest

from clawcell import ConfigurationError
from clawcell.store import (
    StateKeys,
    _seals,  # pyright: ignore[reportPrivateUsage]
)

FIRST = base64.b64encode(b"1" * 32).decode()
SECOND = base64.b64encode(b"2" * 32).decode()


def _key_file(path: Path, text: str, *, age_s: float) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The key files read from disk (not answered from what was read before): the files
    `store/_seals.py` opens (a module global named `open` is found before the builtin)."""
    seen: list[Path] = []

    def counting(file: str, *, encoding: str) -> TextIO:
        seen.append(Path(file))
        return open(file, encoding=encoding)  # (the caller's `with` closes it)

    monkeypatch.setattr(_seals, "open", counting, raising=False)
    return seen


def test_an_unchanged_key_file_is_read_once(tmp_path: Path, reads: list[Path]) -> None:
    path = _key_file(tmp_path / "state.key", f"a:{FIRST}\n", age_s=10)
    assert [StateKeys.read(path).active for _ in range(3)] == ["a", "a", "a"]
    assert reads == [path]


def test_a_key_file_edited_in_place_is_read_again(tmp_path: Path, reads: list[Path]) -> None:
    path = _key_file(tmp_path / "state.key", f"a:{FIRST}\n", age_s=10)
    assert StateKeys.read(path).keys == {"a": b"1" * 32}
    _key_file(path, f"b:{SECOND}\n", age_s=5)  # same size, same inode, another time
    assert StateKeys.read(path).keys == {"b": b"2" * 32}
    assert reads == [path, path]


def test_a_rotated_key_file_is_read_again(tmp_path: Path, reads: list[Path]) -> None:
    path = _key_file(tmp_path / "state.key", f"a:{FIRST}\n", age_s=10)
    StateKeys.read(path)
    rotated = _key_file(tmp_path / "next.key", f"b:{SECOND},a:{FIRST}\n", age_s=10)
    os.utime(rotated, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns))  # same times
    rotated.replace(path)
    assert StateKeys.read(path).active == "b"


def test_a_key_file_modified_within_the_last_second_is_read_every_time(
    tmp_path: Path, reads: list[Path]
) -> None:
    # Its time could still be the one a second edit in the same clock tick would leave.
    path = _key_file(tmp_path / "state.key", f"a:{FIRST}\n", age_s=0)
    StateKeys.read(path)
    StateKeys.read(path)
    assert reads == [path, path]


def test_a_key_file_made_readable_by_others_is_refused_even_after_it_was_read(
    tmp_path: Path,
) -> None:
    path = _key_file(tmp_path / "state.key", f"a:{FIRST}\n", age_s=10)
    StateKeys.read(path)
    path.chmod(0o644)
    with pytest.raises(ConfigurationError, match="readable by other users"):
        StateKeys.read(path)
