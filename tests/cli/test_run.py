"""`clawcell run` and `clawcell wait`: stdin, the import path, checked limits, durable runs
continued from another process, MCP servers from a file, `--version`, `python -m clawcell`."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from clawcell.cli._main import main

ROOT = Path(__file__).resolve().parents[2]
PARK = "const n = 20; await yield_control(); return n + 1;"


def _cell(tmp_path: Path, code: str) -> str:
    path = tmp_path / "cell.js"
    path.write_text(code, "utf-8")
    return str(path)


def test_run_reads_the_cell_from_stdin_when_given_a_dash(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("return 6 * 7;"))
    assert main(["run", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 42


def test_run_prints_a_readable_envelope_and_the_telemetry_block_on_request(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("return 6 * 7;"))
    assert main(["run", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "status": "completed",
        "replaySafe": False,
        "output": [],
        "value": 42,
    }
    monkeypatch.setattr(sys, "stdin", io.StringIO("return 6 * 7;"))
    assert main(["run", "-", "--telemetry"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["value"] == 42 and shown["telemetry"]["catalogSize"] == 0


def test_tools_are_imported_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cwd_tools_for_cli.py").write_text(
        "from clawcell import Tool\n"
        "async def hello(params):\n    return 'hello ' + params['name']\n"
        "TOOLS = [Tool(name='hello', execute=hello)]\n",
        "utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    cell = _cell(tmp_path, "return await hello({ name: 'cwd' });")
    assert main(["run", cell, "--tools", "cwd_tools_for_cli:TOOLS"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == "hello cwd"


def test_an_unknown_limit_is_refused_with_the_list_of_valid_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", _cell(tmp_path, "return 1;"), "--limit", "timeout=5"]) == 2
    assert capsys.readouterr().err == (
        "clawcell: --limit: unknown limit 'timeout'; the limits are timeoutMs, "
        "memoryLimitBytes, maxOutputBytes, maxSnapshotBytes, maxPendingToolCalls, "
        "snapshotTtlSeconds, searchDefaultLimit, maxSearchLimit.\n"
    )


def test_a_parked_run_is_continued_by_wait_in_another_invocation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "state.db"
    assert main(["run", _cell(tmp_path, PARK), "--store", str(store), "--session", "s1"]) == 0
    captured = capsys.readouterr()
    parked = json.loads(captured.out)
    assert parked["status"] == "waiting"
    run_id = parked["runId"]
    assert captured.err == (
        "clawcell: the cell is waiting; continue it with: clawcell wait "
        f"{run_id} --store {store} --session s1\n"
    )
    assert main(["wait", run_id, "--store", str(store), "--session", "s1"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 21


def test_wait_in_another_session_does_not_find_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "state.db")
    main(["run", _cell(tmp_path, PARK), "--store", store, "--session", "s1"])
    run_id = json.loads(capsys.readouterr().out)["runId"]
    assert main(["wait", run_id, "--store", store, "--session", "other"]) == 2
    assert capsys.readouterr().err == "clawcell: code mode run is unavailable or expired.\n"


def test_a_run_parked_in_memory_says_it_cannot_be_continued(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", _cell(tmp_path, PARK)]) == 0
    assert capsys.readouterr().err == (
        "clawcell: the cell is waiting, but it was parked in memory and ends with this "
        "process; run it with `--store PATH` to continue it later with `clawcell wait`.\n"
    )


def test_wait_without_a_store_says_which_option_is_needed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["wait", "cm_x"]) == 2
    assert capsys.readouterr().err == (
        "clawcell: `clawcell wait` needs `--store PATH` (and `--session ID`): the store the "
        "cell was parked in by `clawcell run --store PATH`.\n"
    )


def test_run_loads_mcp_servers_from_a_client_config_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "claude_desktop_config.json"
    entry = {
        "command": sys.executable,
        "args": ["-m", "tests.mcp.servers.kitchen"],
        "cwd": str(ROOT),
    }
    config.write_text(json.dumps({"mcpServers": {"kitchen": entry}}), "utf-8")
    cell = _cell(tmp_path, "return (await MCP.kitchen.echo({ value: 'cli' })).structuredContent;")
    assert main(["run", cell, "--mcp", str(config), "--limit", "timeoutMs=20000"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == {
        "toolName": "echo",
        "input": {"value": "cli"},
    }


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out == f"clawcell {version('clawcell')}\n"


def test_python_dash_m_clawcell_runs_a_cell_from_stdin() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clawcell", "run", "-"],
        input="text('piped'); return 1;",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert (envelope["output"], envelope["value"]) == ([{"type": "text", "text": "piped"}], 1)
