"""Hostile paths: every workspace tool refuses to leave its root (data-driven corpus)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clawcell import ToolError
from clawcell.tools import workspace
from clawcell.tools._workspace._confinement import Confinement

from ..conftest import call

OK = "ok"
# (path, what `read` answers): an error code, or OK when it resolves to notes/a.md inside.
CORPUS: list[tuple[str, str]] = [
    ("../secret.txt", "invalid_path"),
    ("../../etc/passwd", "invalid_path"),
    ("notes/../../secret.txt", "invalid_path"),
    ("notes/../a.md", "invalid_path"),
    ("..", "invalid_path"),
    ("./..", "invalid_path"),
    ("notes/..", "invalid_path"),
    ("notes/a.md/..", "invalid_path"),
    ("memory/../secret.txt", "invalid_path"),
    ("a b/../../x", "invalid_path"),
    ("up/ws/../secret.txt", "invalid_path"),
    ("/etc/passwd", "invalid_path"),
    ("//etc/passwd", "invalid_path"),
    ("/", "invalid_path"),
    ("/proc/self/root/etc/passwd", "invalid_path"),
    ("C:/Windows/win.ini", "invalid_path"),
    ("c:secret.txt", "invalid_path"),
    ("..\\secret.txt", "invalid_path"),
    ("notes\\a.md", "invalid_path"),
    ("\\\\server\\share", "invalid_path"),
    ("~/secret.txt", "invalid_path"),
    ("~root/.bashrc", "invalid_path"),
    ("~", "invalid_path"),
    ("a\x00b", "invalid_path"),
    ("notes/a.md\x00.png", "invalid_path"),
    ("line\nbreak", "invalid_path"),
    ("tab\there", "invalid_path"),
    ("del\x7f", "invalid_path"),
    ("esc\x1b[31m", "invalid_path"),
    ("a" * 300, "invalid_path"),
    ("é" * 200, "invalid_path"),
    ("a/" * 2100, "invalid_path"),
    ("a/" * 1500 + "x", "invalid_path"),
    ("a/" * 256 + "x", "invalid_path"),
    ("a\udc80b", "invalid_path"),
    ("\ud800", "invalid_path"),
    ("notes/\udfff.md", "invalid_path"),
    ("\ud83d", "invalid_path"),
    ("abc/" * 1000, "invalid_path"),
    ("", "invalid_path"),
    ("link_out", "outside_workspace"),
    ("link_abs", "outside_workspace"),
    ("dir_out", "outside_workspace"),
    ("dir_out/secret.txt", "outside_workspace"),
    ("dir_out_abs/passwd", "outside_workspace"),
    ("dir_out_abs", "outside_workspace"),
    ("dangling_out", "outside_workspace"),
    ("dev_null", "outside_workspace"),
    ("proc_link", "outside_workspace"),
    ("proc_link/etc/passwd", "outside_workspace"),
    ("chain_out", "outside_workspace"),
    ("notes/deep_out", "outside_workspace"),
    ("fifo", "not_a_file"),
    ("chardev", "not_a_file"),
    ("subdir", "not_a_file"),
    (".", "not_a_file"),
    ("./", "not_a_file"),
    ("link_to_root", "not_a_file"),
    ("loop_a", "unreadable"),
    ("missing.txt", "not_found"),
    ("notes/missing/x.md", "not_found"),
    ("notes/a.md/x", "not_found"),
    ("%2e%2e/secret.txt", "not_found"),
    ("%2e%2e%2fsecret.txt", "not_found"),
    ("....//secret.txt", "not_found"),
    ("...", "not_found"),
    ("notes/a.md ", "not_found"),
    ("\uff0e\uff0e/secret.txt", "not_found"),
    ("\u202e/secret.txt", "not_found"),
    ("dangling_in", "not_found"),
    ("link_in", OK),
    ("notes/./a.md", OK),
    ("notes//a.md", OK),
    ("./notes/a.md", OK),
    ("notes/a.md/", OK),
    ("dir_out/ws/notes/a.md", OK),
    ("chain_in", OK),
]
ESCAPES = [case for case in CORPUS if case[1] in ("invalid_path", "outside_workspace")]


@pytest.fixture
def hostile(root: Path) -> Path:
    """A workspace full of traps: links out, a FIFO, a character device, loops."""
    (root / "notes").mkdir()
    (root / "notes" / "a.md").write_text("inside\n")
    (root / "subdir").mkdir()
    links = {
        "link_out": "../secret.txt",
        "link_abs": "/etc/passwd",
        "dir_out": "..",
        "dir_out_abs": "/etc",
        "dangling_out": "../nope.txt",
        "dangling_in": "notes/nope.md",
        "dev_null": "/dev/null",
        "proc_link": "/proc/self/root",
        "link_in": "notes/a.md",
        "link_to_root": ".",
        "up": "..",
        "loop_a": "loop_b",
        "loop_b": "loop_a",
        "chain_in": "link_in",
        "chain_out": "link_out",
        "notes/deep_out": "../../secret.txt",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    os.mkfifo(root / "fifo")
    os.mknod(root / "chardev", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    return root


def _code(root: Path, tool: str, arguments: dict[str, object]) -> str:
    try:
        call(workspace(root), tool, arguments)
    except ToolError as error:
        return error.code
    return OK


@pytest.mark.parametrize(("path", "expected"), CORPUS, ids=[repr(p)[:40] for p, _ in CORPUS])
def test_read_answers_each_hostile_path_as_the_corpus_says(
    hostile: Path, path: str, expected: str
) -> None:
    assert _code(hostile, "read", {"path": path}) == expected


@pytest.mark.parametrize(("path", "expected"), ESCAPES, ids=[repr(p)[:40] for p, _ in ESCAPES])
def test_write_refuses_every_escaping_path_and_leaves_the_outside_untouched(
    hostile: Path, path: str, expected: str
) -> None:
    assert _code(hostile, "write", {"path": path, "content": "pwned"}) == expected
    assert (hostile.parent / "secret.txt").read_text() == "outside\n"
    assert not (hostile.parent / "nope.txt").exists()


@pytest.mark.parametrize("tool", ["list", "grep", "find"])
@pytest.mark.parametrize(
    "path", ["../", "/etc", "dir_out", "dir_out_abs", "~", "proc_link"], ids=str
)
def test_browsing_tools_refuse_directories_outside_the_root(
    hostile: Path, tool: str, path: str
) -> None:
    arguments: dict[str, object] = {"path": path}
    if tool != "list":
        arguments["pattern"] = "*"
    assert _code(hostile, tool, arguments) in ("invalid_path", "outside_workspace")


def test_grep_and_find_do_not_follow_links_out_of_the_root(hostile: Path) -> None:
    tools = workspace(hostile)
    assert call(tools, "grep", {"pattern": "outside", "outputMode": "files"})["files"] == []
    found = call(tools, "find", {"pattern": "*.txt"})
    assert found == {"paths": [], "truncated": False}


PATCHABLE = [case for case in ESCAPES if "\n" not in case[0] and case[0].strip() == case[0]]


@pytest.mark.parametrize(("path", "expected"), PATCHABLE, ids=[repr(p)[:40] for p, _ in PATCHABLE])
def test_apply_patch_refuses_every_escaping_path(hostile: Path, path: str, expected: str) -> None:
    patch = f"*** Begin Patch\n*** Add File: {path}\n+pwned\n*** End Patch\n"
    assert _code(hostile, "apply_patch", {"patch": patch}) == expected
    assert (hostile.parent / "secret.txt").read_text() == "outside\n"


def test_writing_below_a_file_fails_clearly(hostile: Path) -> None:
    with pytest.raises(ToolError) as failed:
        call(workspace(hostile), "write", {"path": "notes/a.md/x", "content": "x"})
    assert failed.value.code == "write_failed"
    assert failed.value.message == (
        "Cannot create the directory for 'notes/a.md/x': Not a directory. A part of the path "
        "may be a file or a symbolic link."
    )


def test_writing_through_a_fifo_or_device_is_refused(hostile: Path) -> None:
    assert _code(hostile, "write", {"path": "fifo", "content": "x"}) == "not_a_file"
    assert _code(hostile, "write", {"path": "chardev", "content": "x"}) == "not_a_file"
    assert _code(hostile, "write", {"path": "subdir", "content": "x"}) == "not_a_file"


def test_an_escaping_path_error_says_what_was_wrong_and_how_to_fix_it(hostile: Path) -> None:
    with pytest.raises(ToolError) as refused:
        call(workspace(hostile), "read", {"path": "../secret.txt"})
    assert refused.value.message == (
        "Path '../secret.txt' contains `..`. Use a relative path inside the workspace, "
        "such as `notes/a.md`."
    )
    with pytest.raises(ToolError) as linked:
        call(workspace(hostile), "read", {"path": "link_out"})
    assert linked.value.message == (
        "Path 'link_out' resolves outside the workspace through a symbolic link. "
        "Name a file inside the workspace."
    )


def test_a_path_too_long_once_joined_to_the_root_is_invalid(hostile: Path) -> None:
    path = "/".join(["é" * 100] * 21)  # 2,120 characters, 4,220 bytes
    assert _code(hostile, "read", {"path": path}) == "invalid_path"
    assert _code(hostile, "write", {"path": path, "content": "x"}) == "invalid_path"


def test_the_deepest_allowed_path_is_written_and_read(hostile: Path) -> None:
    path = "a/" * 254 + "x"
    tools = workspace(hostile)
    assert call(tools, "write", {"path": path, "content": "deep"})["created"] is True
    assert call(tools, "read", {"path": path})["text"] == "deep"


def test_the_corpus_is_large() -> None:
    assert len(CORPUS) >= 60


_PIECES = st.sampled_from(
    ["..", ".", "", "a", "notes", "a.md", "link_out", "dir_out", "up", "link_in", "~", "\\", "\x00",
     "/", "//", "proc_link", "chain_out", "loop_a", "é", " "]
)  # fmt: skip


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pieces=st.lists(_PIECES, max_size=8), lead=st.sampled_from(["", "/", "./", "../"]))
def test_any_path_resolves_inside_the_root_or_is_refused(
    hostile: Path, pieces: list[str], lead: str
) -> None:
    confinement = Confinement.at(hostile)
    path = lead + "/".join(pieces)
    try:
        real = confinement.resolve(path)
    except ToolError as refused:
        assert refused.code in ("invalid_path", "outside_workspace")
        return
    resolved_root = Path(os.path.realpath(hostile))
    assert real == resolved_root or real.is_relative_to(resolved_root)
