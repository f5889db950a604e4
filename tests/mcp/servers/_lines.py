"""Raw JSON-RPC over stdio lines, shared by the hand-written hostile MCP test servers.

They speak the protocol by hand so they can break it in ways the SDK never would; this module
is the part they share: writing a message, answering one, and the request loop.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["reply", "send", "serve"]


def send(body: dict[str, Any] | str) -> None:
    """Write one message (or a raw line) and flush it."""
    sys.stdout.write((body if isinstance(body, str) else json.dumps(body)) + "\n")
    sys.stdout.flush()


def reply(message_id: Any, result: Any) -> None:
    """Answer request `message_id` with `result`."""
    send({"jsonrpc": "2.0", "id": message_id, "result": result})


def serve(name: str, tools: list[Any], call: Callable[[Any, str], None]) -> None:
    """Answer `initialize` and `tools/list` (with `tools`), hand each `tools/call` to `call`,
    refuse other methods; notifications and answers to the server's own requests are read
    and ignored."""
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None or method is None:
            continue
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            info = {"name": name, "version": "0"}
            reply(
                message_id,
                {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info},
            )
        elif method == "tools/list":
            reply(message_id, {"tools": tools})
        elif method == "tools/call":
            call(message_id, message["params"]["name"])
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            send({"jsonrpc": "2.0", "id": message_id, "error": error})
