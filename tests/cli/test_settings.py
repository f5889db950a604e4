"""`clawcell.toml`: tools, limits, store, session, policy and MCP servers; options win."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawcell import ConfigurationError
from clawcell.cli import Settings, load_settings
from clawcell.cli._main import main
from clawcell.cli._settings import state_directory
from clawcell.mcp import StdioServer

CONFIG = """
tools = ["tests.cli.test_main:TOOLS"]
session = "from-file"
store = "data/state.db"

[limits]
timeoutMs = 4000

[policy]
approvals = "deny"

[mcp.servers.time]
command = "mcp-server-time"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "clawcell.toml"
    path.write_text(text, "utf-8")
    return path


def test_a_config_file_is_read_with_paths_relative_to_it(tmp_path: Path) -> None:
    settings = load_settings(_write(tmp_path, CONFIG))
    assert settings == Settings(
        tools=("tests.cli.test_main:TOOLS",),
        mcp_servers={"time": StdioServer(command="mcp-server-time")},
        limits={"timeoutMs": 4000},
        store="data/state.db",
        session="from-file",
        approvals="deny",
        base=tmp_path.resolve(),
    )
    assert settings.store_target(None) == tmp_path.resolve() / "data" / "state.db"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "tool = []",
            "unknown key(s) 'tool'; the keys are agent, builtin_tools, limits, mcp, mcpServers, "
            "policy, session, store, store_pool, tools, ui.",
            id="unknown_key",
        ),
        pytest.param(
            "store_pool = 0",
            "`store_pool` must be the most connections the PostgreSQL store's pool opens per "
            "worker, an integer 1–1000, got 0.",
            id="store_pool",
        ),
        pytest.param(
            "[limits]\ntimeout = 3",
            "unknown limit 'timeout'; the limits are timeoutMs, memoryLimitBytes, "
            "maxOutputBytes, maxSnapshotBytes, maxPendingToolCalls, snapshotTtlSeconds, "
            "searchDefaultLimit, maxSearchLimit.",
            id="unknown_limit",
        ),
        pytest.param(
            "[policy]\napprovals = 'sometimes'",
            "`policy.approvals` must be elicit, allow or deny, got 'sometimes'.",
            id="bad_policy",
        ),
        pytest.param("tools = 'x:y'", "`tools` must be a list of strings, got 'x:y'.", id="tools"),
    ],
)
def test_a_wrong_key_or_value_is_refused_with_what_is_valid(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigurationError) as caught:
        load_settings(path)
    assert caught.value.message == f"{path}: {message}"


def test_command_line_options_win_over_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write(tmp_path, 'tools = ["tests.cli.test_main:TOOLS"]\n[limits]\ntimeoutMs = 100\n')
    cell = tmp_path / "cell.js"
    cell.write_text("return await double({ n: 2 });", "utf-8")
    argv = ["run", str(cell), "--config", str(config), "--limit", "timeoutMs=5000"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["value"] == {"twice": 4}


def test_the_state_directory_follows_xdg_and_can_be_overridden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAWCELL_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_directory() == tmp_path / "xdg" / "clawcell"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert state_directory() == tmp_path / ".local" / "state" / "clawcell"
    monkeypatch.setenv("CLAWCELL_STATE_DIR", str(tmp_path / "mine"))
    assert state_directory() == tmp_path / "mine"


def test_string_settings_name_environment_variables_and_an_unset_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWCELL_TEST_PGPASSWORD", "s3cret")
    monkeypatch.delenv("CLAWCELL_TEST_UNSET", raising=False)
    path = _write(
        tmp_path,
        'store = "postgresql://agents:${env:CLAWCELL_TEST_PGPASSWORD}@db/agents"\nstore_pool = 4\n',
    )
    settings = load_settings(path)
    assert settings.store == "postgresql://agents:s3cret@db/agents"
    assert settings.store_pool == 4
    unset = _write(tmp_path, 'session = "${env:CLAWCELL_TEST_UNSET}"\n')
    with pytest.raises(ConfigurationError) as refused:
        load_settings(unset)
    assert refused.value.message == (
        f"{unset}: `session`: environment variable 'CLAWCELL_TEST_UNSET' is not set; set it or "
        "write the value."
    )


def test_store_pool_sizes_the_postgresql_pool() -> None:
    from clawcell.store import PostgresStore, open_store

    store = open_store("postgresql://agents@db/agents", max_size=4)
    assert isinstance(store, PostgresStore)
    assert store._sizes == (1, 4)  # pyright: ignore[reportPrivateUsage]
