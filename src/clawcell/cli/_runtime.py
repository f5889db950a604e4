"""The options every cell-running command shares, and the `CodeMode` they describe."""

from __future__ import annotations

import argparse
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

from .. import CodeMode, Limits, SQLiteStore
from ._settings import MEMORY, Settings, load_settings, load_tools, parse_limits

__all__ = ["add_cell_options", "open_mode", "settings_from"]


def add_cell_options(parser: argparse.ArgumentParser, *, store_help: str) -> None:
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
    parser.add_argument("--session", metavar="ID", help="the session id (default: `default`)")


def settings_from(args: argparse.Namespace) -> Settings:
    """The config file's settings with the command-line options on top."""
    from ..mcp import load_servers

    base = load_settings(args.config) if args.config else Settings()
    servers = {name: s for file in args.mcp for name, s in load_servers(file).items()}
    given = Settings(
        tools=tuple(args.tools),
        mcp_servers=servers,
        limits=parse_limits(args.limit),
        store=args.store if args.store in (None, MEMORY) else str(Path(args.store).resolve()),
        session=args.session,
    )
    return base.merged(given)


@asynccontextmanager
async def open_mode(settings: Settings, *, default_store: Path | None) -> AsyncGenerator[CodeMode]:
    """A `CodeMode` for `settings`, closed (with its store) on exit."""
    tools = load_tools(settings.tools, base=settings.base)
    path = settings.store_path(default_store)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(path) if path is not None else None
    try:
        mode = CodeMode(
            tools,
            limits=Limits.from_config(settings.limits),
            store=store,
            session_id=settings.session or "default",
            mcp_servers=settings.mcp_servers or None,
        )
        async with mode:
            yield mode
    finally:
        if store is not None:
            await store.close()
