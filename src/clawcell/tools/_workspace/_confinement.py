"""Confinement: every workspace path a model names resolves inside the workspace root.

Threat model: the model (or a prompt-injected document it read) names paths to read or write.
It must not reach anything outside the root: no `..`, no absolute paths, no `~`, no symlink
(anywhere on the way) that resolves outside, no device files, FIFOs or sockets (which could
block a read forever or talk to another process). Paths are checked as text first, then
resolved with `os.path.realpath` and compared with the resolved root. What is then opened is
the real path's components beneath a descriptor of the root with no symlink allowed anywhere
(`_beneath`: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` on Linux, an `O_NOFOLLOW`
walk elsewhere), so any component swapped for a symlink or a FIFO after the check — a directory
included — is refused, not followed. Files are opened with `O_NONBLOCK` and checked with
`fstat` after opening.

Paths that the OS cannot take are refused as text (`invalid_path`): lone surrogates (not
Unicode, and `surrogateescape` would turn them into arbitrary bytes), more than 255 components,
components over 255 bytes, and paths over 4,096 bytes once joined to the root.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import Final

from ..._lazy import value_class
from ...errors import ConfigurationError, ToolError
from .._beneath import open_beneath

__all__ = ["Confinement", "display", "not_a_file", "not_found"]

_MAX_PATH: Final = 4096
_MAX_COMPONENT: Final = 255
_MAX_DEPTH: Final = 255
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
_WINDOWS_DRIVE: Final = re.compile(r"^[A-Za-z]:")


def _invalid(path: str, why: str) -> ToolError:
    return ToolError(
        f"Path {path!r} {why}. Use a relative path inside the workspace, such as `notes/a.md`.",
        code="invalid_path",
    )


def _split(path: object) -> list[str]:
    """The path's components, after the textual checks; `[]` for the root itself."""
    if not isinstance(path, str):
        raise ToolError(f"Path must be a string, got {path!r}.", code="invalid_path")
    if not path:
        raise _invalid(path, "is empty")
    if len(path) > _MAX_PATH:
        raise _invalid(path[:64] + "…", f"is longer than {_MAX_PATH} characters")
    if _CONTROL.search(path):
        raise _invalid(path, "contains a control character")
    if _SURROGATE.search(path):
        raise _invalid(path, "contains a lone surrogate, which is not Unicode text")
    if "\\" in path:
        raise _invalid(path, "contains a backslash; separate directories with `/`")
    if path.startswith("/") or _WINDOWS_DRIVE.match(path):
        raise _invalid(path, "is absolute")
    if path.startswith("~"):
        raise _invalid(path, "starts with `~`; home directories are outside the workspace")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise _invalid(path, "contains `..`")
    if len(parts) > _MAX_DEPTH:
        raise _invalid(path[:64] + "…", f"has more than {_MAX_DEPTH} components")
    if any(len(part.encode("utf-8")) > _MAX_COMPONENT for part in parts):
        raise _invalid(path, f"has a component longer than {_MAX_COMPONENT} bytes")
    return parts


def display(parts: list[str]) -> str:
    """The normalized relative path shown to the model (`.` for the root)."""
    return "/".join(parts) or "."


@value_class
class Confinement:
    """Resolves model-given paths inside `root` and refuses everything else.

    Attributes:
        root: The workspace root, resolved (symlinks followed) when the tools are built.
    """

    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str]) -> Confinement:
        """A confinement at `root`, which must be an existing directory."""
        resolved = Path(os.path.realpath(root))
        if not resolved.is_dir():
            raise ConfigurationError(
                f"Workspace root {str(root)!r} is not a directory. Create it or pass another root."
            )
        return cls(root=resolved)

    def normalize(self, path: object) -> str:
        """The normalized relative form of `path` (textual checks only)."""
        return display(_split(path))

    def resolve(self, path: object) -> Path:
        """The real path of `path`, which must stay inside the root (it need not exist)."""
        parts = _split(path)
        joined = self.root.joinpath(*parts)
        if len(os.fsencode(joined)) >= _MAX_PATH:
            raise _invalid(str(path)[:64] + "…", f"is over {_MAX_PATH} bytes once in the workspace")
        try:
            real = Path(os.path.realpath(joined))
        except (OSError, ValueError) as exc:
            raise _invalid(str(path)[:64], f"cannot be resolved ({exc})") from exc
        if real != self.root and not real.is_relative_to(self.root):
            raise ToolError(
                f"Path {path!r} resolves outside the workspace through a symbolic link. "
                "Name a file inside the workspace.",
                code="outside_workspace",
            )
        return real

    def relative(self, real: Path) -> str:
        """The model-facing relative path of a resolved path inside the root."""
        return display(self.parts(real))

    def parts(self, real: Path) -> list[str]:
        """The components of a resolved path below the root (`[]` for the root)."""
        return list(real.relative_to(self.root).parts)

    def open_directory(self, path: object, real: Path) -> int:
        """A descriptor of the resolved directory `real`, opened beneath the root."""
        try:
            return open_beneath(self.root, self.parts(real), os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise not_found(path) from exc
        except OSError as exc:
            raise _unreadable(path, exc) from exc

    def open_file(self, path: object, *, max_bytes: int) -> tuple[Path, bytes]:
        """The resolved path and contents of an existing regular file of at most `max_bytes`."""
        real = self.resolve(path)
        fd = self._open_regular(path, real)
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                raise ToolError(
                    f"File {path!r} has {size} bytes, more than the {max_bytes}-byte read cap. "
                    "Read a part with `grep`, or raise `max_read_bytes`.",
                    code="file_too_large",
                )
            return real, handle.read(max_bytes + 1)[:max_bytes]

    def _open_regular(self, path: object, real: Path) -> int:
        try:
            fd = open_beneath(self.root, self.parts(real), os.O_RDONLY | os.O_NONBLOCK)
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise not_found(path) from exc
        except IsADirectoryError as exc:
            raise not_a_file(path, "a directory") from exc
        except OSError as exc:
            raise _unreadable(path, exc) from exc
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            kind = "a directory" if stat.S_ISDIR(mode) else "a device, FIFO or socket"
            raise not_a_file(path, kind)
        return fd

    def existing_kind(self, real: Path) -> str | None:
        """`"file"`, `"dir"`, `"other"` or `None` for what `real` is (without following)."""
        try:
            mode = os.lstat(real).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISREG(mode):
            return "file"
        return "dir" if stat.S_ISDIR(mode) else "other"


def _unreadable(path: object, exc: OSError) -> ToolError:
    if exc.errno in (errno.ELOOP, errno.EXDEV):
        return ToolError(
            f"Cannot open {path!r}: a part of it is a symbolic link now (it changed after the "
            "check, or loops). Try again, or name the file the link points to.",
            code="unreadable",
        )
    return ToolError(f"Cannot open {path!r}: {exc.strerror}.", code="unreadable")


def not_found(path: object) -> ToolError:
    """The `not_found` error for a missing path."""
    return ToolError(
        f"File {path!r} does not exist. Check the name with `list` or `find`, "
        "or pass `optional: true` to get a `not_found` result instead.",
        code="not_found",
    )


def not_a_file(path: object, kind: str) -> ToolError:
    """The `not_a_file` error for a directory, device, FIFO or socket."""
    return ToolError(
        f"Path {path!r} is {kind}, not a regular file. Use `list` for directories.",
        code="not_a_file",
    )
