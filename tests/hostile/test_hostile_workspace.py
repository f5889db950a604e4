"""Hostile calls to the workspace tools: paths the OS cannot take, patches that fail half-way or
contradict themselves, symlink tricks and races. Each case pins its outcome (a `ToolError`
code, or a result), that nothing outside the root changed, and that a clean call afterwards
reads and writes as usual.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from clawcell import Tool, ToolError
from clawcell.tools import workspace
from clawcell.tools._beneath import use_openat2
from tests.tools.conftest import call

Arguments = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Case:
    """One hostile call; `setup` prepares the root (and may patch the OS through `monkeypatch`)."""

    tool: str
    arguments: Arguments
    code: str | None  # the `ToolError` code, or None for a result
    setup: Callable[[Path, pytest.MonkeyPatch], None] = lambda _root, _patch: None
    untouched: tuple[str, ...] = field(default=())  # root paths that must keep their content


def _patch(*sections: str) -> Arguments:
    return {"patch": "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"}


def _add(path: str, text: str = "x") -> str:
    return f"*** Add File: {path}\n+{text}\n"


def _update(path: str, old: str, new: str) -> str:
    return f"*** Update File: {path}\n-{old}\n+{new}\n"


def _failing(name: str, number: int, code: int) -> Callable[[Path, pytest.MonkeyPatch], None]:
    def setup(_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        real: Callable[..., Any] = getattr(os, name)
        calls = 0

        def flaky(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls == number:
                raise OSError(code, os.strerror(code))
            return real(*args, **kwargs)

        monkeypatch.setattr(os, name, flaky)

    return setup


def _link(name: str, target: str) -> Callable[[Path, pytest.MonkeyPatch], None]:
    return lambda root, _patch: os.symlink(target, root / name)


def _swap_race(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`notes/` is a directory at every check and a link to `../outside` at every open."""
    notes, kept, outside = root / "notes", root / ".notes-real", root.parent / "outside"
    realpath = os.path.realpath

    def racing(path: Any, *args: Any, **kwargs: Any) -> Any:
        if notes.is_symlink():
            notes.unlink()
            kept.rename(notes)
        try:
            return realpath(path, *args, **kwargs)
        finally:
            notes.rename(kept)
            notes.symlink_to(outside)

    monkeypatch.setattr(os.path, "realpath", racing)


