"""`CodeModeServer`: one `CodeMode` offered to any MCP client as the tools `exec` and `wait`.

This sits above `CodeMode` (it is a client of it, like a model API loop): MCP clients such
as Claude Desktop or Cursor list two tools whose descriptions are the generated `exec`
description (with the quick index and the state of the configured MCP servers) and the
`wait` description, and every call is answered with the envelope rendered as the model reads
it (`clawcell.render`: compact JSON, wrapped as untrusted content when MCP content is in it).
A failed cell or a rejected call is a tool result with `isError: true`, never a protocol
error, so the model sees the message.

All clients of one server process share its `CodeMode`: one session of the store, one set of
saved results, one set of parked cells.

Approvals: a cell that parks waiting only for approvals is not handed back to the model;
its approvals are decided within the same tool call (see `_approvals.py`): asked through MCP
elicitation when the client supports it — over the request's back-channel on handshake
protocol versions, as an `input_required` result on 2026-07-28 — otherwise by the policy.
Answers a client sends back count only for the approvals this server asked that client
about, under the `elicit` policy: the round's `requestState` is sealed (`_request_state.py`),
and a retried call with a state this server did not issue is refused and decides nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from .._lazy import install_hint
from ..errors import ClawcellError, ConfigurationError, McpError
from ..store import state_keys_for
from ._approvals import (
    APPROVAL_SCHEMA,
    ApprovalPolicy,
    Ask,
    ElicitAnswer,
    approval_message,
    resume,
    settle,
    waiting_approvals,
)
from ._request_state import STATE_PREFIX, RequestStates, SharedSdkCodec, client_identity

if TYPE_CHECKING:
    from .. import CodeMode

__all__ = ["CodeModeServer"]

_POLICIES: Final = ("elicit", "allow", "deny")
_UNASKED: Final = (
    "this `requestState` was not issued by this server to this client (forged, from another "
    "client or server process, or from before a restart); nothing was decided. Call `wait` "
    "with the run id to continue the cell."
)
_NOT_ASKING: Final = (
    'this server does not ask clients about approvals (its policy is `approvals = "{}"`), so '
    "answers sent back with a `requestState` decide nothing. Call `wait` with the run id."
)
INSTRUCTIONS: Final = (
    "clawcell runs JavaScript cells (code mode): call `exec` with a program that calls the "
    "listed tools and returns only what matters; continue a `waiting` result with `wait`."
)


class CodeModeServer:
    """An MCP server whose tools are the `exec` and `wait` of `mode`.

    Args:
        mode: The code mode runtime; the caller owns it (close it after serving).
        name: The server name announced to clients.
        approvals: What happens when a tool needs an approval (see the module docstring).

    Raises:
        McpError: The `mcp` SDK is not installed (`pip install 'clawcell[mcp]'`).
        ConfigurationError: `approvals` is not one of `elicit`, `allow`, `deny`.
    """

    def __init__(
        self, mode: CodeMode, *, name: str = "clawcell", approvals: ApprovalPolicy = "elicit"
    ) -> None:
        _require_sdk()
        if approvals not in _POLICIES:
            raise ConfigurationError(
                f"`approvals` must be one of {', '.join(_POLICIES)}, got {approvals!r}."
            )
        self.mode = mode
        self.approvals: ApprovalPolicy = approvals
        durable = mode.options.store is not None
        self._states = RequestStates(lambda: state_keys_for(mode.store, durable=durable))
        self._input_schemas: dict[str, Any] | None = None
        self.sdk_server = _sdk_server(
            name, self._list_tools, self._call_tool, input_schema=self._input_schema,
            codec=SharedSdkCodec(self._states),
        )  # fmt: skip
        """The SDK's low-level `mcp.server.Server` (for transports clawcell does not wrap)."""

    async def tool_definitions(self) -> list[dict[str, Any]]:
        """`exec` and `wait` as MCP tool definitions (`name`, `description`, `inputSchema`).

        The configured MCP servers are connected first, so the `exec` description can name
        the ones that are unavailable.
        """
        await self.mode.mcp_status()
        return [
            {"name": d["name"], "description": d["description"], "inputSchema": d["input_schema"]}
            for d in self.mode.model_tools("anthropic")
        ]

    async def call(
        self, name: str, arguments: dict[str, Any], *, ask: Ask | None = None
    ) -> tuple[str, bool]:
        """Answer one tool call: the text the model reads, and whether it is an error.

        Approvals the cell waits for are decided first: by `ask` (the user, through the
        client) under the `elicit` policy, else by the policy.
        """
        try:
            envelope = await self.mode.call_tool(name, arguments)
            envelope = await settle(self.mode, envelope, self.approvals, ask)
        except ClawcellError as exc:
            return exc.message, True
        return self._rendered(envelope)

    async def _answered(
        self, state: str, responses: Mapping[str, Any], client: str
    ) -> tuple[str, bool] | Any:
        """A retried call carrying the user's answers (2026-07-28 `input_required` flow):
        only answers to what this server asked this client count, and only under `elicit`."""
        if self.approvals != "elicit":
            return _NOT_ASKING.format(self.approvals), True
        opened = self._states.open(state, client)
        if opened is None:
            return _UNASKED, True
        run_id, asked = opened
        answers = {k: _answer(v) for k, v in responses.items() if k in asked}
        try:
            envelope = await resume(self.mode, run_id, asked, answers, self.approvals)
        except ClawcellError as exc:
            return exc.message, True
        return self._round(envelope, client)

    def _round(self, envelope: dict[str, Any], client: str) -> tuple[str, bool] | Any:
        """The envelope, or an `input_required` result asking `client` what it waits for."""
        pending = waiting_approvals(envelope)
        if not pending:
            return self._rendered(envelope)
        state = self._states.issue(str(envelope["runId"]), [str(a["id"]) for a in pending], client)
        return _input_required(pending, state)

    def _rendered(self, envelope: dict[str, Any]) -> tuple[str, bool]:
        """The text the model reads (`CodeMode.render`) and whether it is an error."""
        return self.mode.render(envelope), envelope.get("status") == "failed"

    def _input_schema(self, name: str) -> Any:
        """`name`'s input schema, for the SDK's check of `Mcp-Param-*` headers on each call
        (without it the SDK runs the whole `tools/list` handler once per `tools/call`). The
        schemas of `exec` and `wait` are fixed when the runtime is built."""
        if self._input_schemas is None:
            self._input_schemas = {
                d["name"]: d["input_schema"] for d in self.mode.model_tools("anthropic")
            }
        return self._input_schemas.get(name)

    async def _list_tools(self, _ctx: Any, _params: Any) -> Any:
        import mcp_types as types

        tools = [
            types.Tool(name=d["name"], description=d["description"], input_schema=d["inputSchema"])
            for d in await self.tool_definitions()
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        state, client = params.request_state, client_identity(ctx)
        if isinstance(state, str) and state.startswith(STATE_PREFIX):
            answered = await self._answered(state, params.input_responses or {}, client)
        elif state:
            answered = _UNASKED, True
        elif self.approvals == "elicit" and _can_elicit(ctx) and not ctx.session.can_send_request:
            answered = await self._first_round(params, client)
        else:
            answered = await self.call(params.name, dict(params.arguments or {}), ask=_asker(ctx))
        if not isinstance(answered, tuple):
            return answered  # an `input_required` result
        text, failed = cast(tuple[str, bool], answered)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=failed
        )

    async def _first_round(self, params: Any, client: str) -> tuple[str, bool] | Any:
        """A call from a client that can be asked only by an `input_required` result."""
        try:
            envelope = await self.mode.call_tool(params.name, dict(params.arguments or {}))
        except ClawcellError as exc:
            return exc.message, True
        return self._round(envelope, client)

    async def serve_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout until it disconnects."""
        from mcp.server.stdio import stdio_server

        server = self.sdk_server
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


Handler = Callable[[Any, Any], Awaitable[Any]]


def _can_elicit(ctx: Any) -> bool:
    capabilities = getattr(ctx.session, "client_capabilities", None)
    elicitation = getattr(capabilities, "elicitation", None)
    # An empty `elicitation: {}` (older clients) means form mode.
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def _asker(ctx: Any) -> Ask | None:
    """Asks the user over the request's back-channel, when the client can be asked so."""
    if not _can_elicit(ctx) or not ctx.session.can_send_request:
        return None

    async def ask(approval: Mapping[str, Any]) -> ElicitAnswer:
        from mcp.shared.exceptions import MCPError, NoBackChannelError

        try:
            result = await ctx.session.elicit_form(
                approval_message(approval), APPROVAL_SCHEMA, related_request_id=ctx.request_id
            )
        except (MCPError, NoBackChannelError):
            return ElicitAnswer(action="cancel")  # the client could not ask: not approved
        return _answer(result)

    return ask


