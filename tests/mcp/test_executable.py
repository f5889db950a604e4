"""A stdio server's bare command is found in the running environment's scripts folder when
`PATH` does not hold it (a venv that is not activated)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from clawcell.mcp import StdioServer
from clawcell.mcp._executable import environment_scripts, resolve_command

from ._helpers import BIN, run_cells, value


def _script(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n", "utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_command_not_on_path_is_found_in_the_scripts_folder(tmp_path: Path) -> None:
    scripts = tmp_path / "bin"
    scripts.mkdir()
    found = _script(scripts, "my-server")
    empty = tmp_path / "empty"
    empty.mkdir()
    got = resolve_command("my-server", {"PATH": str(empty)}, scripts=[str(scripts)])
    assert got == str(found)


def test_path_wins_over_the_scripts_folder(tmp_path: Path) -> None:
    on_path, scripts = tmp_path / "path", tmp_path / "bin"
    on_path.mkdir()
    scripts.mkdir()
    _script(on_path, "my-server")
    _script(scripts, "my-server")
    assert resolve_command("my-server", {"PATH": str(on_path)}, scripts=[str(scripts)]) == (
        "my-server"
    )


def test_the_process_path_is_searched_when_the_server_sets_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_path, scripts = tmp_path / "path", tmp_path / "bin"
    on_path.mkdir()
    scripts.mkdir()
    _script(on_path, "my-server")
    _script(scripts, "my-server")
    monkeypatch.setenv("PATH", str(on_path))
    assert resolve_command("my-server", None, scripts=[str(scripts)]) == "my-server"


@pytest.mark.parametrize("command", ["./my-server", "sub/my-server"])
def test_a_command_with_a_folder_is_used_as_written(tmp_path: Path, command: str) -> None:
    scripts = tmp_path / "bin"
    scripts.mkdir()
    _script(scripts, "my-server")
    assert resolve_command(command, {"PATH": ""}, scripts=[str(scripts)]) == command


def test_a_command_found_nowhere_is_left_for_the_start_to_report(tmp_path: Path) -> None:
    assert resolve_command("no-such-server", {"PATH": str(tmp_path)}, scripts=[str(tmp_path)]) == (
        "no-such-server"
    )


def test_the_scripts_folder_is_the_one_of_this_python() -> None:
    assert str(BIN) in environment_scripts()


def test_a_server_installed_in_this_venv_runs_without_path_edits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert (BIN / "mcp-server-time").is_file()  # installed with the test extras
    monkeypatch.setenv("PATH", os.defpath)  # as a shell where the venv is not activated
    (envelope,) = run_cells(
        {"time": StdioServer(command="mcp-server-time", args=["--local-timezone", "UTC"])},
        'return (await MCP.time.convertTime({ source_timezone: "UTC", time: "12:00", '
        'target_timezone: "Asia/Tokyo" })).structuredContent.target.timezone;',
    )
    assert value(envelope) == "Asia/Tokyo"
