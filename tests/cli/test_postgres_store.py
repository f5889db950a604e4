"""`--store postgresql://…`: `clawcell mcp serve` and `clawcell serve` keep their state in a
`PostgresStore` (against the throwaway PostgreSQL of `scripts/pg-test-env`)."""

from __future__ import annotations

import uuid
from pathlib import Path

import anyio
import pytest

from clawcell.cli._command import build_parser
from clawcell.cli._main import COMMANDS, main
from clawcell.cli._runtime import open_settings_store, settings_from
from clawcell.store import PostgresStore
from tests.conftest import run
from tests.mcp_server._serve import park_then_resume

from .test_builtin_tools import serve_turn

URL = "postgresql://clawcell@127.0.0.1:9/nowhere"


@pytest.mark.parametrize("command", [["mcp", "serve"], ["run", "cell.js"], ["chat"]])
def test_a_postgresql_url_is_kept_as_given_and_names_a_postgres_store(command: list[str]) -> None:
    args = build_parser(COMMANDS).parse_args([*command, "--store", URL])
    settings = settings_from(args)
    assert settings.store == URL
    assert settings.store_target(Path("/default.db")) == URL

    async def opened() -> object:
        async with open_settings_store(settings, default=None) as store:
            return store  # nothing is connected before the first call

    store = run(opened())
    assert isinstance(store, PostgresStore)


def test_serve_refuses_a_store_for_an_agent_factory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "clawcell.toml"
    config.write_text('[ui]\nagent = "myapp:make"\n')
    assert main(["serve", "--config", str(config), "--store", URL]) == 2
    assert capsys.readouterr().err == (
        f"clawcell: --store {URL!r} is for the agent of the [agent] table; the factory "
        "'myapp:make' of the [ui] table makes its own store.\n"
    )


def test_mcp_serve_parks_a_cell_in_postgresql_and_resumes_it_after_a_restart(
    postgres_dsn: str,
) -> None:
    session = f"s_{uuid.uuid4().hex[:12]}"
    args = ("--store", postgres_dsn, "--session", session)
    code = "const n = 20; await yield_control(); return n + 1;"

    parked, resumed = anyio.run(park_then_resume, code, *args)
    assert parked["status"] == "waiting"
    assert (resumed["status"], resumed["value"]) == ("completed", 21)


def test_serve_keeps_the_transcript_of_its_configured_agent_in_postgresql(
    tmp_path: Path,
    postgres_dsn: str,
) -> None:
    session = f"s_{uuid.uuid4().hex[:12]}"
    stream = run(serve_turn(tmp_path, "--store", postgres_dsn, session=session))
    assert "It says hi." in stream

    async def transcript() -> list[str]:
        async with PostgresStore(postgres_dsn) as store:
            return [str(entry.get("role")) for entry in await store.read_transcript(session)]

    roles = run(transcript())
    assert roles[0] == "user" and "assistant" in roles
