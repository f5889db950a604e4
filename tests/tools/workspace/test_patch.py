"""`apply_patch`: unified diffs and `*** Begin Patch`, all or nothing, with a path summary."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawcell import ToolError
from clawcell.tools import WorkspaceLimits, workspace
from clawcell.tools._workspace._files import unified_diff
from clawcell.tools._workspace._patch import apply_hunks
from clawcell.tools._workspace._patch_format import parse_patch

from ..conftest import call

BEGIN = """*** Begin Patch
*** Add File: docs/new.md
+# New
+body
*** Update File: src/app.py
@@ def main():
-    return 1
+    return 2
*** Delete File: old.txt
*** End Patch
"""


@pytest.fixture
def project(root: Path) -> Path:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "old.txt").write_text("bye\n")
    return root


def test_a_begin_patch_adds_updates_and_deletes_and_summarises_the_paths(project: Path) -> None:
    result = call(workspace(project), "apply_patch", {"patch": BEGIN})
    assert result == {"added": ["docs/new.md"], "modified": ["src/app.py"], "deleted": ["old.txt"]}
    assert (project / "docs/new.md").read_text() == "# New\nbody\n"
    assert (project / "src/app.py").read_text() == "def main():\n    return 2\n"
    assert not (project / "old.txt").exists()


def test_a_unified_diff_with_dev_null_adds_and_deletes(project: Path) -> None:
    patch = (
        "diff --git a/src/app.py b/src/app.py\n"
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,3 @@\n def main():\n-    return 1\n"
        "+    x = 2\n+    return x\n"
        "--- /dev/null\n+++ b/NEW.md\n@@ -0,0 +1 @@\n+hi\n"
        "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
    )
    result = call(workspace(project), "apply_patch", {"patch": patch})
    assert result == {"added": ["NEW.md"], "modified": ["src/app.py"], "deleted": ["old.txt"]}
    assert (project / "src/app.py").read_text() == "def main():\n    x = 2\n    return x\n"
    assert (project / "NEW.md").read_text() == "hi\n"


def test_a_move_is_reported_as_a_delete_and_an_add(project: Path) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n*** Move to: src/main.py\n"
        "@@\n-    return 1\n+    return 3\n*** End Patch"
    )
    result = call(workspace(project), "apply_patch", {"patch": patch})
    assert result == {"added": ["src/main.py"], "modified": [], "deleted": ["src/app.py"]}
    assert (project / "src/main.py").read_text() == "def main():\n    return 3\n"


def test_a_hunk_that_does_not_match_changes_nothing_at_all(project: Path) -> None:
    patch = BEGIN.replace("-    return 1", "-    return 99")
    with pytest.raises(ToolError) as conflict:
        call(workspace(project), "apply_patch", {"patch": patch})
    assert conflict.value.code == "patch_conflict"
    assert conflict.value.message == (
        "Hunk 1 of the patch for 'src/app.py' does not match the file (first line "
        "'    return 99'). Read the file again and regenerate the patch."
    )
    assert not (project / "docs").exists()
    assert (project / "old.txt").exists()


def test_adding_a_file_that_exists_is_a_conflict(project: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: old.txt\n+x\n*** End Patch\n"
    with pytest.raises(ToolError) as conflict:
        call(workspace(project), "apply_patch", {"patch": patch})
    assert conflict.value.message == "Patch target 'old.txt' already exists; use an update section."


def test_a_patch_cannot_escape_the_root(project: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: ../evil.txt\n+x\n*** End Patch\n"
    with pytest.raises(ToolError) as refused:
        call(workspace(project), "apply_patch", {"patch": patch})
    assert refused.value.code == "invalid_path"
    assert not (project.parent / "evil.txt").exists()


@pytest.mark.parametrize(
    ("patch", "why"),
    [
        ("hello", "it names no file"),
        ("*** Begin Patch\n*** Add File: a\n+x\n", "it does not end with '*** End Patch'"),
        ("*** Begin Patch\n+x\n*** End Patch", "line '+x' comes before any `*** ... File:` header"),
        (
            "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n",
            "a hunk for 'x' ends before its declared line counts",
        ),
        ("@@ -1 +1 @@\n-a\n+b\n", "a hunk comes before any `---`/`+++` header"),
    ],
    ids=["no file", "no end", "no header", "short hunk", "orphan hunk"],
)
def test_malformed_patches_are_refused_with_the_reason(project: Path, patch: str, why: str) -> None:
    with pytest.raises(ToolError) as refused:
        call(workspace(project), "apply_patch", {"patch": patch})
    assert refused.value.code == "invalid_patch"
    assert refused.value.message.startswith(f"The patch is malformed: {why}. ")


def test_the_patched_size_is_capped_before_anything_is_written(project: Path) -> None:
    tools = workspace(project, limits=WorkspaceLimits(max_write_bytes=8))
    with pytest.raises(ToolError) as refused:
        call(tools, "apply_patch", {"patch": BEGIN})
    assert refused.value.code == "content_too_large"
    assert (project / "old.txt").exists()


def test_trailing_whitespace_differences_still_apply(project: Path) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n"
        "-    return 1   \n+    return 5\n*** End Patch"
    )
    call(workspace(project), "apply_patch", {"patch": patch})
    assert (project / "src/app.py").read_text() == "def main():\n    return 5\n"


def test_an_edit_diff_can_be_applied_back_with_apply_patch(root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    diff = call(workspace(root), "edit", {"path": "a.txt", "oldText": "two", "newText": "2"})[
        "diff"
    ]
    (root / "b.txt").write_text("one\ntwo\nthree\n")
    call(workspace(root), "apply_patch", {"patch": diff.replace("a.txt", "b.txt")})
    assert (root / "b.txt").read_text() == "one\n2\nthree\n"


_LINES = st.lists(st.sampled_from(["a", "b", "c", "", "  x", "b "]), max_size=12)


@settings(max_examples=200, deadline=None)
@given(old=_LINES, new=_LINES, old_eol=st.booleans(), new_eol=st.booleans())
def test_any_unified_diff_we_produce_applies_back_exactly(
    old: list[str], new: list[str], old_eol: bool, new_eol: bool
) -> None:
    before = "\n".join(old) + ("\n" if old_eol and old else "")
    after = "\n".join(new) + ("\n" if new_eol and new else "")
    diff = unified_diff("f.txt", before, after)
    if not diff:
        assert before == after
        return
    (change,) = parse_patch(diff)
    assert apply_hunks("f.txt", before, change.hunks) == after
