"""`CodeMode`: the public entry point that runs cells for a model.

A model sees two tools, `exec` and `wait`; `call_tool(name, args)` answers them with the
envelope of spec §2.3. `CellHost` (`_host.py`) owns the catalog, MCP servers, executor and
saved results; `Lifecycle` (`_lifecycle.py`) every run from its first `exec` to its end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

from ._arguments import read_call
from ._config import approvals_from, limits_from, session_id_from, store_from, tools_from
from ._decisions import ApprovalDesk
from ._host import CellHost
from ._lifecycle import Lifecycle
from ._limits import Limits
from ._progress import OnUpdate
from ._runs import RunHome
from ._source import read_wait_args
from .approvals import ApprovalDecision, PendingApproval, ToolPolicy
from .catalog import Tool
from .envelope import ResultsStore, render
from .runtime import Executor
from .store import MemoryStore, SessionStore

if TYPE_CHECKING:
    from .catalog import AfterToolCall, BeforeToolCall, ModelToolStyle
    from .mcp import McpServerStatus, ServerConfig

__all__ = ["CodeMode"]


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
        policy: Session tool policy: a `clawcell.approvals.ToolPolicy` or a mapping with
            `allow` / `deny` / `ask` lists of tool names or glob patterns.
        approval_ttl_seconds: How long a pending approval waits before it counts as denied;
            defaults to the snapshot TTL (`limits.snapshot_ttl_seconds`).
        telemetry_in_text: Whether `render` (the text the built-in agent, framework adapters
            and MCP server give the model) includes `telemetry`; envelopes always carry it.
        executor: What runs guest JavaScript (a `clawcell.runtime.Executor`); defaults to a
            `QuickJSExecutor` (QuickJS-NG on wasmtime). Closed with this `CodeMode`.

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
        policy: ToolPolicy | Mapping[str, Any] | None = None,
        approval_ttl_seconds: float | None = None,
        telemetry_in_text: bool = True,
        executor: Executor | None = None,
    ) -> None:
        self.limits = limits_from(limits)
        self.telemetry_in_text = telemetry_in_text
        self.session_id = session_id_from(session_id)
        durable = store_from(store)
        self.store: SessionStore = durable if durable is not None else MemoryStore()
        self._host = CellHost(
            tools_from(tools),
            limits=self.limits,
            hooks=(before_tool_call, after_tool_call),
            mcp_servers=mcp_servers,
            model_context_tokens=model_context_tokens,
            guest_thread=guest_thread,
            executor=executor,
        )
        self.catalog = self._host.catalog
        self.results: ResultsStore = self._host.results
        """The saved results (`results.save/load/delete`) of this runtime's cells."""
        home = RunHome(store=self.store, session_id=self.session_id, durable=durable is not None)
        approvals = approvals_from(policy, approval_ttl_seconds, home, self._host)
        self._runs = Lifecycle(self._host, home, approvals)
        self._desk = ApprovalDesk(approvals, home)

    async def __aenter__(self) -> CodeMode:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel parked cells' host work and release engine resources; idempotent. Cells
        committed to a durable store stay there for a later process."""
        if not self._runs.closed:
            self._runs.close()
            await self._host.aclose()

    def render(self, envelope: Mapping[str, Any]) -> str:
        """The model's text for `envelope`: `clawcell.render`, `telemetry_in_text` applied."""
        return render(envelope, telemetry=self.telemetry_in_text)

    def model_tools(self, style: ModelToolStyle = "anthropic") -> list[Any]:
        """The `exec` and `wait` definitions to send to a model, in its API's `tools` shape;
        `exec`'s description carries the budgets of `limits` and the catalog's quick index."""
        return self._host.model_tools(style)

    async def mcp_status(self) -> dict[str, McpServerStatus]:
        """Connect the MCP servers not listed yet and say, per server name, how each stands:
        `connected` (its tools are callable) or `failed` with the `cause` cells would see;
        asking again retries the failed ones. `{}` without MCP servers."""
        self._runs.check_open()
        return await self._host.mcp_status()

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | str, *, on_update: OnUpdate | None = None
    ) -> dict[str, Any]:
        """Answer a model's `exec` or `wait` tool call with its result envelope.

        `arguments` is the call's argument object, or its JSON text as some model APIs
        deliver it. `on_update`, when given, receives a `clawcell.CellUpdate` for each output
        item and tool call of this leg as it happens (see `clawcell.CellUpdate`). The
        envelope is a plain dict; `clawcell.envelope.Envelope` describes its shape.

        Raises:
            InputError: The call itself was rejected (an unknown tool, arguments that are not
                an object, empty code, an unknown or expired run).
        """
        tool, args = read_call(name, arguments)
        if tool == "wait":
            return await self.wait(read_wait_args(args), on_update=on_update)
        return cast(dict[str, Any], await self._runs.exec(args, on_update))

    async def exec(
        self, code: str, *, title: str | None = None, on_update: OnUpdate | None = None
    ) -> dict[str, Any]:
        """Run a new cell; see `call_tool`."""
        arguments = {"code": code} if title is None else {"code": code, "title": title}
        return cast(dict[str, Any], await self._runs.exec(arguments, on_update))

    async def wait(self, run_id: str, *, on_update: OnUpdate | None = None) -> dict[str, Any]:
        """Resume a cell that returned `waiting`; see `call_tool`."""
        return cast(dict[str, Any], await self._runs.wait(run_id, on_update))

    async def decide(
        self,
        run_id: str,
        approval_id: str,
        decision: Literal["approve", "deny"],
        *,
        note: str = "",
        remember: bool = False,
        by: str = "",
    ) -> ApprovalDecision:
        """Decide a call that waits for approval (its id is in `pendingApprovals`).

        The decision is recorded (durably with a durable store, so another process may make
        it) and delivered at the run's next `wait`: an approved call runs then, a denied one
        rejects into the cell with a catchable `approval_denied` error carrying `note`.
        `remember=True` applies the decision to the tool for the rest of the session.

        Raises:
            InputError: the approval is not pending, or `decision` is neither value.
        """
        self._runs.check_open()
        return await self._desk.decide(
            run_id, approval_id, decision, note=note, remember=remember, by=by
        )

    async def pending_approvals(self, run_id: str) -> list[PendingApproval]:
        """The calls a parked run waits to have approved."""
        return await self._desk.pending_approvals(run_id)

    async def expire_approvals(
        self, run_ids: Iterable[str] = (), *, reason: str = "superseded"
    ) -> list[ApprovalDecision]:
        """Expire the undecided approvals of `run_ids` and of every run parked in this
        process, recording `reason` in the audit trail (`by="expiry"`); deciding one later
        is refused and its call never runs. Returns the expiries recorded."""
        return await self._desk.expire_pending(run_ids, reason=reason)

    async def approval_audit(self) -> list[ApprovalDecision]:
        """Every decision recorded in this session, oldest first (expiries included)."""
        return await self._desk.audit()
