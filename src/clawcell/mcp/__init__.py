"""The MCP bridge: real MCP servers as `MCP.<server>.<tool>()` in cells. (clawcell itself as
an MCP server, `CodeModeServer`, lives in `clawcell.mcp_server`.)

Needs the official SDK: `pip install 'clawcell[mcp]'`. Configure servers by name:

```python
CodeMode(tools=..., mcp_servers={"time": StdioServer(command="mcp-server-time")})
```
"""

from __future__ import annotations

from .. import _lazy
from ._apps import McpAppView, mcp_app_sink
from ._config import HttpServer, ServerConfig, StdioServer, check_servers
from ._runtime import McpServers
from ._server_file import expand_env, load_servers, parse_servers
from ._status import McpServerStatus, ServerState

__all__ = [
    "HttpServer",
    "McpAppView",
    "McpServerStatus",
    "McpServers",
    "ServerConfig",
    "ServerState",
    "StdioServer",
    "check_servers",
    "expand_env",
    "load_servers",
    "mcp_app_sink",
    "parse_servers",
]

# Moved to `clawcell.mcp_server`: the server is a face that uses `CodeMode`, and `CodeMode`
# uses this package.
__getattr__ = _lazy.moved_exports(
    __name__,
    dict.fromkeys(("ApprovalPolicy", "CodeModeServer", "serve_http"), "clawcell.mcp_server"),
)
