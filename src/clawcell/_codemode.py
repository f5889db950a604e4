"""`CodeMode`: the public entry point that runs cells for a model.

A model sees two tools, `exec` and `wait`; `call_tool(name, args)` answers them with the
envelope of spec §2.3. `CellHost` (`_runs/_host.py`) owns the catalog, MCP servers, executor and
saved results; `Lifecycle` (`_runs/_lifecycle.py`) every run from its first `exec` to its end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Unpack, cast

from ._config import CodeModeKeywords, CodeModeOptions, approvals_from, tools_from
from ._progress import OnUpdate
from ._runs import ApprovalDesk, CellHost, Lifecycle, RunHome
from ._source import ExecArgs, read_call, read_exec_args, read_wait_args
from .approvals import ApprovalDecision, Decision, PendingApproval
from .catalog import Tool
from .envelope import ResultsStore, render
from .store import MemoryStore, SessionStore

if TYPE_CHECKING:
    from .approvals import ApprovalAnswer
    from .catalog import ModelToolStyle
    from .mcp import McpServerStatus

__all__ = ["CodeMode"]


class CodeMode:
    """Runs model-written JavaScript cells against a catalog of Python tools.

    Args:
        tools: The tools cells may call: `Tool` values (or one `Tool`).
        options: How cells run: a `clawcell.CodeModeOptions` (its fields are documented
            there); defaults when omitted.
        **keywords: Any field of `CodeModeOptions` (`limits=`, `store=`, `session_id=`,
            `mcp_servers=`, `policy=`, `executor=`, …), applied on top of `options`:
            `CodeMode(tools, limits={"timeoutMs": 5000})` is
            `CodeMode(tools, options=CodeModeOptions(limits=…))`.

    Raises:
        ConfigurationError: `tools` or an option is wrong (see `CodeModeOptions`), or the
            policy names a tool that is not in `tools`.

    Use it as an async context manager, or call `aclose()` when done.
    """

    def __init__(
        self,
        tools: Iterable[Tool] | Tool | None = (),
        *,
        options: CodeModeOptions | None = None,
        **keywords: Unpack[CodeModeKeywords],
    ) -> None:
        self.options = options = CodeModeOptions.merged(options, keywords)
        """The options this runtime was built with (checked)."""
        self.limits = options.limits
        self.telemetry_in_text = options.telemetry_in_text
        self.session_id = options.session_id
        durable = options.store
        self.store: SessionStore = durable if durable is not None else MemoryStore()
        self._host = CellHost(
            tools_from(tools),
            limits=self.limits,
            hooks=(options.before_tool_call, options.after_tool_call),
            mcp_servers=options.mcp_servers,
            model_context_tokens=options.model_context_tokens,
            guest_thread=options.guest_thread,
            executor=options.executor,
        )
        self.catalog = self._host.catalog
        self.results: ResultsStore = self._host.results
        """The saved results (`results.save/load/delete`) of this runtime's cells."""
        home = RunHome(store=self.store, session_id=self.session_id, durable=durable is not None)
        approvals = approvals_from(options, home, self._host)
        self._runs = Lifecycle(self._host, home, approvals)
        self._desk = ApprovalDesk(approvals, home)

    async def __aenter__(self) -> CodeMode:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """End parked cells (their host work cancelled, their guests handed back) and
        release engine resources; idempotent. A leg still running finishes and then hands its
        guest back itself. Cells committed to a durable store stay there for a later process."""
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
        return cast("dict[str, Any]", await self._runs.exec(read_exec_args(args), on_update))

    async def exec(
        self, code: str, *, title: str | None = None, on_update: OnUpdate | None = None
    ) -> dict[str, Any]:
        """Run a new cell; see `call_tool`."""
        args = ExecArgs(code=code, title=title)
        return cast("dict[str, Any]", await self._runs.exec(args, on_update))

    async def wait(self, run_id: str, *, on_update: OnUpdate | None = None) -> dict[str, Any]:
        """Resume a cell that returned `waiting`; see `call_tool`."""
        return cast("dict[str, Any]", await self._runs.wait(run_id, on_update))

    async def decide(
        self,
        run_id: str,
        approval_id: str,
        decision: Decision,
        *,
        note: str = "",
        remember: bool = False,
        by: str = "",
    ) -> ApprovalDecision:
        """Decide a call that waits for approval (its id is in `pendingApprovals`): `answer`
        with the `ApprovalAnswer` of these fields.

        The decision is recorded (durably with a durable store, so another process may make
        it) and delivered at the run's next `wait`: an approved call runs then, a denied one
        rejects into the cell with a catchable `approval_denied` error carrying `note`.
        `remember=True` applies the decision to the tool for the rest of the session.

        Raises:
            InputError: a field is invalid (`decision` neither value, `note` too long, an id
                no run could have), or the approval is not pending.
        """
        self._runs.check_open()
        from .approvals import ApprovalAnswer  # (a lazy export: the first answer loads it)

        answer = ApprovalAnswer(
            run_id=run_id,
            approval_id=approval_id,
            decision=decision,
            note=note,
            remember=remember,
            by=by,
        )
        return await self._desk.decide(answer)

    async def answer(self, answer: ApprovalAnswer) -> ApprovalDecision:
        """Record a person's answer to a call that waits for approval; as `decide`, for a
        face that already holds the value (the Control UI's cards, `clawcell mcp serve`).

        Raises:
            InputError: the approval is not pending (unknown, decided already, expired).
        """
        self._runs.check_open()
        return await self._desk.decide(answer)

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
