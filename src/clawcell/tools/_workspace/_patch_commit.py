"""Writing a checked patch all or nothing: every target checked first, every change undoable.

Before the first write, every target must be writable as the patch wants it: not the root, not
an existing directory, device or FIFO, and every parent either a directory, missing, or a file
this same patch deletes — never a file on disk or one the patch writes. Then deletions run, then
writes (sorted, so a deleted file can become a directory), each remembered with what undoes
it: the original bytes and mode of a modified or deleted file, the removal of an added file and
of the directories created for it. When an OS call fails part-way (permissions, a full disk, a
read-only file system), the undo runs in reverse, and the error says whether it was complete.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..._lazy import value_class
from ...errors import ToolError
from ._confinement import Confinement
from ._files import remove_directory, remove_file, write_bytes
from ._workspace_limits import WorkspaceLimits

__all__ = ["Original", "commit"]


@value_class
class Original:
    """A file as it was before the patch."""

    data: bytes
    mode: int


def _conflict(path: str, why: str) -> ToolError:
    return ToolError(f"Patch target {path!r} {why}. Nothing was written.", code="patch_conflict")


def _check_target(confinement: Confinement, path: str, writes: set[str], deletes: set[str]) -> None:
    real = confinement.resolve(path)
    kind = confinement.existing_kind(real)
    if real == confinement.root or kind in ("dir", "other"):
        raise _conflict(path, "is a directory or a special file, not a regular file")
    parts = path.split("/")
    for depth in range(1, len(parts)):
        parent = "/".join(parts[:depth])
        if parent in writes:
            raise _conflict(
                path, f"needs {parent!r} to be a directory, but the patch writes it as a file"
            )
        above = confinement.existing_kind(confinement.resolve(parent))
        if above in ("file", "other") and parent not in deletes:
            raise _conflict(path, f"needs {parent!r} to be a directory, but it is not one")


@dataclass(kw_only=True)
class _Journal:
    confinement: Confinement
    limits: WorkspaceLimits
    undo_writes: list[Callable[[], object]] = field(default_factory=list[Callable[[], object]])
    undo_deletes: list[Callable[[], object]] = field(default_factory=list[Callable[[], object]])
    made: list[tuple[str, ...]] = field(default_factory=list[tuple[str, ...]])

    def restore(self, path: str, original: Original) -> Callable[[], object]:
        # What was there may exceed the write cap (it only had to fit the read cap).
        roomy = replace(self.limits, max_write_bytes=max(len(original.data), 1))
        return lambda: write_bytes(self.confinement, path, original.data, roomy, mode=original.mode)

    def remove(self, path: str) -> Callable[[], object]:
        return lambda: remove_file(self.confinement, path)

    def rollback(self) -> list[str]:
        """Undo in reverse; the descriptions of the steps that failed."""
        failed: list[str] = []
        for step in reversed(self.undo_writes):
            failed += _attempt(step)
        for parts in reversed(self.made):
            with contextlib.suppress(OSError):
                remove_directory(self.confinement, parts)
        for step in reversed(self.undo_deletes):
            failed += _attempt(step)
        return failed


def _attempt(step: Callable[[], object]) -> list[str]:
    try:
        step()
    except (ToolError, OSError) as exc:
        return [str(exc).rstrip(".")]
    return []


def commit(
    confinement: Confinement,
    limits: WorkspaceLimits,
    encoded: dict[str, bytes | None],
    originals: dict[str, Original],
) -> dict[str, list[str]]:
    """Apply `encoded` (path → new bytes, `None` to delete) all or nothing; the summary."""
    writes = {path for path, data in encoded.items() if data is not None}
    deletes = {path for path, data in encoded.items() if data is None and path in originals}
    for path in sorted(writes):
        _check_target(confinement, path, writes, deletes)
    journal = _Journal(confinement=confinement, limits=limits)
    summary: dict[str, list[str]] = {"added": [], "modified": [], "deleted": []}
    try:
        for path in sorted(deletes):
            remove_file(confinement, path)
            journal.undo_deletes.append(journal.restore(path, originals[path]))
            summary["deleted"].append(path)
        for path, data in sorted(encoded.items()):
            if data is None:
                continue
            write_bytes(confinement, path, data, limits, made=journal.made)
            known = originals.get(path)
            step = journal.remove(path) if known is None else journal.restore(path, known)
            journal.undo_writes.append(step)
            summary["added" if known is None else "modified"].append(path)
    except ToolError as exc:
        raise _undone(exc, journal.rollback()) from exc
    return summary


def _undone(exc: ToolError, failed: list[str]) -> ToolError:
    if not failed:
        return ToolError(
            f"{exc.message} Nothing was changed: every earlier change was undone.", code=exc.code
        )
    return ToolError(
        f"{exc.message} Undoing the earlier changes failed too ({'; '.join(failed)}); the "
        "workspace may be partly patched. Check it with `read` before trying again.",
        code=exc.code,
    )
