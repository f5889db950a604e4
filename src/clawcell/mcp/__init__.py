"""The MCP bridge: real MCP servers as `MCP.<server>.<tool>()` in cells.

Needs the official SDK: `pip install 'clawcell[mcp]'`. Configure servers by name:

```python
CodeMode(tools=..., mcp_servers={"time": StdioServer(command="mcp-server-time")})
```
"""

from __future__ import annotations

from ._config import HttpServer, ServerConfig, StdioServer
from ._runtime import McpServers
from ._status import McpServerStatus, ServerState

__all__ = [
    "HttpServer",
    "McpServerStatus",
    "McpServers",
    "ServerConfig",
    "ServerState",
    "StdioServer",
]
