"""`clawcell mcp serve` and answers a client sends back (`requestState` + `inputResponses`):
they count only for approvals this server asked that client about, under `elicit`. Driven
through the server's call handler with a client that declares no elicitation capability (the
case where the server never asks), then with states the server did issue."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

import mcp
from clawcell import CodeMode, Limits, Tool
from clawcell.mcp_server import ApprovalPolicy, CodeModeServer
from clawcell.mcp_server._request_state import RequestStates
from tests.conftest import run

LIMITS = Limits(timeout_ms=60_000)
PAY = "try { return await pay({ amount: 5 }); } catch (e) { return { code: e.code }; }"
APPROVE = types.ElicitResult(action="accept", content={"approve": True})


def _pay(paid: list[int]) -> Tool:
    def pay(params: dict[str, Any]) -> dict[str, Any]:
        paid.append(params["amount"])
        return {"paid": params["amount"]}

    return Tool(name="pay", execute=pay, approval="always")


def _ctx(name: str = "client", *, can_elicit: bool = False) -> Any:
    elicitation = SimpleNamespace(form={}, url=None) if can_elicit else None
    return SimpleNamespace(
        session=SimpleNamespace(
            client_capabilities=SimpleNamespace(elicitation=elicitation),
            can_send_request=False,
            client_params=SimpleNamespace(client_info=SimpleNamespace(name=name, version="1")),
        ),
        request_id=1,
    )


def _params(run_id: str, state: str, answers: dict[str, Any]) -> Any:
    return types.CallToolRequestParams(
        name="wait", arguments={"runId": run_id}, request_state=state, input_responses=answers
    )


async def _text(server: CodeModeServer, ctx: Any, params: Any) -> tuple[str, bool]:
    result = await server._call_tool(ctx, params)  # pyright: ignore[reportPrivateUsage]
    assert isinstance(result, types.CallToolResult), result
    return result.content[0].text, bool(result.is_error)  # type: ignore[union-attr]


Forge = Callable[[str, list[str]], str]
FORGERIES: dict[str, tuple[str, Forge]] = {
    "bare_run_id_under_deny": ("deny", lambda run_id, _s: f"clawcell-approvals:{run_id}"),
    "bare_run_id_under_allow": ("allow", lambda run_id, _s: f"clawcell-approvals:{run_id}"),
    "bare_run_id_under_elicit": ("elicit", lambda run_id, _s: f"clawcell-approvals:{run_id}"),
    "made_up_mac": ("elicit", lambda run_id, _s: f"clawcell-approvals:{run_id}.AAAA"),
    "other_server_process": (
        "elicit",
        lambda run_id, ids: RequestStates().issue(run_id, ids, '["client", "1", null]'),
    ),
    "foreign_prefix": ("elicit", lambda run_id, _s: f"other:{run_id}"),
    "empty_body": ("elicit", lambda _r, _s: "clawcell-approvals:."),
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_forged_request_state_decides_nothing(forgery: str) -> None:
    policy, make = FORGERIES[forgery]
    paid: list[int] = []

    async def body() -> tuple[str, bool, list[int], int, Any]:
        async with CodeMode([_pay(paid)], limits=LIMITS) as mode:
            server = CodeModeServer(mode, approvals=policy)  # type: ignore[arg-type]
            parked = await mode.exec(PAY)
            run_id, ids = parked["runId"], [a["id"] for a in parked["pendingApprovals"]]
            state = make(run_id, ids)
            text, failed = await _text(server, _ctx(), _params(run_id, state, {ids[0]: APPROVE}))
            still = len(await mode.pending_approvals(run_id))
            before = list(paid)
            await mode.decide(run_id, ids[0], "approve")
            done = await mode.wait(run_id)
        return text, failed, before, still, done["value"]

    text, failed, before, still, value = run(body())
    assert failed and "decide" in text and before == [] and still == 1
    assert value == {"paid": 5}


@pytest.mark.parametrize("misuse", ["other_client", "other_run", "extra_ids", "replayed"])
def test_an_issued_state_counts_only_for_its_client_run_and_ids(misuse: str) -> None:
    paid: list[int] = []

    async def body() -> tuple[list[bool], list[int], int]:
        async with CodeMode([_pay(paid)], limits=LIMITS) as mode:
            server = CodeModeServer(mode, approvals="elicit")
            ctx = _ctx(can_elicit=True)
            first = await server._call_tool(  # pyright: ignore[reportPrivateUsage]
                ctx, types.CallToolRequestParams(name="exec", arguments={"code": PAY})
            )
            assert isinstance(first, types.InputRequiredResult)
            state, asked = str(first.request_state), list(first.input_requests or {})
            other = await mode.exec(PAY)
            other_ids = [a["id"] for a in other["pendingApprovals"]]
            run_of = state  # the issued state names the first run only
            failures: list[bool] = []
            if misuse == "other_client":
                _, failed = await _text(
                    server,
                    _ctx("intruder", can_elicit=True),
                    _params("x", run_of, {asked[0]: APPROVE}),
                )
                failures.append(failed)
            elif misuse == "other_run":
                forged = RequestStates().issue(other["runId"], other_ids, "x")
                _, failed = await _text(server, ctx, _params("x", forged, {other_ids[0]: APPROVE}))
                failures.append(failed)
            elif misuse == "extra_ids":
                answers = {asked[0]: APPROVE, other_ids[0]: APPROVE}
                _, failed = await _text(server, ctx, _params("x", run_of, answers))
                failures.append(failed)
            else:
                await _text(server, ctx, _params("x", run_of, {asked[0]: APPROVE}))
                _, failed = await _text(server, ctx, _params("x", run_of, {asked[0]: APPROVE}))
                failures.append(failed)
            left = len(await mode.pending_approvals(other["runId"]))
            await mode.decide(other["runId"], other_ids[0], "approve")
            await mode.wait(other["runId"])
            return failures, list(paid), left

    failures, paid_now, left = run(body())
    assert left == 1  # the other run's approval was never decided by these answers
    if misuse in ("other_client", "other_run", "replayed"):
        assert failures == [True]
    if misuse == "extra_ids":
        assert failures == [False]  # its own approval ran; the extra answer was ignored
    expected = {"other_client": [5], "other_run": [5], "extra_ids": [5, 5], "replayed": [5, 5]}
    assert paid_now == expected[misuse]


@pytest.mark.parametrize("policy", ["elicit", "deny", "allow"])
def test_a_forged_request_state_over_the_wire_is_refused_and_decides_nothing(
    policy: ApprovalPolicy,
) -> None:
    paid: list[int] = []

    async def body() -> tuple[bool, int, Any]:
        async with CodeMode([_pay(paid)], limits=LIMITS) as mode:
            server = CodeModeServer(mode, approvals=policy)
            parked = await mode.exec(PAY)
            run_id, ids = parked["runId"], [a["id"] for a in parked["pendingApprovals"]]
            async with mcp.Client(server.sdk_server) as client:
                try:
                    result = await client.call_tool(
                        "wait",
                        {"runId": run_id},
                        request_state=f"clawcell-approvals:{run_id}",
                        input_responses={ids[0]: APPROVE},
                    )
                    refused = bool(result.is_error)
                except MCPError:
                    refused = True
                clean = await client.call_tool("exec", {"code": "return 40 + 2"})
            left = len(await mode.pending_approvals(run_id))
            return refused, left, clean.content[0].text  # type: ignore[union-attr]

    refused, left, clean = run(body())
    assert refused and left == 1 and paid == []
    assert '"value":42' in clean.replace(" ", "")
