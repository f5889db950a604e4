"""`write` and `edit`: atomic writes, size caps, exact replacement with a unified diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clawcell import ToolError
from clawcell.tools import WorkspaceLimits, workspace

from ..conftest import call


def test_write_creates_parent_directories_and_reports_a_new_file(root: Path) -> None:
    result = call(workspace(root), "write", {"path": "notes/2026/plan.md", "content": "héllo\n"})
    assert result == {"path": "notes/2026/plan.md", "bytes": 7, "created": True}
    assert (root / "notes/2026/plan.md").read_text("utf-8") == "héllo\n"


def test_write_replaces_an_existing_file_and_keeps_its_mode(root: Path) -> None:
    target = root / "run.sh"
    target.write_text("old")
    os.chmod(target, 0o755)
    result = call(workspace(root), "write", {"path": "run.sh", "content": "new"})
    assert result["created"] is False
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o755


def test_write_through_a_link_inside_the_root_replaces_the_target(root: Path) -> None:
    (root / "real.md").write_text("a")
    os.symlink("real.md", root / "alias.md")
    result = call(workspace(root), "write", {"path": "alias.md", "content": "b"})
    assert result["path"] == "real.md"
    assert (root / "real.md").read_text() == "b"
    assert (root / "alias.md").is_symlink()


def test_write_over_the_cap_is_refused_and_writes_nothing(root: Path) -> None:
    tools = workspace(root, limits=WorkspaceLimits(max_write_bytes=10))
    with pytest.raises(ToolError) as refused:
        call(tools, "write", {"path": "big.txt", "content": "x" * 11})
    assert refused.value.code == "content_too_large"
    assert refused.value.message == (
        "Content for 'big.txt' has 11 bytes, more than the 10-byte write cap. Write smaller files."
    )
    assert list(root.iterdir()) == []


def test_write_refuses_lone_surrogates_instead_of_storing_broken_utf8(root: Path) -> None:
    with pytest.raises(ToolError) as refused:
        call(workspace(root), "write", {"path": "a.txt", "content": "a\ud800"})
    assert refused.value.code == "invalid_text"


def test_edit_replaces_exactly_once_and_returns_a_unified_diff(root: Path) -> None:
    (root / "a.py").write_text("x = 1\ny = 2\nz = 3\n")
    result = call(
        workspace(root), "edit", {"path": "a.py", "oldText": "y = 2", "newText": "y = 20"}
    )
    assert result == {
        "path": "a.py",
        "changed": True,
        "replacements": 1,
        "bytes": 19,
        "diff": "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n x = 1\n-y = 2\n+y = 20\n z = 3\n",
    }
    assert (root / "a.py").read_text() == "x = 1\ny = 20\nz = 3\n"


def test_edit_with_identical_text_reports_no_change_and_an_empty_diff(root: Path) -> None:
    (root / "a.txt").write_text("same\n")
    result = call(workspace(root), "edit", {"path": "a.txt", "oldText": "same", "newText": "same"})
    assert (result["changed"], result["diff"]) == (False, "")


def test_edit_refuses_ambiguous_text_unless_replace_all(root: Path) -> None:
    (root / "a.txt").write_text("a a a\n")
    with pytest.raises(ToolError) as ambiguous:
        call(workspace(root), "edit", {"path": "a.txt", "oldText": "a", "newText": "b"})
    assert ambiguous.value.code == "edit_ambiguous"
    assert ambiguous.value.message == (
        "`oldText` occurs 3 times in 'a.txt'. Include more surrounding text so it occurs once, "
        "or pass `replaceAll: true`."
    )
    assert (root / "a.txt").read_text() == "a a a\n"
    result = call(
        workspace(root),
        "edit",
        {"path": "a.txt", "oldText": "a", "newText": "b", "replaceAll": True},
    )
    assert result["replacements"] == 3
    assert (root / "a.txt").read_text() == "b b b\n"


def test_edit_with_text_that_is_not_there_says_how_to_recover(root: Path) -> None:
    (root / "a.txt").write_text("alpha\n")
    with pytest.raises(ToolError) as missing:
        call(workspace(root), "edit", {"path": "a.txt", "oldText": "beta", "newText": "b"})
    assert missing.value.code == "edit_no_match"
    assert missing.value.message == (
        "`oldText` was not found in 'a.txt'. Read the file again and copy the text exactly, "
        "including whitespace."
    )


def test_edit_marks_a_missing_final_newline_in_the_diff(root: Path) -> None:
    (root / "a.txt").write_text("end")
    result = call(workspace(root), "edit", {"path": "a.txt", "oldText": "end", "newText": "fin"})
    assert result["diff"].endswith(
        "-end\n\\ No newline at end of file\n+fin\n\\ No newline at end of file\n"
    )


def test_edit_refuses_non_utf8_files(root: Path) -> None:
    (root / "a.bin").write_bytes(b"\xff\xfe")
    with pytest.raises(ToolError) as refused:
        call(workspace(root), "edit", {"path": "a.bin", "oldText": "x", "newText": "y"})
    assert refused.value.code == "binary_file"


def test_a_read_only_workspace_has_no_writing_tools(root: Path) -> None:
    names = [tool.name for tool in workspace(root, read_only=True)]
    assert names == ["read", "list", "grep", "find"]


def test_reading_tools_are_replay_safe_and_writing_tools_are_sequential(root: Path) -> None:
    tools = {tool.name: tool for tool in workspace(root)}
    assert {name for name, tool in tools.items() if tool.replay_safe} == {
        "read", "list", "grep", "find",
    }  # fmt: skip
    assert {name for name, tool in tools.items() if tool.execution_mode == "sequential"} == {
        "write", "edit", "apply_patch",
    }  # fmt: skip
