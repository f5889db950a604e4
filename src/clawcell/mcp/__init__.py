"""The MCP bridge: real MCP servers as `MCP.<server>.<tool>()` in cells, and clawcell itself
as an MCP server (`CodeModeServer`, `clawcell mcp serve`).

Needs the official SDK: `pip install 'clawcell[mcp]'`. Configure servers by name:

```python
CodeMode(tools=..., mcp_servers={"time": StdioServer(command="mcp-server-time")})
```
"""

from __future__ import annotations

from ._approvals import ApprovalPolicy
from ._config import HttpServer, ServerConfig, StdioServer
from ._http import serve_http
from ._runtime import McpServers
from ._server import CodeModeServer
from ._server_file import load_servers, parse_servers
from ._status import McpServerStatus, ServerState

__all__ = [
    "ApprovalPolicy",
    "CodeModeServer",
    "HttpServer",
    "McpServerStatus",
    "McpServers",
    "ServerConfig",
    "ServerState",
    "StdioServer",
    "load_servers",
    "parse_servers",
    "serve_http",
]
