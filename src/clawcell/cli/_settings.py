"""What a command runs cells with: tools, MCP servers, limits, store and session, from a
`clawcell.toml` (or a client's `mcpServers` JSON) and command-line options, which win:

```toml
tools = ["mypackage.tools:TOOLS"]     # module:attribute, a Tool, an iterable or a factory
session = "default"
store = "state.db"                    # a SQLite file, a postgresql:// URL, or ":memory:"

[builtin_tools.workspace]             # clawcell.tools, as `clawcell.tools.from_config` reads it
root = "notes"

[agent]                               # `clawcell chat` and `clawcell serve`
model = "openai:gpt-5.1"

[limits]
timeoutMs = 5000

[policy]
approvals = "elicit"                  # elicit | allow | deny

[mcp.servers.time]                    # or an `mcpServers` table, as in Claude Desktop's JSON
command = "mcp-server-time"
args = ["--local-timezone", "UTC"]
```

String settings (`store`, `session`, the `[agent]` values) may name environment variables
as `${env:NAME}`, so a password or key stays out of the file; an unset one is refused.
Relative `store` paths, the workspace `root`, the browser directories and tool modules are
resolved against the file's directory; the current directory is on the import path for
`--tools` too. A `[ui]` table is
`clawcell serve`'s (read by `clawcell.ui`).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from .. import CodeModeOptions, Limits, Tool
from .._lazy import value_class
from ..errors import ConfigurationError
from ..runtime import executor_named
from ._limit_settings import limit_names, parse_limits, read_limits

if TYPE_CHECKING:
    from ..mcp import ServerConfig
    from ..store import SessionStore

__all__ = [
    "MEMORY",
    "Settings",
    "limit_names",
    "load_settings",
    "load_tools",
    "parse_limits",
    "state_directory",
]

MEMORY: Final = ":memory:"
"""The `store` value for an in-memory store (nothing survives the process)."""
_KEYS: Final = (
    "agent", "builtin_tools", "limits", "mcp", "mcpServers", "policy", "session", "store",
    "store_pool", "tools", "ui",
)  # fmt: skip
_POLICY_KEYS: Final = ("approvals",)
_AGENT_KEYS: Final = ("base_url", "instructions", "model")
# `store` values that name a `PostgresStore`, as `clawcell.store.open_store` reads them.
_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")


@value_class
class Settings:
    """Everything a command needs to build its `CodeMode` (`options`) or `Agent`.

    Attributes:
        tools: `module:attribute` specs of the tools.
        mcp_servers: MCP servers by name (`clawcell.mcp.StdioServer` / `HttpServer`).
        limits: Limit settings by camelCase name (validated by `parse_limits`).
        builtin_tools: The `[builtin_tools]` table, for `clawcell.tools.from_config`.
        store: A SQLite path, a `postgresql://` URL, `":memory:"`, or `None` for the
            command's default.
        store_pool: The most connections a PostgreSQL store's pool opens in this worker
            (`None`: the store's default, 10); see docs/scale-out.md for the budget.
        session: The session id.
        approvals: The approval policy of `clawcell mcp serve`.
        model: The `[agent]` model (`openai:gpt-5.1`) of `clawcell chat` and `clawcell serve`.
        base_url: The `[agent]` model server's base URL.
        instructions: The `[agent]` system prompt.
        base: The directory relative paths are resolved against.
    """

    tools: tuple[str, ...] = ()
    builtin_tools: Mapping[str, Any] = field(default_factory=dict[str, Any])
    mcp_servers: Mapping[str, ServerConfig] = field(default_factory=dict[str, "ServerConfig"])
    limits: Mapping[str, int | str] = field(default_factory=dict[str, int | str])
    store: str | None = None
    store_pool: int | None = None
    session: str | None = None
    approvals: str = "elicit"
    model: str | None = None
    base_url: str | None = None
    instructions: str | None = None
    base: Path = field(default_factory=Path.cwd)

    def merged(self, other: Settings) -> Settings:
        """`self` with `other`'s values added (lists, tables) or replacing (single values)."""
        return Settings(
            tools=(*self.tools, *other.tools),
            builtin_tools=other.builtin_tools or self.builtin_tools,
            mcp_servers={**self.mcp_servers, **other.mcp_servers},
            limits={**self.limits, **other.limits},
            store=other.store if other.store is not None else self.store,
            store_pool=other.store_pool if other.store_pool is not None else self.store_pool,
            session=other.session if other.session is not None else self.session,
            approvals=other.approvals if other.approvals != "elicit" else self.approvals,
            model=other.model or self.model,
            base_url=other.base_url or self.base_url,
            instructions=other.instructions or self.instructions,
            base=self.base,
        )

    def store_target(self, default: Path | None) -> Path | str | None:
        """The SQLite file or PostgreSQL URL to use, or `None` for an in-memory store."""
        if self.store == MEMORY:
            return None
        if self.store is None:
            return default
        if self.store.startswith(_POSTGRES_SCHEMES):
            return self.store
        return self.base / Path(self.store).expanduser()

    def options(self, store: SessionStore | None) -> CodeModeOptions:
        """The `CodeModeOptions` these settings describe, with `store` (opened by the caller,
        `None` for an in-memory one): limits, MCP servers and the session id.

        Raises:
            ConfigurationError: A limit value is out of range.
        """
        return CodeModeOptions(
            limits=Limits.from_config(self.limits),
            store=store,
            session_id=self.session if self.session is not None else "default",
            mcp_servers=self.mcp_servers,
            executor=executor_named(str(self.limits.get("executor", "quickjs"))),
        )

    def build_tools(self) -> list[Tool]:
        """The tools of `tools` (imported) and of `builtin_tools` (`clawcell.tools`).

        Raises:
            ConfigurationError: A spec cannot be loaded, or the built-in tools table is wrong.
        """
        tools = load_tools(self.tools, base=self.base)
        if self.builtin_tools:
            from ..tools import from_config

            tools += from_config(self.builtin_tools)
        return tools

    def build_agentless_tools(self, command: str) -> list[Tool]:
        """`build_tools` for a command that runs cells without an agent (`run`, `wait`,
        `repl`, `mcp serve`).

        Session and sub-agent tools act for an agent: built here, every call would fail with
        advice only Python can follow, so their tables are refused at start instead.

        Raises:
            ConfigurationError: An agent-only table is configured, or `build_tools` refused.
        """
        for table in AGENT_ONLY_TABLES:
            if table in self.builtin_tools:
                raise ConfigurationError(
                    f"`[builtin_tools.{table}]` gives an agent its {table} tools, and "
                    f"`clawcell {command}` runs cells without an agent; use the table with "
                    "`clawcell chat` or `clawcell serve`, or leave it out of the config this "
                    "command reads."
                )
        return self.build_tools()


AGENT_ONLY_TABLES: Final = ("sessions", "subagents")
"""`[builtin_tools]` tables whose tools belong to an agent (`chat`, `serve`)."""


def state_directory() -> Path:
    """clawcell's per-user state directory: `$XDG_STATE_HOME/clawcell`, else
    `~/.local/state/clawcell` (`CLAWCELL_STATE_DIR` overrides both)."""
    explicit = os.environ.get("CLAWCELL_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    root = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return root / "clawcell"


def _read(path: Path) -> dict[str, Any]:
    from ._files import read_text

    text = read_text(path, "the config file")
    kind = "JSON" if path.suffix == ".json" else "TOML"
    try:
        data: object = json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except ValueError as exc:
        raise ConfigurationError(f"{str(path)!r} is not valid {kind}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigurationError(f"{str(path)!r} must hold an object at the top level.")
    return cast(dict[str, Any], data)


def load_settings(path: str | os.PathLike[str]) -> Settings:
    """Read a `clawcell.toml`, or a JSON file with `mcpServers` (Claude Desktop, Cursor).

    Raises:
        ConfigurationError: The file cannot be read, or a key or value is wrong.
    """
    from ..mcp import parse_servers

    file = Path(path)
    data = _read(file)
    where = str(file)
    unknown = sorted(set(data) - set(_KEYS)) if file.suffix != ".json" else []
    if unknown:
        raise ConfigurationError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"the keys are {', '.join(_KEYS)}."
        )
    servers: dict[str, ServerConfig] = {}
    if "mcpServers" in data:
        servers.update(parse_servers(data["mcpServers"], source=where))
    mcp = _table(where, data, "mcp")
    if "servers" in mcp:
        servers.update(parse_servers(mcp["servers"], source=where))
    agent = _agent(where, _table(where, data, "agent"))
    return Settings(
        tools=_strings(where, data, "tools"),
        builtin_tools=_builtin_tools(_table(where, data, "builtin_tools"), file.resolve().parent),
        mcp_servers=servers,
        limits=read_limits(where, _table(where, data, "limits")),
        store=_string(where, data, "store"),
        store_pool=_pool(where, data.get("store_pool")),
        session=_string(where, data, "session"),
        approvals=_approvals(where, _table(where, data, "policy")),
        model=agent.get("model"),
        base_url=agent.get("base_url"),
        instructions=agent.get("instructions"),
        base=file.resolve().parent,
    )


def _agent(where: str, table: Mapping[str, Any]) -> dict[str, str]:
    unknown = sorted(set(table) - set(_AGENT_KEYS))
    if unknown:
        raise ConfigurationError(
            f"{where}: unknown `agent` key(s) {', '.join(map(repr, unknown))}; "
            f"the keys are {', '.join(_AGENT_KEYS)}."
        )
    return {key: cast(str, _string(where, table, key)) for key in table}


def _builtin_tools(table: dict[str, Any], base: Path) -> dict[str, Any]:
    """The table with relative paths (`workspace.root`, `shell.root`, an `automations.store`
    file, the browser's directories) made relative to the config file."""
    resolved = dict(table)
    for name, keys in _RELATIVE.items():
        section = table.get(name)
        if not isinstance(section, dict):
            continue  # `from_config` says what is wrong with it
        updated = dict(cast(dict[str, Any], section))
        for key in keys:
            path = updated.get(key)
            if isinstance(path, str) and path and "://" not in path:
                updated[key] = str(base / Path(path).expanduser())
        resolved[name] = updated
    return resolved


_RELATIVE: Final[dict[str, tuple[str, ...]]] = {
    "workspace": ("root",), "shell": ("root",), "automations": ("store",),
    "browser": ("media_dir", "downloads_dir"),
}  # fmt: skip


def _pool(where: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
        raise ConfigurationError(
            f"{where}: `store_pool` must be the most connections the PostgreSQL store's pool "
            f"opens per worker, an integer 1–1000, got {value!r}."
        )
    return value


def _table(where: str, data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigurationError(f"{where}: `{key}` must be a table, got {value!r}.")
    return cast(dict[str, Any], value)


def _string(where: str, data: Mapping[str, Any], key: str) -> str | None:
    """A string setting, `${env:NAME}` expanded (a `store` URL's password, an API base)."""
    from ..mcp import expand_env

    value = data.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ConfigurationError(f"{where}: `{key}` must be a non-empty string, got {value!r}.")
    return None if value is None else expand_env(value, where=f"{where}: `{key}`")


def _strings(where: str, data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    items = cast(list[object], value) if isinstance(value, list) else None
    if items is None or not all(isinstance(i, str) for i in items):
        raise ConfigurationError(f"{where}: `{key}` must be a list of strings, got {value!r}.")
    return tuple(cast(list[str], items))


def _approvals(where: str, policy: Mapping[str, Any]) -> str:
    unknown = sorted(set(policy) - set(_POLICY_KEYS))
    if unknown:
        raise ConfigurationError(
            f"{where}: unknown `policy` key(s) {', '.join(map(repr, unknown))}; "
            f"the keys are {', '.join(_POLICY_KEYS)}."
        )
    value = policy.get("approvals", "elicit")
    if value not in ("elicit", "allow", "deny"):
        raise ConfigurationError(
            f"{where}: `policy.approvals` must be elicit, allow or deny, got {value!r}."
        )
    return cast(str, value)


def load_tools(specs: Iterable[str], *, base: Path | None = None) -> list[Tool]:
    """Import every `module:attribute` spec (the current directory and `base` on the path).

    The attribute may be a `Tool`, an iterable of them, or a function returning either.

    Raises:
        ConfigurationError: A spec is malformed, cannot be imported or is not tools.
    """
    add_import_paths(base)
    return [tool for spec in specs for tool in _load(spec)]


def add_import_paths(base: Path | None) -> None:
    """Put the current directory and `base` (the config file's) on `sys.path`, so the
    `module:attribute` specs a person wrote (`--tools`, `[ui] agent`) import as they would
    from a script in that directory."""
    for directory in (Path.cwd(), base):
        if directory is not None and str(directory) not in sys.path:
            sys.path.insert(0, str(directory))


def _load(spec: str) -> list[Tool]:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"--tools takes `module:attribute`, got {spec!r}.")
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # a module may raise anything while imported
        raise ConfigurationError(
            f"cannot load tools from {spec!r}: importing {module_name!r} failed with "
            f"{_one_line(exc)}; fix the module or the --tools spec."
        ) from exc
    try:
        target: Any = getattr(module, attr)
    except AttributeError as exc:
        raise ConfigurationError(
            f"cannot load tools from {spec!r}: module {module_name!r} has no attribute {attr!r}."
        ) from exc
    if callable(target) and not isinstance(target, Tool):
        try:
            target = target()
        except (Exception, SystemExit) as exc:  # the factory's own failure
            raise ConfigurationError(
                f"cannot load tools from {spec!r}: calling it failed with {_one_line(exc)}."
            ) from exc
    if isinstance(target, Tool):
        return [target]
    tools = list(target) if isinstance(target, Iterable) else [target]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if not all(isinstance(t, Tool) for t in tools):  # pyright: ignore[reportUnknownVariableType]
        raise ConfigurationError(f"{spec!r} must be a Tool or an iterable of Tool values.")
    return tools  # pyright: ignore[reportUnknownVariableType]


def _one_line(exc: BaseException) -> str:
    detail = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
