"""The host side of one `CodeMode`: catalog, MCP servers, executor and saved results.

`CellHost` owns the parts every cell of a runtime shares and builds what each cell gets from
them: a guest from the executor (of the configuration the catalog and MCP servers make), a
bridge wired to the catalog (or the MCP-aware host catalog), the results store and the
session view, and the telemetry its envelopes carry. It holds no per-run state; the run
lifecycle (`_lifecycle.py`) does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .._cell import Bridge
from .._limits import Limits
from ..approvals import RunApprovals
from ..catalog import Catalog, Tool, close_tools
from ..envelope import ModelBudget, ResultsStore
from ..runtime import (
    Executor,
    ExecutorGuest,
    GuestConfig,
    QuickJSExecutor,
    SegmentRunner,
    run_on_guest_thread,
)
from ..store import SessionView

if TYPE_CHECKING:
    from ..catalog import AfterToolCall, BeforeToolCall, ModelToolStyle
    from ..mcp import McpServers, McpServerStatus, ServerConfig

__all__ = ["CellHost"]


class CellHost:
    """What the cells of one `CodeMode` share."""

    def __init__(
        self,
        tools: list[Tool],
        *,
        limits: Limits,
        hooks: tuple[Iterable[BeforeToolCall], Iterable[AfterToolCall]],
        mcp_servers: Mapping[str, ServerConfig] | None,
        model_context_tokens: int | None,
        guest_thread: bool,
        executor: Executor | None,
    ) -> None:
        before, after = hooks
        self.catalog = catalog = Catalog(
            tools, limits=limits, before_tool_call=before, after_tool_call=after
        )
        self.limits = limits
        self.model_budget = (
            None if model_context_tokens is None else ModelBudget.for_context(model_context_tokens)
        )
        self.mcp = _mcp_servers(mcp_servers, catalog) if mcp_servers else None
        self.results = ResultsStore(limits.inbox_bytes)
        self.runner: SegmentRunner | None = run_on_guest_thread if guest_thread else None
        # A V8 worker keeps what a cell did in its process: each runtime (one session) gets
        # its own workers, sharing only the executor's clean spares (docs/executors.md).
        if executor is not None and not isinstance(executor, QuickJSExecutor):
            from ..runtime import V8Executor  # not loaded for the default executor

            if isinstance(executor, V8Executor):
                executor = executor.session()
        self.executor: Executor = QuickJSExecutor() if executor is None else executor
        self._config = self._guest_config()

    def _guest_config(self) -> GuestConfig:
        install: dict[str, Any] = {
            "maxPending": self.limits.max_pending_tool_calls,
            "bindings": [binding.metadata for binding in self.catalog.bindings],
        }
        if self.mcp is not None:
            install["mcp"] = self.mcp.install()
        return GuestConfig(
            memory_limit_bytes=self.limits.memory_limit_bytes,
            install_config=json.dumps(install),
        )

    async def prepare(self) -> None:
        """Connect and list MCP servers before a cell; new guests when `MCP` changed."""
        if self.mcp is not None and await self.mcp.prepare():
            self._config = self._guest_config()

    def acquire(self) -> ExecutorGuest:
        """A pristine guest (raises `RuntimeUnavailableError` when none can be built)."""
        return self.executor.acquire(self._config)

    def release(self, guest: ExecutorGuest) -> None:
        """Return the guest of a cell that is over."""
        self.executor.release(guest)

    def bridge(self, session: SessionView | None, approvals: RunApprovals | None) -> Bridge:
        """A bridge for one cell, reading and writing `session`, asking `approvals`."""
        mcp = self.mcp.host_catalog if self.mcp else None
        return Bridge(
            catalog=mcp or self.catalog,
            inbox_bytes=self.limits.inbox_bytes,
            results=self.results,
            session=session,
            namespaces=mcp,
            network_tool=self._network_tool,
            approvals=approvals,
        )

    def _network_tool(self, callable_name: str) -> bool:
        binding = self.catalog.binding(callable_name)
        return binding is not None and binding.tool.network

    def telemetry(self) -> dict[str, Any]:
        """The envelope's `telemetry` (catalog size, sources, counters)."""
        return self.mcp.host_catalog.telemetry() if self.mcp else self.catalog.telemetry()

    def model_tools(self, style: ModelToolStyle) -> list[Any]:
        """The `exec` and `wait` definitions, with the MCP servers in `exec`'s description."""
        mcp = self.mcp
        return self.catalog.model_tools(
            style,
            mcp_servers=mcp.server_identifiers() if mcp is not None else [],
            mcp_unavailable=mcp.unavailable() if mcp is not None else None,
        )

    async def mcp_status(self) -> dict[str, McpServerStatus]:
        """Connect the MCP servers not listed yet; each server's status (`{}` without any)."""
        if self.mcp is None:
            return {}
        await self.prepare()
        return self.mcp.status()

    async def aclose(self) -> None:
        """Release guests and results, close MCP connections and the tools' own resources."""
        self.executor.close()
        await close_tools(binding.tool for binding in self.catalog.bindings)
        self.results.close()
        if self.mcp is not None:
            await self.mcp.aclose()


def _mcp_servers(servers: Mapping[str, ServerConfig], catalog: Catalog) -> McpServers:
    from ..mcp import McpServers  # deferred: only runtimes with MCP servers pay for the import

    return McpServers(servers, catalog)
