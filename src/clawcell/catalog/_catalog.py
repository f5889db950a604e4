"""The run-scoped tool catalog the guest bridge talks to.

Every guest request that concerns tools lands here: `search`, `describe`, `api_list`,
`api_read` and `call`. The catalog owns the counters reported as telemetry, the per-tool
contracts, the hooks and the execution-mode scheduler shared by every cell of the run.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import field
from types import CoroutineType
from typing import TYPE_CHECKING, Any, Final

from .._jsonvalue import compact_chunks, json_text, json_value
from .._lazy import record_class
from .._limits import Limits
from .._random import random_token
from ..approvals import gate_context
from ..errors import ClawcellError, InputError, ToolError
from ._bindings import Binding, build_bindings, guest_value
from ._call_scheduler import CallScheduler
from ._extension import CatalogExtension
from ._tool import JsonValue, Tool, ToolResult
from ._tool_call import approve, guest_text, run_after_hooks, run_before_hooks

if TYPE_CHECKING:
    from ._hooks import AfterToolCall, BeforeToolCall
    from ._model_tools import ModelToolStyle
    from ._tool_search import CatalogSearch
    from ._typescript._api_files import ApiFile

__all__ = ["Catalog"]

_COROUTINE: Final[type] = CoroutineType


@record_class
class _Counters:
    """The catalog's scope name and counters of the ids it hands out."""

    # 24 characters, as long as the original's scopes: the envelope's length feeds the
    # model-budget fitting, so the recorded E34 truncation depends on it.
    scope: str = field(default_factory=lambda: random_token(18))
    searches: int = 0
    describes: int = 0
    calls: int = 0


