"""`list`, `grep` and `find`: bounded results, globs and the `outputMode` union."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clawcell import ToolError
from clawcell.tools import WorkspaceLimits, workspace

from ..conftest import call


@pytest.fixture
def tree(root: Path) -> Path:
    for path, text in {
        "README.md": "# Title\nTODO: docs\n",
        "notes/a.md": "todo one\nnothing\nTODO two\n",
        "notes/deep/b.md": "todo three\n",
        "src/app.py": "print('todo')\n",
        ".git/config": "todo hidden\n",
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / "blob.bin").write_bytes(b"todo\x00\x01")
    os.symlink("notes", root / "notes_link")
    return root


def test_list_gives_sorted_entries_with_types_and_sizes(tree: Path) -> None:
    result = call(workspace(tree), "list", {"path": "notes"})
    assert result == {
        "path": "notes",
        "entries": [{"name": "a.md", "type": "file", "size": 26}, {"name": "deep", "type": "dir"}],
        "truncated": False,
    }


def test_list_of_the_root_shows_links_as_links(tree: Path) -> None:
    entries = call(workspace(tree), "list")["entries"]
    assert {"name": "notes_link", "type": "symlink"} in entries


def test_list_is_bounded_and_says_so(tree: Path) -> None:
    result = call(workspace(tree), "list", {"limit": 2})
    assert len(result["entries"]) == 2
    assert result["truncated"] is True


def test_list_of_a_file_says_to_use_read(tree: Path) -> None:
    with pytest.raises(ToolError) as refused:
        call(workspace(tree), "list", {"path": "README.md"})
    assert refused.value.code == "not_a_directory"


def test_find_matches_names_at_any_depth_without_a_slash(tree: Path) -> None:
    result = call(workspace(tree), "find", {"pattern": "*.md"})
    assert result == {"paths": ["README.md", "notes/a.md", "notes/deep/b.md"], "truncated": False}


@pytest.mark.parametrize(
    ("pattern", "paths"),
    [
        ("notes/**/*.md", ["notes/a.md", "notes/deep/b.md"]),
        ("notes/*.md", ["notes/a.md"]),
        ("**/b.md", ["notes/deep/b.md"]),
        ("src/app.p?", ["src/app.py"]),
        ("[!R]*.md", ["notes/a.md", "notes/deep/b.md"]),
        ("*.[mp][dy]", ["README.md", "notes/a.md", "notes/deep/b.md", "src/app.py"]),
        ("config", []),
    ],
)
def test_find_globs(tree: Path, pattern: str, paths: list[str]) -> None:
    assert call(workspace(tree), "find", {"pattern": pattern})["paths"] == paths


def test_find_is_bounded(tree: Path) -> None:
    assert call(workspace(tree), "find", {"pattern": "*", "limit": 1}) == {
        "paths": ["README.md"],
        "truncated": True,
    }


def test_grep_content_mode_gives_matching_lines(tree: Path) -> None:
    result = call(workspace(tree), "grep", {"pattern": "TODO", "path": "notes"})
    assert result == {
        "matches": [{"path": "notes/a.md", "line": 3, "text": "TODO two"}],
        "truncated": False,
    }


def test_grep_files_and_count_modes_and_case_folding(tree: Path) -> None:
    files = call(
        workspace(tree), "grep", {"pattern": "todo", "ignoreCase": True, "outputMode": "files"}
    )
    assert files == {
        "files": ["README.md", "notes/a.md", "notes/deep/b.md", "src/app.py"],
        "truncated": False,
    }
    counts = call(
        workspace(tree), "grep", {"pattern": "todo", "outputMode": "count", "glob": "*.md"}
    )
    assert counts == {
        "counts": [{"path": "notes/a.md", "count": 1}, {"path": "notes/deep/b.md", "count": 1}],
        "total": 2,
        "truncated": False,
    }


def test_grep_skips_binary_files_and_vcs_directories(tree: Path) -> None:
    files = call(workspace(tree), "grep", {"pattern": "todo", "outputMode": "files"})["files"]
    assert "blob.bin" not in files
    assert ".git/config" not in files


def test_grep_literal_mode_escapes_the_pattern(tree: Path) -> None:
    result = call(workspace(tree), "grep", {"pattern": "print('", "literal": True})
    assert result["matches"] == [{"path": "src/app.py", "line": 1, "text": "print('todo')"}]


def test_grep_with_a_bad_regex_explains_the_fix(tree: Path) -> None:
    with pytest.raises(ToolError) as refused:
        call(workspace(tree), "grep", {"pattern": "print("})
    assert refused.value.code == "invalid_pattern"
    assert refused.value.message == (
        "Pattern 'print(' is not a valid regular expression: missing ), unterminated subpattern "
        "at position 5. Escape special characters or pass `literal: true`."
    )


def test_grep_results_are_bounded(tree: Path) -> None:
    tools = workspace(tree, limits=WorkspaceLimits(max_results=2))
    result = call(tools, "grep", {"pattern": "todo", "ignoreCase": True, "limit": 50})
    assert len(result["matches"]) == 2
    assert result["truncated"] is True


def test_grep_searches_a_single_file(tree: Path) -> None:
    result = call(
        workspace(tree), "grep", {"pattern": "o", "path": "notes/a.md", "outputMode": "count"}
    )
    assert result["counts"] == [{"path": "notes/a.md", "count": 3}]
