"""The `clawcell` command line: a table of commands, each a `configure`/`run` pair.

```text
clawcell run CELL.js|-      run one cell, print its envelope as JSON
clawcell wait RUN_ID        continue a parked cell (with --store and --session)
clawcell repl               type cells interactively against the configured tools
clawcell mcp serve          offer exec and wait to an MCP client (stdio or HTTP)
clawcell demo               a short guided tour
```
"""

from __future__ import annotations

from ._command import Command, build_parser, run_cli
from ._mcp import configure_mcp, run_mcp
from ._repl import configure_repl, format_envelope, run_repl
from ._run import configure_run, configure_wait, run_cell, wait_cell
from ._runtime import add_cell_options, open_settings_store, settings_from, store_option
from ._settings import (
    MEMORY,
    Settings,
    limit_names,
    load_settings,
    load_tools,
    parse_limits,
    state_directory,
)

__all__ = [
    "MEMORY",
    "Command",
    "Settings",
    "add_cell_options",
    "build_parser",
    "configure_mcp",
    "configure_repl",
    "configure_run",
    "configure_wait",
    "format_envelope",
    "limit_names",
    "load_settings",
    "load_tools",
    "open_settings_store",
    "parse_limits",
    "run_cell",
    "run_cli",
    "run_mcp",
    "run_repl",
    "settings_from",
    "state_directory",
    "store_option",
    "wait_cell",
]
