"""A fleet on one machine, as issue 37 deploys clawcell: three `clawcell serve` workers and
two `clawcell mcp serve --http` workers on one throwaway PostgreSQL database, a round-robin
reverse proxy in front of each kind (loopback only; SSE passes through unbuffered), and one
OpenAI-compatible scripted model server every worker calls (`tests/ui/_fleet_net.py`).

Every worker reads one `clawcell.toml` (the shared token as `${env:…}`, the store URL, the
model's `base_url`); they share the state key too. A test module makes one fleet
(`start_fleet`) and its tests use distinct session ids.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import secrets
import subprocess
import sys
import uuid
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx
import psycopg
from psycopg import sql

from clawcell.ui._security import Secrets
from tests.ui._fleet_net import Loopback, RoundRobin, loopback_socket, url_of
from tests.ui._fleet_tools import LOG, STORE

TOKEN: Final = "one-token-for-the-whole-fleet-0123456789"
MCP_TOKEN: Final = "mcp-token-for-the-whole-fleet-0123456789"
ROOT: Final = Path(__file__).resolve().parents[2]
UI_WORKERS: Final = 3
MCP_WORKERS: Final = 2


@dataclass
class Worker:
    """One worker process and its own (direct, not proxied) base URL."""

    process: subprocess.Popen[str]
    url: str = ""


@dataclass
class Fleet:
    """The running fleet: `ui` and `mcp` are the proxies' URLs (the mcp one ends in `/mcp`)."""

    ui: str
    mcp: str
    ui_workers: list[Worker]
    mcp_workers: list[Worker]
    log: Path
    loopback: Loopback
    ui_proxy: RoundRobin
    mcp_proxy: RoundRobin
    config: Path
    canvas_origin: str

    def client(self, base: str | None = None) -> httpx.Client:
        """A UI client through the proxy (or to `base`), with the token and CSRF header."""
        headers = {"authorization": f"Bearer {TOKEN}", "x-csrf-token": Secrets(token=TOKEN).csrf}
        return httpx.Client(base_url=base or self.ui, headers=headers, timeout=60)

    def deployed(self) -> list[str]:
        """The lines `deploy` wrote (one per effect, with the worker's pid)."""
        return self.log.read_text().splitlines() if self.log.exists() else []


def _database(dsn: str, name: str, *, drop: bool) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        if drop:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
        else:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def _config(store: str, model: str, ui_host: str, canvas_origin: str, pool: int) -> str:
    """The `clawcell.toml` every worker reads (each adds its own `canvasPort`)."""
    return (
        'tools = ["tests.ui._fleet_tools:tools"]\n'
        f"store = {json.dumps(store)}\n"
        f"store_pool = {pool}\n"
        "[agent]\n"
        'model = "openai:fleet-model"\n'
        f"base_url = {json.dumps(model + '/v1')}\n"
        "[ui]\n"
        "port = 0\n"
        f"canvasOrigin = {json.dumps(canvas_origin)}\n"
        'token = "${env:CLAWCELL_TEST_UI_TOKEN}"\n'
        f"allowedHosts = [{json.dumps(ui_host)}]\n"
    )


def _free_port() -> int:
    """A port free a moment ago (each worker's canvas host binds its own)."""
    with contextlib.closing(loopback_socket()) as sock:
        return sock.getsockname()[1]


