"""The reference servers from PyPI, `mcp-server-git` and `mcp-server-time`, over stdio."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clawcell.mcp import StdioServer

from ._helpers import BIN, run_cells, value

CELL = """
const log = await MCP.git.gitLog({ repo_path: REPO, max_count: 5 });
const converted = await MCP.time.convertTime({
  source_timezone: "Europe/Paris", time: "09:30", target_timezone: "Asia/Tokyo",
});
return {
  log: log.content[0].text,
  tokyo: converted.structuredContent.target.datetime.slice(11, 16),
  difference: converted.structuredContent.time_difference,
};
"""


def _repository(path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "test@example.invalid")
    git("config", "user.name", "Test")
    (path / "a.txt").write_text("one\n")
    git("add", "a.txt")
    git("commit", "-q", "-m", "first commit")
    (path / "a.txt").write_text("two\n")
    git("commit", "-q", "-am", "second commit")


@pytest.mark.slow
def test_a_cell_reads_a_git_log_and_converts_a_time_across_zones(tmp_path: Path) -> None:
    for name in ("mcp-server-git", "mcp-server-time"):
        if not (BIN / name).exists():
            pytest.fail(f"{name} is not installed; run `pip install -e '.[test]'`")
    _repository(tmp_path)
    servers = {
        "git": StdioServer(command=str(BIN / "mcp-server-git")),
        "time": StdioServer(command=str(BIN / "mcp-server-time"), args=["--local-timezone", "UTC"]),
    }
    (envelope,) = run_cells(servers, f"const REPO = {str(tmp_path)!r};\n" + CELL)
    got = value(envelope)
    assert "second commit" in got["log"] and "first commit" in got["log"]
    assert got["log"].index("second commit") < got["log"].index("first commit")
    assert got["tokyo"] in ("16:30", "17:30")  # CET or CEST against JST
    assert got["difference"] in ("+7.0h", "+8.0h")
