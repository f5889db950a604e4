"""A second hostile stdio MCP server, for `test_hostile_mcp_rogue.py`: it breaks the
protocol around otherwise valid answers (floods of notifications and stderr, requests of
its own, duplicate and stray responses, bytes that are not UTF-8) and lists tools whose
names and schemas are malformed.

`python -m tests.hostile._rogue_server SCENARIO`; each `tools/call` misbehaves as its tool
name says. It speaks raw JSON-RPC lines, as `tests/mcp/servers/malicious.py` does.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from tests.mcp.servers._lines import reply as _reply
from tests.mcp.servers._lines import send as _send
from tests.mcp.servers._lines import serve

OBJECT: dict[str, Any] = {"type": "object"}
REF_CYCLE: dict[str, Any] = {
    "type": "object",
    "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
    "properties": {"p": {"$ref": "#/$defs/a"}},
}
SELF_REF: dict[str, Any] = {
    "type": "object",
    "properties": {"child": {"$ref": "#"}, "list": {"type": "array", "items": {"$ref": "#"}}},
}
BAD_TYPES: dict[str, Any] = {
    "type": "object",
    "properties": {
        "a": {"type": 42},
        "b": {"type": "no_such_type"},
        "c": {"enum": "x"},
        "d": {"minimum": "zero", "items": 5},
    },
    "required": ["missing"],
}
CALLS = [
    "ok",
    "notification_flood",
    "stderr_flood",
    "asks_for_sampling",
    "asks_for_roots",
    "pings_first",
    "stray_then_real",
    "answers_twice",
    "result_and_error",
    "junk_content",
    "error_flag_with_junk",
    "wide_structured",
    "not_utf8",
    "null_result",
]


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def listing(scenario: str) -> Any:
    if scenario == "bad_entries":  # the SDK refuses the whole listing
        return [
            {"name": "schema_number", "description": "x", "inputSchema": 42},
            {"name": 7, "description": "x", "inputSchema": OBJECT},
            {"description": "nameless", "inputSchema": OBJECT},
            {"name": "ok", "description": "Fine.", "inputSchema": OBJECT},
        ]
    if scenario == "odd_schemas":
        return [
            {"name": "ref_cycle", "inputSchema": REF_CYCLE},
            {"name": "self_ref", "inputSchema": SELF_REF},
            {"name": "bad_types", "inputSchema": BAD_TYPES},
            {"name": "ok", "description": "Fine.", "inputSchema": OBJECT},
        ]
    if scenario == "not_a_list":
        return {"ok": {"inputSchema": OBJECT}}
    return [{"name": name, "description": "Rogue.", "inputSchema": OBJECT} for name in CALLS]


def call(message_id: Any, name: str) -> None:
    if name == "notification_flood":
        for i in range(5000):
            note = {"level": "info", "data": f"log {i}"}
            _send({"jsonrpc": "2.0", "method": "notifications/message", "params": note})
    elif name == "stderr_flood":
        chunk = "e" * 65536 + "\n"
        for _ in range(16):  # 1 MiB: more than any pipe buffer holds
            sys.stderr.write(chunk)
        sys.stderr.flush()
    elif name == "asks_for_sampling":
        params: dict[str, Any] = {"messages": [], "maxTokens": 1}
        _send({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": params})
    elif name == "asks_for_roots":
        _send({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
    elif name == "pings_first":
        _send({"jsonrpc": "2.0", "id": "p1", "method": "ping"})
    elif name == "stray_then_real":
        _reply(987654, _text("stray"))
    elif name == "answers_twice":
        _reply(message_id, _text("first"))
    elif name == "result_and_error":
        error = {"code": -32603, "message": "both"}
        body = {"jsonrpc": "2.0", "id": message_id, "result": _text("r"), "error": error}
        _send(body)
        return
    elif name == "junk_content":
        junk = [
            {"type": "text", "text": 5},
            {"type": "image", "data": "!!!not base64!!!", "mimeType": "image/png"},
            {"type": "mystery", "payload": [1, 2]},
            "not an object",
        ]
        _reply(message_id, {"content": junk})
        return
    elif name == "error_flag_with_junk":
        _reply(message_id, {"content": [{"type": "text", "text": "bad */ end"}], "isError": True})
        return
    elif name == "wide_structured":
        rows = [{"i": i, "v": "w" * 10} for i in range(20000)]
        _reply(message_id, {"content": [], "structuredContent": {"rows": rows}})
        return
    elif name == "not_utf8":
        sys.stdout.buffer.write(b'{"jsonrpc": "2.0", "method": "x\xff\xfe"}\n')
        sys.stdout.flush()
    elif name == "null_result":
        _reply(message_id, None)
        return
    _reply(message_id, _text(name))
    if name == "answers_twice":
        _reply(message_id, _text("second"))


def main() -> None:
    scenario = sys.argv[1] if len(sys.argv) > 1 else "calls"
    if scenario == "exits_at_start":
        os._exit(3)
    serve("rogue", listing(scenario), call)


if __name__ == "__main__":
    main()
