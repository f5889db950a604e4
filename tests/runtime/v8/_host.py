"""A host process for tests/runtime/v8/test_orphans.py, which SIGKILLs it.

Run as `python -m tests.runtime.v8._host <moment> <memory_mib> <sandbox>` from the
repository root; its workers' V8 heap is `memory_mib` + 32 MiB, which names them on the
process table, and they run in bubblewrap when `sandbox` is `1` (and it works here). It
prints `ready` once it is at `moment`, then waits:

* `boot`: a worker was just spawned (from a thread that ends at once, as an event loop's
  executor threads do) and has not answered yet;
* `cell`: a cell is running a busy loop (the `mark` tool it called first printed `ready`);
* `idle`: a cell ran and its worker is idle (a spare beside it);
* `held`: a sandboxed worker is spawned with bubblewrap held between its `clone()` and the
  moment it lets the sandbox's first process go on (`--userns-block-fd`, never released):
  that process waits on bubblewrap's eventfd without a parent-death signal yet, the state in
  which a host killed at boot left it forever (containers/bubblewrap#633).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from typing import Any

from clawcell import CodeMode, Limits, Tool
from clawcell.runtime import V8Executor
from clawcell.runtime._v8._process import SPAWNER, deno_binary, environment, spawn, worker_argv


def _ready() -> None:
    print("ready", flush=True)


async def _mark(_: dict[str, Any]) -> Any:
    _ready()
    return 1


def _spawn_held(heap_mb: int) -> None:
    """The production command line and spawner, with bubblewrap told to wait for a byte on a
    pipe (kept open here, never written) before it releases the sandbox's first process."""
    deno = deno_binary()
    assert deno is not None
    argv = worker_argv(deno, heap_mb, sandbox=True)
    at = next(i for i, arg in enumerate(argv) if arg.endswith("bwrap"))
    block, _held = os.pipe()
    info, info_out = os.pipe()
    extra = ["--unshare-user", "--info-fd", str(info_out), "--userns-block-fd", str(block)]
    argv[at + 1 : at + 1] = extra
    SPAWNER.run(argv, environment(), (block, info_out))
    os.close(info_out)
    text = ""
    with os.fdopen(info) as stream:  # bubblewrap writes it just before it blocks
        while not text.endswith("}\n"):  # not to the end: `unshare` keeps the pipe open
            line = stream.readline()
            assert line, text
            text += line
    assert "child-pid" in json.loads(text), text


async def main(moment: str, memory_mib: int, sandbox: bool) -> None:
    if moment == "held":
        _spawn_held(memory_mib + 32)
        _ready()
        await asyncio.Event().wait()
    limits = Limits(timeout_ms=600_000, memory_limit_bytes=memory_mib * 1024 * 1024)
    if moment == "boot":
        started: list[object] = []
        thread = threading.Thread(
            target=lambda: started.append(spawn(memory_mib + 32, sandbox=sandbox))
        )
        thread.start()
        thread.join()
        _ready()
        await asyncio.Event().wait()
    executor = V8Executor(sandbox=sandbox)
    async with CodeMode(
        [Tool(name="mark", execute=_mark)], executor=executor, limits=limits
    ) as mode:
        if moment == "cell":
            await mode.exec("await mark({});\nfor (;;) {}")
        await mode.exec("return 1;")
        _ready()
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"))
