"""`clawcell mcp serve` and approvals: asked through MCP elicitation when the client supports
it (the 2026-07-28 `input_required` round trip and the handshake-era back-channel), otherwise
decided by the configured policy. Driven by the SDK's own client, in process."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest

import mcp
from clawcell import CodeMode, Tool
from clawcell.mcp_server import ApprovalPolicy, CodeModeServer
from tests.conftest import run
from tests.mcp_server._serve import envelope_of

PAY = """
try {
  return await pay({ amount: 500 });
} catch (e) {
  return { code: e.code, message: e.message };
}
"""
REFUSED = (
    "the MCP client cannot ask the user (it does not support elicitation), so the call was "
    'refused; `approvals = "allow"` in the server\'s `[policy]` would let it run.'
)


def _pay_tool(paid: list[int]) -> Tool:
    def pay(params: dict[str, Any]) -> dict[str, Any]:
        paid.append(params["amount"])
        return {"paid": params["amount"]}

    return Tool(name="pay", execute=pay, approval=lambda p: f"{p['amount']} EUR")


class Elicitations:
    """An elicitation callback that answers from a script and records what it was asked."""

    def __init__(self, *answers: types.ElicitResult) -> None:
        self._answers = list(answers)
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        del context
        self.asked.append(params)
        return self._answers.pop(0)


async def _exec(
    policy: ApprovalPolicy,
    elicitations: Elicitations | None,
    *,
    connect: str = "auto",
) -> tuple[dict[str, Any], list[int], list[Any]]:
    paid: list[int] = []
    async with CodeMode([_pay_tool(paid)]) as mode:
        server = CodeModeServer(mode, approvals=policy)
        async with mcp.Client(
            server.sdk_server, elicitation_callback=elicitations, mode=connect
        ) as client:
            envelope = envelope_of(await client.call_tool("exec", {"code": PAY}))
        return envelope, paid, await mode.approval_audit()


def _accept(approve: bool, note: str = "") -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"approve": approve, "note": note})


@pytest.mark.parametrize("connect", ["auto", "legacy"], ids=["input_required", "back_channel"])
def test_an_approved_elicitation_runs_the_call_within_the_same_exec(connect: str) -> None:
    asked = Elicitations(_accept(True, "fine"))
    envelope, paid, audit = run(_exec("elicit", asked, connect=connect))
    assert (envelope["status"], envelope["value"], paid) == ("completed", {"paid": 500}, [500])
    assert [p.message for p in asked.asked] == [
        'A code mode cell wants to call the tool `pay` (500 EUR) with input {"amount": 500}. '
        "Approve this call?"
    ]
    assert asked.asked[0].requested_schema["required"] == ["approve"]
    assert [(d.decision, d.note, d.by) for d in audit] == [("approve", "fine", "mcp-elicitation")]


@pytest.mark.parametrize(
    ("answer", "note"),
    [
        (_accept(False, "too much"), "too much."),
        (_accept(False), "the user denied it."),
        (types.ElicitResult(action="decline"), "the user declined it."),
        (types.ElicitResult(action="cancel"), "the user dismissed the request without deciding."),
    ],
    ids=["denied_with_note", "denied", "declined", "cancelled"],
)
def test_a_refused_elicitation_rejects_the_call_into_the_cell(
    answer: types.ElicitResult, note: str
) -> None:
    envelope, paid, audit = run(_exec("elicit", Elicitations(answer)))
    assert envelope["status"] == "completed" and paid == []
    assert envelope["value"] == {
        "code": "approval_denied",
        "message": f'Tool "pay" was not approved: {note}',
    }
    assert [(d.decision, d.by) for d in audit] == [("deny", "mcp-elicitation")]


DENIED = 'Tool "pay" was not approved: '


@pytest.mark.parametrize(
    ("policy", "value", "by"),
    [
        ("elicit", {"code": "approval_denied", "message": DENIED + REFUSED}, "policy:elicit"),
        ("allow", {"paid": 500}, "policy:allow"),
        (
            "deny",
            {
                "code": "approval_denied",
                "message": DENIED + 'the `approvals = "deny"` policy of `clawcell mcp serve` '
                "denies every approval.",
            },
            "policy:deny",
        ),
    ],
)
def test_a_client_without_elicitation_gets_the_configured_policy(
    policy: ApprovalPolicy, value: dict[str, Any], by: str
) -> None:
    envelope, paid, audit = run(_exec(policy, None))
    assert (envelope["status"], envelope["value"]) == ("completed", value)
    assert paid == ([500] if policy == "allow" else [])
    assert [d.by for d in audit] == [by]


def test_allow_and_deny_never_ask_even_a_client_that_could() -> None:
    asked = Elicitations()
    envelope, paid, _ = run(_exec("allow", asked))
    assert (envelope["value"], paid, asked.asked) == ({"paid": 500}, [500], [])


def test_calls_that_need_no_approval_are_answered_without_asking() -> None:
    async def scenario() -> tuple[object, Elicitations]:
        asked = Elicitations()
        async with CodeMode([]) as mode:
            server = CodeModeServer(mode)
            async with mcp.Client(server.sdk_server, elicitation_callback=asked) as client:
                result = await client.call_tool("exec", {"code": "return 6 * 7;"})
        return envelope_of(result)["value"], asked

    value, asked = run(scenario())
    assert (value, asked.asked) == (42, [])


def test_parallel_approvals_are_asked_in_one_round_and_decided_one_by_one() -> None:
    code = """
    const [a, b] = await Promise.allSettled([pay({ amount: 1 }), pay({ amount: 2 })]);
    return [a.status, b.status];
    """

    async def scenario() -> tuple[dict[str, Any], list[int], Elicitations]:
        paid: list[int] = []
        asked = Elicitations(_accept(True), _accept(False))
        async with CodeMode([_pay_tool(paid)]) as mode:
            server = CodeModeServer(mode)
            async with mcp.Client(server.sdk_server, elicitation_callback=asked) as client:
                envelope = envelope_of(await client.call_tool("exec", {"code": code}))
        return envelope, paid, asked

    envelope, paid, asked = run(scenario())
    assert len(asked.asked) == 2
    first = "1 EUR" in asked.asked[0].message
    assert envelope["value"] == (["fulfilled", "rejected"] if first else ["rejected", "fulfilled"])
    assert paid == [1 if first else 2]


def test_the_note_a_client_sends_is_capped_by_the_form_and_cut_when_the_client_ignores_it() -> None:
    asked = Elicitations(_accept(True, "n" * 3000))
    envelope, paid, audit = run(_exec("elicit", asked))
    assert asked.asked[0].requested_schema["properties"]["note"]["maxLength"] == 2000
    assert (envelope["status"], paid) == ("completed", [500])
    assert [(d.decision, d.note) for d in audit] == [("approve", "n" * 2000)]