class Catalog:
    """Typed tools bound as guest globals, with contracts, hooks and search.

    Args:
        tools: The tools of this run. MCP-sourced tools are counted but not bound here.
        limits: Search limits and the budgets quoted in the `exec` description.
        before_tool_call: Hooks that may rewrite or block a call before it runs.
        after_tool_call: Hooks that may replace a result before its contract is checked.
        reserved_names: Extra globals (namespaces) no tool may shadow.

    Raises:
        ConfigurationError: for non-`Tool` entries or two tools with the same id.
    """

    def __init__(
        self,
        tools: Sequence[Tool],
        *,
        limits: Limits | None = None,
        before_tool_call: Iterable[BeforeToolCall] = (),
        after_tool_call: Iterable[AfterToolCall] = (),
        reserved_names: Sequence[str] = (),
    ) -> None:
        self.limits = limits or Limits()
        self._tools = tuple(tools)
        self._reserved = tuple(reserved_names)
        self._before = tuple(before_tool_call)
        self.after_hooks = tuple(after_tool_call)  # public: MCP App openings are shown them too
        self.bindings: tuple[Binding, ...] = build_bindings(self._tools, reserved=self._reserved)
        self._by_name = {b.callable_name: b for b in self.bindings}
        sources = {"openclaw": 0, "mcp": 0, "client": 0}
        for item in self._tools:
            sources[item.source] += 1
        self._sources = tuple(sources.items())  # every envelope's telemetry reads them
        self._counters = _Counters()
        self._scheduler = CallScheduler()
        self._extension = CatalogExtension()
        self._search: CatalogSearch | None = None  # built at the first search
        self._ready: dict[str, tuple[Binding, bool, bool, bool, bool]] = {}  # see `_callable`

    def with_tools(self, extra: Sequence[Tool]) -> Catalog:
        """A catalog with `extra` appended that keeps counters, scope, hooks and scheduling.

        Use it when client tools join mid-run; a later client tool shadows a same-named one.
        """
        grown = Catalog(
            [*self._tools, *extra],
            limits=self.limits,
            before_tool_call=self._before,
            after_tool_call=self.after_hooks,
            reserved_names=self._reserved,
        )
        grown._counters, grown._scheduler = self._counters, self._scheduler
        return grown.with_extension(self._extension)

    def with_extension(self, extension: CatalogExtension) -> Catalog:
        """This catalog (same tools, counters, scope, hooks and scheduling) with `extension`'s
        search entries and API files added, replacing any earlier extension."""
        extended = copy.copy(self)
        extended._extension = extension
        extended._search = None
        return extended

    def binding(self, callable_name: str) -> Binding | None:
        """The binding of a callable name, or `None`."""
        return self._by_name.get(callable_name)

    def all(self) -> list[dict[str, Any]]:
        """Handle metadata of every binding, sorted by callable name (no counter)."""
        return [dict(b.metadata) for b in self.bindings]

    def search(self, query: object, limit: object = None) -> list[str]:
        """Callable names matching `query`: an exact name first, else BM25-ranked.

        Raises:
            InputError: `search query must be a string.` / `limit must be a positive integer.`
        """
        if not isinstance(query, str):
            raise InputError("search query must be a string.")
        self._counters.searches += 1  # the release counts a search whose limit it rejects
        count = self._read_limit(limit)
        return self._searcher().find(query, count)

    def _searcher(self) -> CatalogSearch:
        """The search index, built on first use: most runs never search."""
        if self._search is None:
            from ._tool_search import CatalogSearch, catalog_documents  # not needed to run cells

            documents = catalog_documents(self.bindings, self._extension.entries)
            self._search = CatalogSearch(documents)
        return self._search

    def _read_limit(self, limit: object) -> int:
        if limit is None:
            return self.limits.search_default_limit
        if isinstance(limit, bool) or not isinstance(limit, int | float):
            return self.limits.search_default_limit  # a limit that is no number is ignored
        if limit != int(limit) or limit <= 0:
            raise InputError("limit must be a positive integer.")
        return min(int(limit), self.limits.max_search_limit)

    def _require(self, callable_name: object) -> Binding:
        binding = self._by_name.get(callable_name) if isinstance(callable_name, str) else None
        if binding is None:
            raise InputError(
                f"Unknown tool: {callable_name}. Use catalog.search(query) to find a tool."
            )
        return binding

    def describe(self, callable_name: str) -> dict[str, Any]:
        """The full description of one tool (spec §3.3); counts as a describe."""
        binding = self._require(callable_name)
        self._counters.describes += 1
        item = binding.tool
        described: dict[str, Any] = {"source": item.source, "name": item.name}
        if item.label is not None:
            described["label"] = item.label
        described["description"] = item.description
        described["input"] = binding.input_hint
        if binding.output_hint is not None:
            described["output"] = binding.output_hint
        described["parameters"] = json_value(item.parameters or {})
        if binding.trusted and item.output_schema is not None:
            described["outputSchema"] = json_value(item.output_schema)
        described["callableName"] = binding.callable_name
        return described

    def _api_files(self) -> list[ApiFile]:
        from ._typescript._api_files import ApiFile, results_api_file

        tools = [ApiFile(path=f"tools/{b.callable_name}.d.ts") for b in self.bindings]
        return [results_api_file(), *self._extension.files, *tools]

    def api_list(self, prefix: object = None) -> dict[str, Any]:
        """`API.list(prefix?)`: injected files first, then one `tools/<name>.d.ts` per binding."""
        from ._typescript._api_files import matches_prefix, normalize_api_prefix

        wanted = normalize_api_prefix(prefix)
        files = [f.listing() for f in self._api_files() if matches_prefix(f.path, wanted)]
        return {"files": files}

    def api_read(self, path: object) -> dict[str, Any]:
        """`API.read(path)`; a `tools/*.d.ts` file is generated now and counts as a describe.

        Raises:
            InputError: `invalid API file path` or `Unknown API file: <path>`.
        """
        from ._typescript._api_files import ApiFile, normalize_api_path, results_api_file
        from ._typescript._tool_dts import tool_declaration_file

        normalized = normalize_api_path(path)
        if normalized == "results.d.ts":
            return results_api_file().read()
        for file in self._extension.files:
            if file.path == normalized:
                return file.read()
        name = normalized.removeprefix("tools/").removesuffix(".d.ts")
        binding = self._by_name.get(name)
        if binding is None or normalized != f"tools/{name}.d.ts":
            raise InputError(f"Unknown API file: {normalized}")
        self._counters.describes += 1
        content = tool_declaration_file(
            binding.callable_name,
            trusted=binding.trusted,
            parameters=binding.tool.parameters,
            output_schema=binding.tool.output_schema,
            optional_input=binding.contract.accepts_empty_input(),
        )
        return ApiFile(path=normalized, content=content).read()

    async def call(self, callable_name: str, input: JsonValue = None) -> JsonValue:
        """Run one tool for the guest and return the guest-visible value.

        Order: `invalid_contract` check, before hooks, input contract (trusted tools), the
        tool itself under its execution mode, after hooks, output contract against both the
        branch of the input that ran and the branch originally asked for.

        Raises:
            ContractError: `input_contract`, `output_contract` or `invalid_contract`.
            ToolError: the tool failed (`str(exc)` of any exception it raised), or a hook
                blocked the call.
            InputError: unknown callable name.
        """
        value: JsonValue = await self._call(False, callable_name, input)
        return value

    def call_text(self, callable_name: str, input: JsonValue = None) -> Coroutine[Any, Any, str]:
        """`call`, but the guest-visible value as compact JSON text (`json_text`), which is
        what the guest bridge sends on: a result is encoded once, not copied first (a JSON
        round trip for any result but a small flat object). Same order, checks and errors.
        (A plain method returning the coroutine: one frame less per call.)
        """
        return self._call(True, callable_name, input)

    def text_caller(self) -> Callable[[str, JsonValue], Coroutine[Any, Any, str]]:
        """`call_text` as one callable without a Python frame of its own (a
        `functools.partial` of the catalog's call): what the guest bridge keeps per cell."""
        return functools.partial(self._call, True)

    def _callable(self, callable_name: str) -> tuple[Binding, bool, bool, bool, bool]:
        """A binding ready to call, with what `_call` asks of it each time: whether it is
        trusted, whether its output is checked, whether it runs alone, whether its input
        contract passes every object (then a `dict` is not checked). Raises as `_require`
        and `ensure_valid` do (then nothing is kept: the next call raises again)."""
        binding = self._require(callable_name)
        contract = binding.contract
        contract.ensure_valid()
        trusted = binding.trusted
        exclusive = binding.tool.execution_mode == "sequential"
        objects = contract.passes_every_object
        ready = (binding, trusted, trusted and contract.checks_output, exclusive, objects)
        self._ready[callable_name] = ready
        return ready

    async def _call(self, as_text: bool, callable_name: str, input: JsonValue) -> Any:
        ready = self._ready.get(callable_name) if type(callable_name) is str else None
        binding, trusted, checks_output, exclusive, objects = ready or self._callable(callable_name)
        self._counters.calls += 1
        params = json_value({} if input is None else input)
        contract = binding.contract
        requested = contract.branch(params) if checks_output else None  # before any hook
        hook_reason: str | None = None
        if self._before:
            asked: list[str] = []
            params = await run_before_hooks(self._before, binding, params, asked)
            hook_reason = asked[0] if asked else None
        kind = type(params)  # pyright: ignore[reportUnknownVariableType] (a test of `type(params)` would narrow it)
        if trusted and not (objects and kind is dict):  # `check_input`'s own pass
            contract.check_input(params)
        # The call certainly needs no decision (checked without awaiting anything)?
        gate = gate_context.get()
        if gate is None:
            waive = hook_reason is None and binding.tool.approval == "never"
        else:
            waive = gate[0].waives(binding.tool.approval, hook_reason)
        if not waive:
            await approve(binding, params, hook_reason)
        scheduler = self._scheduler
        if not scheduler.admit_now(exclusive):  # the usual uncontended slot, taken at once
            await scheduler.acquire(exclusive)
        try:
            try:  # the tool itself: its own exceptions become `ToolError`
                raw: Any = binding.tool.execute(params)
                if type(raw) is _COROUTINE or inspect.isawaitable(raw):  # the usual case first
                    raw = await raw
            except ClawcellError:
                raise
            except Exception as exc:
                raise ToolError(str(exc) or type(exc).__name__) from exc
            if self.after_hooks:
                result = raw if isinstance(raw, ToolResult) else ToolResult(details=raw)
                raw = await run_after_hooks(self.after_hooks, binding, params, result)
            if checks_output:
                value = guest_value(raw) if isinstance(raw, ToolResult) else json_value(raw)
                contract.check_output(value, [contract.branch(params), requested])
                return json_text(value) if as_text else value
            if as_text:  # the text of the copy below, without making the copy
                if isinstance(raw, ToolResult):
                    return guest_text(raw)
                if compact_chunks is not None:  # `json_text(raw)`, its usual case inline
                    try:
                        return "".join(compact_chunks(raw, 0))
                    except (TypeError, ValueError, RecursionError):
                        pass
                return json_text(raw)
            # `guest_value(ToolResult(details=raw))` of a plain result is its copy.
            return guest_value(raw) if isinstance(raw, ToolResult) else json_value(raw)
        finally:
            scheduler.release(exclusive)

    def telemetry(self) -> dict[str, Any]:
        """Counters attached to every envelope, in protocol key order."""
        return {
            "catalogSize": len(self._tools),
            "sources": dict(self._sources),
            "counterScope": self._counters.scope,
            "searchCount": self._counters.searches,
            "describeCount": self._counters.describes,
            "callCount": self._counters.calls,
            "visibleTools": ["exec", "wait"],
        }

    def quick_index(self) -> str:
        """The bounded quick index of spec §8.1 (`""` for an empty catalog)."""
        from ._typescript._quick_index import IndexLine, format_quick_index

        lines = [
            IndexLine(callable_name=b.callable_name, input=b.input_hint, output=b.output_hint)
            for b in self.bindings
        ]
        return format_quick_index(lines)

    def exec_tool(
        self,
        limits: Limits | None = None,
        *,
        mcp_servers: Sequence[str] = (),
        mcp_unavailable: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The `exec` definition with the generated description and quick index."""
        from ._model_tools import exec_description, exec_tool

        shell = next((b for b in self.bindings if b.catalog_id == "openclaw:core:exec"), None)
        description = exec_description(
            limits or self.limits,
            quick_index=self.quick_index(),
            has_tools=bool(self.bindings),
            shell_tool=shell.callable_name if shell else None,
            mcp_servers=mcp_servers,
            mcp_unavailable=mcp_unavailable,
        )
        return exec_tool(description)

    def wait_tool(self) -> dict[str, Any]:
        """The `wait` definition."""
        from ._model_tools import wait_tool

        return wait_tool()

    def model_tools(
        self,
        style: ModelToolStyle = "anthropic",
        *,
        mcp_servers: Sequence[str] = (),
        mcp_unavailable: Mapping[str, str] | None = None,
    ) -> list[Any]:
        """`[exec, wait]` ready for an Anthropic- or OpenAI-style `tools` request field.

        `mcp_servers` names the `MCP.<server>` scopes to mention in the `exec` description;
        `mcp_unavailable` maps the ones that failed to why.
        """
        from ._model_tools import export_model_tools

        definition = self.exec_tool(mcp_servers=mcp_servers, mcp_unavailable=mcp_unavailable)
        return export_model_tools(style, [definition, self.wait_tool()])
