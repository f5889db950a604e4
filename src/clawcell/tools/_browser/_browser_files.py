"""Where the `browser` tool writes: screenshots, PDFs and downloads, beneath a fixed root.

Threat model: the media and downloads folders may sit inside a workspace that a sandboxed
`exec` can change. A command that replaces a session's folder (or the folder's parent) with a
symbolic link must not make the browser write elsewhere. So the roots are created and resolved
once, when the tool is built, and every write opens its directory and file relative to a
descriptor of the root with no symbolic link followed anywhere below it (`_beneath`, the code
the workspace tools use: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, or an
`O_NOFOLLOW` walk). Files are created with `O_EXCL`, so an existing file or link is never
reused. Playwright never writes to these folders itself: it hands over bytes (screenshots,
PDFs) or its own temporary copy of a download, which is copied in here.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Final

from ..._lazy import value_class
from ...errors import ToolError
from .._beneath import open_beneath, open_directory

__all__ = ["BrowserFolder", "prepared_root"]

_CREATE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL


def prepared_root(path: Path) -> Path:
    """`path` created (like `mkdir -p`) and resolved, once, before any page or command runs."""
    path.mkdir(parents=True, exist_ok=True)
    return Path(os.path.realpath(path))


@value_class
class BrowserFolder:
    """One session's folder `root/name`, written only beneath `root`.

    Attributes:
        root: The resolved root (made by `prepared_root`).
        name: The session's subfolder.
    """

    root: Path
    name: str

    @property
    def path(self) -> Path:
        """The folder's path, as results show it."""
        return self.root / self.name

    def create(self, file_name: str, data: bytes) -> Path:
        """Write `data` to a new file `file_name`; a `ToolError` if the folder was redirected."""
        fd = self._open(file_name)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return self.path / file_name

    def copy(self, file_name: str, source: Path) -> Path:
        """Copy the file `source` (Playwright's own copy) into a new file `file_name`."""
        fd = self._open(file_name)
        with os.fdopen(fd, "wb") as target, source.open("rb") as origin:
            shutil.copyfileobj(origin, target)
        return self.path / file_name

    def exists(self, file_name: str) -> bool:
        """Whether `file_name` exists in the folder (as anything, links included)."""
        try:
            return os.path.lexists(self.path / file_name)
        except OSError:
            return True

    def _open(self, file_name: str) -> int:
        try:
            directory = open_directory(self.root, [self.name], create=True)
        except OSError as exc:
            raise self._redirected(exc) from None
        try:
            return open_beneath(self.root, [self.name, file_name], _CREATE, 0o644)
        except OSError as exc:
            raise self._redirected(exc) from None
        finally:
            os.close(directory)

    def _redirected(self, exc: OSError) -> ToolError:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EXDEV, errno.EEXIST):
            return ToolError(
                f"The browser did not write to {str(self.path)!r}: that folder (or a file in "
                "it) was replaced by a symbolic link or another file, and the browser writes "
                f"only beneath {str(self.root)!r}. Remove the link; the next call recreates "
                "the folder.",
                code="blocked_path",
            )
        return ToolError(
            f"The browser could not write to {str(self.path)!r}: {exc.strerror}.",
            code="browser_error",
        )
