"""The process-wide wasmtime engine, compiled reactor module and epoch watchdog.

The reactor is compiled once per process. The compiled artefact is cached on disk, keyed
by the wasm's sha256, the wasmtime version and the export-patch version, so a new process
deserializes it (about 1 ms) instead of compiling it (0.5 s on an idle machine, several seconds
on a loaded one). That first compile says so in one line on stderr, so a first cell that takes
seconds is not a mystery; `make demo` does it as a warm-up step of its own.

Epoch interruption is the backstop for long native operations (a huge sort, a BigInt
multiplication) that the QuickJS interrupt handler cannot reach; see `_backstop` for how
each guest keeps its own hard deadline on the shared epoch.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Final

from ...errors import RuntimeUnavailableError
from .._process import PerProcess
from ._backstop import Watchdog
from ._capi import EngineError, library_path
from ._handles import Engine, Linker, Module
from ._reactor import WASM_SHA256, load_verified_wasm, patch_exports

__all__ = [
    "EXPORTED_FUNCTIONS",
    "CompiledReactor",
    "Watchdog",
    "compiled_reactor",
    "engine_cache_file",
    "files_named",
    "keep_newest",
]

# Compiled files of other builds (other environments on the machine) kept beside this one.
_KEPT_BUILDS = 3
# Bump when the patch or engine configuration changes, so stale cache files are ignored.
_PATCH_VERSION: Final = "6"
MAX_WASM_STACK: Final = 2 * 1024 * 1024  # never above 2 MiB: wasmtime-py 50 aborted the process
ASYNC_STACK_SIZE: Final = MAX_WASM_STACK + 4 * 1024 * 1024
"""The stack a call future runs on (`_exports.CallFuture`): the guest's wasm may use
`MAX_WASM_STACK` of it, and the host functions it calls (Python, with the collector and the
finalizers it may run) the rest. Pages are touched only as deep as a call goes."""
MEMORY_RESERVATION: Final = 4 * 1024 * 1024 * 1024

EXPORTED_FUNCTIONS: Final = (
    "JS_NewRuntime",
    "JS_NewContext",
    "JS_SetMemoryLimit",
    "JS_SetMaxStackSize",
    "JS_SetInterruptHandler",
    "JS_Eval",
    "JS_Call",
    "JS_FreeValue",
    "JS_DupValue",
    "JS_ToCStringLen2",
    "JS_FreeCString",
    "JS_NewStringLen",
    "JS_ExecutePendingJob",
    "JS_GetException",
    "JS_GetPropertyStr",
    "JS_RunGC",
    "JS_SetHostPromiseRejectionTracker",
    "JS_EvalFunction",
)


class CompiledReactor:
    """The wasmtime engine, the patched and compiled reactor, and a ready linker."""

    def __init__(self) -> None:
        # Linear memories are reserved up front and grow in place, so a guest's memory never
        # moves and the host can keep its base address (the store caps growth far below).
        self.engine = Engine(
            epoch_interruption=True,
            max_wasm_stack=MAX_WASM_STACK,
            async_stack_size=ASYNC_STACK_SIZE,
            own_stacks=True,
            memory_reservation=MEMORY_RESERVATION,
            memory_reservation_for_growth=0,
            optimize_for_speed=True,
        )
        self.module = self._load_module()
        self.linker = Linker(self.engine)
        self.watchdog = Watchdog(self.engine)

    def _load_module(self) -> Module:
        cache = _cache_path()
        if cache is not None and os.path.exists(cache):
            with contextlib.suppress(Exception):  # a damaged or foreign file: compile anew
                return Module.deserialize_file(self.engine, cache)
        if cache is not None:
            _announce_compile(cache, writable=_writable(os.path.dirname(cache)))
        wasm = patch_exports(load_verified_wasm(), EXPORTED_FUNCTIONS)
        try:
            module = Module.compile(self.engine, wasm)
        except EngineError as exc:
            reason = exc.message.removeprefix("cannot compile: ")
            raise RuntimeUnavailableError(f"cannot compile the QuickJS reactor: {reason}") from exc
        if cache is not None:
            _write_cache(cache, module.serialize())
        return module


def engine_cache_file() -> str | None:
    """The compiled engine's cache file (it need not exist), or `None` when caching is off;
    other per-build caches (the guests' pristine images) live beside it."""
    return _cache_path()


def _cache_path() -> str | None:
    """Where the compiled module is cached, or `None` when caching is turned off.

    The key is the wasm digest, the patch version and the wasmtime build (the size of its
    native library, which differs between releases; reading the package version would cost
    an `importlib.metadata` import on every start). A file from another build is refused by
    `Module.deserialize_file` anyway, then recompiled and replaced.

    Paths here are strings joined by `os.path`: `pathlib` (with `urllib.parse` and
    `ipaddress`, which it imports) is 3.5% of a cold start, and no module a first cell
    loads needs it.
    """
    if os.environ.get("CLAWCELL_NO_MODULE_CACHE"):
        return None
    explicit = os.environ.get("CLAWCELL_CACHE_DIR")
    if explicit:
        base = explicit
    else:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "clawcell")
    return os.path.join(
        base, f"qjs-{WASM_SHA256[:16]}-p{_PATCH_VERSION}-w{_wasmtime_build()}.cwasm"
    )


