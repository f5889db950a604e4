"""The commands the README and the CLI docs show are valid `clawcell` command lines, and the
Claude Desktop snippet of docs/mcp-server.md starts clawcell's MCP server."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from clawcell.cli._command import build_parser
from clawcell.cli._main import COMMANDS
from clawcell.mcp import parse_servers

ROOT = Path(__file__).resolve().parents[2]


def _bash_lines(path: Path) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", path.read_text("utf-8"), re.S)
    lines = [line.split(" #")[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if "clawcell " in line and not line.startswith("#")]


def _argv(line: str) -> list[str]:
    words = shlex.split(line.rsplit("|", maxsplit=1)[-1])
    return words[words.index(next(w for w in words if w.endswith("clawcell"))) + 1 :]


@pytest.mark.parametrize(
    "line",
    [
        *_bash_lines(ROOT / "README.md"),
        *_bash_lines(ROOT / "docs" / "cli.md"),
        *_bash_lines(ROOT / "docs" / "mcp-server.md"),
    ],
)
def test_every_documented_command_line_parses(line: str) -> None:
    args = build_parser(COMMANDS).parse_args(_argv(line))
    assert callable(args.handler)


def test_the_claude_desktop_snippet_runs_clawcell_mcp_serve() -> None:
    text = (ROOT / "docs" / "mcp-server.md").read_text("utf-8")
    snippet = json.loads(re.findall(r"```json\n(.*?)```", text, re.S)[0])
    entry = snippet["mcpServers"]["clawcell"]
    args = build_parser(COMMANDS).parse_args(entry["args"])
    assert (args.command, args.mcp_command, args.http) == ("mcp", "serve", False)
    assert entry["command"].endswith("/.venv/bin/clawcell")
    # Pointing clawcell at this very file must not make it start itself.
    assert parse_servers(snippet["mcpServers"]) == {}
