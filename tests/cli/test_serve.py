"""`clawcell serve`: the URL line, the demo, and configuration errors."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import socket
import subprocess
import sys
from collections.abc import AsyncGenerator
from pathlib import Path

import httpx
import pytest

from clawcell.cli._main import main
from clawcell.cli._serve import access_url, serve
from clawcell.ui import UiSettings
from tests._sockets import accepted_nodelay, answered_connection, listening_ports
from tests.ui._fakes import FakeAgent

CLAWCELL = [sys.executable, "-m", "clawcell"]


@pytest.mark.slow
def test_serve_demo_prints_the_url_with_its_token_and_serves_the_seeded_demo() -> None:
    process = subprocess.Popen(
        [*CLAWCELL, "serve", "--demo", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        line = process.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{32}", line), line
        with httpx.Client(follow_redirects=True) as http:
            page = http.get(line)
            assert page.status_code == 200
            for text in ("Rich output", "voice-note", "iframe", "output truncated",
                         "status-waiting", "status-failed", "Interactive canvas",
                         'class="approval"'):  # fmt: skip
                assert text in page.text, text
            assert http.get(line.split("?")[0]).status_code == 200  # the cookie now
            assert httpx.get(line.split("?")[0]).status_code == 401  # no cookie, no token
    finally:
        process.terminate()
        process.wait(timeout=60)
        process.stderr.close()
        process.stdout.close()


def test_serve_without_an_agent_says_how_to_name_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "0"]) == 2
    assert capsys.readouterr().err == (
        'clawcell: `clawcell serve` needs an agent: set `agent = "module:factory"` in the [ui] '
        'table of the config file, or `model = "openai:gpt-5.1"` in its [agent] table, or pass '
        "--demo.\n"
    )


def test_serve_demo_refuses_a_store_it_would_not_use(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--demo", "--port", "0", "--store", "state.db"]) == 2
    assert capsys.readouterr().err == (
        "clawcell: --store 'state.db' is for the agent of the [agent] table; the --demo agent "
        "keeps its scripted sessions in memory.\n"
    )


def test_serve_with_a_bad_config_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "clawcell.toml"
    config.write_text('[ui]\nembedSandbox = "open"\n')
    assert main(["serve", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        "clawcell: `embedSandbox` must be one of 'strict', 'scripts' or 'trusted', got 'open'.\n"
    )


def test_serve_on_a_busy_port_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert main(["serve", "--demo", "--port", str(port)]) == 2
    assert capsys.readouterr().err.startswith(f"clawcell: cannot bind 127.0.0.1:{port}: ")


def test_an_unloadable_agent_factory_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "clawcell.toml"
    config.write_text('[ui]\nagent = "no_such_module:make"\n')
    assert main(["serve", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        "clawcell: cannot load the agent 'no_such_module:make': No module named 'no_such_module'\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize("where", ["cwd", "config"])
def test_the_ui_agent_factory_imports_from_the_current_directory_and_the_configs(
    tmp_path: Path, where: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "myapp_chat.py").write_text(
        "from clawcell.agent import Agent, ScriptedModel\n"
        "def make_agent():\n"
        "    return Agent(model=ScriptedModel(['hello']))\n"
    )
    config = project / "clawcell.toml"
    config.write_text('[ui]\nagent = "myapp_chat:make_agent"\nport = 0\n')
    process = subprocess.Popen(
        [*CLAWCELL, "serve", "--config", str(config)],
        cwd=project if where == "cwd" else tmp_path,  # the config's directory counts too
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        line = process.stdout.readline()
        assert line.startswith("http://127.0.0.1:"), process.stderr.read()
    finally:
        process.terminate()
        process.communicate(timeout=60)


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8787/?token="),
        ("::1", "http://[::1]:8787/?token="),
        ("0.0.0.0", "http://127.0.0.1:8787/?token="),
    ],
)
def test_the_access_url_names_host_port_and_token(host: str, url: str) -> None:
    settings = UiSettings(host=host, token="x" * 20)
    assert access_url(settings, 8787) == url + "x" * 20


def test_the_readme_serve_command_is_the_one_tested_here() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    commands = re.findall(r"^(\.venv/bin/clawcell serve[^#\n]*)", readme, re.M)
    assert [c.strip() for c in commands] == [".venv/bin/clawcell serve --demo"]


_WITHOUT_NH3 = "import sys; sys.modules['nh3'] = None; "


def test_without_the_extra_importing_the_ui_says_which_install_fixes_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_NH3 + "import clawcell.ui"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.strip().endswith(
        "ImportError: clawcell.ui needs the [ui] extra (nh3 is missing): "
        "`pip install 'clawcell[ui]'` (in a clawcell checkout: `.venv/bin/pip install -e '.[ui]'`)."
    )


def test_without_the_extra_other_commands_work_and_serve_says_what_to_install() -> None:
    code = _WITHOUT_NH3 + "from clawcell.cli._main import main; sys.exit(main(sys.argv[1:]))"
    for arguments in (["serve"], ["serve", "--demo"], ["serve", "--port", "0"]):
        serve = subprocess.run(
            [sys.executable, "-c", code, *arguments], check=False, capture_output=True, text=True
        )
        assert serve.returncode == 2
        assert serve.stderr == (
            "clawcell: clawcell.ui needs the [ui] extra (nh3 is missing): `pip install "
            "'clawcell[ui]'` (in a clawcell checkout: `.venv/bin/pip install -e '.[ui]'`).\n"
        )
    helped = subprocess.run(
        [sys.executable, "-c", code, "--help"], check=False, capture_output=True, text=True
    )
    assert helped.returncode == 0 and "serve" in helped.stdout


def test_serve_answers_kept_alive_connections_without_waiting_for_an_ack() -> None:
    # `clawcell serve` binds its own sockets (for the URL line); both must say TCP so that
    # asyncio sets TCP_NODELAY on what they accept.
    lines: asyncio.Queue[str] = asyncio.Queue()

    class Out(io.StringIO):
        def write(self, text: str) -> int:
            lines.put_nowait(text)
            return len(text)

    @contextlib.asynccontextmanager
    async def factory() -> AsyncGenerator[FakeAgent]:
        yield FakeAgent()

    async def main() -> list[bool]:
        settings = UiSettings(token="t" * 20, port=0, canvas_port=0)
        before = listening_ports()
        serving = asyncio.create_task(serve(factory, settings, out=Out()))
        try:
            await lines.get()
            ports = sorted(listening_ports() - before)
            found: list[bool] = []
            for port in ports:
                request = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
                client = await asyncio.to_thread(answered_connection, "127.0.0.1", port, request)
                with client:
                    found.append(accepted_nodelay(client))
            return found
        finally:
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)

    assert asyncio.run(main()) == [True, True]
