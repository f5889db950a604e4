"""`workspace(root)`: the file tools of one workspace directory, confined to it."""

from __future__ import annotations

import os

from ...catalog import Tool
from ._confinement import Confinement
from ._edit import edit_tool, write_tool
from ._grep import grep_tool
from ._listing import find_tool, list_tool
from ._patch import patch_tool
from ._read import read_tool
from ._workspace_limits import WorkspaceLimits

__all__ = ["workspace"]


def workspace(
    root: str | os.PathLike[str],
    *,
    limits: WorkspaceLimits | None = None,
    read_only: bool = False,
) -> list[Tool]:
    """The workspace tools over the directory `root`.

    Every path the model names resolves inside `root` (symlink-safe; see
    `docs/tools.md`). `read`, `list`, `grep` and `find` are `replay_safe`; `write`, `edit` and
    `apply_patch` are sequential (they never overlap each other or other calls of the catalog).

    Args:
        root: An existing directory; it is resolved once, here.
        limits: Size caps and result bounds (`WorkspaceLimits()` by default).
        read_only: Leave out `write`, `edit` and `apply_patch`.

    Returns:
        `read`, `list`, `grep`, `find` and, unless `read_only`, `write`, `edit`, `apply_patch`.

    Raises:
        ConfigurationError: `root` is not a directory.
    """
    confinement = Confinement.at(root)
    caps = limits or WorkspaceLimits()
    tools = [
        read_tool(confinement, caps),
        list_tool(confinement, caps),
        grep_tool(confinement, caps),
        find_tool(confinement, caps),
    ]
    if not read_only:
        tools += [
            write_tool(confinement, caps),
            edit_tool(confinement, caps),
            patch_tool(confinement, caps),
        ]
    return tools
