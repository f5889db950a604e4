"""`CodeModeOptions`: how a `CodeMode` runs, checked once, where it is given.

Every face that builds code modes takes one value of it: `CodeMode(tools, options=…)`, an
`Agent` (one `CodeMode` per session, the session id replaced), the commands' settings
(`clawcell.toml`, `--limit`, `--store`). `CodeMode(tools, limits=…, …)` keyword arguments
build one too (`CodeModeOptions.merged`), so the options are spelled once, here.

What only the tools can tell (policy names that name no tool) is checked by `CodeMode`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict, Unpack, cast

from ._lazy import value_class
from ._limits import Limits
from ._runs import RunHome
from ._session_ids import check_session_id
from .approvals import Approvals, DecisionLedger, ToolPolicy
from .catalog import Tool
from .errors import ConfigurationError
from .runtime import EXECUTOR_NAMES, Executor, executor_named
from .store import SessionStore

if TYPE_CHECKING:
    from ._runs import CellHost
    from .catalog import AfterToolCall, BeforeToolCall
    from .mcp import ServerConfig

__all__ = ["CodeModeKeywords", "CodeModeOptions", "approvals_from", "tools_from"]


_DEFAULT_LIMITS = Limits()  # frozen: one shared value instead of a checked build per runtime


@value_class
class CodeModeOptions:
    """How a `CodeMode` runs cells (everything but the tools). Frozen; checked when built.

    Build one once and give it to every face: `CodeMode(tools, options=options)`,
    `Agent(model=…, tools=…, options=options)`. `replace(...)` (or
    `dataclasses.replace`) makes a checked copy with some fields changed.

    Attributes:
        limits: Budgets and limits (spec §5); a mapping of `tools.codeMode` settings
            (camelCase or snake_case keys) is read with `Limits.from_config`.
        model_context_tokens: The model's context window; when given, every envelope is
            fitted to the model tool-result budget derived from it (spec §6.2 step 7).
        store: Where `store()`/`load()` values and parked cells live. A durable store
            (`clawcell.SQLiteStore(path)`) lets `wait` continue a cell after a restart or
            from another process; `None` means a new in-memory store per `CodeMode` (one
            per `Agent`), so nothing survives the process.
        session_id: The session whose store entries and parked cells a `CodeMode` uses (an
            `Agent` replaces it with each session's id).
        mcp_servers: MCP servers by name (`clawcell.mcp.StdioServer` / `HttpServer`), seen in
            cells as `MCP.<name>`; connected when the first cell runs (needs the `[mcp]`
            extra) and closed with the `CodeMode`.
        before_tool_call: Hooks run before each catalog tool call; one may rewrite the input
            or block the call with a reason (`clawcell.catalog.HookDecision`). One hook or an
            iterable of them.
        after_tool_call: Hooks run after each catalog tool call; one may replace the result.
        guest_thread: Run guest JavaScript on clawcell's worker thread (the default), so a
            cell that computes for its whole budget never blocks the event loop; `False`
            runs it on the loop's thread, which saves a thread hop per bridge round trip
            for latency-bound batch jobs.
        policy: Session tool policy: a `clawcell.approvals.ToolPolicy`, or a mapping with
            `allow` / `deny` / `ask` lists of tool names or glob patterns.
        approval_ttl_seconds: How long a pending approval waits before it counts as denied;
            `None`: the snapshot TTL (`limits.snapshot_ttl_seconds`).
        telemetry_in_text: Whether `CodeMode.render` (the text the built-in agent, framework
            adapters and MCP server give the model) includes `telemetry`; envelopes always
            carry it.
        executor: What runs guest JavaScript (a `clawcell.runtime.Executor`, or its name:
            `"quickjs"`, `"v8"` for the opt-in `V8Executor` of the `v8` extra, see
            docs/executors.md); `None`: a `QuickJSExecutor` (QuickJS-NG on wasmtime).
            Closed (its idle guests let go) with each `CodeMode` that uses it.

    Raises:
        ConfigurationError: A field has a value of the wrong kind; the message names the
            accepted values.
    """

    limits: Limits = field(default_factory=lambda: _DEFAULT_LIMITS)
    model_context_tokens: int | None = None
    store: SessionStore | None = None
    session_id: str = "default"
    mcp_servers: Mapping[str, ServerConfig] = field(default_factory=dict[str, "ServerConfig"])
    before_tool_call: tuple[BeforeToolCall, ...] = ()
    after_tool_call: tuple[AfterToolCall, ...] = ()
    guest_thread: bool = True
    policy: ToolPolicy | None = None
    approval_ttl_seconds: float | None = None
    telemetry_in_text: bool = True
    executor: Executor | None = None

    def __post_init__(self) -> None:
        for name, check in _CHECKS.items():
            value = getattr(self, name)
            if value is not _DEFAULTS.get(name, _NO_DEFAULT):  # a default is valid as it is
                object.__setattr__(self, name, check(value))

    def replace(self, **changes: Unpack[CodeModeKeywords]) -> CodeModeOptions:
        """A checked copy with `changes` (option name → value) applied.

        Raises:
            ConfigurationError: An option name is unknown, or a value is wrong.
        """
        _check_names(changes)
        return dataclasses.replace(self, **changes) if changes else self

    @classmethod
    def merged(
        cls, options: CodeModeOptions | None, keywords: Mapping[str, Any]
    ) -> CodeModeOptions:
        """`options` (defaults when `None`) with the `keywords` given beside it on top."""
        if options is None:  # built once: each build checks every field
            _check_names(keywords)
            return cls(**keywords)
        if not isinstance(cast(object, options), CodeModeOptions):
            raise ConfigurationError(
                f"`options` must be a `clawcell.CodeModeOptions`, got {options!r}."
            )
        return options.replace(**keywords)


def _check_names(changes: Mapping[str, object]) -> None:
    if _OPTION_SET.issuperset(changes):  # every `CodeMode` built passes here
        return
    unknown = sorted(set(changes) - _OPTION_SET)
    if unknown:
        raise ConfigurationError(
            f"unknown option(s) {', '.join(map(repr, unknown))}; "
            f"the options are {', '.join(OPTION_NAMES)}."
        )


class CodeModeKeywords(TypedDict, total=False):
    """The fields of `CodeModeOptions` as keyword arguments (`CodeMode(tools, limits=…)`)."""

    limits: Limits | Mapping[str, Any] | None
    model_context_tokens: int | None
    store: SessionStore | None
    session_id: str
    mcp_servers: Mapping[str, ServerConfig] | None
    before_tool_call: Iterable[BeforeToolCall] | BeforeToolCall
    after_tool_call: Iterable[AfterToolCall] | AfterToolCall
    guest_thread: bool
    policy: ToolPolicy | Mapping[str, Any] | None
    approval_ttl_seconds: float | None
    telemetry_in_text: bool
    executor: Executor | Literal["quickjs", "v8"] | None


def _limits(limits: object) -> Limits:
    if limits is None:
        return _DEFAULT_LIMITS
    if isinstance(limits, Limits):
        return limits
    if isinstance(limits, Mapping):
        return Limits.from_config(cast(Mapping[str, Any], limits))
    raise ConfigurationError(
        f"`limits` must be a `clawcell.Limits` or a mapping of settings, got {limits!r}."
    )


def _context_tokens(tokens: object) -> int | None:
    if tokens is None:
        return None
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens <= 0:
        raise ConfigurationError(
            f"`model_context_tokens` must be a positive integer, got {tokens!r}."
        )
    return tokens


def _store(store: object) -> SessionStore | None:
    if store is not None and not isinstance(store, SessionStore):
        raise ConfigurationError(
            f"`store` must be a session store such as `clawcell.SQLiteStore(path)`, got {store!r}."
        )
    return store


def _session_id(session_id: object) -> str:
    return check_session_id(session_id)


def _servers(servers: object) -> Mapping[str, ServerConfig]:
    if servers is None:
        return {}
    if not isinstance(servers, Mapping):
        raise ConfigurationError(
            "`mcp_servers` must be a mapping of server name to `clawcell.mcp.StdioServer` or "
            f"`clawcell.mcp.HttpServer`, got {servers!r}."
        )
    entries = cast(Mapping[Any, object], servers)
    if not entries:
        return {}
    from .mcp import check_servers  # deferred: `clawcell.mcp` loads on first use

    return check_servers(entries)


def _hooks(name: str) -> Callable[[object], tuple[Any, ...]]:
    def check(hooks: object) -> tuple[Any, ...]:
        if callable(hooks):
            return (hooks,)
        listed = list(cast(Iterable[object], hooks)) if _iterable(hooks) else None
        if listed is None or not all(callable(hook) for hook in listed):
            raise ConfigurationError(
                f"`{name}` must be a hook function taking a `clawcell.catalog.ToolCallEvent`, "
                f"or an iterable of them, got {hooks!r}."
            )
        return tuple(listed)

    return check


def _iterable(value: object) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping)


def _flag(name: str) -> Callable[[object], bool]:
    def check(value: object) -> bool:
        if not isinstance(value, bool):
            raise ConfigurationError(f"`{name}` must be `True` or `False`, got {value!r}.")
        return value

    return check


def _policy(policy: object) -> ToolPolicy | None:
    if policy is None or isinstance(policy, ToolPolicy):
        return policy
    if isinstance(policy, Mapping):
        return ToolPolicy.from_config(cast(Mapping[str, Any], policy))
    raise ConfigurationError(
        "`policy` must be a `clawcell.approvals.ToolPolicy` or a mapping with `allow`, `deny` "
        f"and `ask` lists, got {policy!r}."
    )


def _approval_ttl(seconds: object) -> float | None:
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds > 0:
        raise ConfigurationError(
            f"`approval_ttl_seconds` must be a positive number of seconds, got {seconds!r}."
        )
    return float(seconds)


def _executor(executor: object) -> Executor | None:
    if isinstance(executor, str):
        named = executor_named(executor)
        if named is None:
            raise ConfigurationError(
                f"`executor` must be one of {', '.join(map(repr, EXECUTOR_NAMES))} or a "
                f"`clawcell.runtime.Executor`, got {executor!r}."
            )
        return named
    if executor is not None and not isinstance(executor, Executor):
        raise ConfigurationError(
            "`executor` must be a `clawcell.runtime.Executor` (an object with `acquire`, "
            f"`release` and `close`, such as `QuickJSExecutor()`) or one of "
            f"{', '.join(map(repr, EXECUTOR_NAMES))}, got {executor!r}."
        )
    return executor


_CHECKS: Final[dict[str, Callable[[Any], object]]] = {
    "limits": _limits,
    "model_context_tokens": _context_tokens,
    "store": _store,
    "session_id": _session_id,
    "mcp_servers": _servers,
    "before_tool_call": _hooks("before_tool_call"),
    "after_tool_call": _hooks("after_tool_call"),
    "guest_thread": _flag("guest_thread"),
    "policy": _policy,
    "approval_ttl_seconds": _approval_ttl,
    "telemetry_in_text": _flag("telemetry_in_text"),
    "executor": _executor,
}
_NO_DEFAULT: Final = object()
_DEFAULTS: Final[dict[str, object]] = {
    option.name: option.default
    for option in dataclasses.fields(CodeModeOptions)
    if option.default is not dataclasses.MISSING
    and _CHECKS[option.name](option.default) is option.default
}
"""The options' plain defaults that their checks return unchanged: a field given its default
(by identity) is not checked again, which is most fields of every `CodeMode` built."""
OPTION_NAMES: Final = tuple(sorted(_CHECKS))
"""The option names `CodeMode` and `Agent` take as keyword arguments."""
_OPTION_SET: Final = frozenset(OPTION_NAMES)


def tools_from(tools: object) -> list[Tool]:
    """The tool list, from `None`, one `Tool` or an iterable of them."""
    if tools is None:
        return []
    if isinstance(tools, Tool):
        return [tools]
    if not isinstance(tools, Iterable):
        raise ConfigurationError(f"`tools` must be an iterable of `clawcell.Tool`, got {tools!r}.")
    return list(cast(Iterable[Tool], tools))


def approvals_from(options: CodeModeOptions, home: RunHome, host: CellHost) -> Approvals:
    """The session's approval gates: its policy (checked against the catalog's tools), its
    decision ledger and TTL."""
    policy = options.policy
    if policy is not None:
        policy.check_names(binding.tool.name for binding in host.catalog.bindings)
    ttl = options.approval_ttl_seconds
    home.check_keys()  # a bad key configuration fails here, not at the first park
    return Approvals(
        policy=policy,
        ledger=DecisionLedger(home.store, home.session_id, lambda: home.keys),
        ttl_seconds=float(host.limits.snapshot_ttl_seconds) if ttl is None else ttl,
    )
