"""Where a stdio server's bare command is found: on `PATH`, else beside this Python.

`pip install mcp-server-time` into the virtualenv that holds clawcell puts the executable in
that environment's scripts folder (`.venv/bin`), which is on `PATH` only while the
environment is activated. A program started as `.venv/bin/python app.py` finds it all the
same: a bare command that `PATH` does not hold is looked up in the scripts folder of the
running interpreter's environment. `PATH` still wins, so an activated environment or an
explicit `PATH` behaves as before, and a command with a folder in it is used as written.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["environment_scripts", "resolve_command"]


def environment_scripts() -> list[str]:
    """The folders that hold the running environment's console scripts, first the venv's."""
    folders = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    return list(dict.fromkeys(folder for folder in folders if folder))


def resolve_command(
    command: str,
    env: Mapping[str, str] | None,
    *,
    scripts: Sequence[str] | None = None,
) -> str:
    """`command` as the subprocess should be started.

    Args:
        command: The server's command, e.g. `"mcp-server-time"`.
        env: The server's extra environment; its `PATH`, if any, is the one searched.
        scripts: The folders to try after `PATH` (default: `environment_scripts()`).

    Returns:
        `command` unchanged when it names a folder or `PATH` finds it; else its full path in
        the first scripts folder that holds it; else `command` unchanged (the start then fails
        with the usual "not found").
    """
    if os.sep in command or (os.altsep is not None and os.altsep in command):
        return command
    path = (env or {}).get("PATH", os.environ.get("PATH", os.defpath))
    if shutil.which(command, path=path) is not None:
        return command
    for folder in environment_scripts() if scripts is None else scripts:
        found = shutil.which(command, path=folder)
        if found is not None:
            return found
    return command
