"""The `clawcell db` command: `clawcell db upgrade --store PATH_OR_URL`.

Registered by `clawcell.cli._main` with `configure(parser)` and dispatched to `run(args)`.
`upgrade` opens the store, which applies any missing schema migrations (every backend also
does so on open; the command lets a deployment do it once, before starting workers), and
prints the versions. A PostgreSQL URL is never printed, so its password stays off the
terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from ..errors import ClawcellError
from ..store import PostgresStore, SQLiteStore, open_store
from ._files import check_store_file

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add `db`'s subcommands to `parser` (the `clawcell db` parser)."""
    commands = parser.add_subparsers(dest="db_command", required=True)
    upgrade = commands.add_parser(
        "upgrade", help="bring a session store's schema to this clawcell's version"
    )
    upgrade.add_argument(
        "--store", required=True, help="an SQLite file path or a postgresql:// URL"
    )
    upgrade.add_argument(
        "--schema", default="clawcell", help="the PostgreSQL schema (default: clawcell)"
    )


def run(args: argparse.Namespace) -> int:
    """Run `clawcell db upgrade`; the exit status (0, or 2 with the reason on stderr)."""
    try:
        store = open_store(str(args.store), schema=str(args.schema))  # opens nothing yet
        if isinstance(store, SQLiteStore):
            check_store_file(
                Path(args.store),
                create=False,
                missing="so there is nothing to upgrade; name the store your agents or "
                "workers use (a new store gets the current schema when it is first opened).",
            )
        name = (
            f"PostgreSQL schema {store.schema!r}"
            if isinstance(store, PostgresStore)
            else str(store.path)
        )
        found, current = asyncio.run(_upgrade(store))
    except ClawcellError as exc:
        print(f"clawcell db upgrade: {exc}", file=sys.stderr)
        return 2
    if found == current:
        print(f"{name}: schema version {current}, up to date")
    else:
        print(f"{name}: schema version {found} → {current}")
    return 0


async def _upgrade(store: SQLiteStore | PostgresStore) -> tuple[int, int]:
    async with store:
        return await store.upgrade()
