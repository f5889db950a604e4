"""Tool policy: deny wins, patterns, unknown names, tools' own rules."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from clawcell import ConfigurationError, Tool
from clawcell.approvals import Approvals, DecisionLedger, RunApprovals, ToolPolicy, rule_reason
from clawcell.store import MemoryStore


def test_deny_wins_over_ask_and_allow() -> None:
    policy = ToolPolicy(allow=["fs_*"], ask=["fs_write"], deny=["fs_write", "net_*"])

    assert [policy.verdict(n) for n in ("fs_read", "fs_write", "net_get", "other")] == [
        "allow",
        "deny",
        "deny",
        None,
    ]


def test_ask_wins_over_allow() -> None:
    assert ToolPolicy(allow=["*"], ask=["pay"]).verdict("pay") == "ask"


def test_an_unknown_exact_name_is_a_configuration_error_and_a_pattern_is_not() -> None:
    policy = ToolPolicy(deny=["fs_wrtie"], allow=["net_*"])

    with pytest.raises(ConfigurationError) as caught:
        policy.check_names(["fs_write", "fs_read"])
    assert caught.value.message == (
        "tool policy `deny` names 'fs_wrtie', which is not a tool of this catalog; "
        "known tools: ['fs_read', 'fs_write']."
    )
    ToolPolicy(allow=["net_*"]).check_names(["fs_write"])


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"alow": []}, "unknown tool policy keys ['alow']; use `allow`, `deny` and `ask`."),
        ({"deny": "rm"}, "tool policy `deny` must be a list of names, got 'rm'."),
        ({"ask": [""]}, "tool policy `ask` entries must be names, got ''."),
    ],
    ids=["unknown-key", "string", "empty-name"],
)
def test_a_malformed_policy_config_is_refused(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        ToolPolicy.from_config(config)
    assert caught.value.message == message


def test_from_config_reads_the_three_lists() -> None:
    policy = ToolPolicy.from_config({"allow": ["a"], "deny": ["b"], "ask": ["c*"]})

    assert (policy.allow, policy.deny, policy.ask) == (("a",), ("b",), ("c*",))


def _over_100(params: dict[str, Any]) -> bool:
    return params.get("amount", 0) > 100


def _limit_reason(params: dict[str, Any]) -> str:
    return "over the limit" if params.get("amount", 0) > 10 else ""


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("never", None),
        ("always", "this tool always asks for approval"),
        (_over_100, "this call needs approval"),
        (_limit_reason, "over the limit"),
    ],
    ids=["never", "always", "bool-rule", "reason-rule"],
)
def test_a_tools_rule_gives_the_reason_it_asks(rule: Any, expected: str | None) -> None:
    assert rule_reason(rule, {"amount": 500}) == expected


def test_a_rule_that_says_no_does_not_ask() -> None:
    assert rule_reason(_over_100, {"amount": 1}) is None
    assert rule_reason(_limit_reason, {"amount": 1}) is None


def test_a_tool_with_a_bad_approval_rule_is_refused() -> None:
    async def noop(params: dict[str, Any]) -> None:
        return None

    with pytest.raises(ConfigurationError) as caught:
        Tool(name="t", execute=noop, approval="sometimes")  # pyright: ignore[reportArgumentType]
    assert caught.value.message == (
        "Tool 't': `approval` must be 'always', 'never' or a callable "
        "`rule(input) -> bool | str`, got 'sometimes'."
    )


def _gate(policy: ToolPolicy | None = None) -> RunApprovals:
    approvals = Approvals(policy=policy, ledger=DecisionLedger(MemoryStore(), "s"), ttl_seconds=60)
    return approvals.run("run-1")


def test_a_call_is_waived_past_the_gate_only_when_nothing_could_ask_or_deny() -> None:
    # The fast path skips the gate for a tool that never asks, with no hook asking, an
    # empty policy and nothing remembered; each of those alone sends the call through it.
    assert _gate().waives("never", None) is True
    assert _gate().waives("always", None) is False
    assert _gate().waives(lambda _: False, None) is False
    assert _gate().waives("never", "a hook asks") is False
    assert _gate(ToolPolicy(deny=["echo"])).waives("never", None) is False
    assert _gate(ToolPolicy(allow=["*"])).waives("never", None) is False
    remembering = _gate()
    remembering.session.remembered["echo"] = "deny"
    assert remembering.waives("never", None) is False


def test_a_gate_is_idle_only_while_no_call_waits_and_no_decision_is_held() -> None:
    # An idle gate's `deliver` is skipped at the start of a leg; anything held makes it run.
    gate = _gate()
    assert gate.idle
    gate.decided["ap_1"] = cast(Any, object())
    assert not gate.idle
    asyncio.run(gate.deliver())  # delivers (nothing waits for it) and lets it go
    assert gate.idle
