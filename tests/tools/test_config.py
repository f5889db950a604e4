"""`from_config`: the entry point `clawcell chat` and `clawcell serve` use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawcell import ConfigurationError
from clawcell.tools import from_config
from clawcell.tools._browser._browser import BrowserPool

from ._server import LocalServer, Response
from .conftest import call


def _names(config: dict[str, Any]) -> list[str]:
    return [tool.name for tool in from_config(config)]


def test_an_empty_config_enables_nothing() -> None:
    assert from_config({}) == []


def test_workspace_and_web_sections_enable_their_tools(root: Path) -> None:
    config = {
        "workspace": {"root": str(root)},
        "web": {"search": {"provider": "searxng", "url": "http://127.0.0.1:8888"}},
    }
    assert _names(config) == [
        "read", "list", "grep", "find", "write", "edit", "apply_patch", "web_fetch", "web_search",
    ]  # fmt: skip


def test_read_only_and_caps_reach_the_workspace_tools(root: Path) -> None:
    (root / "a.txt").write_text("x" * 50)
    config = {"workspace": {"root": str(root), "read_only": True, "read_max_chars": 10}}
    tools = from_config(config)
    assert [tool.name for tool in tools] == ["read", "list", "grep", "find"]
    assert call(tools, "read", {"path": "a.txt"})["text"] == "x" * 10


def test_fetch_can_be_turned_off_or_tuned() -> None:
    assert _names({"web": {"fetch": False, "search": {"provider": "brave", "api_key": "k"}}}) == [
        "web_search"
    ]
    assert _names({"web": {"fetch": {"max_chars": 500, "cache_ttl_seconds": 10}}}) == ["web_fetch"]


def test_the_brave_key_can_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, server: LocalServer
) -> None:
    server.route("/s", Response(headers={"Content-Type": "application/json"}, body=b"{}"))
    monkeypatch.setenv("MY_BRAVE", "from-env")
    search = {"provider": "brave", "api_key_env": "MY_BRAVE", "url": f"{server.base}/s"}
    tools = from_config({"web": {"fetch": False, "search": search}})
    call(tools, "web_search", {"query": "q"})
    assert server.requests[0].headers["x-subscription-token"] == "from-env"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"wokspace": {}},
            "Unknown key 'wokspace' in tools config `tools`; known keys: 'automations', "
            "'browser', 'sessions', 'shell', 'subagents', 'web', 'workspace'.",
        ),
        (
            {"workspace": {"root": ".", "readonly": True}},
            "Unknown key 'readonly' in tools config `workspace`; known keys: 'max_read_bytes', "
            "'max_results', 'max_scanned_files', 'max_write_bytes', 'read_max_chars', "
            "'read_only', 'root'.",
        ),
        (
            {"web": {"fetch": {"timeout": 3}}},
            "Unknown key 'timeout' in tools config `web.fetch`; known keys: 'cache_max_entries', "
            "'cache_ttl_seconds', 'max_bytes', 'max_chars', 'max_redirects', 'timeout_seconds', "
            "'user_agent'.",
        ),
        (
            {"web": {"search": {"provider": "searxng", "url": "http://x", "api_key": "k"}}},
            "Unknown key 'api_key' in tools config `web.search`; known keys: 'categories', "
            "'provider', 'timeout_seconds', 'url'.",
        ),
        (
            {"web": {"search": {"provider": "google"}}},
            "Tools config `web.search.provider` must be 'searxng' or 'brave', got 'google'.",
        ),
        ({"workspace": {}}, "Tools config `workspace.root` must be a path, got None."),
        ({"workspace": "."}, "Tools config `workspace` must be a mapping, got '.'."),
        (
            {"workspace": {"root": ".", "max_results": 0}},
            "Workspace limit `max_results` must be a positive integer, got 0.",
        ),
        (
            {"workspace": {"root": ".", "read_only": "yes"}},
            "Tools config `workspace.read_only` must be true or false, got 'yes'.",
        ),
        (
            {"web": {"fetch": {"max_chars": "many"}}},
            "Fetch setting `max_chars` must be a number, got 'many'.",
        ),
    ],
    ids=[
        "top",
        "workspace",
        "fetch",
        "search",
        "provider",
        "root",
        "section",
        "limit",
        "flag",
        "type",
    ],
)
def test_bad_configs_are_refused_with_the_key_and_the_fix(
    config: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError) as refused:
        from_config(config)
    assert refused.value.message == message


@pytest.mark.parametrize(
    "config",
    [
        {"web": {"fetch": {"cache_ttl_seconds": "soon"}}},
        {"workspace": {"root": ".", "max_read_bytes": "big"}},
    ],
)
def test_values_of_the_wrong_type_are_configuration_errors(config: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        from_config(config)


def test_a_missing_workspace_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as refused:
        from_config({"workspace": {"root": str(tmp_path / "nope")}})
    assert refused.value.message == (
        f"Workspace root {str(tmp_path / 'nope')!r} is not a directory. "
        "Create it or pass another root."
    )


def test_a_shell_section_enables_exec_and_process_with_its_settings(root: Path) -> None:
    tools = from_config(
        {"shell": {"root": str(root), "sandbox": "off", "approval": "never", "max_sessions": 2}}
    )
    assert [tool.name for tool in tools] == ["exec", "process"]
    assert tools[0].approval == "never"
    done = call(tools, "exec", {"command": "echo $CLAWCELL_SHELL"})
    assert (done["stdout"], done["sandbox"]) == ("exec\n", "none")


def test_a_shell_section_with_an_unknown_key_names_the_known_ones(root: Path) -> None:
    with pytest.raises(ConfigurationError) as refused:
        from_config({"shell": {"root": str(root), "timeout": 5}})
    assert refused.value.message.startswith("Unknown key 'timeout' in tools config `shell`;")
    assert "'timeout_seconds'" in refused.value.message


def test_an_automations_section_keeps_its_jobs_in_the_named_store(tmp_path: Path) -> None:
    tools = from_config({"automations": {"store": str(tmp_path / "jobs.db")}})
    assert [tool.name for tool in tools] == ["automations"]
    job = {"schedule": {"kind": "every", "everyMs": 60_000},
           "payload": {"kind": "cell", "code": "return 1;"}}  # fmt: skip
    added = call(tools, "automations", {"action": "add", "job": job})
    listed = call(from_config({"automations": {"store": str(tmp_path / "jobs.db")}}),
                  "automations", {"action": "list"})  # fmt: skip
    assert [j["id"] for j in listed["jobs"]] == [added["id"]]


def test_the_browser_section_builds_the_browser_tool(tmp_path: Path) -> None:
    [tool] = from_config(
        {"browser": {"max_tabs": 3, "downloads": True, "downloads_dir": str(tmp_path)}}
    )
    assert tool.name == "browser" and not tool.replay_safe
    assert isinstance(tool.execute, BrowserPool)
    assert tool.execute.settings.max_tabs == 3
    assert tool.execute.settings.downloads_dir == tmp_path


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"max_tab": 3}, "Unknown key 'max_tab' in tools config `browser`"),
        ({"max_tabs": 0}, "Browser setting `max_tabs` must be positive, got 0."),
        ({"downloads": "yes"}, "Browser setting `downloads` must be true or false, got 'yes'."),
        ({"media_dir": 5}, "Tools config `browser.media_dir` must be a path, got 5."),
    ],
)
def test_bad_browser_sections_are_refused(section: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        from_config({"browser": section})
    assert refused.value.message.startswith(message)
