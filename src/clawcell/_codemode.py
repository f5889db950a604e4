"""`CodeMode`: the public entry point that runs cells for a model.

A model sees two tools, `exec` and `wait`. `CodeMode.call_tool(name, args)` answers them
with the envelope of spec §2.3; `exec()` and `wait()` are the typed conveniences.

It is the one place where the parts meet (catalog, guest pool, cells, parked runs, the
session store and MCP servers), which is why it runs a little over 400 lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from ._bridge import Bridge
from ._cell import Cell, LegOutcome
from ._envelope import failed_envelope, settle_envelope
from ._limits import Limits
from ._output import ModelBudget, OutputLedger, bound_error
from ._progress import OnUpdate, Progress
from ._results import ResultsStore
from ._runs import ParkedRuns, Run, stored_writes
from ._source import check_source, format_syntax_error, read_exec_args, read_wait_args
from ._tool import Tool
from ._untrusted import mark_untrusted
from .catalog import AfterToolCall, BeforeToolCall, Catalog, ModelToolStyle
from .errors import (
    ClawcellError,
    ClosedError,
    ConfigurationError,
    InputError,
    RuntimeUnavailableError,
)
from .runtime import GuestPool, JSException, run_on_guest_thread
from .store import MemoryStore, SessionStore, SessionView

if TYPE_CHECKING:
    from .mcp import McpServers, ServerConfig

__all__ = ["CodeMode"]

_UNAVAILABLE: Final = "code mode run is unavailable or expired."
_RESUMING: Final = "code mode run is already being resumed."
_TOO_MANY: Final = "too many suspended code mode runs."
_SNAPSHOT_LIMIT: Final = "code mode snapshot limit exceeded"
_RESTART_SAFE_NAMESPACE: Final = "restart-safe code mode cannot call namespace tools."
_RESTART_SAFE_TOOLS: Final = (
    "restart-safe code mode cannot call tool surfaces that are not proven replay-safe; "
    "use audited read, grep, or find tools."
)
_ALWAYS_REPLAY_SAFE: Final = frozenset(
    {"search", "describe", "apiList", "apiRead", "sleep", "yield"}
)
_USER_FILE: Final = "openclaw-code-mode:user.js:"


class CodeMode:
    """Runs model-written JavaScript cells against a catalog of Python tools.

    Args:
        tools: The tools cells may call: `Tool` values (or one `Tool`).
        limits: Budgets and limits (spec §5): a `Limits`, or a mapping of `tools.codeMode`
            settings (camelCase or snake_case keys); defaults when omitted.
        model_context_tokens: The model's context window; when given, every envelope is
            fitted to the model tool-result budget derived from it (spec §6.2 step 7).
        store: Where `store()`/`load()` values and parked cells live. A durable store
            (`clawcell.SQLiteStore(path)`) lets `wait` continue a cell after a restart or
            from another process; without one, an in-memory store is used and nothing
            survives the process.
        session_id: The session whose store entries and parked cells this runtime uses.
        mcp_servers: MCP servers by name (`clawcell.mcp.StdioServer` / `HttpServer`), seen
            in cells as `MCP.<name>`; connected when the first cell runs (needs the `[mcp]`
            extra) and closed with this `CodeMode`.
        before_tool_call: Hooks run before each catalog tool call; one may rewrite the input
            or block the call with a reason (`clawcell.catalog.HookDecision`).
        after_tool_call: Hooks run after each catalog tool call; one may replace the result.
        guest_thread: Run guest JavaScript on clawcell's worker thread (the default), so a
            cell that computes for its whole budget never blocks the event loop; `False`
            runs it on the loop's thread, which saves a thread hop per bridge round trip
            for latency-bound batch jobs.

    Use it as an async context manager, or call `aclose()` when done.
    """

    def __init__(
        self,
        tools: Iterable[Tool] | Tool | None = (),
        *,
        limits: Limits | Mapping[str, Any] | None = None,
        model_context_tokens: int | None = None,
        store: SessionStore | None = None,
        session_id: str = "default",
        mcp_servers: Mapping[str, ServerConfig] | None = None,
        before_tool_call: Iterable[BeforeToolCall] = (),
        after_tool_call: Iterable[AfterToolCall] = (),
        guest_thread: bool = True,
    ) -> None:
        self.limits = _limits(limits)
        if not isinstance(cast(object, session_id), str) or not session_id:
            raise ConfigurationError(
                f"`session_id` must be a non-empty string, got {session_id!r}."
            )
        self.catalog = Catalog(
            _tool_list(tools),
            limits=self.limits,
            before_tool_call=before_tool_call,
            after_tool_call=after_tool_call,
        )
        self._model_budget = (
            None if model_context_tokens is None else ModelBudget.for_context(model_context_tokens)
        )
        self._mcp = _mcp_servers(mcp_servers, self.catalog) if mcp_servers else None
        self._pool = self._new_pool()
        self.results = ResultsStore(self.limits.inbox_bytes)
        if store is not None and not isinstance(cast(object, store), SessionStore):
            raise ConfigurationError(
                f"`store` must be a session store such as `clawcell.SQLiteStore(path)`, "
                f"got {store!r}."
            )
        self.store: SessionStore = store if store is not None else MemoryStore()
        self.session_id = session_id
        self._parked = ParkedRuns(
            store=self.store, session_id=session_id, durable=store is not None
        )
        self._closed = False
        self._runner = run_on_guest_thread if guest_thread else None

    def _new_pool(self) -> GuestPool:
        install: dict[str, Any] = {
            "maxPending": self.limits.max_pending_tool_calls,
            "bindings": [binding.metadata for binding in self.catalog.bindings],
        }
        if self._mcp is not None:
            install["mcp"] = self._mcp.install()
        return GuestPool(
            memory_limit_bytes=self.limits.memory_limit_bytes,
            install_config=json.dumps(install),
        )

    async def _prepare_mcp(self) -> None:
        """Connect and list MCP servers before a cell; rebuild guests when `MCP` changed."""
        if self._mcp is not None and await self._mcp.prepare():
            self._pool.close()
            self._pool = self._new_pool()

    def _telemetry(self) -> dict[str, Any]:
        return self._mcp.host_catalog.telemetry() if self._mcp else self.catalog.telemetry()

    # -- lifecycle --------------------------------------------------------------------------

    async def __aenter__(self) -> CodeMode:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel parked cells' host work and release engine resources; idempotent.

        Parked cells already committed to a durable store stay there for a later process.
        """
        if self._closed:
            return
        self._closed = True
        for run in self._parked.all():
            run.cell.cancel()
            self._parked.forget(run.run_id)
        self._pool.close()
        self.results.close()
        if self._mcp is not None:
            await self._mcp.aclose()

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("this CodeMode is closed; create a new one")

    # -- model-facing tools -----------------------------------------------------------------

    def model_tools(self, style: ModelToolStyle = "anthropic") -> list[Any]:
        """The `exec` and `wait` definitions to send to a model, in its API's `tools` shape.

        The `exec` description carries the budgets of `limits` and the quick index of the
        catalog's tools.
        """
        servers = self._mcp.server_identifiers() if self._mcp is not None else []
        return self.catalog.model_tools(style, mcp_servers=servers)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | str,
        *,
        on_update: OnUpdate | None = None,
    ) -> dict[str, Any]:
        """Answer a model's `exec` or `wait` tool call with its result envelope.

        `arguments` is the call's argument object, or its JSON text as some model APIs
        deliver it. `on_update`, when given, receives a `clawcell.CellUpdate` for each output
        item and tool call of this leg as it happens (see `clawcell.CellUpdate`).

        Raises:
            InputError: The call itself was rejected (arguments that are not an object, empty
                code, an unknown or expired run).
        """
        args = _argument_object(name, arguments)
        if name == "exec":
            return await self._exec_call(args, on_update)
        if name == "wait":
            return await self.wait(read_wait_args(args), on_update=on_update)
        raise InputError(f"unknown Code Mode tool {name!r}; the tools are `exec` and `wait`.")

    async def exec(
        self, code: str, *, title: str | None = None, on_update: OnUpdate | None = None
    ) -> dict[str, Any]:
        """Run a new cell; see `call_tool`."""
        arguments: dict[str, Any] = {"code": code}
        if title is not None:
            arguments["title"] = title
        return await self._exec_call(arguments, on_update)

    async def wait(self, run_id: str, *, on_update: OnUpdate | None = None) -> dict[str, Any]:
        """Resume a cell that returned `waiting`; see `call_tool`."""
        self._check_open()
        self._expire()
        run = self._parked.get(run_id)
        if run is not None and run.resuming:
            return self._input_failure(_RESUMING)
        if run is not None:
            run.resuming = True  # claimed before the store is asked: a racing wait sees it
        try:
            taken = await self._parked.take_durable(run_id)
        finally:
            if run is not None:
                run.resuming = False
        if run is None and taken is not None:
            if float(taken[1].get("expiresAt", 0.0)) <= time.time():
                raise InputError(_UNAVAILABLE)  # expired in the store: revive nothing
            run = self._revive(run_id, *taken)
        elif run is not None and self._parked.durable and taken is None:
            self._drop(run)  # another process continued it
            run = None
        if run is None or run.expires_at <= time.time():
            raise InputError(_UNAVAILABLE)
        return await self._resume(run, on_update)

    async def _resume(self, run: Run, on_update: OnUpdate | None) -> dict[str, Any]:
        run.resuming = True
        run.cell.progress = None if on_update is None else Progress(run.run_id, on_update)
        try:
            if run.snapshot is not None:
                guest = self._pool.acquire()
                guest.restore(run.snapshot)
                run.cell.guest, run.snapshot = guest, None
            outcome = await run.cell.resume(self.limits.timeout_ms / 1000)
        except asyncio.CancelledError:
            self._abandon(run)
            raise
        finally:
            run.resuming = False
        return await self._finish_leg(run, outcome)

    def _revive(self, run_id: str, blob: bytes, meta: dict[str, Any]) -> Run:
        cell = Cell.revive(
            meta["cell"],
            guest=self._pool.acquire(),
            bridge=self._bridge(None),
            replay_safe=self._replay_safe,
            runner=self._runner,
        )
        session = SessionView(self.store, self.session_id, writes=stored_writes(meta))
        cell.bridge.session = session
        return Run(
            run_id=run_id,
            cell=cell,
            ledger=OutputLedger.from_state(meta["ledger"]),
            session=session,
            restart_safe=bool(meta.get("restartSafe")),
            snapshot=blob,
            expires_at=float(meta.get("expiresAt", 0.0)),
        )

    def _replay_safe(self, method: str, args: list[Any]) -> bool:
        if method == "sleep":
            return True
        if method != "callValue" or not args:
            return False
        binding = self.catalog.binding(str(args[0]))
        return binding is not None and binding.tool.replay_safe

    # -- exec ---------------------------------------------------------------------------

    async def _exec_call(
        self, arguments: Mapping[str, Any], on_update: OnUpdate | None = None
    ) -> dict[str, Any]:
        self._check_open()
        self._expire()
        parsed = read_exec_args(arguments)
        if isinstance(parsed, str):
            return self._input_failure(parsed)
        problem = check_source(parsed.code)
        if problem is not None:
            return self._input_failure(problem.message)
        return await self._start(parsed.code, restart_safe=parsed.restart_safe, on_update=on_update)

    def _bridge(self, session: SessionView | None) -> Bridge:
        mcp = self._mcp.host_catalog if self._mcp else None
        return Bridge(
            catalog=mcp or self.catalog,
            inbox_bytes=self.limits.inbox_bytes,
            results=self.results,
            session=session,
            namespaces=mcp,
            network_tool=self._network_tool,
        )

    def _network_tool(self, callable_name: str) -> bool:
        binding = self.catalog.binding(callable_name)
        return binding is not None and binding.tool.network

    async def _start(
        self, code: str, *, restart_safe: bool, on_update: OnUpdate | None
    ) -> dict[str, Any]:
        await self._prepare_mcp()
        try:
            guest = self._pool.acquire()
        except RuntimeUnavailableError as exc:
            return self._host_failure("runtime_unavailable", exc.message)
        session = SessionView(self.store, self.session_id)
        run = Run(
            run_id=f"cm_{uuid.uuid4()}",
            cell=Cell(
                guest=guest,
                bridge=self._bridge(session),
                guard=self._restart_guard if restart_safe else None,
                runner=self._runner,
            ),
            ledger=OutputLedger(self.limits.max_output_bytes),
            session=session,
            restart_safe=restart_safe,
        )
        if on_update is not None:
            run.cell.progress = Progress(run.run_id, on_update)
        try:
            outcome = await run.cell.start(code, self.limits.timeout_ms / 1000)
        except JSException as exc:
            self._pool.release(guest)
            return self._input_failure(_syntax_error(exc, code))
        except asyncio.CancelledError:
            self._abandon(run)
            raise
        return await self._finish_leg(run, outcome)

    # -- ends of legs -------------------------------------------------------------------

    async def _finish_leg(self, run: Run, outcome: LegOutcome) -> dict[str, Any]:
        run.cell.progress = None
        if outcome.status == "waiting":
            outcome = self._suspend(run, outcome)
        warning = None
        if outcome.status == "completed":
            warning = await run.session.commit()
        elif outcome.status == "failed":
            run.session.discard()
        run.cell.output, items = [], run.cell.output
        for item in items:
            run.ledger.append(item)
        try:
            envelope = settle_envelope(
                outcome,
                ledger=run.ledger,
                run_id=run.run_id,
                telemetry=self._telemetry(),
                bridge_dispatch_started=run.cell.bridge_dispatch_started,
                model_budget=self._model_budget,
                results=None if run.restart_safe else self.results,
                replay_safe=self._reports_replay_safe(run, outcome),
            )
        except ClawcellError:
            # Not even the status fits the model's context: the call fails, the cell ends.
            self._end(run, outcome)
            raise
        if warning is not None:
            envelope["warnings"] = [warning]
        if run.cell.bridge.network_derived:
            envelope = mark_untrusted(envelope)
        if outcome.status == "waiting":
            await self._parked.park(run)
        else:
            self._end(run, outcome)
        return envelope

    def _end(self, run: Run, outcome: LegOutcome) -> None:
        self._parked.forget(run.run_id)
        if outcome.status == "waiting":
            run.cell.cancel()
            run.session.discard()
        else:
            self._pool.release(run.cell.guest)

    def _suspend(self, run: Run, outcome: LegOutcome) -> LegOutcome:
        """Snapshot a parking cell and release its guest, or fail it when it cannot park."""
        if not self._parked.has_room_for(run.run_id):
            run.cell.cancel()
            return LegOutcome(status="failed", code="invalid_input", phase="input", error=_TOO_MANY)
        snapshot = run.cell.guest.snapshot()
        if len(snapshot) > self.limits.max_snapshot_bytes:
            run.cell.cancel()
            phase = "bridge" if run.cell.bridge_dispatch_started else "guest"
            return LegOutcome(
                status="failed", code="snapshot_limit_exceeded", phase=phase, error=_SNAPSHOT_LIMIT
            )
        self._pool.release(run.cell.guest)
        run.snapshot = snapshot
        run.expires_at = time.time() + self.limits.snapshot_ttl_seconds
        return outcome

    def _reports_replay_safe(self, run: Run, outcome: LegOutcome) -> bool:
        if not run.restart_safe:
            return False
        return all(
            method == "yield" or self._replay_safe(method, args)
            for method, args in run.cell.pending_requests()
        )

    def _restart_guard(self, method: str, args: list[Any]) -> str | None:
        """Why a restart-safe cell may not make this request, or `None` when it may."""
        if method == "namespace":
            return _RESTART_SAFE_NAMESPACE
        if method in _ALWAYS_REPLAY_SAFE or self._replay_safe(method, args):
            return None
        return _RESTART_SAFE_TOOLS

    def _input_failure(self, message: str) -> dict[str, Any]:
        return self._bounded_failure("invalid_input", "input", message)

    def _host_failure(self, code: str, message: str) -> dict[str, Any]:
        return self._bounded_failure(code, "host", message)

    def _bounded_failure(self, code: str, phase: str, message: str) -> dict[str, Any]:
        error = bound_error(message, self.limits.max_output_bytes)
        return failed_envelope(code=code, phase=phase, error=error, telemetry=self._telemetry())

    def _expire(self) -> None:
        for run in self._parked.expired():
            self._drop(run)

    def _abandon(self, run: Run) -> None:
        """The caller cancelled a leg: end the cell and cancel its host work.

        Its guest is not returned to the pool (a guest segment may still be finishing on the
        worker thread); it is simply dropped.
        """
        self._parked.forget(run.run_id)
        run.cell.cancel()
        run.session.discard()

    def _drop(self, run: Run) -> None:
        self._parked.forget(run.run_id)
        run.cell.cancel()
        run.session.discard()
        if run.snapshot is None:
            self._pool.release(run.cell.guest)


