"""The host side of the guest bridge: one coroutine per guest request.

A guest request is `[id, method, args]`. Tool calls go to the catalog (contracts,
hooks, scheduling), `search`/`describe`/`apiList`/`apiRead` to its declarations, the
`results*` methods to the saved-results store, `store`/`load` to the session view, and
`sleep` backs `setTimeout`. Every reply is normalised to JSON before it enters the guest;
failures become `{message, code?}` payloads that the controller turns into guest errors
(with `effectStatus: "unknown"` when a `code` is present).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Final, NamedTuple, Protocol, cast

from .._jsjson import dumps
from .._jsonvalue import json_text
from .._lazy import positional_value_class
from ..approvals import RunApprovals, gate_context
from ..catalog import call_session
from ..envelope import ResultsStore
from ..errors import ClawcellError

__all__ = [
    "Bridge",
    "BridgeFailure",
    "HostCatalog",
    "Reply",
    "cancelled_reply",
    "counts_as_dispatch",
    "encode_settle_batch",
    "refusal_reply",
]

_PROGRAM_DATA_MESSAGE = (
    "Code Mode program-data budget exceeded. Paginate or narrow the tool request, "
    "or consume pending replies before requesting more data."
)


class HostCatalog(Protocol):
    """What the bridge needs from the tool catalog. A tool call goes through its
    `call_text(callable_name, input)` instead where it has one (an awaitable of `call`'s
    value as compact JSON text, as `clawcell.catalog.Catalog` has), or the callable its
    `text_caller()` returns (the same, without a frame of its own)."""

    async def call(self, callable_name: str, input: Any = None) -> Any: ...
    def search(self, query: object, limit: object = None) -> list[str]: ...
    def describe(self, callable_name: str) -> dict[str, Any]: ...
    def api_list(self, prefix: object = None) -> dict[str, Any]: ...
    def api_read(self, path: object) -> dict[str, Any]: ...


class NamespaceHost(Protocol):
    """What the bridge needs from the MCP namespace (`clawcell.mcp`)."""

    def namespace_api(self, args: list[Any]) -> Any: ...
    def touches_network(self, method: str, args: list[Any], value: Any = None) -> bool: ...


class BridgeFailure(Exception):
    """A bridge request failed; `code` is set for failures of tools and stores."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@positional_value_class
class RawJson:
    """A reply that already is compact JSON text (saved results, stored values)."""

    text: str


class Reply(NamedTuple):
    """A settled request: `payload` is JSON text (a value, or `{message, code?}`).

    Immutable; a named tuple rather than a frozen dataclass because one is made for every
    request, at half the cost."""

    id: str
    ok: bool
    payload: str


_new_tuple: Final[Callable[[type[Reply], tuple[str, bool, str]], Reply]] = tuple.__new__  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
"""`Reply(a, b, c)` is `_new_tuple(Reply, (a, b, c))`, without the named tuple's Python
`__new__` (a frame, on every call)."""


def to_guest_json(value: Any) -> str:
    """Compact JSON for a reply entering the guest, under the one normaliser's policy.

    Raises:
        ToolError: the value is not JSON (see `_jsonvalue.py`).
    """
    return json_text(value)


def encode_settle_batch(replies: list[Reply]) -> str:
    """`[[id, ok, payload], …]` for the controller's `settle`.

    Request ids are the controller's own `bridge:<method>:<n>` strings, which need no
    escaping; anything else goes through the JSON encoder.
    """
    if len(replies) == 1:  # a sequential call's turn
        only = replies[0]
        rid = only.id
        safe = rid.isascii() and rid.isprintable() and '"' not in rid and "\\" not in rid
        quoted = f'"{rid}"' if safe else _quoted(rid)
        return f"[[{quoted},{'true' if only.ok else 'false'},{only.payload}]]"
    ids = "".join([r.id for r in replies])  # one check for every id (a batch's are plain)
    if ids.isascii() and ids.isprintable() and '"' not in ids and "\\" not in ids:
        parts = [f'["{r.id}",{"true" if r.ok else "false"},{r.payload}]' for r in replies]
    else:
        parts = [f"[{_quoted(r.id)},{'true' if r.ok else 'false'},{r.payload}]" for r in replies]
    return "[" + ",".join(parts) + "]"


def _checked_stored(key: object, text: str) -> str:
    """`text` if it is one JSON value: stored text is spliced into the settle batch, so a
    damaged backend value must not be able to close its frame and forge other replies."""
    try:
        json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise BridgeFailure(
            f"stored value of key {key!r} is not one JSON value (the session store is "
            "damaged); store the key again to replace it."
        ) from exc
    return text


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _quoted(text: str) -> str:
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return json.dumps(text)


