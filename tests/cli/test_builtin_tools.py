"""Built-in tools (`clawcell.tools`) enabled from `clawcell.toml`, through the commands that
read it: `run` (as `wait`, `repl` and `mcp serve` do), `chat` and `serve`."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import sys
from pathlib import Path

import httpx
import pytest

from clawcell.cli import load_settings
from clawcell.cli._main import main
from tests.agent._wire import WireServer
from tests.agent.models.test_openai_chat import text_stream, tool_call_stream
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[2]
READ_NOTE = "return (await read({ path: 'note.txt' })).text;"


def _config(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "note.txt").write_text("hi from the workspace\n", "utf-8")
    config = tmp_path / "clawcell.toml"
    config.write_text(f'[builtin_tools.workspace]\nroot = "notes"\nread_only = true\n{extra}')
    return config


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}


def test_the_workspace_root_is_resolved_against_the_config_file(tmp_path: Path) -> None:
    settings = load_settings(_config(tmp_path))
    assert settings.builtin_tools == {
        "workspace": {"root": str(tmp_path.resolve() / "notes"), "read_only": True}
    }
    assert [t.name for t in settings.build_tools()] == ["read", "list", "grep", "find"]


def test_run_offers_the_built_in_tools_of_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path)
    monkeypatch.chdir(ROOT)  # the root is the config file's `notes`, not the cwd's
    monkeypatch.setattr(sys, "stdin", io.StringIO(READ_NOTE))
    assert main(["run", "-", "--config", str(config)]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == "hi from the workspace\n"


def test_a_wrong_built_in_tools_table_is_refused_with_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("return 1;"))
    config = tmp_path / "clawcell.toml"
    config.write_text('[builtin_tools.workspace]\nroot = "."\nreadonly = true\n')
    assert main(["run", "-", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        "clawcell: Unknown key 'readonly' in tools config `workspace`; known keys: "
        "'max_read_bytes', 'max_results', 'max_scanned_files', 'max_write_bytes', "
        "'read_max_chars', 'read_only', 'root'.\n"
    )


def test_an_unknown_agent_key_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "clawcell.toml"
    config.write_text('[agent]\nmodel = "openai:m"\nprompt = "x"\n')
    assert main(["chat", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        f"clawcell chat: {config}: unknown `agent` key(s) 'prompt'; the keys are base_url, "
        "instructions, model.\n"
    )


def test_chat_without_a_model_says_where_to_name_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chat"]) == 2
    assert capsys.readouterr().err == (
        "clawcell chat: a model is needed: pass --model (such as `openai:gpt-5.1`) or set "
        "`model` in the [agent] table of the --config file.\n"
    )


async def _chat_with_config(tmp_path: Path) -> tuple[int, str, str]:
    answers = [tool_call_stream(READ_NOTE), text_stream("It says hi.")]
    async with WireServer(answers) as server:
        agent = f'[agent]\nmodel = "openai:gpt-test"\nbase_url = "{server.url}/v1"\n'
        config = _config(tmp_path, agent)
        process = await asyncio.create_subprocess_exec(
            *(
                sys.executable,
                "-c",
                "import sys; from clawcell.cli._main import main; sys.exit(main())",
            ),
            *("chat", "--config", str(config)),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=ROOT,
            env=_environment(),
        )
        out, err = await asyncio.wait_for(process.communicate(b"What does the note say?\n"), 120)
        assert process.returncode is not None
        return process.returncode, out.decode(), err.decode()


def test_chat_takes_its_model_and_built_in_tools_from_the_config_file(tmp_path: Path) -> None:
    code, out, err = run(_chat_with_config(tmp_path))
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith(
        "clawcell chat · model gpt-test · tools: read, list, grep, find · "
    )
    assert '└ completed "hi from the workspace\\n"' in out
    assert "It says hi." in out


async def serve_turn(tmp_path: Path, *options: str, session: str = "s1") -> str:
    answers = [tool_call_stream(READ_NOTE), text_stream("It says hi.")]
    async with WireServer(answers) as server:
        agent = f'[agent]\nmodel = "openai:gpt-test"\nbase_url = "{server.url}/v1"\n'
        config = _config(tmp_path, agent)
        process = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "clawcell", "serve", "--config", str(config)),
            *("--port", "0", *options),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=ROOT,
            env=_environment(),
        )
        assert process.stdout is not None
        try:
            url = (await asyncio.wait_for(process.stdout.readline(), 120)).decode().strip()
            async with httpx.AsyncClient(follow_redirects=True, timeout=120) as http:
                page = await http.get(url)
                match = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
                assert match is not None, page.text
                turn = await http.post(
                    url.split("?")[0] + f"api/sessions/{session}/turns",
                    json={"text": "What does the note say?"},
                    headers={"x-csrf-token": match.group(1), "origin": url.split("/?")[0]},
                )
                assert turn.status_code == 200, turn.text
                return turn.text
        finally:
            process.terminate()
            await process.wait()


def test_serve_builds_the_agent_of_the_config_file_with_its_built_in_tools(
    tmp_path: Path,
) -> None:
    stream = run(serve_turn(tmp_path))
    finished = [
        json.loads(line.removeprefix("data: "))
        for line in stream.splitlines()
        if line.startswith("data: ") and '"cell_finished"' in line
    ]
    assert [f["event"]["envelope"]["value"] for f in finished] == ["hi from the workspace\n"]
    assert "It says hi." in stream


def test_serve_without_the_models_api_key_says_which_variable_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = _config(tmp_path, '[agent]\nmodel = "openai:gpt-5.1"\n')
    assert main(["serve", "--config", str(config), "--port", "0"]) == 2
    assert capsys.readouterr().err == (
        "clawcell: `openai:gpt-5.1` needs an API key: set OPENAI_API_KEY (for example "
        "`export OPENAI_API_KEY=...`), or pass --base-url for a compatible server that needs "
        "none.\n"
    )
