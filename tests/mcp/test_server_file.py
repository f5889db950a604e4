"""Server lists from files: Claude Desktop / Cursor `mcpServers` JSON and `clawcell.toml`."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from clawcell import ConfigurationError
from clawcell.mcp import HttpServer, StdioServer, load_servers, parse_servers

CLAUDE_DESKTOP = {
    "mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "docs": {"url": "http://127.0.0.1:8931/mcp", "headers": {"X-Team": "blue"}},
        "off": {"command": "never-started", "disabled": True},
        "clawcell": {"command": "/usr/local/bin/clawcell", "args": ["mcp", "serve"]},
        "clawcell-module": {"command": "python3", "args": ["-m", "clawcell", "mcp", "serve"]},
    }
}


def test_a_claude_desktop_file_gives_stdio_and_http_servers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps(CLAUDE_DESKTOP), "utf-8")
    with caplog.at_level(logging.WARNING, logger="clawcell.mcp"):
        servers = load_servers(path)
    assert servers == {
        "time": StdioServer(command="uvx", args=("mcp-server-time",), env={"TZ": "UTC"}),
        "docs": HttpServer(url="http://127.0.0.1:8931/mcp", headers={"X-Team": "blue"}),
    }
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: skipping MCP server 'clawcell', which is clawcell itself",
        f"{path}: skipping MCP server 'clawcell-module', which is clawcell itself",
    ]


def test_a_clawcell_toml_gives_servers_with_their_policy(tmp_path: Path) -> None:
    path = tmp_path / "clawcell.toml"
    path.write_text(
        '[mcp.servers.git]\ncommand = "mcp-server-git"\ndeny = ["git_reset"]\ntimeout = 5\n',
        "utf-8",
    )
    assert load_servers(path) == {
        "git": StdioServer(command="mcp-server-git", deny=("git_reset",), timeout=5.0)
    }


def test_environment_variables_fill_headers_so_tokens_stay_out_of_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCS_TOKEN", "s3cret")
    entry = {
        "url": "https://docs.example/mcp",
        "headers": {"Authorization": "Bearer ${env:DOCS_TOKEN}"},
    }
    assert parse_servers({"docs": entry}) == {
        "docs": HttpServer(
            url="https://docs.example/mcp", headers={"Authorization": "Bearer s3cret"}
        )
    }


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        pytest.param(
            {"url": "https://x.example/mcp", "headers": {"A": "${MISSING_VAR_X}"}},
            "configuration: MCP server 'x': environment variable 'MISSING_VAR_X' is not set; "
            "set it or write the value.",
            id="unset_variable",
        ),
        pytest.param(
            {"type": "sse", "url": "https://x.example/sse"},
            "configuration: MCP server 'x': `type` 'sse' is not supported; use \"stdio\" or "
            '"http" (streamable HTTP; the older SSE transport is not supported).',
            id="sse",
        ),
        pytest.param(
            {"command": "x", "args": "--flag"},
            "configuration: MCP server 'x': `args` must be a list of strings, got '--flag'.",
            id="args_not_a_list",
        ),
        pytest.param(
            {"args": []},
            "configuration: MCP server 'x': `command` must be a non-empty string, got None.",
            id="no_command",
        ),
        pytest.param(
            {"command": "x", "timeout": "soon"},
            "configuration: MCP server 'x': `timeout` must be a number, got 'soon'.",
            id="timeout_not_a_number",
        ),
        pytest.param(
            {"command": "x", "connectTimeout": [5]},
            "configuration: MCP server 'x': `connectTimeout` must be a number, got [5].",
            id="connect_timeout_not_a_number",
        ),
        pytest.param("x", "configuration: MCP server 'x' must be an object.", id="not_an_object"),
    ],
)
def test_a_bad_entry_is_refused_with_what_to_fix(entry: object, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        parse_servers({"x": entry})
    assert caught.value.message == message


def test_a_file_without_servers_says_which_shapes_are_read(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text("{}", "utf-8")
    with pytest.raises(ConfigurationError) as caught:
        load_servers(path)
    assert caught.value.message == (
        f"{str(path)!r} has no MCP servers: expected an `mcpServers` object (the Claude "
        "Desktop / Cursor format) or an `[mcp.servers]` table."
    )


def test_a_file_that_is_not_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{", "utf-8")
    with pytest.raises(ConfigurationError) as caught:
        load_servers(path)
    assert caught.value.message.startswith(f"{str(path)!r} is not valid JSON: ")


def test_the_connect_timeout_is_read_apart_from_the_request_timeout() -> None:
    entry = {"command": "x", "timeout": 2, "connectTimeout": 45}
    assert parse_servers({"x": entry}) == {
        "x": StdioServer(command="x", timeout=2.0, connect_timeout=45.0)
    }


def test_a_non_positive_timeout_is_refused() -> None:
    for build, name in (
        (lambda: StdioServer(command="x", timeout=0), "timeout"),
        (lambda: StdioServer(command="x", connect_timeout=0), "connect_timeout"),
    ):
        with pytest.raises(ConfigurationError) as caught:
            build()
        assert caught.value.message == f"StdioServer: `{name}` must be a positive number, got 0."
