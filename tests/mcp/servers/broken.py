"""A hand-written stdio MCP server that answers `tools/call` with a malformed result.

It speaks just enough JSON-RPC for the handshake-era protocol: it refuses `server/discover`
(so the client falls back to `initialize`), lists one tool, and answers every call with
`content` that is not a list.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def reply(message_id: Any, result: Any = None, error: Any = None) -> None:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": message_id}
    body["error" if error is not None else "result"] = error if error is not None else result
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


TOOL = {"name": "bad", "description": "Answers malformed.", "inputSchema": {"type": "object"}}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            continue
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            reply(
                message_id,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "broken", "version": "0"},
                },
            )
        elif method == "tools/list":
            reply(message_id, {"tools": [TOOL]})
        elif method == "tools/call":
            reply(message_id, {"content": "not a list", "isError": "maybe"})
        else:
            reply(message_id, error={"code": -32601, "message": f"Method not found: {method}"})


if __name__ == "__main__":
    main()
