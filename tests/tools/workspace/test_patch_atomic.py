"""`apply_patch` is all or nothing: checked before the first write, undone on a late failure."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clawcell import ToolError
from clawcell.tools import WorkspaceLimits, workspace

from ..conftest import call

MIXED = """*** Begin Patch
*** Update File: a.md
-alpha
+ALPHA
*** Add File: b.md
+bravo
*** Delete File: c.md
*** Add File: new/deeper/d.md
+delta
*** Update File: e.md
-echo
+ECHO
*** End Patch
"""


@pytest.fixture
def project(root: Path) -> Path:
    for name in ("a.md", "c.md", "e.md"):
        (root / name).write_text({"a.md": "alpha\n", "c.md": "charlie\n", "e.md": "echo\n"}[name])
    os.chmod(root / "c.md", 0o640)
    os.chmod(root / "e.md", 0o600)
    return root


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    found: dict[str, tuple[str, int]] = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(directory) / name
            content = path.read_text() if path.is_file() else "<dir>"
            found[path.relative_to(root).as_posix()] = (content, path.stat().st_mode & 0o777)
    return found


def _refused(root: Path, patch: str) -> ToolError:
    with pytest.raises(ToolError) as refused:
        call(workspace(root), "apply_patch", {"patch": patch})
    return refused.value


def _failing_on(
    monkeypatch: pytest.MonkeyPatch, name: str, call_number: int, code: int
) -> Callable[[], int]:
    """`os.<name>` fails once, on its `call_number`-th call, with `code`; the count so far."""
    real: Callable[..., Any] = getattr(os, name)
    calls = 0

    def flaky(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == call_number:
            raise OSError(code, os.strerror(code))
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, flaky)
    return lambda: calls


def test_a_file_added_under_a_file_added_earlier_is_refused_before_any_write(
    project: Path,
) -> None:
    before = _tree(project)
    patch = (
        "*** Begin Patch\n*** Add File: b.md\n+bravo\n*** Add File: notes\n+a file\n"
        "*** Add File: notes/x.md\n+under a file\n*** End Patch\n"
    )
    refused = _refused(project, patch)
    assert refused.code == "patch_conflict"
    assert refused.message == (
        "Patch target 'notes/x.md' needs 'notes' to be a directory, but the patch writes it "
        "as a file. Nothing was written."
    )
    assert _tree(project) == before


def test_a_file_added_under_an_existing_file_is_refused_before_any_write(project: Path) -> None:
    before = _tree(project)
    patch = "*** Begin Patch\n*** Add File: b.md\n+bravo\n*** Add File: a.md/x\n+x\n*** End Patch\n"
    refused = _refused(project, patch)
    assert refused.code == "patch_conflict"
    assert refused.message == (
        "Patch target 'a.md/x' needs 'a.md' to be a directory, but it is not one. "
        "Nothing was written."
    )
    assert _tree(project) == before


def test_a_file_added_where_a_directory_is_is_refused_before_any_write(project: Path) -> None:
    (project / "dir").mkdir()
    before = _tree(project)
    refused = _refused(project, "*** Begin Patch\n*** Add File: dir\n+x\n*** End Patch\n")
    assert refused.code == "not_a_file"
    assert _tree(project) == before


def test_a_deleted_file_can_become_a_directory_in_the_same_patch(project: Path) -> None:
    patch = "*** Begin Patch\n*** Delete File: c.md\n*** Add File: c.md/x.md\n+x\n*** End Patch\n"
    result = call(workspace(project), "apply_patch", {"patch": patch})
    assert result == {"added": ["c.md/x.md"], "modified": [], "deleted": ["c.md"]}
    assert (project / "c.md" / "x.md").read_text() == "x\n"


@pytest.mark.parametrize("failing", [1, 2, 3, 4], ids=lambda n: f"write-{n}")
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES, errno.EIO], ids=errno.errorcode.get)
def test_a_write_failing_late_undoes_every_earlier_change(
    project: Path, monkeypatch: pytest.MonkeyPatch, failing: int, code: int
) -> None:
    before = _tree(project)
    _failing_on(monkeypatch, "replace", failing, code)
    refused = _refused(project, MIXED)
    monkeypatch.undo()
    assert refused.code == "write_failed"
    assert os.strerror(code) in refused.message
    assert refused.message.endswith("Nothing was changed: every earlier change was undone.")
    assert _tree(project) == before
    leftovers = [name for name in os.listdir(project) if name.startswith(".clawcell-")]
    assert leftovers == []


def test_a_delete_failing_late_undoes_every_earlier_change(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _tree(project)
    patch = (
        "*** Begin Patch\n*** Delete File: a.md\n*** Delete File: c.md\n"
        "*** Update File: e.md\n-echo\n+ECHO\n*** End Patch\n"
    )
    _failing_on(monkeypatch, "unlink", 2, errno.EROFS)
    refused = _refused(project, patch)
    monkeypatch.undo()
    assert refused.code == "write_failed"
    assert _tree(project) == before


def test_a_clean_patch_after_a_failed_one_applies(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing_on(monkeypatch, "replace", 3, errno.ENOSPC)
    _refused(project, MIXED)
    monkeypatch.undo()
    result = call(workspace(project), "apply_patch", {"patch": MIXED})
    assert result == {
        "added": ["b.md", "new/deeper/d.md"],
        "modified": ["a.md", "e.md"],
        "deleted": ["c.md"],
    }
    assert (project / "e.md").stat().st_mode & 0o777 == 0o600


def test_an_original_larger_than_the_write_cap_is_still_restored(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "big.md").write_text("line\n" * 400)  # 2,000 bytes: over the write cap below
    (root / "small.md").write_text("s\n")
    before = _tree(root)
    patch = (
        "*** Begin Patch\n*** Delete File: big.md\n*** Update File: small.md\n-s\n+t\n"
        "*** End Patch\n"
    )
    _failing_on(monkeypatch, "replace", 1, errno.ENOSPC)
    with pytest.raises(ToolError) as refused:
        call(
            workspace(root, limits=WorkspaceLimits(max_write_bytes=100)),
            "apply_patch",
            {"patch": patch},
        )
    monkeypatch.undo()
    assert refused.value.message.endswith("every earlier change was undone.")
    assert _tree(root) == before


def test_an_undo_that_fails_too_is_reported_not_hidden(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.replace
    calls = 0

    def full_disk_after_the_first(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*args, **kwargs)

    monkeypatch.setattr(os, "replace", full_disk_after_the_first)
    refused = _refused(project, MIXED)
    monkeypatch.undo()
    assert refused.code == "write_failed"
    assert "Undoing the earlier changes failed too (" in refused.message
    assert refused.message.endswith(
        "the workspace may be partly patched. Check it with `read` before trying again."
    )
