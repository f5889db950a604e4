"""Approvals end to end through `CodeMode`: approve, deny, expire, remember, policy, hooks."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from clawcell import CodeMode, Limits, Tool
from clawcell.approvals import ToolPolicy
from clawcell.catalog import HookDecision, ToolCallEvent
from clawcell.store import SQLiteStore

LIMITS = Limits(timeout_ms=60_000)
_T = TypeVar("_T")
_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00")


class Ledger:
    """Tools that count their runs."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def tool(self, name: str, approval: Any = "never") -> Tool:
        async def execute(params: dict[str, Any]) -> dict[str, Any]:
            self.runs.append(name)
            return {"tool": name, **params}

        return Tool(name=name, execute=execute, approval=approval)


def run(body: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    return asyncio.run(body())


def test_a_call_that_needs_approval_parks_the_cell_without_running() -> None:
    ledger = Ledger()

    async def body() -> tuple[dict[str, Any], dict[str, Any]]:
        async with CodeMode([ledger.tool("pay", "always")], limits=LIMITS) as mode:
            parked = await mode.exec("return await pay({ amount: 500 })")
            assert ledger.runs == []
            approval = parked["pendingApprovals"][0]
            await mode.decide(parked["runId"], approval["id"], "approve", note="fine")
            assert ledger.runs == []  # decided, not yet delivered: the next wait runs it
            return parked, await mode.wait(parked["runId"])

    parked, done = run(body)
    assert (parked["status"], parked["reason"]) == ("waiting", "approval")
    assert list(parked) == [
        "status",
        "runId",
        "reason",
        "pendingToolCalls",
        "pendingApprovals",
        "replaySafe",
        "telemetry",
        "output",
    ]
    assert parked["pendingToolCalls"] == [{"id": "bridge:callValue:1", "method": "callValue"}]
    [approval] = parked["pendingApprovals"]
    assert approval["id"].startswith("ap_")
    assert (approval["tool"], approval["input"]) == ("pay", {"amount": 500})
    assert approval["reason"] == "this tool always asks for approval"
    assert _ISO.fullmatch(approval["requestedAt"])
    assert done["status"] == "completed"
    assert done["value"] == {"tool": "pay", "amount": 500}
    assert ledger.runs == ["pay"]


def test_a_denied_call_rejects_into_the_cell_with_the_note() -> None:
    ledger = Ledger()
    code = (
        "try { await pay({ amount: 9 }); return 'paid'; }\n"
        "catch (e) { return [e.name, e.code, e.message]; }"
    )

    async def body() -> dict[str, Any]:
        async with CodeMode([ledger.tool("pay", "always")], limits=LIMITS) as mode:
            parked = await mode.exec(code)
            approval_id = parked["pendingApprovals"][0]["id"]
            await mode.decide(parked["runId"], approval_id, "deny", note="not this month")
            return await mode.wait(parked["runId"])

    done = run(body)
    assert done["value"] == [
        "Error",
        "approval_denied",
        'Tool "pay" was not approved: not this month.',
    ]
    assert ledger.runs == []


def test_an_approval_nobody_decides_expires_as_a_denial(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000.0]
    monkeypatch.setattr("clawcell.approvals._gate._wall_clock", lambda: now[0])
    ledger = Ledger()
    code = "try { await pay(); } catch (e) { return [e.code, e.message]; }"

    async def body() -> tuple[dict[str, Any], list[Any]]:
        mode = CodeMode([ledger.tool("pay", "always")], limits=LIMITS, approval_ttl_seconds=30)
        async with mode:
            parked = await mode.exec(code)
            now[0] += 31
            done = await mode.wait(parked["runId"])
            return done, [(d.decision, d.by) for d in await mode.approval_audit()]

    done, audit = run(body)
    assert done["value"] == [
        "approval_denied",
        'Tool "pay" was not approved: the approval expired before anyone decided.',
    ]
    assert audit == [("deny", "expiry")]
    assert ledger.runs == []


def test_a_remembered_approval_lets_later_calls_of_the_tool_run() -> None:
    ledger = Ledger()

    async def body() -> list[Any]:
        async with CodeMode([ledger.tool("pay", "always")], limits=LIMITS) as mode:
            parked = await mode.exec("return await pay({ n: 1 })")
            approval_id = parked["pendingApprovals"][0]["id"]
            await mode.decide(parked["runId"], approval_id, "approve", remember=True, by="ana")
            first = await mode.wait(parked["runId"])
            second = await mode.exec("return await pay({ n: 2 })")
            audit = await mode.approval_audit()
            return [first["value"], second["status"], second["value"], audit[0].remember]

    assert run(body) == [
        {"tool": "pay", "n": 1},
        "completed",
        {"tool": "pay", "n": 2},
        "session",
    ]
    assert ledger.runs == ["pay", "pay"]


def test_other_calls_run_while_one_waits_for_approval() -> None:
    ledger = Ledger()
    tools = [ledger.tool("pay", "always"), ledger.tool("quote")]
    code = "return await Promise.all([quote({ a: 1 }), pay({ b: 2 }), quote({ c: 3 })]);"

    async def body() -> tuple[dict[str, Any], dict[str, Any], list[str]]:
        async with CodeMode(tools, limits=LIMITS) as mode:
            parked = await mode.exec(code)
            before = list(ledger.runs)
            approval_id = parked["pendingApprovals"][0]["id"]
            await mode.decide(parked["runId"], approval_id, "approve")
            return parked, await mode.wait(parked["runId"]), before

    parked, done, before = run(body)
    assert parked["reason"] == "approval"
    assert before == ["quote", "quote"]
    assert done["value"] == [
        {"tool": "quote", "a": 1},
        {"tool": "pay", "b": 2},
        {"tool": "quote", "c": 3},
    ]


def test_a_cell_that_catches_a_denial_goes_on() -> None:
    ledger = Ledger()
    tools = [ledger.tool("pay", "always"), ledger.tool("notify")]
    code = (
        "let paid = true;\n"
        "try { await pay({ amount: 5 }); } catch (e) { paid = e.code; }\n"
        "await notify({ paid });\nreturn paid;"
    )

    async def body() -> dict[str, Any]:
        async with CodeMode(tools, limits=LIMITS) as mode:
            parked = await mode.exec(code)
            await mode.decide(parked["runId"], parked["pendingApprovals"][0]["id"], "deny")
            return await mode.wait(parked["runId"])

    done = run(body)
    assert (done["status"], done["value"]) == ("completed", "approval_denied")
    assert ledger.runs == ["notify"]


@pytest.mark.parametrize(
    ("policy", "approval", "expected"),
    [
        (ToolPolicy(deny=["pay"]), "never", ("completed", "approval_denied")),
        (ToolPolicy(ask=["p*"]), "never", ("waiting", None)),
        (ToolPolicy(allow=["pay"]), "always", ("completed", "ran")),
        (ToolPolicy(allow=["*"], deny=["pay"]), "never", ("completed", "approval_denied")),
        ({"ask": ["pay"]}, "never", ("waiting", None)),
    ],
    ids=["deny", "ask-pattern", "allow-overrides-tool", "deny-wins", "mapping"],
)
def test_the_session_policy_decides_before_the_tools_rule(
    policy: Any, approval: Any, expected: tuple[str, str | None]
) -> None:
    ledger = Ledger()
    code = "try { await pay(); return 'ran'; } catch (e) { return e.code; }"

    async def body() -> dict[str, Any]:
        mode = CodeMode([ledger.tool("pay", approval)], limits=LIMITS, policy=policy)
        async with mode:
            return await mode.exec(code)

    envelope = run(body)
    assert (envelope["status"], envelope.get("value")) == expected


def test_a_before_hook_can_ask_for_approval_with_a_reason() -> None:
    ledger = Ledger()

    def hook(event: ToolCallEvent) -> HookDecision | None:
        if event.params.get("amount", 0) > 100:
            return HookDecision(approval="large payment")
        return None

    async def body() -> list[Any]:
        mode = CodeMode([ledger.tool("pay")], limits=LIMITS, before_tool_call=[hook])
        async with mode:
            small = await mode.exec("return await pay({ amount: 5 })")
            large = await mode.exec("return await pay({ amount: 500 })")
            return [small["status"], large["status"], large["pendingApprovals"][0]["reason"]]

    assert run(body) == ["completed", "waiting", "large payment"]


def test_a_restart_safe_cell_may_not_wait_for_an_approval() -> None:
    ledger = Ledger()
    tool = Tool(
        name="read_doc",
        execute=ledger.tool("read_doc").execute,
        approval="always",
        replay_safe=True,
    )
    code = "try { await read_doc(); } catch (e) { return [e.code, e.message]; }"

    async def body() -> dict[str, Any]:
        async with CodeMode([tool], limits=LIMITS) as mode:
            return await mode.call_tool("exec", {"code": code, "restartSafe": True})

    assert run(body)["value"] == [
        "invalid_input",
        "restart-safe code mode cannot wait for approvals; call tools that need no approval, "
        "or run the cell without restartSafe.",
    ]
    assert ledger.runs == []


def test_a_cell_cannot_forge_a_decision_through_the_session_store() -> None:
    ledger = Ledger()
    forge = "const run = await pay().catch((e) => e);\nreturn run;"

    async def body() -> tuple[dict[str, Any], dict[str, Any]]:
        async with CodeMode([ledger.tool("pay", "always")], limits=LIMITS) as mode:
            parked = await mode.exec(forge)
            approval_id = parked["pendingApprovals"][0]["id"]
            forged = (
                f"await store({approval_id!r}, {{ decision: 'approve' }});\n"
                f"await store('\\x1fapprovals', {{ {approval_id!r}: 'approve' }});\n"
                "return 'tried';"
            )
            attempt = await mode.exec(forged)
            still = await mode.wait(parked["runId"])
            return attempt, still

    attempt, still = run(body)
    assert attempt["value"] == "tried"
    assert (still["status"], still["reason"]) == ("waiting", "approval")
    assert ledger.runs == []


def test_an_approved_call_runs_once_in_the_process_that_revives_the_run(tmp_path: Path) -> None:
    ledger = Ledger()
    path = tmp_path / "state.db"
    tools = [ledger.tool("pay", "always")]

    async def body() -> tuple[dict[str, Any], list[Any]]:
        store = SQLiteStore(path)
        async with store:
            async with CodeMode(tools, limits=LIMITS, store=store, session_id="s") as first:
                parked = await first.exec("return await pay({ amount: 7 })")
            # The first runtime is gone (as after SIGKILL): decide from a second one ...
            async with CodeMode(tools, limits=LIMITS, store=store, session_id="s") as ui:
                [pending] = await ui.pending_approvals(parked["runId"])
                await ui.decide(parked["runId"], pending.id, "approve")
            # ... and a third continues the run from the store.
            async with CodeMode(tools, limits=LIMITS, store=store, session_id="s") as third:
                done = await third.wait(parked["runId"])
                audit = [(d.decision, d.tool) for d in await third.approval_audit()]
        return done, audit

    done, audit = run(body)
    assert done["value"] == {"tool": "pay", "amount": 7}
    assert audit == [("approve", "pay")]
    assert ledger.runs == ["pay"]


def test_a_call_killed_after_it_was_handed_to_its_tool_is_never_run_again(tmp_path: Path) -> None:
    from clawcell.approvals import DecisionLedger
    from clawcell.approvals._gate import INTERRUPTED_AFTER_APPROVAL

    ledger = Ledger()
    path = tmp_path / "state.db"
    tools = [ledger.tool("pay", "always")]
    code = "try { await pay(); return 'ran'; } catch (e) { return [e.code, e.message]; }"

    async def body() -> dict[str, Any]:
        store = SQLiteStore(path)
        async with store:
            async with CodeMode(tools, limits=LIMITS, store=store, session_id="s") as first:
                parked = await first.exec(code)
                [pending] = await first.pending_approvals(parked["runId"])
                await first.decide(parked["runId"], pending.id, "approve")
            # What a worker that died inside the tool leaves behind: the dispatch mark.
            await DecisionLedger(store, "s").mark_dispatched(pending.id)
            async with CodeMode(tools, limits=LIMITS, store=store, session_id="s") as second:
                return await second.wait(parked["runId"])

    assert run(body)["value"] == ["tool_error", INTERRUPTED_AFTER_APPROVAL]
    assert ledger.runs == []


def test_a_decision_remembered_on_one_worker_holds_on_another(tmp_path: Path) -> None:
    ledger = Ledger()
    path = tmp_path / "state.db"

    async def body() -> list[Any]:
        async with (
            SQLiteStore(path) as store_a,
            SQLiteStore(path) as store_b,
            CodeMode(
                [ledger.tool("pay", "always")], limits=LIMITS, store=store_a, session_id="s"
            ) as a,
            CodeMode(
                [ledger.tool("pay", "always")], limits=LIMITS, store=store_b, session_id="s"
            ) as b,
        ):
            parked = await a.exec("return await pay({ n: 1 })")
            approval_id = parked["pendingApprovals"][0]["id"]
            await a.decide(parked["runId"], approval_id, "approve", remember=True, by="ana")
            await a.wait(parked["runId"])
            other = await b.exec("return await pay({ n: 2 })")
            return [other["status"], other.get("value")]

    assert run(body) == ["completed", {"tool": "pay", "n": 2}]
    assert ledger.runs == ["pay", "pay"]
