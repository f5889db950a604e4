"""`clawcell automations run`: a scheduler worker over the configured store and tools.

Start as many as you like on one PostgreSQL store: each due run fires once. `SIGTERM` or
`SIGINT` stops the worker gracefully (the runs in flight finish); `SIGKILL` leaves its run
to be marked `lost` by another worker when its lease expires.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path

__all__ = ["configure_worker", "run_worker"]


def configure_worker(parser: argparse.ArgumentParser) -> None:
    """`clawcell automations`: `run` with the cell options of `clawcell run` and the
    worker's own."""
    from ._runtime import add_cell_options

    actions = parser.add_subparsers(dest="automations_action", required=True)
    worker = actions.add_parser("run", help="run a scheduler worker until stopped")
    add_cell_options(worker, store_help="the store holding the jobs (SQLite file or URL)")
    worker.add_argument("--schema", default="clawcell", help="PostgreSQL schema of the store")
    worker.add_argument("--worker-id", help="this worker's id (default host:pid:random)")
    worker.add_argument("--lease-seconds", type=float, default=30.0)
    worker.add_argument("--poll-seconds", type=float, default=0.5)
    worker.add_argument("--max-concurrent", type=int, default=4)


def run_worker(args: argparse.Namespace) -> int:
    """`clawcell automations run`: a worker until a signal stops it; the exit status (2 for
    bad settings or an unusable store)."""
    from ..errors import ClawcellError
    from ._failures import describe

    try:
        asyncio.run(_work(args))
    except (ClawcellError, OSError, ValueError) as exc:  # bad settings or an unusable store
        print(f"clawcell automations: {describe(exc)}", file=sys.stderr)
        return 2
    return 0


async def _work(args: argparse.Namespace) -> None:
    from ..automations import PayloadRunner, Scheduler
    from ..catalog import close_tools
    from ..errors import ConfigurationError
    from ..store import job_store_for, open_store
    from ._runtime import settings_from

    settings = settings_from(args)
    if settings.store is None:
        raise ConfigurationError(
            "a worker needs `--store` (or `store` in the config): the shared jobs"
        )
    target = settings.store_target(None)
    if isinstance(target, Path):
        from ._files import check_store_file

        # A worker runs the jobs an agent or a cell put in a store: a typo must not start a
        # new, empty store that the worker would poll forever.
        check_store_file(
            target,
            create=False,
            missing="so it holds no jobs; pass the store where your agent or `clawcell run "
            "--store` schedules them.",
        )
    store = open_store(settings.store, schema=args.schema)
    jobs = job_store_for(store)
    tools = settings.build_tools()
    runner = PayloadRunner(tools=tools, session_store=store)
    scheduler = Scheduler(
        jobs,
        runner,
        worker=args.worker_id,
        lease_seconds=args.lease_seconds,
        poll_seconds=args.poll_seconds,
        max_concurrent=args.max_concurrent,
        session_store=store,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    print(f"clawcell automations: worker {scheduler.worker} started", flush=True)
    try:
        await scheduler.run(stop)
    finally:
        await close_tools(tools)
        await jobs.close()
        with contextlib.suppress(Exception):
            await store.close()
