"""Shared helpers for tests that run cells through the public `CodeMode` API.

Imported as `tests.conftest` by the cell, hostile and CLI tests (no fixtures here)."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import select
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings

from clawcell import CodeMode, Limits, Tool
from tests._watchdog import install as install_watchdog

T = TypeVar("T")

# Hypothesis's per-example deadline and its "too slow" health check are timing assertions:
# on a shared two-core machine, under coverage or beside other test workers, an example that
# takes 10 ms alone can take 700 ms, and the test failed for the load, not for the code.
# Property tests here assert behaviour only (timing lives in bench/), for every test at once.
settings.register_profile("clawcell", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("clawcell")

FAST = Limits(timeout_ms=250)
"""A short budget, only for tests that must reach a deadline (busy loops, parking)."""
ROOMY = Limits(timeout_ms=60_000)
"""The default budget of cell tests (`with_mode`, `exec_one`): a slow or loaded machine never
reaches it; tests that end by a deadline say so with `FAST` (or their own `Limits`)."""


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run one test coroutine on a fresh event loop."""
    return asyncio.run(coroutine)


async def echo(tool_input: dict[str, Any]) -> Any:
    return tool_input


def echo_tool() -> Tool:
    return Tool(name="echo", execute=echo)


def with_mode(
    body: Callable[[CodeMode], Awaitable[T]],
    *,
    tools: Iterable[Tool] | None = None,
    limits: Limits = ROOMY,
    **options: Any,
) -> T:
    """Run `body(mode)` in a fresh `CodeMode` (with an `echo` tool unless told otherwise)."""

    async def main() -> T:
        async with CodeMode(
            [echo_tool()] if tools is None else tools, limits=limits, **options
        ) as mode:
            return await body(mode)

    return run(main())


def exec_one(code: str, **options: Any) -> dict[str, Any]:
    """The envelope of one cell in a fresh `CodeMode`."""

    async def body(mode: CodeMode) -> dict[str, Any]:
        return await mode.exec(code)

    return with_mode(body, **options)


def failure(envelope: Mapping[str, Any]) -> tuple[str, str, str, bool]:
    """`(code, failurePhase, error, bridgeDispatchStarted)` of a failed envelope."""
    assert envelope["status"] == "failed", envelope
    return (
        envelope["code"],
        envelope["failurePhase"],
        envelope["error"],
        envelope["bridgeDispatchStarted"],
    )


def in_forked_child(child: Callable[[], bytes], timeout: float = 60.0) -> bytes | None:
    """Run `child()` in a forked process and return the bytes it produced.

    `None` means the child hung past `timeout` (it is killed), so a regression fails the
    test instead of hanging the suite. The child exits with `os._exit`, never running the
    parent's atexit hooks.
    """
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, child())
        finally:
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], timeout)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as pipe:
        return pipe.read() if ready else None


def in_fresh_interpreter(module: str, function: str, timeout: float = 120.0) -> Any:
    """`module.function()`'s JSON value, called in a new Python process started at the
    repository's root: for what depends on a process's whole history (the collector finds
    whatever any earlier test left to become garbage), measured as a first cell's process
    sees it."""
    code = f"import json; from {module} import {function} as f; print(json.dumps(f()))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


SLOW_FIRST: tuple[str, ...] = (
    "tests/packaging/test_fresh_venv.py",
    "tests/envelope/test_results.py",
    "tests/mcp_server/test_http.py",
    "tests/mcp_server/test_stdio.py",
    "tests/ui/browser/test_basics.py",
    "tests/store/test_cells_scale_out.py",
    "tests/packaging/test_dist.py",
    "tests/cli/test_serve.py",
    "tests/envelope/test_ledger.py",
    "tests/test_jsjson.py",
    "tests/automations/test_workers.py",
    "tests/catalog/test_properties.py",
    "tests/hostile/test_hostile_memory.py",
    "tests/ui/browser/test_media.py",
    "tests/ui/browser/test_demo.py",
    "tests/cli/test_postgres_store.py",
    "tests/mcp/test_failures.py",
    "tests/hostile/test_hostile_mcp.py",
    "tests/tools/browser/test_browser.py",
    "tests/ui/browser/test_mcp_apps.py",
    "tests/test_imports.py",
)
"""Files whose single tests take longest (from `--durations`), in that order. They are
collected first so that pytest-xdist, which hands each idle worker the next test, does not
end the run with one worker on a long test and the other idle. A hint for speed only: a file
missing here runs in its usual place."""


