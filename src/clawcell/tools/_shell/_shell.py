"""`shell(root)`: the `exec` and `process` tools of one workspace directory."""

from __future__ import annotations

import dataclasses
import os

from ...catalog import Tool
from .._workspace._confinement import Confinement
from ._cgroup import Cgroups
from ._process_bound import leased_uids
from ._process_table import ProcessTable
from ._process_tool import process_tool
from ._sandbox import Sandbox, check_root_visible
from ._shell_exec import ShellContext, exec_tool
from ._shell_settings import ShellSettings

__all__ = ["shell"]


def shell(root: str | os.PathLike[str], *, settings: ShellSettings | None = None) -> list[Tool]:
    """`exec` and `process` over the directory `root`.

    Commands run with `root` (or a `workdir` inside it) as working directory, a scrubbed
    environment, resource limits and, when bubblewrap works, in an OS sandbox without network
    that can write only the workspace (see `docs/tools.md#shell`). Neither tool is replay-safe.
    Under the default `approval = "ask"`, `exec` and `process` `write` wait for a person's
    decision unless the command matches `allow_commands`; the session `ToolPolicy` can allow
    them (`allow=["exec"]`). Running commands are killed when the `CodeMode` or agent holding
    the tools closes.

    Args:
        root: An existing directory; it is resolved once, here.
        settings: Timeouts, caps, limits, sandbox and approval (`ShellSettings()` by default).

    Returns:
        `exec` and `process`, sharing one table of sessions.

    Raises:
        ConfigurationError: `root` is not a directory, `sandbox = "required"` and
            bubblewrap cannot run, or `max_processes` is set and nothing on this host can
            enforce it (see `_process_bound`).
    """
    chosen = settings or ShellSettings()
    confinement = Confinement.at(root)
    cgroups = Cgroups.find()
    sandbox = Sandbox.choose(
        confinement.root, chosen.sandbox, tmp_bytes=chosen.tmp_bytes, reaper=cgroups is None
    )
    if sandbox.bwrap is not None:
        check_root_visible(confinement.root)
    table = ProcessTable(
        max_sessions=chosen.max_sessions,
        max_finished=chosen.max_finished_sessions,
        capacity=chosen.max_output_chars,
        max_processes=chosen.processes,
        cgroups=cgroups,
        uids=leased_uids(chosen, sandbox, cgroups),
        write_root=confinement.root,
        max_write_bytes=chosen.max_write_bytes,
    )
    context = ShellContext(confinement=confinement, settings=chosen, sandbox=sandbox, table=table)
    return [
        dataclasses.replace(exec_tool(context), on_close=table.close),
        dataclasses.replace(process_tool(context), on_close=table.close),
    ]
