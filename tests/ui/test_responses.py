"""Every route reads a request body through the one capped reader of `ui/_responses.py`."""

from __future__ import annotations

import ast
from pathlib import Path

import clawcell.ui

UI = Path(clawcell.ui.__file__).parent
READERS = {"body", "json", "form", "stream"}


def _body_reads(path: Path) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in READERS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "request"
    ]


def test_only_the_capped_reader_reads_a_request_body() -> None:
    # A route reading `request.body()` itself takes a body of any size into memory before
    # looking at it (the MCP App routes did); `read_capped` refuses a declared length over
    # the cap unread and stops reading at the chunk that passes it.
    reads = {
        str(path.relative_to(UI)): lines
        for path in sorted(UI.rglob("*.py"))
        if (lines := _body_reads(path))
    }
    assert list(reads) == ["_responses.py"], reads
