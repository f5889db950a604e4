"""`CodeMode`: the public entry point that runs cells for a model.

A model sees two tools, `exec` and `wait`. `CodeMode.call_tool(name, args)` answers them
with the envelope of spec §2.3; `exec()` and `wait()` are the typed conveniences.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._bridge import Bridge
from ._cell import Cell, LegOutcome
from ._envelope import failed_envelope, settle_envelope
from ._limits import Limits
from ._output import ModelBudget, OutputLedger, bound_error
from ._results import ResultsStore
from ._source import check_source, format_syntax_error, read_exec_args, read_wait_args
from ._tool import Tool
from .catalog import Catalog
from .errors import ClosedError, InputError, RuntimeUnavailableError
from .runtime import GuestPool, JSException

__all__ = ["CodeMode"]

MAX_SUSPENDED_RUNS: Final = 64
_UNAVAILABLE: Final = "code mode run is unavailable or expired."
_RESUMING: Final = "code mode run is already being resumed."
_TOO_MANY: Final = "too many suspended code mode runs."
_USER_FILE: Final = "openclaw-code-mode:user.js:"


@dataclass
class _Run:
    """A cell between its first `exec` and its end."""

    run_id: str
    cell: Cell
    ledger: OutputLedger
    expires_at: float = 0.0
    resuming: bool = False


class CodeMode:
    """Runs model-written JavaScript cells against a catalog of Python tools.

    Args:
        tools: The tools cells may call, as `Tool` values.
        limits: Budgets and limits (spec §5); defaults when omitted.
        model_context_tokens: The model's context window; when given, every envelope is
            fitted to the model tool-result budget derived from it (spec §6.2 step 7).

    Use it as an async context manager, or call `aclose()` when done.
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        limits: Limits | None = None,
        model_context_tokens: int | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.catalog = Catalog(list(tools), limits=self.limits)
        self._model_budget = (
            None if model_context_tokens is None else ModelBudget.for_context(model_context_tokens)
        )
        install = {
            "maxPending": self.limits.max_pending_tool_calls,
            "bindings": [binding.metadata for binding in self.catalog.bindings],
        }
        self._pool = GuestPool(
            memory_limit_bytes=self.limits.memory_limit_bytes,
            install_config=json.dumps(install),
        )
        self.results = ResultsStore(self.limits.inbox_bytes)
        self._runs: dict[str, _Run] = {}
        self._closed = False

    # -- lifecycle --------------------------------------------------------------------------

    async def __aenter__(self) -> CodeMode:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel parked cells and release engine resources; idempotent."""
        if self._closed:
            return
        self._closed = True
        for run in self._runs.values():
            run.cell.cancel()
        self._runs.clear()
        self._pool.close()
        self.results.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("this CodeMode is closed; create a new one")

    # -- model-facing tools -----------------------------------------------------------------

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Answer a model's `exec` or `wait` tool call with its result envelope.

        Raises:
            InputError: The call itself was rejected (empty code, unknown or expired run).
        """
        if name == "exec":
            return await self._exec_call(arguments)
        if name == "wait":
            return await self.wait(read_wait_args(arguments))
        raise InputError(f"unknown Code Mode tool {name!r}; the tools are `exec` and `wait`.")

    async def exec(self, code: str, *, title: str | None = None) -> dict[str, Any]:
        """Run a new cell; see `call_tool`."""
        arguments: dict[str, Any] = {"code": code}
        if title is not None:
            arguments["title"] = title
        return await self._exec_call(arguments)

    async def wait(self, run_id: str) -> dict[str, Any]:
        """Resume a cell that returned `waiting`; see `call_tool`."""
        self._check_open()
        self._expire()
        run = self._runs.get(run_id)
        if run is None:
            raise InputError(_UNAVAILABLE)
        if run.resuming:
            return self._input_failure(_RESUMING)
        run.resuming = True
        try:
            outcome = await run.cell.resume(self.limits.timeout_ms / 1000)
        finally:
            run.resuming = False
        return self._finish_leg(run, outcome)

    # -- exec ---------------------------------------------------------------------------

    async def _exec_call(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        self._check_open()
        self._expire()
        parsed = read_exec_args(arguments)
        if isinstance(parsed, str):
            return self._input_failure(parsed)
        problem = check_source(parsed.code)
        if problem is not None:
            return self._input_failure(problem.message)
        return await self._start(parsed.code)

    async def _start(self, code: str) -> dict[str, Any]:
        try:
            guest = self._pool.acquire()
        except RuntimeUnavailableError as exc:
            return self._host_failure("runtime_unavailable", exc.message)
        bridge = Bridge(
            catalog=self.catalog, inbox_bytes=self.limits.inbox_bytes, results=self.results
        )
        run = _Run(
            run_id=f"cm_{uuid.uuid4()}",
            cell=Cell(guest=guest, bridge=bridge),
            ledger=OutputLedger(self.limits.max_output_bytes),
        )
        try:
            outcome = await run.cell.start(code, self.limits.timeout_ms / 1000)
        except JSException as exc:
            self._pool.release(guest)
            return self._input_failure(_syntax_error(exc, code))
        return self._finish_leg(run, outcome)

    # -- ends of legs -------------------------------------------------------------------

    def _finish_leg(self, run: _Run, outcome: LegOutcome) -> dict[str, Any]:
        if outcome.status == "waiting":
            if run.run_id not in self._runs and len(self._runs) >= MAX_SUSPENDED_RUNS:
                run.cell.cancel()
                outcome = LegOutcome(
                    status="failed", code="invalid_input", phase="input", error=_TOO_MANY
                )
            else:
                run.expires_at = time.monotonic() + self.limits.snapshot_ttl_seconds
                self._runs[run.run_id] = run
        run.cell.output, items = [], run.cell.output
        for item in items:
            run.ledger.append(item)
        envelope = settle_envelope(
            outcome,
            ledger=run.ledger,
            run_id=run.run_id,
            telemetry=self.catalog.telemetry(),
            bridge_dispatch_started=run.cell.bridge_dispatch_started,
            model_budget=self._model_budget,
            results=self.results,
        )
        if outcome.status != "waiting":
            self._runs.pop(run.run_id, None)
            self._pool.release(run.cell.guest)
        return envelope

    def _input_failure(self, message: str) -> dict[str, Any]:
        return self._bounded_failure("invalid_input", "input", message)

    def _host_failure(self, code: str, message: str) -> dict[str, Any]:
        return self._bounded_failure(code, "host", message)

    def _bounded_failure(self, code: str, phase: str, message: str) -> dict[str, Any]:
        error = bound_error(message, self.limits.max_output_bytes)
        return failed_envelope(
            code=code, phase=phase, error=error, telemetry=self.catalog.telemetry()
        )

    def _expire(self) -> None:
        now = time.monotonic()
        for run_id in [r for r, run in self._runs.items() if run.expires_at <= now]:
            run = self._runs.pop(run_id)
            run.cell.cancel()
            self._pool.release(run.cell.guest)


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
