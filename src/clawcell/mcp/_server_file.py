"""MCP server lists from configuration files: clawcell's own and the clients' `mcpServers`.

Claude Desktop, Cursor and most MCP clients keep their servers as
`{"mcpServers": {"<name>": {"command": …, "args": […], "env": {…}}}}`, with `url` and `headers`
for HTTP servers; `parse_servers` reads that shape (from JSON or from a TOML table) into
`StdioServer` / `HttpServer` values. Values may name environment variables as `${env:NAME}`
(or `${NAME}`) so tokens stay out of the file. Keys clawcell does not know are ignored, so a
client's own settings (`disabled`, `autoApprove`, …) do not break the file; `disabled: true`
skips the entry, and an entry that starts clawcell's own MCP server is skipped (pointing
clawcell at the file it is registered in must not make it start itself).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, cast

from ..errors import ConfigurationError
from ._config import HttpServer, ServerConfig, StdioServer
from ._status import LOGGER

__all__ = ["expand_env", "load_servers", "parse_servers"]

_VARIABLE: Final = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")
_HTTP_TYPES: Final = frozenset({"http", "streamable-http", "streamableHttp", "streamable_http"})


def load_servers(path: str | os.PathLike[str]) -> dict[str, ServerConfig]:
    """The servers of a `.json` file (`mcpServers`) or a `.toml` file (`[mcp.servers]`).

    Raises:
        ConfigurationError: The file cannot be read or parsed, or an entry is invalid.
    """
    file = Path(path)
    data = read_config_file(file)
    if "mcpServers" in data:
        return parse_servers(data["mcpServers"], source=str(file))
    mcp = data.get("mcp")
    if isinstance(mcp, Mapping) and "servers" in mcp:
        return parse_servers(cast(Mapping[str, Any], mcp)["servers"], source=str(file))
    raise ConfigurationError(
        f"{str(file)!r} has no MCP servers: expected an `mcpServers` object (the Claude Desktop "
        "/ Cursor format) or an `[mcp.servers]` table."
    )


def read_config_file(file: Path) -> dict[str, Any]:
    """A `.toml` or `.json` file as a mapping (TOML for any other suffix)."""
    try:
        text = file.read_text("utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot read {str(file)!r}: {exc.strerror or exc}.") from exc
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f"{str(file)!r} is not UTF-8 text; save it as UTF-8.") from exc
    try:
        data: object = json.loads(text) if file.suffix == ".json" else tomllib.loads(text)
    except ValueError as exc:
        raise ConfigurationError(f"{str(file)!r} is not valid {_format(file)}: {exc}.") from exc
    if not isinstance(data, dict):
        raise ConfigurationError(f"{str(file)!r} must hold an object at the top level.")
    return cast(dict[str, Any], data)


def _format(file: Path) -> str:
    return "JSON" if file.suffix == ".json" else "TOML"


def parse_servers(entries: object, *, source: str = "configuration") -> dict[str, ServerConfig]:
    """`{name: entry}` in the `mcpServers` shape as server configurations.

    Raises:
        ConfigurationError: An entry is not an object, or a value has the wrong type.
    """
    if not isinstance(entries, Mapping):
        raise ConfigurationError(f"{source}: MCP servers must be an object of named entries.")
    servers: dict[str, ServerConfig] = {}
    for name, raw in cast(Mapping[str, object], entries).items():
        if not isinstance(raw, Mapping):
            raise ConfigurationError(f"{source}: MCP server {name!r} must be an object.")
        entry = cast(Mapping[str, object], raw)
        if entry.get("disabled") is True:
            continue
        config = _server(f"{source}: MCP server {name!r}", entry)
        if _is_clawcell_server(config):
            LOGGER.warning("%s: skipping MCP server %r, which is clawcell itself", source, name)
            continue
        servers[name] = config
    return servers


def _server(where: str, entry: Mapping[str, object]) -> ServerConfig:
    kind = entry.get("type", "http" if "url" in entry else "stdio")
    policy = _policy(where, entry)
    if kind == "stdio":
        return StdioServer(
            command=_text(where, entry, "command", required=True) or "",
            args=_texts(where, entry, "args") or (),
            env=_table(where, entry, "env"),
            cwd=_text(where, entry, "cwd"),
            **policy,
        )
    if kind in _HTTP_TYPES:
        return HttpServer(
            url=_text(where, entry, "url", required=True) or "",
            headers=_table(where, entry, "headers") or {},
            **policy,
        )
    raise ConfigurationError(
        f'{where}: `type` {kind!r} is not supported; use "stdio" or "http" '
        "(streamable HTTP; the older SSE transport is not supported)."
    )


def _policy(where: str, entry: Mapping[str, object]) -> dict[str, Any]:
    policy: dict[str, Any] = {}
    allow = _texts(where, entry, "allow")
    if allow is not None:
        policy["allow"] = allow
    deny = _texts(where, entry, "deny")
    if deny is not None:
        policy["deny"] = deny
    ask = _texts(where, entry, "ask")
    if ask is not None:
        policy["ask"] = ask
    for name, key in (("timeout", "timeout"), ("connect_timeout", "connectTimeout")):
        seconds = entry.get(key, entry.get(name))
        if seconds is None:
            continue
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ConfigurationError(f"{where}: `{key}` must be a number, got {seconds!r}.")
        policy[name] = float(seconds)
    return policy


def expand_env(text: str, *, where: str = "configuration") -> str:
    """`text` with each `${env:NAME}` (or `${NAME}`) replaced by the environment variable's
    value: how configuration files keep secrets (tokens, passwords) out of the file.

    Raises:
        ConfigurationError: naming `where` and the variable, when it is not set (a secret
            must never silently become the placeholder's text).
    """

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ConfigurationError(
                f"{where}: environment variable {name!r} is not set; set it or write the value."
            )
        return os.environ[name]

    return _VARIABLE.sub(variable, text)


def _expand(where: str, text: str) -> str:
    return expand_env(text, where=where)


def _text(
    where: str, entry: Mapping[str, object], key: str, *, required: bool = False
) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise ConfigurationError(f"{where}: `{key}` must be a non-empty string, got {value!r}.")
    return _expand(where, value)


def _texts(where: str, entry: Mapping[str, object], key: str) -> tuple[str, ...] | None:
    value = entry.get(key)
    if value is None:
        return None
    items = cast(list[object], value) if isinstance(value, list) else None
    if items is None or not all(isinstance(item, str) for item in items):
        raise ConfigurationError(f"{where}: `{key}` must be a list of strings, got {value!r}.")
    return tuple(_expand(where, cast(str, item)) for item in items)


def _table(where: str, entry: Mapping[str, object], key: str) -> dict[str, str] | None:
    value = entry.get(key)
    if value is None:
        return None
    table = cast(Mapping[object, object], value) if isinstance(value, Mapping) else None
    if table is None or not all(isinstance(v, str) for v in table.values()):
        raise ConfigurationError(
            f"{where}: `{key}` must be an object of string values, got {value!r}."
        )
    return {str(k): _expand(where, cast(str, v)) for k, v in table.items()}


def _is_clawcell_server(config: ServerConfig) -> bool:
    if not isinstance(config, StdioServer):
        return False
    words = [Path(config.command).name, *config.args]
    if "clawcell" in words:
        at = words.index("clawcell")
    elif "-m" in words and words[words.index("-m") + 1 :][:1] == ["clawcell"]:
        at = words.index("-m") + 1
    else:
        return False
    return words[at + 1 : at + 3] == ["mcp", "serve"]