def _announce_compile(cache: str, *, writable: bool) -> None:
    """One line on stderr before the compile that happens once per machine (or engine update).

    Where the cache cannot be written, every start compiles: the line says so, and how to
    give it a directory, instead of promising "once" each time.
    """
    directory = os.path.dirname(cache)
    if writable:
        line = (
            f"clawcell: compiling the JavaScript engine once into {directory} "
            "(a few seconds; later starts reuse it)\n"
        )
    else:
        line = (
            f"clawcell: compiling the JavaScript engine (a few seconds); {directory} is not "
            "writable, so every start compiles it again: set CLAWCELL_CACHE_DIR to a writable "
            "directory\n"
        )
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(line)
        sys.stderr.flush()


def _writable(directory: str) -> bool:
    """Whether a cache file can be created in `directory` (made if missing)."""
    import tempfile  # here: a start that finds the cache never loads it (nor shutil, bz2, lzma)

    try:
        os.makedirs(directory, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".probe-"):
            return True
    except OSError:
        return False


def _wasmtime_build() -> str:
    try:
        return format(os.stat(library_path()).st_size, "x")
    except (OSError, RuntimeUnavailableError):
        return "unknown"


def _write_cache(path: str, data: bytes) -> None:
    import tempfile  # here: see `_writable`

    directory = os.path.dirname(path)
    with contextlib.suppress(OSError):
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".cwasm")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    # Files of other builds are read only by other environments (another venv with another
    # wasmtime on the same machine): removing them all made two environments recompile each
    # other's file on every start. The newest few stay; older ones are never read again.
    others = [stale for stale in files_named(directory, "qjs-", ".cwasm") if stale != path]
    keep_newest(others, _KEPT_BUILDS)


def files_named(directory: str, prefix: str, suffix: str) -> list[str]:
    """The files in `directory` named `<prefix>…<suffix>` (none when it cannot be listed)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = (name for name in names if name.startswith(prefix) and name.endswith(suffix))
    return [os.path.join(directory, name) for name in found]


def keep_newest(files: list[str], kept: int) -> None:
    """Remove all but the `kept` most recently modified of `files` (cache files other
    processes may be removing too: a file already gone is no error)."""
    for stale in sorted(files, key=_mtime, reverse=True)[kept:]:
        with contextlib.suppress(OSError):
            os.unlink(stale)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


_reactor = PerProcess(CompiledReactor)


def compiled_reactor() -> CompiledReactor:
    """The process-wide compiled reactor, created on first use.

    A forked child (a pre-forking server) does not inherit the watchdog thread, so it builds
    its own reactor instead of using the parent's.
    """
    return _reactor.get()