def _limits(limits: object) -> Limits:
    if limits is None:
        return Limits()
    if isinstance(limits, Limits):
        return limits
    if isinstance(limits, Mapping):
        return Limits.from_config(cast(Mapping[str, Any], limits))
    raise ConfigurationError(
        f"`limits` must be a `clawcell.Limits` or a mapping of settings, got {limits!r}."
    )


def _tool_list(tools: object) -> list[Tool]:
    if tools is None:
        return []
    if isinstance(tools, Tool):
        return [tools]
    if not isinstance(tools, Iterable):
        raise ConfigurationError(f"`tools` must be an iterable of `clawcell.Tool`, got {tools!r}.")
    return list(cast(Iterable[Tool], tools))


def _argument_object(name: str, arguments: object) -> Mapping[str, Any]:
    """The call's arguments as a mapping; JSON text of an object is accepted too."""
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments)
    if isinstance(arguments, Mapping):
        return cast(Mapping[str, Any], arguments)
    example = '{"runId": "cm_…"}' if name == "wait" else '{"code": "return 1"}'
    raise InputError(
        f"{name} arguments must be a JSON object such as {example}, got {type(arguments).__name__}."
    )


def _mcp_servers(servers: Mapping[str, ServerConfig], catalog: Catalog) -> McpServers:
    from .mcp import McpServers  # deferred: only runtimes with MCP servers pay for the import

    return McpServers(servers, catalog)


def _syntax_error(exc: JSException, code: str) -> str:
    message = exc.text.removeprefix("SyntaxError: ")
    line, column = 1, 1
    for frame in exc.stack.splitlines():
        at = frame.find(_USER_FILE)
        if at >= 0:
            parts = frame[at + len(_USER_FILE) :].rstrip(")").split(":")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                line, column = int(parts[0]) - 1, int(parts[1])
                break
    last_line = code.count("\n") + 1
    line = min(max(line, 1), last_line)
    return format_syntax_error(message, line, column)