def _answer(result: Any) -> ElicitAnswer:
    """An SDK `ElicitResult` (or anything else a client sent back) as an `ElicitAnswer`."""
    action = getattr(result, "action", "cancel")
    content = getattr(result, "content", None)
    return ElicitAnswer(
        action=action if action in ("accept", "decline") else "cancel",
        content=cast(dict[str, Any], content) if isinstance(content, dict) else {},
    )


def _input_required(pending: list[dict[str, Any]], state: str) -> Any:
    """Ask the client to elicit each approval and retry the call with the answers."""
    import mcp_types as types

    requests: dict[str, types.InputRequest] = {
        str(a["id"]): types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=approval_message(a), requested_schema=APPROVAL_SCHEMA
            )
        )
        for a in pending
    }
    return types.InputRequiredResult(input_requests=requests, request_state=state)


def _require_sdk() -> None:
    """Fail first, with the install command, when the `mcp` SDK is missing (the server is
    built on it at once: `_sdk_server`)."""
    try:
        importlib.import_module("mcp.server")
    except ImportError as exc:
        raise McpError(f"`CodeModeServer` needs the `mcp` package: {install_hint('mcp')}.") from exc


def _sdk_server(
    name: str,
    list_tools: Handler,
    call_tool: Handler,
    *,
    input_schema: Callable[[str], Any],
    codec: SharedSdkCodec,
) -> Any:
    from importlib.metadata import version

    from mcp.server import Server
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

    server = Server(
        name,
        version=version("clawcell"),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
    )
    # The SDK's own sealing of `requestState` (AES-GCM, with expiry and audience) in front
    # of clawcell's MAC, which also binds the client and the approval ids asked
    # (`_request_state.py`) and holds for callers that skip middleware. Its key comes from
    # the store's state keys: an ephemeral one refused every retry another worker received.
    security = RequestStateSecurity(codec=codec)
    server.middleware.append(RequestStateBoundary(security, default_audience=name))
    return server