INSTALLED = tuple(Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib"))


def pytest_itemcollected(item: pytest.Item) -> None:
    """Give a test that uses a module- or class-scoped fixture an `xdist_group` named after
    its module (a package-scoped one: its directory), unless it has a group already; fixtures
    of installed plugins (anyio's module-scoped `anyio_backend`) do not count. Called as each
    test is collected, before pytest-xdist names the groups.

    Under `--dist loadgroup` an ungrouped test goes to whichever worker is idle, so a
    module's tests interleave with other modules' on every worker, and pytest tears a module
    fixture down whenever the next test comes from another module: a fixture meant to be made
    once a module (a Chromium launch, a built fixture tree) was made about once a test.
    Grouped, a module's tests run one after another on one worker, and it is made once."""
    if item.get_closest_marker("xdist_group") is not None:
        return
    info = getattr(item, "_fixtureinfo", None)
    if info is None:  # not a function test (a doctest, say)
        return
    scopes = {
        str(fixture.scope)
        for fixtures in info.name2fixturedefs.values()
        for fixture in fixtures
        if not _installed(fixture.func)
    }
    module = str(item.nodeid).split("::", 1)[0].removesuffix(".py").split("/")
    if "package" in scopes:
        item.add_marker(pytest.mark.xdist_group(".".join(module[:-1])))
    elif scopes & {"module", "class"}:
        item.add_marker(pytest.mark.xdist_group(".".join(module)))


def _installed(function: Any) -> bool:
    code = getattr(inspect.unwrap(function), "__code__", None)
    path = Path(code.co_filename).resolve() if code is not None else None
    return path is None or any(path.is_relative_to(place) for place in INSTALLED)


def pytest_configure(config: pytest.Config) -> None:
    install_watchdog(config)  # a test past its limit writes every task's and thread's stack


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own hook has named the groups
def pytest_collection_modifyitems(items: list[Any]) -> None:
    """Collect the `SLOW_FIRST` files first (each keeps its own order; the rest follow in
    the usual order), and make `xdist_group` marks count."""
    _carry_xdist_groups(items)
    rank = {path: index for index, path in enumerate(SLOW_FIRST)}

    def key(item: Any) -> int:
        return rank.get(str(item.nodeid).split("::", 1)[0], len(rank))

    items.sort(key=key)


def _carry_xdist_groups(items: list[Any]) -> None:
    """Under `--dist loadgroup`, pytest-xdist 3.8 names an item's group by appending
    `@<group>` to `item._nodeid`, which pytest 9 no longer reads (a node's id is its `_id`):
    every `xdist_group` was silently ignored, and a module's shared fixture (a fleet of
    workers, a wheel build) was made once per xdist worker. Carry the suffix over."""
    from _pytest.nodeid import NodeId

    for item in items:
        legacy = getattr(item, "_nodeid", None)
        if isinstance(legacy, str) and legacy != item.nodeid:
            item._id = NodeId.parse(legacy)


def value_of(code: str, **options: Any) -> Any:
    """The value of one completed cell in a fresh `CodeMode`."""
    envelope = exec_one(code, **options)
    assert envelope["status"] == "completed", envelope
    return envelope["value"]


def output_of(code: str, **options: Any) -> list[Any]:
    """The output items of one completed cell in a fresh `CodeMode`."""
    envelope = exec_one(code, **options)
    assert envelope["status"] == "completed", envelope
    return envelope["output"]


def texts(items: list[Any]) -> list[str]:
    """The texts of output items that must all be text items."""
    assert all(item["type"] == "text" for item in items)
    return [item["text"] for item in items]