class Bridge:
    """Runs guest requests against the host's services."""

    def __init__(
        self,
        *,
        catalog: HostCatalog,
        inbox_bytes: int,
        results: Any = None,
        session: Any = None,
        namespaces: NamespaceHost | None = None,
        network_tool: Callable[[str], bool] | None = None,
        approvals: RunApprovals | None = None,
    ) -> None:
        self._catalog = catalog
        # A catalog that can hand back a result as JSON text saves copying it first (as one
        # callable without a frame of its own where it can make one: `text_caller`).
        text_caller: Callable[[], Callable[[str, Any], Awaitable[str]]] | None = getattr(
            catalog, "text_caller", None
        )
        self._call_text: Callable[[str, Any], Awaitable[str]] | None = (
            getattr(catalog, "call_text", None) if text_caller is None else text_caller()
        )
        self.approvals = approvals
        """The run's approval gate; tool calls run with it in `gate_context`."""
        self._namespaces = namespaces
        self._network_tool = network_tool
        self._network_names: dict[str, bool] = {}  # `network_tool`'s answers, per callable
        self.network_derived = False
        """Set once this run has called a `network` tool or seen MCP content or metadata
        (spec §11.7)."""
        self._inbox_bytes = inbox_bytes
        self.results = results
        self.session = session
        # The session a view is bound to never changes: its id is read once, not per call.
        self._session_id = None if session is None else str(session.session_id)

    @property
    def inbox_bytes(self) -> int:
        """The program-data inbox size: the bound of one reply, and of a cell's pending
        requests on the host."""
        return self._inbox_bytes

    def run_now(self, request_id: str, method: str, args: list[Any]) -> Reply | None:
        """Answer a request that needs no await, or return `None` to `run` it as a task."""
        handler = self._NOW.get(method)
        if handler is None and method in self._LATER:
            return None
        try:
            if handler is None:
                raise BridgeFailure(f"unknown bridge method {method!r}")
            self._observe(method, args)
            value = handler(self, args)
            self._observe(method, args, value)
            return self._reply(request_id, value)
        except Exception as exc:
            return _exception_reply(request_id, exc)

    async def run(self, request_id: str, method: str, args: list[Any]) -> Reply:
        """Run one request; never raises (failures become error replies)."""
        try:
            if self._namespaces is not None:
                self._observe(method, args)
            elif self._network_tool is not None and not self.network_derived:
                # `_observe`, whose answer for a tool already seen is kept: a call of a tool
                # known not to touch the network asks nothing more (the usual call).
                known = self._network_names
                if method != "callValue" or not args or known.get(str(args[0])) is not False:
                    self._observe(method, args)
            if method == "callValue":
                if self.approvals is not None:
                    gate_context.set((self.approvals, request_id))  # this task's context only
                if self._session_id is not None:
                    call_session.set(self._session_id)  # this task's context only
                if self._call_text is not None:  # the value's text, with no copy made first
                    tool_input: Any = args[1] if len(args) > 1 else None
                    tool_input = {} if tool_input is None else tool_input
                    payload = await self._call_text(str(args[0]), tool_input)
                    if len(payload) > self._inbox_bytes:
                        raise BridgeFailure(_PROGRAM_DATA_MESSAGE)
                    return _new_tuple(Reply, (request_id, True, payload))  # `Reply(...)`
            return self._reply(request_id, await self._LATER[method](self, args))
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the cell cancelled this request
            # A tool that raises `CancelledError` itself has failed; it must not look like
            # a cancellation the cell asked for, which would leave the cell waiting forever.
            return cancelled_reply(request_id, str(exc))
        except Exception as exc:
            return _exception_reply(request_id, exc)

    def _reply(self, request_id: str, value: Any) -> Reply:
        payload = value.text if isinstance(value, RawJson) else to_guest_json(value)
        if len(payload) > self._inbox_bytes:
            raise BridgeFailure(_PROGRAM_DATA_MESSAGE)
        return Reply(id=request_id, ok=True, payload=payload)

    def _observe(self, method: str, args: list[Any], value: Any = None) -> None:
        if self.network_derived:
            return
        if method == "callValue" and self._network_tool is not None and args:
            name = str(args[0])
            network = self._network_names.get(name)
            if network is None:
                network = self._network_names[name] = self._network_tool(name)
            self.network_derived = network
        if self._namespaces is not None and not self.network_derived:
            self.network_derived = self._namespaces.touches_network(method, args, value)

    def _namespace(self, args: list[Any]) -> Any:
        if self._namespaces is None:
            raise BridgeFailure("MCP is not available in this runtime")
        return _plain(lambda: self._namespaces.namespace_api(args))  # pyright: ignore[reportOptionalMemberAccess]

    async def _call_value(self, args: list[Any]) -> Any:
        tool_input: Any = args[1] if len(args) > 1 else None
        return await self._catalog.call(str(args[0]), {} if tool_input is None else tool_input)

    def _search(self, args: list[Any]) -> Any:
        options: object = args[1] if len(args) > 1 else None
        limit = cast(dict[str, object], options).get("limit") if isinstance(options, dict) else None
        return _plain(lambda: self._catalog.search(args[0], limit))

    def _describe(self, args: list[Any]) -> Any:
        return _plain(lambda: self._catalog.describe(str(args[0])))

    def _api_list(self, args: list[Any]) -> Any:
        return _plain(lambda: self._catalog.api_list(args[0]))

    def _api_read(self, args: list[Any]) -> Any:
        return _plain(lambda: self._catalog.api_read(args[0]))

    async def _sleep(self, args: list[Any]) -> Any:
        await asyncio.sleep(max(0.0, float(args[0])) / 1000.0)
        return None

    def _result_save(self, args: list[Any]) -> Any:
        value = args[0] if args else None
        return _plain(lambda: self._results().save(dumps(value), value=value))

    def _result_load(self, args: list[Any]) -> Any:
        return RawJson(_plain(lambda: self._results().load(args[0] if args else None)))

    def _result_delete(self, args: list[Any]) -> Any:
        return _plain(lambda: self._results().delete(args[0] if args else None))

    def _results(self) -> ResultsStore:
        if self.results is None:
            raise BridgeFailure("results are not available in this runtime")
        return self.results

    async def _store(self, args: list[Any]) -> Any:
        session = self._require(self.session, "store")
        value = dumps(args[1]) if len(args) > 1 else None  # a missing value is `undefined`
        return await session.store(args[0], value)

    async def _load(self, args: list[Any]) -> Any:
        session = self._require(self.session, "load")
        text = await session.load(args[0])
        return RawJson("[]" if text is None else f"[{_checked_stored(args[0], text)}]")

    @staticmethod
    def _require(service: Any, name: str) -> Any:
        if service is None:
            raise BridgeFailure(f"{name} is not available in this runtime")
        return service

    _NOW: ClassVar[dict[str, Callable[[Bridge, list[Any]], Any]]] = {
        "search": _search,
        "describe": _describe,
        "apiList": _api_list,
        "apiRead": _api_read,
        "resultSave": _result_save,
        "resultLoad": _result_load,
        "resultDelete": _result_delete,
        "namespace": _namespace,
    }
    """Host-only work that needs no await, answered at once without a task. Functions, not
    bound methods kept on each bridge: those would make every bridge a reference cycle,
    freed only by the cyclic collector."""
    _LATER: ClassVar[dict[str, Callable[[Bridge, list[Any]], Awaitable[Any]]]] = {
        "callValue": _call_value,
        "sleep": _sleep,
        "store": _store,
        "load": _load,
    }
    """Work that awaits, run as a task (`run`)."""


