"""The swap race: a directory replaced by a symlink pointing out, right after every check.

The adversary here is another local process that puts `notes/` back before each path check
(`os.path.realpath`) and swaps it for a link to a directory outside the root right after, so
every check passes and every open would follow the link. Both openers (`openat2` and the
`O_NOFOLLOW` walk) must refuse, touch nothing outside, and leak nothing from it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from clawcell import ToolError
from clawcell.tools import workspace
from clawcell.tools._beneath import use_openat2

from .conftest import call

SECRET = "outside secret\n"
REFUSALS = {
    "unreadable",
    "write_failed",
    "not_found",
    "not_a_directory",
    "not_a_file",
    "patch_conflict",
}


@pytest.fixture(params=[True, False], ids=["openat2", "walk"])
def opener(request: pytest.FixtureRequest) -> Iterator[bool]:
    use_openat2(request.param)
    yield request.param
    use_openat2(True)


@pytest.fixture
def racing(root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """`notes/` is a directory at every check and a link to `../outside` at every open, until
    the returned function stops the race."""
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "a.md").write_text(SECRET)
    notes, kept = root / "notes", root / ".notes-real"
    notes.mkdir()
    (notes / "a.md").write_text("inside\n")

    def as_directory() -> None:
        if notes.is_symlink():
            notes.unlink()
            kept.rename(notes)

    def as_link() -> None:
        notes.rename(kept)
        notes.symlink_to(outside)

    realpath = os.path.realpath

    def checked_then_swapped(path: Any, *args: Any, **kwargs: Any) -> Any:
        as_directory()
        try:
            return realpath(path, *args, **kwargs)
        finally:
            as_link()

    def stop() -> None:
        monkeypatch.undo()
        as_directory()

    monkeypatch.setattr(os.path, "realpath", checked_then_swapped)
    yield stop
    stop()


RACES: dict[str, tuple[str, dict[str, Any]]] = {
    "read": ("read", {"path": "notes/a.md"}),
    "write-existing": ("write", {"path": "notes/a.md", "content": "pwned"}),
    "write-new": ("write", {"path": "notes/new.md", "content": "pwned"}),
    "write-new-dir": ("write", {"path": "notes/sub/new.md", "content": "pwned"}),
    "edit": ("edit", {"path": "notes/a.md", "oldText": "secret", "newText": "pwned"}),
    "patch-update": (
        "apply_patch",
        {"patch": "*** Begin Patch\n*** Update File: notes/a.md\n-inside\n+pwned\n*** End Patch\n"},
    ),
    "patch-add": (
        "apply_patch",
        {"patch": "*** Begin Patch\n*** Add File: notes/new.md\n+pwned\n*** End Patch\n"},
    ),
    "patch-delete": (
        "apply_patch",
        {"patch": "*** Begin Patch\n*** Delete File: notes/a.md\n*** End Patch\n"},
    ),
    "list": ("list", {"path": "notes"}),
    "grep": ("grep", {"path": "notes", "pattern": "secret"}),
    "find": ("find", {"path": "notes", "pattern": "*.md"}),
}


@pytest.mark.parametrize(("tool", "arguments"), list(RACES.values()), ids=list(RACES))
def test_a_directory_swapped_for_a_link_after_the_check_is_never_followed(
    root: Path, racing: Callable[[], None], opener: bool, tool: str, arguments: dict[str, Any]
) -> None:
    tools = workspace(root)
    try:
        result = call(tools, tool, arguments)
    except ToolError as refused:
        assert refused.code in REFUSALS
        result = None
    assert "secret" not in repr(result)
    racing()
    outside = root.parent / "outside"
    assert sorted(os.listdir(outside)) == ["a.md"]
    assert (outside / "a.md").read_text() == SECRET
    assert call(tools, "read", {"path": "notes/a.md"})["text"] in ("inside\n", "pwned\n")


def test_without_the_race_both_openers_read_write_and_list(root: Path, opener: bool) -> None:
    tools = workspace(root)
    call(tools, "write", {"path": "deep/er/a.md", "content": "x\n"})
    assert call(tools, "read", {"path": "deep/er/a.md"})["text"] == "x\n"
    assert call(tools, "list", {"path": "deep"})["entries"] == [{"name": "er", "type": "dir"}]
    assert call(tools, "grep", {"pattern": "x", "outputMode": "files"})["files"] == ["deep/er/a.md"]
