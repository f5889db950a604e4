"""`from_config(mapping)`: the built-in tools a configuration file asks for.

The mapping is what `clawcell chat` and `clawcell serve` read from their configuration (JSON or
TOML), with snake_case keys named after the Python arguments:

```json
{"workspace": {"root": ".", "read_only": false, "max_read_bytes": 5242880},
 "web": {"fetch": {"max_chars": 20000, "cache_ttl_seconds": 900},
         "search": {"provider": "searxng", "url": "http://127.0.0.1:8888"}},
 "shell": {"root": ".", "sandbox": "auto", "approval": "ask", "allow_commands": ["ls *"]},
 "automations": {"store": "state.db", "schema": "clawcell", "worker": true},
 "browser": {"max_tabs": 4, "downloads": true, "downloads_dir": "downloads"}}
```

`automations.store` is where the jobs live: an SQLite file or a `postgresql://` URL (with
`schema`), normally the command's own store, which workers (`clawcell automations run`) share;
`worker = true` also runs a worker inside `clawcell serve` and `clawcell mcp serve`
(`clawcell.automations.embedded_worker`).

The loopback allowance of `web_fetch` and `browser` is deliberately not configurable here: it
exists for tests, which build the tools in Python.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, cast

from ..catalog import Tool
from ..errors import ConfigurationError
from ._browser._browser import browser
from ._browser._browser_settings import BrowserSettings
from ._sessions._sessions import AgentSlot, sessions
from ._sessions._sessions_policy import SessionVisibility
from ._sessions._sessions_sends import SendLimits
from ._shell._shell import shell
from ._shell._shell_settings import ShellSettings
from ._web._cache import FetchCache
from ._web._fetch_settings import FetchSettings
from ._web._search_providers import BraveProvider, SearxngProvider
from ._web._web import web
from ._web._web_search import SearchProvider
from ._workspace._workspace import workspace
from ._workspace._workspace_limits import WorkspaceLimits

__all__ = ["from_config"]

_TOP: Final = ("automations", "browser", "sessions", "shell", "subagents", "web", "workspace")
_BROWSER: Final = (
    "action_timeout_seconds", "allow_private_network", "downloads", "downloads_dir",
    "executable_path", "headless", "idle_seconds", "js_heap_mb", "max_chars",
    "max_download_bytes", "max_tabs", "media_dir",
)  # fmt: skip
_WORKSPACE: Final = (
    "max_read_bytes", "max_results", "max_scanned_files", "max_write_bytes", "read_max_chars",
    "read_only", "root",
)  # fmt: skip
_WEB: Final = ("fetch", "search")
_FETCH: Final = (
    "cache_max_entries", "cache_ttl_seconds", "max_bytes", "max_chars", "max_redirects",
    "timeout_seconds", "user_agent",
)  # fmt: skip
_SEARCH: Final = {
    "searxng": ("categories", "provider", "timeout_seconds", "url"),
    "brave": ("api_key", "api_key_env", "provider", "timeout_seconds", "url"),
}


def _section(value: object, where: str, known: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"Tools config `{where}` must be a mapping, got {value!r}.")
    section = dict(cast(Mapping[str, Any], value))
    unknown = sorted(set(section) - set(known))
    if unknown:
        raise ConfigurationError(
            f"Unknown key {unknown[0]!r} in tools config `{where}`; known keys: "
            + ", ".join(repr(key) for key in known)
            + "."
        )
    return section


def from_config(config: Mapping[str, Any]) -> list[Tool]:
    """The tools `config` enables: `workspace`, `shell`, `automations`, `web`, `browser` and
    `sessions` sections, each optional. Session tools built here are bound to their agent by
    `bind_agent(tools, agent)` (`clawcell chat` and `clawcell serve` do it). A `subagents`
    section is left to the command that builds the agent (sub-agents are agents).

    Raises:
        ConfigurationError: An unknown key, a wrong type, or a bad value, with its place.
    """
    top = _section(config, "tools", _TOP)
    tools: list[Tool] = []
    try:
        if "workspace" in top:
            tools += _workspace(_section(top["workspace"], "workspace", _WORKSPACE))
        if "shell" in top:
            tools += _shell(_section(top["shell"], "shell", ("root", *ShellSettings.names())))
        if "automations" in top:
            # An `agentTurn` job posts into a session: it may post only where the session
            # tools' `send` allows, so the sessions section is read here too when present.
            known = ("schema", "store", "worker", "max_jobs")
            shared = _section(top["sessions"], "sessions", ("see", "send", *_SENDS)) if (
                "sessions" in top) else None  # fmt: skip
            visibility = None if shared is None else _visibility(shared)
            tools += _automations(_section(top["automations"], "automations", known), visibility)
        if "web" in top:
            tools += _web(_section(top["web"], "web", _WEB))
        if "browser" in top:
            tools.append(_browser(_section(top["browser"], "browser", _BROWSER)))
        if "sessions" in top:
            tools += _sessions(_section(top["sessions"], "sessions", ("see", "send", *_SENDS)))
    except (TypeError, ValueError) as exc:
        # The settings values reject a key or a value with TypeError/ValueError of their
        # own; a `ConfigurationError` (itself a ValueError) already names its place.
        if isinstance(exc, ConfigurationError):
            raise
        raise ConfigurationError(f"Tools config has a value of the wrong type: {exc}.") from exc
    return tools


def _workspace(section: dict[str, Any]) -> list[Tool]:
    root = section.pop("root", None)
    if not isinstance(root, str) or not root:
        raise ConfigurationError(f"Tools config `workspace.root` must be a path, got {root!r}.")
    read_only = section.pop("read_only", False)
    if not isinstance(read_only, bool):
        raise ConfigurationError(
            f"Tools config `workspace.read_only` must be true or false, got {read_only!r}."
        )
    return workspace(root, limits=WorkspaceLimits(**section), read_only=read_only)


def _shell(section: dict[str, Any]) -> list[Tool]:
    root = section.pop("root", None)
    if not isinstance(root, str) or not root:
        raise ConfigurationError(f"Tools config `shell.root` must be a path, got {root!r}.")
    return shell(root, settings=ShellSettings(**section))


def _automations(section: dict[str, Any], visibility: SessionVisibility | None) -> list[Tool]:
    from ..store import open_store
    from ._automations._automations import automations

    target = section.get("store")
    if not isinstance(target, str) or not target:
        raise ConfigurationError(
            f"Tools config `automations.store` must be an SQLite path or a postgresql:// URL, "
            f"got {target!r}."
        )
    store = open_store(target, schema=str(section.get("schema", "clawcell")))
    max_jobs = section.get("max_jobs", 20)
    return automations(store, max_jobs=max_jobs, visibility=visibility)


def _web(section: dict[str, Any]) -> list[Tool]:
    fetch = section.get("fetch", True)
    options = {} if isinstance(fetch, bool) else _section(fetch, "web.fetch", _FETCH)
    cache = FetchCache(
        ttl_seconds=float(options.pop("cache_ttl_seconds", 900.0)),
        max_entries=int(options.pop("cache_max_entries", 128)),
    )
    search = _provider(section["search"]) if "search" in section else None
    return web(
        search=search,
        fetch=fetch is not False,
        settings=FetchSettings(**options),
        cache=cache,
    )


def _browser(section: dict[str, Any]) -> Tool:
    for key in ("media_dir", "downloads_dir"):
        value = section.get(key)
        if value is not None:
            if not isinstance(value, str) or not value:
                raise ConfigurationError(
                    f"Tools config `browser.{key}` must be a path, got {value!r}."
                )
            section[key] = Path(value)
    return browser(settings=BrowserSettings(**section))


_SENDS: Final = ("max_sends_per_turn", "max_sends_per_session", "send_window_seconds",
                  "max_send_depth")  # fmt: skip
_SEND_FIELDS: Final = ("per_turn", "per_session", "window_seconds", "max_depth")


def _sessions(section: dict[str, Any]) -> list[Tool]:
    limits = SendLimits(
        **{field: section[key] for key, field in zip(_SENDS, _SEND_FIELDS, strict=True)
           if key in section}
    )  # fmt: skip
    return sessions(AgentSlot(), visibility=_visibility(section), limits=limits)


def _visibility(section: dict[str, Any]) -> SessionVisibility:
    """The `see` and `send` patterns of a `sessions` section."""
    patterns: dict[str, tuple[str, ...]] = {}
    for key in ("see", "send"):
        if key not in section:
            continue
        value = section[key]
        if not isinstance(value, list | tuple) or not all(
            isinstance(item, str) for item in cast(list[object], value)
        ):
            raise ConfigurationError(
                f"Tools config `sessions.{key}` must be a list of session-id patterns, "
                f"got {value!r}."
            )
        patterns[key] = tuple(cast(list[str], value))
    return SessionVisibility(**patterns)


def _provider(value: object) -> SearchProvider:
    kind = cast(Mapping[str, Any], value).get("provider") if isinstance(value, Mapping) else None
    if kind not in _SEARCH:
        raise ConfigurationError(
            f"Tools config `web.search.provider` must be 'searxng' or 'brave', got {kind!r}."
        )
    section = _section(cast(object, value), "web.search", _SEARCH[str(kind)])
    del section["provider"]
    if kind == "searxng":
        return SearxngProvider(**section)
    variable = section.pop("api_key_env", "BRAVE_API_KEY")
    section.setdefault("api_key", os.environ.get(str(variable), ""))
    return BraveProvider(**section)
