"""The options every cell-running command shares, and the `CodeMode` they describe."""

from __future__ import annotations

import argparse
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

from .. import CodeMode
from ..store import SessionStore, open_store
from ._files import check_store_file
from ._settings import MEMORY, Settings, load_settings, parse_limits
from ._values import session_id

__all__ = ["add_cell_options", "open_mode", "open_settings_store", "settings_from", "store_option"]


def add_cell_options(
    parser: argparse.ArgumentParser, *, store_help: str, default_session: str = "default"
) -> None:
    """`--config`, `--tools`, `--mcp`, `--limit`, `--store` and `--session`."""
    parser.add_argument("--config", metavar="FILE", help="a clawcell.toml (or mcpServers JSON)")
    parser.add_argument(
        "--tools", action="append", default=[], metavar="MODULE:ATTR", help="tools to offer"
    )
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="FILE",
        help="MCP servers from a JSON (`mcpServers`) or TOML (`[mcp.servers]`) file",
    )
    parser.add_argument(
        "--limit", action="append", default=[], metavar="NAME=N", help="e.g. timeoutMs=2000"
    )
    parser.add_argument("--store", metavar="PATH", help=store_help)
    parser.add_argument(
        "--session",
        type=session_id,
        metavar="ID",
        help=f"the session id (default: `{default_session}`)",
    )


def settings_from(args: argparse.Namespace) -> Settings:
    """The config file's settings with the command-line options on top."""
    from ..mcp import load_servers

    base = load_settings(args.config) if args.config else Settings()
    servers = {name: s for file in args.mcp for name, s in load_servers(file).items()}
    given = Settings(
        tools=tuple(args.tools),
        mcp_servers=servers,
        limits=parse_limits(args.limit),
        store=store_option(args.store),
        session=args.session,
    )
    return base.merged(given)


def store_option(value: str | None) -> str | None:
    """`--store` as given: a URL or `:memory:` as is, a path made absolute."""
    if value is None or value == MEMORY or "://" in value:
        return value
    return str(Path(value).resolve())


@asynccontextmanager
async def open_settings_store(
    settings: Settings, *, default: Path | None
) -> AsyncGenerator[SessionStore | None]:
    """The store `settings` names (SQLite file or PostgreSQL URL; `None` for memory), closed
    on exit. A SQLite file is opened (and migrated) before it is yielded; a PostgreSQL store
    connects on its first call.

    A file a person named must be usable (`check_store_file`: its directory exists, it is a
    clawcell store); only the command's own `default` gets its directory created.

    Raises:
        ConfigurationError: The named file cannot be a store.
        StoreUnavailableError: The store cannot be opened.
    """
    target = settings.store_target(default)
    if isinstance(target, Path):
        if target == default:
            target.parent.mkdir(parents=True, exist_ok=True)
        check_store_file(target, create=True)
    store = open_store(target, max_size=settings.store_pool) if target is not None else None
    try:
        if isinstance(target, Path) and store is not None:
            await store.upgrade()  # one clear error now rather than one per background task
        yield store
    finally:
        if store is not None:
            await store.close()


@asynccontextmanager
async def open_mode(
    settings: Settings, *, default_store: Path | None, command: str
) -> AsyncGenerator[CodeMode]:
    """A `CodeMode` for `settings`, closed (with its store) on exit; `command` names the
    agentless command it runs for (`clawcell <command>`), for its refusals."""
    tools = settings.build_agentless_tools(command)
    async with (
        open_settings_store(settings, default=default_store) as store,
        CodeMode(tools, options=settings.options(store)) as mode,
    ):
        yield mode