LONE = "\ud800"
PATHS: dict[str, Case] = {
    f"{tool}_{name}": Case(tool=tool, arguments={**extra, "path": path}, code="invalid_path")
    for name, path in {
        "lone_surrogate": f"notes/{LONE}.md",
        "escaped_byte_surrogate": "notes/a\udc80.md",
        "1500_components": "a/" * 1500 + "x",
        "256_components": "a/" * 256 + "x",
        "over_4096_bytes_in_the_root": "/".join(["é" * 100] * 21),
    }.items()
    for tool, extra in {
        "read": {},
        "write": {"content": "x"},
        "list": {},
        "find": {"pattern": "*"},
        "grep": {"pattern": "x"},
    }.items()
}
PATCHES: dict[str, Case] = {
    "patch_adds_under_a_file_it_adds": Case(
        tool="apply_patch",
        arguments=_patch(_add("b.md"), _add("c"), _add("c/d.md")),
        code="patch_conflict",
    ),
    "patch_adds_under_an_existing_file": Case(
        tool="apply_patch",
        arguments=_patch(_update("notes/a.md", "inside", "changed"), _add("notes/a.md/x")),
        code="patch_conflict",
        untouched=("notes/a.md",),
    ),
    "patch_adds_a_file_over_a_directory": Case(
        tool="apply_patch", arguments=_patch(_add("notes")), code="not_a_file"
    ),
    "patch_disk_full_on_the_last_write": Case(
        tool="apply_patch",
        arguments=_patch(_update("notes/a.md", "inside", "changed"), _add("z/new.md")),
        code="write_failed",
        setup=_failing("replace", 2, errno.ENOSPC),
        untouched=("notes/a.md",),
    ),
    "patch_permission_denied_on_the_first_write": Case(
        tool="apply_patch",
        arguments=_patch(_add("b.md"), _update("notes/a.md", "inside", "changed")),
        code="write_failed",
        setup=_failing("replace", 1, errno.EACCES),
        untouched=("notes/a.md",),
    ),
    "patch_read_only_file_system_on_a_delete": Case(
        tool="apply_patch",
        arguments=_patch("*** Delete File: notes/b.md\n", "*** Delete File: notes/a.md\n"),
        code="write_failed",
        setup=_failing("unlink", 2, errno.EROFS),
        untouched=("notes/a.md", "notes/b.md"),
    ),
    "patch_io_error_on_the_second_write": Case(
        tool="apply_patch",
        arguments=_patch(_update("notes/a.md", "inside", "changed"), _add("z.md")),
        code="write_failed",
        setup=_failing("replace", 2, errno.EIO),
        untouched=("notes/a.md",),
    ),
    "patch_moves_onto_an_existing_file": Case(
        tool="apply_patch",
        arguments=_patch("*** Update File: notes/a.md\n*** Move to: notes/b.md\n-inside\n+x\n"),
        code="patch_conflict",
        untouched=("notes/a.md", "notes/b.md"),
    ),
    "patch_moves_out_of_the_root": Case(
        tool="apply_patch",
        arguments=_patch("*** Update File: notes/a.md\n*** Move to: ../a.md\n-inside\n+x\n"),
        code="invalid_path",
        untouched=("notes/a.md",),
    ),
    "patch_adds_a_lone_surrogate_path": Case(
        tool="apply_patch", arguments=_patch(_add(f"n/{LONE}")), code="invalid_path"
    ),
    "patch_adds_1500_components": Case(
        tool="apply_patch", arguments=_patch(_add("a/" * 1500 + "x")), code="invalid_path"
    ),
    "patch_adds_a_lone_surrogate_text": Case(
        tool="apply_patch", arguments=_patch(_add("ok.md", LONE)), code="invalid_text"
    ),
    "patch_deletes_a_directory": Case(
        tool="apply_patch", arguments=_patch("*** Delete File: notes\n"), code="not_a_file"
    ),
    "patch_deletes_then_adds_below_it": Case(
        tool="apply_patch",
        arguments=_patch("*** Delete File: notes/b.md\n", _add("notes/b.md/c.md")),
        code=None,
    ),
}
LINKS: dict[str, Case] = {
    **{
        f"race_{name}": Case(tool=tool, arguments=arguments, code="*", setup=_swap_race)
        for name, (tool, arguments) in {
            "read": ("read", {"path": "notes/a.md"}),
            "write_new": ("write", {"path": "notes/new.md", "content": "pwned"}),
            "write_new_dir": ("write", {"path": "notes/d/new.md", "content": "pwned"}),
            "edit": ("edit", {"path": "notes/a.md", "oldText": "secret", "newText": "x"}),
            "patch_add": ("apply_patch", _patch(_add("notes/new.md"))),
            "list": ("list", {"path": "notes"}),
            "grep": ("grep", {"path": "notes", "pattern": "secret"}),
        }.items()
    },
    "read_through_a_link_to_proc_root": Case(
        tool="read",
        arguments={"path": "proc/etc/hostname"},
        code="outside_workspace",
        setup=_link("proc", "/proc/self/root"),
    ),
    "write_through_a_dangling_link_out": Case(
        tool="write",
        arguments={"path": "dangling", "content": "pwned"},
        code="outside_workspace",
        setup=_link("dangling", "../outside/created.md"),
    ),
    "grep_skips_a_fifo": Case(
        tool="grep",
        arguments={"pattern": "inside", "outputMode": "files"},
        code=None,
        setup=lambda root, _patch: os.mkfifo(root / "notes" / "fifo"),
    ),
    "find_skips_a_link_loop": Case(
        tool="find",
        arguments={"pattern": "*.md"},
        code=None,
        setup=_link("notes/loop", "loop"),
    ),
    "list_a_directory_link_out": Case(
        tool="list",
        arguments={"path": "out"},
        code="outside_workspace",
        setup=_link("out", "../outside"),
    ),
}
ALL = PATHS | PATCHES | LINKS


@pytest.fixture(params=[True, False], ids=["openat2", "walk"])
def opener(request: pytest.FixtureRequest) -> Iterator[None]:
    use_openat2(request.param)
    yield
    use_openat2(True)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.md").write_text("outside secret\n")
    workspace_root = tmp_path / "ws"
    (workspace_root / "notes").mkdir(parents=True)
    (workspace_root / "notes" / "a.md").write_text("inside\n")
    (workspace_root / "notes" / "b.md").write_text("bravo\n")
    return workspace_root


def _outside(root: Path) -> dict[str, str]:
    outside = root.parent / "outside"
    return {name: (outside / name).read_text() for name in sorted(os.listdir(outside))}


def _clean(root: Path, tools: list[Tool]) -> None:
    assert call(tools, "write", {"path": "clean/after.md", "content": "fine\n"})["created"]
    assert call(tools, "read", {"path": "clean/after.md"})["text"] == "fine\n"
    assert call(tools, "find", {"pattern": "after.md"})["paths"] == ["clean/after.md"]


@pytest.mark.parametrize("name", list(ALL))
def test_a_hostile_workspace_call_ends_as_recorded_and_a_clean_call_after_it_works(
    root: Path, monkeypatch: pytest.MonkeyPatch, opener: None, name: str
) -> None:
    case = ALL[name]
    before = {path: (root / path).read_text() for path in case.untouched}
    outside = _outside(root)
    tools = workspace(root)
    case.setup(root, monkeypatch)
    try:
        result: object = call(tools, case.tool, case.arguments)
    except ToolError as failed:
        assert case.code is not None, failed.message
        assert case.code in ("*", failed.code), failed.message
        result = None
    else:
        assert case.code in (None, "*"), result
    monkeypatch.undo()
    if (root / ".notes-real").exists():
        (root / "notes").unlink()
        (root / ".notes-real").rename(root / "notes")
    assert "secret" not in repr(result)
    assert _outside(root) == outside
    assert {path: (root / path).read_text() for path in case.untouched} == before
    assert not [name for name in os.listdir(root) if name.startswith(".clawcell-")]
    _clean(root, tools)


def test_the_workspace_corpus_is_large() -> None:
    assert len(ALL) >= 40
