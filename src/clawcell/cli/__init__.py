"""Every `clawcell` command: a table of commands, each a `configure`/`run` pair.

```text
clawcell run CELL.js|-      run one cell, print its envelope as JSON
clawcell wait RUN_ID        continue a parked cell (with --store and --session)
clawcell repl               type cells interactively against the configured tools
clawcell mcp serve          offer exec and wait to an MCP client (stdio or HTTP)
clawcell chat               chat with an agent in the terminal
clawcell serve              the web Control UI (needs the [ui] extra)
clawcell db upgrade         migrate a durable session store
clawcell demo               a short guided tour
```

This is the top of the package: it may import everything below it, and nothing imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy
from ._command import Command, build_parser, run_cli
from ._main import main
from ._settings import Settings, load_settings

if TYPE_CHECKING:
    from ._chat import configured_agent

__all__ = [
    "Command",
    "Settings",
    "build_parser",
    "configured_agent",
    "load_settings",
    "main",
    "run_cli",
]

__getattr__ = _lazy.lazy_exports(__name__, {"_chat": ["configured_agent"]})
