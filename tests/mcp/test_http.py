"""Streamable HTTP on loopback: the test server on an ephemeral 127.0.0.1 port."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from clawcell.mcp import HttpServer

from ._helpers import ROOT, run_cells, value


@pytest.fixture
def http_url() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp.servers.kitchen", "--http"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def test_a_cell_calls_tools_and_reads_resources_over_streamable_http(http_url: str) -> None:
    (envelope,) = run_cells(
        {"docs": HttpServer(url=http_url)},
        """return {
          echo: (await MCP.docs.echo({ value: "over http" })).structuredContent,
          resource: (await MCP.docs.resources.read({ uri: "memo://one" })).contents[0].text,
        };""",
    )
    assert value(envelope) == {
        "echo": {"toolName": "echo", "input": {"value": "over http"}},
        "resource": "hello memo",
    }


@pytest.mark.parametrize(
    ("headers", "shown"),
    [
        ({"Authorization": "Bearer …"}, "the value of header 'Authorization' holds '…' at 7"),
        ({"X-Tøken": "abc"}, "the name of header 'X-Tøken' holds 'ø' at 3"),
        ({"X-Line": "a\r\nInjected: 1"}, "the value of header 'X-Line' holds '\\r' at 1"),
    ],
    ids=["non_ascii_value", "non_ascii_name", "line_break"],
)
def test_a_header_http_cannot_send_fails_only_its_server(
    http_url: str, headers: dict[str, str], shown: str
) -> None:
    servers = {"bad": HttpServer(url=http_url, headers=headers), "good": HttpServer(url=http_url)}
    plain, good, bad = run_cells(
        servers,
        "return 1;",
        'return (await MCP.good.echo({ value: "fine" })).structuredContent.input;',
        "try { await MCP.bad.echo({ value: 1 }); } catch (e) { return e.message; }",
    )
    assert value(plain) == 1
    assert value(good) == {"value": "fine"}
    message = value(bad)
    assert "MCP server `bad` could not be started or reached" in message
    assert shown.replace(" at ", " at position ") in message