def _plain(action: Callable[[], Any]) -> Any:
    """Run a catalog, declaration or results action; its argument errors reach the guest
    as plain `Error(message)` values, without a `code`."""
    try:
        return action()
    except (ValueError, TypeError, KeyError) as exc:
        message = exc.message if isinstance(exc, ClawcellError) else str(exc)
        raise BridgeFailure(message) from exc


def _exception_reply(request_id: str, exc: Exception) -> Reply:
    if isinstance(exc, BridgeFailure):
        return _failure(request_id, exc.message, exc.code)
    if isinstance(exc, ClawcellError):
        return _failure(request_id, exc.message, exc.code)
    # A tool's own failure: its message reaches the guest.
    return _failure(request_id, str(exc) or type(exc).__name__, "tool_error")


def refusal_reply(request_id: str, message: str) -> Reply:
    """A request refused before it ran (a plain error in the guest, without a `code`)."""
    return _failure(request_id, message, None)


def cancelled_reply(request_id: str, message: str = "") -> Reply:
    """The `tool_error` reply of a request whose task ended cancelled without the cell
    cancelling it."""
    return _failure(request_id, message or "tool call was cancelled", "tool_error")


def _failure(request_id: str, message: str, code: str | None) -> Reply:
    body: dict[str, str] = {"message": message}
    if code is not None:
        body["code"] = code
    return Reply(id=request_id, ok=False, payload=json.dumps(body))


def counts_as_dispatch(method: str, args: list[Any]) -> bool:
    """Whether a request counts as bridge dispatch: timers and the API files the release
    serves from its own table (`API.list`, injected `API.read` paths) do not."""
    if method in ("sleep", "apiList"):
        return False
    if method == "apiRead":
        path = args[0] if args else None
        return isinstance(path, str) and path.strip().lstrip("/").startswith("tools/")
    return True
