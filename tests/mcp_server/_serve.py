"""Helpers for driving `clawcell mcp serve` with the SDK's own client."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncGenerator, Generator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import mcp
from clawcell import Tool
from tests.mcp._helpers import ROOT

START = "<<<EXTERNAL_UNTRUSTED_CONTENT>>>\n"
END = "\n<<<END_EXTERNAL_UNTRUSTED_CONTENT>>>"
SERVE = [sys.executable, "-m", "clawcell", "mcp", "serve"]


def stdio_client_of(*args: str) -> mcp.Client:
    """An SDK client that starts `clawcell mcp serve ARGS` over stdio."""
    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], *args], cwd=str(ROOT))
    return mcp.Client(stdio_client(params))


@asynccontextmanager
async def http_client_of(url: str, token: str | None) -> AsyncGenerator[mcp.Client]:
    """An SDK client of a clawcell HTTP endpoint, sending `token` as a bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    http = create_mcp_http_client(headers=headers)
    try:
        async with mcp.Client(streamable_http_client(url, http_client=http)) as client:
            yield client
    finally:
        await http.aclose()


def text_of(result: Any) -> str:
    """The text of a `CallToolResult`'s first block."""
    return str(result.content[0].text)


def envelope_of(result: Any) -> dict[str, Any]:
    """The envelope in a `CallToolResult`'s text (unwrapped when fenced as untrusted)."""
    text = text_of(result)
    if text.startswith("SECURITY NOTICE:"):
        text = text[text.index(START) + len(START) : text.rindex(END)]
    return json.loads(text)


async def call(client: mcp.Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call `exec`/`wait` and return the envelope."""
    return envelope_of(await client.call_tool(name, arguments))


async def park_then_resume(code: str, *args: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """`exec` `code` in one `clawcell mcp serve` process, then `wait` on it in a fresh one:
    the envelopes of both (the parked run must outlive its server process)."""
    async with stdio_client_of(*args) as first:
        parked = await call(first, "exec", {"code": code})
    async with stdio_client_of(*args) as second:
        resumed = await call(second, "wait", {"runId": parked["runId"]})
    return parked, resumed


@dataclass
class HttpProcess:
    """A `clawcell mcp serve --http` child process and its endpoint."""

    process: subprocess.Popen[str]
    url: str


@contextmanager
def http_server(args: Sequence[str], token: str = "test-token") -> Generator[HttpProcess]:
    """Start `clawcell mcp serve --http --port 0 ARGS`; stop it (if still running) on exit."""
    process = subprocess.Popen(
        [*SERVE, "--http", "--port", "0", "--token", token, *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("clawcell: MCP endpoint http://"), line
        yield HttpProcess(process=process, url=line.split()[-1])
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


def config_file(tmp_path: Path, text: str) -> str:
    """Write a `clawcell.toml` into `tmp_path`; return its path."""
    path = tmp_path / "clawcell.toml"
    path.write_text(text, "utf-8")
    return str(path)


async def _shout(params: dict[str, Any]) -> str:
    print("noise on stdout")  # must not corrupt the stdio protocol
    return str(params.get("word", "")).upper()


NOISY_TOOLS = [Tool(name="shout", execute=_shout)]
"""A tool that prints to stdout, for `--tools tests.mcp_server._serve:NOISY_TOOLS`."""
