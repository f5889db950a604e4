"""The `clawcell` command: `run` prints an envelope, `demo` tours, bad arguments exit 2."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import sysconfig
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

import pytest

from clawcell import Tool
from clawcell.cli._main import main

ROOT = Path(__file__).resolve().parents[2]


async def _double(tool_input: dict[str, Any]) -> Any:
    return {"twice": tool_input["n"] * 2}


TOOLS = [Tool(name="double", execute=_double)]


def make_tools() -> list[Tool]:
    return TOOLS


def _cell(tmp_path: Path, code: str) -> str:
    path = tmp_path / "cell.js"
    path.write_text(code, "utf-8")
    return str(path)


def test_run_prints_the_envelope_of_a_cell_with_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cell = _cell(tmp_path, "text('hi');\nreturn await double({ n: 21 });")
    code = main(["run", cell, "--tools", "tests.cli.test_main:TOOLS", "--limit", "timeoutMs=500"])
    envelope = json.loads(capsys.readouterr().out)
    assert code == 0
    assert envelope["status"] == "completed"
    assert envelope["output"] == [{"type": "text", "text": "hi"}]
    assert envelope["value"] == {"twice": 42}


def test_run_accepts_a_factory_for_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cell = _cell(tmp_path, "return await double({ n: 1 });")
    assert main(["run", cell, "--tools", "tests.cli.test_main:make_tools"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == {"twice": 2}


def test_run_applies_limits_and_exits_1_for_a_failed_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cell = _cell(tmp_path, "while (true) {}")
    assert main(["run", cell, "--limit", "timeoutMs=150"]) == 1
    envelope = json.loads(capsys.readouterr().out)
    assert (envelope["status"], envelope["code"]) == ("failed", "timeout")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["run", "CELL", "--tools", "nocolon"],
            "--tools takes `module:attribute`",
            id="tools_without_colon",
        ),
        pytest.param(
            ["run", "CELL", "--tools", "no_such_module_x:T"],
            "cannot load tools from",
            id="missing_module",
        ),
        pytest.param(
            ["run", "CELL", "--tools", "tests.cli.test_main:ROOT"],
            "must be a Tool or an iterable of Tool values",
            id="not_tools",
        ),
        pytest.param(
            ["run", "CELL", "--limit", "timeoutMs"],
            "--limit takes `name=value`",
            id="limit_without_value",
        ),
        pytest.param(
            ["run", "CELL", "--limit", "timeoutMs=soon"],
            "is not an integer",
            id="limit_not_integer",
        ),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    cell = _cell(tmp_path, "return 1;")
    assert main([cell if a == "CELL" else a for a in argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("clawcell: ")
    assert message in captured.err


def test_a_missing_cell_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "absent.js")]) == 2
    assert "absent.js" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["run"], ["run", "x.js", "--bogus"]], ids=str)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("clawcell") and err.count("\n") == 1
    assert err.endswith(" --help`.\n")


def test_demo_shows_each_step_of_the_tour(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for title in [
        "A cell composes two tools and returns only what matters",
        "Output beyond the budget becomes an exact truncation marker",
        "A tool error is an ordinary, catchable JavaScript error",
        "A busy loop is stopped at the deadline",
    ]:
        assert f"== {title}" in out
    assert '"status": "completed"' in out
    assert '"truncated": true' in out
    assert '"caught": "carrier backend unavailable"' in out
    assert '"error": "code mode timeout exceeded"' in out


def test_demo_ends_with_what_to_try_next(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a shell where this venv is not activated
    monkeypatch.chdir(tmp_path)
    assert main(["demo"]) == 0
    tail = capsys.readouterr().out.split("== What to try next", 1)[1]
    clawcell = str(Path(sysconfig.get_path("scripts")) / "clawcell")
    assert f"  {clawcell} serve --demo\n" in tail
    assert f"  echo 'return 6 * 7;' | {clawcell} run -\n" in tail
    assert "docs/code-mode.md" in tail


def test_demo_names_a_command_under_the_current_directory_by_its_relative_path(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    scripts = Path(sysconfig.get_path("scripts"))
    monkeypatch.chdir(scripts.parent)
    assert main(["demo"]) == 0
    assert f"  {scripts.name}/clawcell serve --demo\n" in capsys.readouterr().out


def test_demo_names_the_command_bare_where_path_finds_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", sysconfig.get_path("scripts"))
    assert main(["demo"]) == 0
    assert "  echo 'return 6 * 7;' | clawcell run -\n" in capsys.readouterr().out


def test_demo_says_to_add_the_ui_extra_where_it_is_missing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name == "starlette" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert main(["demo"]) == 0
    tail = capsys.readouterr().out.split("== What to try next", 1)[1]
    assert "first add the [ui] extra: `pip install 'clawcell[ui]'`" in tail


def test_the_module_runs_as_a_command_in_a_new_process(tmp_path: Path) -> None:
    cell = _cell(tmp_path, "return await double({ n: 5 });")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "clawcell",
            "run",
            cell,
            "--tools",
            "tests.cli.test_main:TOOLS",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["value"] == {"twice": 10}