def _start(args: list[str], env: dict[str, str], *, stderr: bool) -> Worker:
    process = subprocess.Popen(
        [sys.executable, "-m", "clawcell", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL if stderr else subprocess.PIPE,
        stderr=subprocess.PIPE if stderr else None,
        text=True,
    )
    return Worker(process)


class _Exited(AssertionError):
    """A fleet worker exited before it printed the line it serves on."""

    def __init__(self, status: int) -> None:
        super().__init__(f"a fleet worker exited before it served (status {status})")
        self.status = status


def _ready(worker: Worker, pattern: str, stream_name: str) -> str:
    stream = getattr(worker.process, stream_name)
    assert stream is not None
    for line in stream:
        if match := re.search(pattern, line):
            return match.group(1)
    raise _Exited(worker.process.wait())


def _start_ui(tmp: Path, shared: str, n: int, env: dict[str, str]) -> tuple[Worker, int]:
    """Start UI worker `n` on a canvas port free a moment ago."""
    port = _free_port()
    (tmp / f"worker-{n}.toml").write_text(shared + f"canvasPort = {port}\n")
    return _start(["serve", "--config", str(tmp / f"worker-{n}.toml")], env, stderr=False), port


def _serving_ui(
    tmp: Path, shared: str, env: dict[str, str], count: int, workers: list[Worker]
) -> list[int]:
    """Start `count` UI workers together, each serving; their canvas ports. Every process
    started is added to `workers` at once (the caller stops them all, whatever fails).

    Another process (an xdist worker's ephemeral port) may take a canvas port before its
    worker binds it; `clawcell serve` then exits 2 ("cannot bind"), and that worker is
    started again on another port, up to three times."""
    ports: list[int] = []
    for n in range(count):
        worker, port = _start_ui(tmp, shared, n, env)
        workers.append(worker)
        ports.append(port)
    for n in range(count):
        for attempt in range(3):
            try:
                workers[n].url = _ready(workers[n], r"(http://[^/]+)/\?token=", "stdout")
                break
            except _Exited as exc:
                if exc.status != 2 or attempt == 2:
                    raise
                _stop([workers[n]])
                workers[n], ports[n] = _start_ui(tmp, shared, n, env)
    return ports


def _stop(workers: list[Worker]) -> None:
    for worker in workers:
        if worker.process.poll() is None:
            worker.process.terminate()
    for worker in workers:
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.process.wait(timeout=30)
        if worker.process.poll() is None:
            worker.process.kill()
            worker.process.wait()
        for stream in (worker.process.stdout, worker.process.stderr):
            if stream is not None:
                stream.close()


@contextlib.contextmanager
def start_fleet(
    postgres_dsn: str,
    tmp: Path,
    *,
    ui_workers: int = UI_WORKERS,
    mcp_workers: int = MCP_WORKERS,
    store_pool: int = 4,
) -> Generator[Fleet]:
    """Start the fleet on a new database of `postgres_dsn`'s server; stop it and drop the
    database afterwards."""
    name = f"fleet_{uuid.uuid4().hex[:12]}"
    ui: list[Worker] = []
    mcps: list[Worker] = []
    # Each resource is released however far the start got (a leaked socket or process of a
    # failed start fails a later test on the worker): undone in reverse order.
    with contextlib.ExitStack() as undo:
        _database(postgres_dsn, name, drop=False)
        undo.callback(_database, postgres_dsn, name, drop=True)
        ui_sock, mcp_sock, canvas_sock = (
            undo.enter_context(contextlib.closing(loopback_socket())) for _ in range(3)
        )
        loopback = Loopback()
        undo.callback(loopback.close)
        undo.callback(_stop, mcps)
        undo.callback(_stop, ui)
        mcp_host = f"127.0.0.1:{mcp_sock.getsockname()[1]}"
        store = _database_url(postgres_dsn, name)
        shared = _config(store, loopback.model.url,
                         url_of(ui_sock).removeprefix("http://"), url_of(canvas_sock),
                         store_pool)  # fmt: skip
        config = tmp / "clawcell.toml"
        config.write_text(shared)
        key = base64.b64encode(secrets.token_bytes(32)).decode()
        env = {**os.environ, "CLAWCELL_TEST_UI_TOKEN": TOKEN, "CLAWCELL_MCP_TOKEN": MCP_TOKEN,
               "CLAWCELL_STATE_KEY": f"fleet:{key}", LOG: str(tmp / "deployed.log"),
               STORE: store, "PYTHONPATH": str(ROOT)}  # fmt: skip
        mcp = ["mcp", "serve", "--http", "--config", str(config), "--port", "0",
               "--allow-host", mcp_host]  # fmt: skip
        for _ in range(mcp_workers):
            mcps.append(_start(mcp, env, stderr=True))
        canvas_ports = _serving_ui(tmp, shared, env, ui_workers, ui)
        for worker in mcps:
            worker.url = _ready(worker, r"MCP endpoint (http://\S+)/mcp", "stderr")
        ui_proxy = loopback.proxy(ui_sock, [w.url for w in ui])
        mcp_proxy = loopback.proxy(mcp_sock, [w.url for w in mcps])
        loopback.proxy(canvas_sock, [f"http://127.0.0.1:{port}" for port in canvas_ports])
        yield Fleet(ui=url_of(ui_sock), mcp=url_of(mcp_sock) + "/mcp", ui_workers=ui,
                    mcp_workers=mcps, log=tmp / "deployed.log", loopback=loopback,
                    ui_proxy=ui_proxy, mcp_proxy=mcp_proxy,
                    config=config, canvas_origin=url_of(canvas_sock))  # fmt: skip


def _database_url(postgres_dsn: str, name: str) -> str:
    """The DSN of database `name` on `postgres_dsn`'s server."""
    return postgres_dsn.rsplit("/", 1)[0] + "/" + name


def events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """`(event name, data)` of an SSE body's lines."""
    name = ""
    for line in lines:
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield name, json.loads(line.removeprefix("data: "))
