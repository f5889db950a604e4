"""`clawcell chat`: a terminal chat against a loopback Chat Completions server."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from clawcell._lazy import install_hint
from clawcell.agent import AnthropicModel, OpenAIChatModel, OpenAIResponsesModel

# `build_model` is the chat command's seam; tested directly to cover each API without a server.
from clawcell.cli._chat import build_model  # pyright: ignore[reportPrivateUsage]
from clawcell.cli._main import main
from clawcell.errors import ConfigurationError
from tests.agent._wire import WireServer
from tests.agent.models.test_openai_chat import text_stream, tool_call_stream
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[2]


async def _chat(stdin: str, *arguments: str) -> tuple[int, str, str, WireServer]:
    answers = [
        tool_call_stream("text('multiplying');\nreturn 6 * 7"),
        text_stream("The answer ", "is 42."),
    ]
    async with WireServer(answers) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "import sys; from clawcell.cli._main import main; sys.exit(main())",
            "chat",
            "--model",
            "openai:gpt-test",
            "--base-url",
            f"{server.url}/v1",
            *arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=ROOT,
            env=env,
        )
        out, err = await asyncio.wait_for(process.communicate(stdin.encode()), timeout=120)
        assert process.returncode is not None
        return process.returncode, out.decode(), err.decode(), server


def test_chat_streams_the_answer_and_shows_the_cell_and_its_result(tmp_path: Path) -> None:
    code, out, err, server = run(
        _chat("What is 6 * 7?\n", "--store", str(tmp_path / "chat.db"), "--session", "t1")
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith("clawcell chat · model gpt-test · tools: none")
    assert (
        "you> Let me compute.\n┌ exec\n│ js> text('multiplying');\n│ js> return 6 * 7\n"
        "│ out multiplying\n└ completed 42\n"
    ) in out
    assert "The answer is 42.\n  (2 model turns · 1 cell · 0 tool calls · " in out
    assert out.rstrip().endswith("85 → 35 tokens)\nyou>")
    assert server.requests[0].headers["authorization"] == "Bearer unused"
    assert (tmp_path / "chat.db").exists()


def test_without_an_api_key_chat_names_the_variable_to_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["chat", "--model", "openai:gpt-5.1"]) == 2
    assert capsys.readouterr().err == (
        "clawcell chat: `openai:gpt-5.1` needs an API key: set OPENAI_API_KEY (for example "
        "`export OPENAI_API_KEY=...`), or pass --base-url for a compatible server that needs "
        "none.\n"
    )


def test_a_model_without_its_api_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chat", "--model", "gpt-5.1"]) == 2
    assert capsys.readouterr().err == (
        "clawcell chat: --model takes `<api>:<model>` with <api> one of openai, "
        "openai-responses, anthropic (such as `openai:gpt-5.1`), got 'gpt-5.1'.\n"
    )


def test_bad_tools_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    arguments = ["chat", "--model", "openai:m", "--base-url", "http://127.0.0.1:9", "--tools", "x"]
    assert main(arguments) == 2
    assert capsys.readouterr().err == "clawcell chat: --tools takes `module:attribute`, got 'x'.\n"


@pytest.mark.parametrize(
    ("spec", "kind", "variable"),
    [
        ("openai:gpt-5.1", OpenAIChatModel, "OPENAI_API_KEY"),
        ("openai-responses:gpt-5.1", OpenAIResponsesModel, "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", AnthropicModel, "ANTHROPIC_API_KEY"),
    ],
)
def test_each_api_gets_its_adapter_and_key(spec: str, kind: type, variable: str) -> None:
    model = build_model(spec, base_url=None, environ={variable: "sk-test"})
    assert isinstance(model, kind)
    assert model.name == spec.partition(":")[2]


@pytest.mark.parametrize(
    ("spec", "module"),
    [
        ("openai:gpt-5.1", "openai"),
        ("openai-responses:gpt-5.1", "openai"),
        ("anthropic:claude-sonnet-4-5", "anthropic"),
    ],
)
def test_a_missing_sdk_names_the_install_that_adds_it(
    spec: str, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if the extra were not installed
    with pytest.raises(ConfigurationError) as caught:
        build_model(spec, base_url=None, environ={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
    assert caught.value.message == (
        f"--model {spec!r} needs the `{module}` package: {install_hint(module)}."
    )


def test_ctrl_c_at_the_prompt_exits_130_without_waiting_for_a_line() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from clawcell.cli._main import main; sys.exit(main())",
            "chat",
            "--model",
            "openai:gpt-test",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None and process.stdin is not None
    assert process.stdout.readline().startswith("clawcell chat · model gpt-test")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130  # stdin is still open: no line ever comes
    assert process.stderr.read() == "clawcell: interrupted\n"
    for stream in (process.stdin, process.stdout, process.stderr):
        stream.close()
