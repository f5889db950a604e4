"""clawcell itself as an MCP server: one `CodeMode` offered to MCP clients as `exec` and `wait`
(`CodeModeServer`), over stdio or streamable HTTP (`serve_http`), with the policy that settles
parked cells' approvals (`ApprovalPolicy`). Used by `clawcell mcp serve`; needs the `[mcp]` extra.
"""

from __future__ import annotations

from ._approvals import ApprovalPolicy
from ._http import serve_http
from ._server import CodeModeServer

__all__ = ["ApprovalPolicy", "CodeModeServer", "serve_http"]
