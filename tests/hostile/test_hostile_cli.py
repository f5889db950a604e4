"""Hostile input to the `clawcell` command: damaged stores, files that are not what they
claim, tool modules that misbehave while imported, out-of-range limits and unusable MCP
headers. Each is one `clawcell: …` line with exit status 2 (or a working run for what only
concerns one MCP server), changes no file it was given, and a clean run right after works."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from clawcell.cli._main import main

_MODULES = {
    "exits_on_import": "import sys\nsys.exit(3)\n",
    "syntax_error": "def broken(:\n",
    "recursion_on_import": "def f():\n    return f()\nf()\n",
    "factory_raises": "def TOOLS():\n    raise ValueError('factory broke')\n",
    "not_tools": "TOOLS = 42\n",
}


def _store(tmp_path: Path) -> Path:
    path = tmp_path / "good.db"
    assert (
        main(["run", _cell(tmp_path, "await store('k', 1); return 1;"), "--store", str(path)]) == 0
    )
    return path


def _cell(tmp_path: Path, code: str, name: str = "cell.js") -> str:
    path = tmp_path / name
    path.write_text(code, "utf-8")
    return str(path)


def _damaged(tmp_path: Path, damage: Callable[[bytes], bytes]) -> str:
    good = _store(tmp_path).read_bytes()
    bad = tmp_path / "damaged.db"
    bad.write_bytes(damage(good))
    return str(bad)


STORES: dict[str, Callable[[Path], str]] = {
    "truncated_store": lambda t: _damaged(t, lambda b: b[:200]),
    "header_then_junk": lambda t: _damaged(t, lambda b: b[:16] + b"\xff" * 4096),
    "zeroed_header": lambda t: _damaged(t, lambda b: b"\0" * 100 + b[100:]),
    "text_file": lambda t: _cell(t, "tools = []\n", "notes.db"),
    "character_device": lambda _t: os.devnull,
    "store_in_a_file_as_directory": lambda t: _cell(t, "x", "afile") + "/state.db",
}


def _clean_run_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["run", _cell(tmp_path, "return 40 + 2;", "clean.js")]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 42


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("clawcell: ") and captured.err.count("\n") == 1
    assert "Traceback" not in captured.err
    return captured.err


@pytest.mark.parametrize("make", STORES.values(), ids=STORES.keys())
def test_a_damaged_or_wrong_store_is_refused_in_one_line_and_left_alone(
    make: Callable[[Path], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = make(tmp_path)
    before = Path(store).read_bytes() if Path(store).is_file() else None
    cell = _cell(tmp_path, "await store('k', 2); return await load('k');")
    capsys.readouterr()
    assert main(["run", cell, "--store", store]) == 2
    _one_line(capsys)
    if before is not None:
        assert Path(store).read_bytes() == before
    _clean_run_works(tmp_path, capsys)


@pytest.mark.parametrize("source", _MODULES.values(), ids=_MODULES.keys())
def test_a_tools_module_that_misbehaves_is_one_line(
    source: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = f"hostile_tools_{abs(hash(source))}"
    (tmp_path / f"{name}.py").write_text(source, "utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert main(["run", _cell(tmp_path, "return 1;"), "--tools", f"{name}:TOOLS"]) == 2
    assert f"{name}:TOOLS" in _one_line(capsys)
    _clean_run_works(tmp_path, capsys)


CELLS: dict[str, bytes] = {
    "utf16_cell": "return 1;".encode("utf-16"),
    "random_bytes": bytes(range(128, 256)),
    "only_whitespace": b"\n\t  \n",
    "lone_surrogate_bytes": b"return '\xed\xa0\x80';",
}


@pytest.mark.parametrize("data", CELLS.values(), ids=CELLS.keys())
def test_a_cell_file_that_is_not_usable_text_is_one_line(
    data: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cell = tmp_path / "cell.js"
    cell.write_bytes(data)
    assert main(["run", str(cell)]) == 2
    assert "cell.js" in _one_line(capsys)
    _clean_run_works(tmp_path, capsys)


LIMITS = ["timeoutMs=0", "timeoutMs=-1", "memoryLimitBytes=1", "maxPendingToolCalls=10**9",
          "timeoutMs=1e3", "snapshotTtlSeconds=999999999999999999999999"]  # fmt: skip


@pytest.mark.parametrize("limit", LIMITS)
def test_a_limit_out_of_range_is_refused_not_clamped(
    limit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", _cell(tmp_path, "return 1;"), "--limit", limit]) == 2
    assert "--limit" in _one_line(capsys)
    _clean_run_works(tmp_path, capsys)


def test_a_config_file_with_a_limit_out_of_range_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "clawcell.toml"
    config.write_text("[limits]\ntimeoutMs = 600000\n", "utf-8")
    assert main(["run", _cell(tmp_path, "return 1;"), "--config", str(config)]) == 2
    assert _one_line(capsys) == (
        f"clawcell: {config}: limit 'timeoutMs': 600000 is outside 100–60000; pick a value in it.\n"
    )
    _clean_run_works(tmp_path, capsys)


def test_an_mcp_header_that_http_cannot_send_fails_that_server_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = {"docs": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer …"}}}
    mcp = tmp_path / "mcp.json"
    mcp.write_text(json.dumps({"mcpServers": servers}, ensure_ascii=False), "utf-8")
    assert main(["run", _cell(tmp_path, "return 5;"), "--mcp", str(mcp)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["value"] == 5
    assert captured.err.count("\n") == 1  # one warning line, said once
    assert "header 'Authorization' holds '…'" in captured.err
    _clean_run_works(tmp_path, capsys)


def test_wait_on_an_unknown_run_in_a_real_store_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _store(tmp_path)
    capsys.readouterr()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert main(["wait", "cm_forged", "--store", str(store)]) == 2
    assert _one_line(capsys) == "clawcell: code mode run is unavailable or expired.\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    _clean_run_works(tmp_path, capsys)
