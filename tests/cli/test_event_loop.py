"""The serving commands' event loop: uvloop's when installed (the `[mcp]` and `[ui]` extras
install it), asyncio's when it is not or when `CLAWCELL_EVENT_LOOP=asyncio` asks for it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx
import pytest
import uvloop

from clawcell.cli._event_loop import LOOP_VARIABLE, loop_factory, run_serving
from clawcell.errors import ConfigurationError
from tests.mcp_server._serve import http_server


async def _loop_type() -> type:
    return type(asyncio.get_running_loop())


def test_the_serving_commands_run_on_uvloop_when_it_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LOOP_VARIABLE, raising=False)
    assert loop_factory() is uvloop.new_event_loop
    assert run_serving(_loop_type()) is uvloop.Loop


def test_asyncio_is_kept_when_the_variable_asks_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOOP_VARIABLE, "asyncio")
    assert loop_factory() is None
    assert not issubclass(run_serving(_loop_type()), uvloop.Loop)


def test_without_uvloop_the_commands_fall_back_to_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOOP_VARIABLE, raising=False)
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    assert loop_factory() is None
    assert not issubclass(run_serving(_loop_type()), uvloop.Loop)


def test_asking_for_uvloop_where_it_is_missing_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(LOOP_VARIABLE, "uvloop")
    monkeypatch.setitem(sys.modules, "uvloop", None)
    with pytest.raises(ConfigurationError) as raised:
        run_serving(_loop_type())
    assert raised.value.message == (
        "$CLAWCELL_EVENT_LOOP=uvloop, but uvloop is not installed: "
        "`pip install 'clawcell[mcp]'` "
        "(in a clawcell checkout: `.venv/bin/pip install -e '.[mcp]'`)."
    )


def test_an_unknown_loop_name_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOOP_VARIABLE, "trio")
    with pytest.raises(ConfigurationError) as raised:
        run_serving(_loop_type())
    assert raised.value.message == (
        "$CLAWCELL_EVENT_LOOP must be one of auto, uvloop, asyncio, got 'trio'."
    )


def _mapped(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.parametrize(
    ("variable", "uvloop_loaded"), [("auto", True), ("asyncio", False)], ids=["auto", "asyncio"]
)
def test_mcp_serve_http_parses_with_httptools_and_runs_on_the_chosen_loop(
    monkeypatch: pytest.MonkeyPatch, variable: str, uvloop_loaded: bool
) -> None:
    # What the server process loaded is read from its memory map: uvicorn imports httptools'
    # parser only when it serves with it, and clawcell imports uvloop only to run on it.
    monkeypatch.setenv(LOOP_VARIABLE, variable)
    with http_server(["--store", ":memory:"]) as server:
        assert httpx.get(server.url).status_code == 401  # parsed: no token
        maps = _mapped(server.process.pid)
    assert "httptools/parser/parser" in maps
    assert ("uvloop/loop" in maps) is uvloop_loaded
