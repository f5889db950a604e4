"""A cell's pending requests (`_cell/_pending.py`): replies handed back in completion order,
parked `yield`s answered by a `wait`, and the saved state of a parked cell revived in another
process (replay-safe requests run again; others fail with `RESTART_MESSAGE`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from clawcell._cell._bridge import Reply
from clawcell._cell._pending import RESTART_MESSAGE, PendingRequest, PendingRequests
from tests.conftest import run

INBOX = 1 << 20


def _ready(requests: PendingRequests, request_id: str, payload: str = "1") -> None:
    reply = Reply(id=request_id, ok=True, payload=payload)
    requests.ready(request_id, PendingRequest("callValue", [], reply=reply))


def test_replies_go_back_named_ones_first_then_in_completion_order() -> None:
    requests = PendingRequests(INBOX)
    for request_id in ("a", "b", "c"):
        _ready(requests, request_id)
    assert [reply.id for reply in requests.take(["b"])] == ["b", "a", "c"]
    assert len(requests) == 0


def _parked(*reasons: list[Any]) -> PendingRequests:
    requests = PendingRequests(INBOX)
    for index, args in enumerate(reasons):
        request_id = f"bridge:yield:{index + 1}"
        assert requests.admit(request_id, "yield", json.dumps(args)) == args
        requests.park_yield(request_id, args)
    return requests


def test_a_parked_yield_is_answered_by_the_next_wait_with_its_reason() -> None:
    requests = _parked(["approval"])
    assert (requests.has_yield, requests.only_yields, requests.answered_yields()) == (
        True,
        True,
        [],
    )
    (reply,) = requests.answer_yields() or []  # only yields wait: the replies at once
    assert json.loads(reply.payload) == {"status": "yielded", "reason": "approval"}
    assert (len(requests), requests.has_yield, requests.answered_yields()) == (0, False, [])
    assert requests._ledger.held == 0  # pyright: ignore[reportPrivateUsage]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=6,
)


@given(reason=_JSON)
def test_a_yield_is_answered_with_the_text_json_dumps_writes_for_its_reason(reason: Any) -> None:
    (reply,) = _parked([reason]).answer_yields() or []
    assert reply.payload == json.dumps({"status": "yielded", "reason": reason})


def test_yields_beside_a_ready_reply_are_answered_in_place_then_taken_first() -> None:
    alone, beside = _parked(["a"], []), _parked(["a"], [])
    _ready(beside, "bridge:callValue:1")
    at_once = alone.answer_yields() or []
    assert beside.answer_yields() is None  # answered in place: `take` hands them back
    assert (beside.has_yield, beside.answered_yields()) == (
        False,
        ["bridge:yield:1", "bridge:yield:2"],
    )
    taken = beside.take(beside.answered_yields())
    assert at_once == taken[:2] and [r.id for r in taken] == [
        *(r.id for r in at_once),
        "bridge:callValue:1",
    ]
    assert alone._ledger.held == beside._ledger.held == 0  # pyright: ignore[reportPrivateUsage]


def test_yields_beside_a_running_task_are_answered_in_place() -> None:
    async def running() -> tuple[list[Reply] | None, list[str]]:
        requests = _parked(["a"])
        never = asyncio.Event()

        async def work() -> Reply:
            await never.wait()
            return Reply(id="t", ok=True, payload="1")

        requests.start("bridge:callValue:2", "callValue", [], work())
        answered = requests.answer_yields()
        ids = requests.answered_yields()
        requests.cancel()
        return answered, ids

    assert run(running()) == (None, ["bridge:yield:1"])


def test_a_task_that_settles_is_counted_and_reported_once() -> None:
    async def main() -> tuple[int, int, list[str], list[Reply]]:
        requests = PendingRequests(INBOX)
        settled: list[str] = []
        gate = asyncio.Event()

        async def work() -> Reply:
            await gate.wait()
            return Reply(id="t1", ok=True, payload="42")

        requests.start("t1", "callValue", ["tool"], work())
        requests.watch(lambda rid, _: settled.append(rid))
        running = requests.running
        gate.set()
        while not settled:
            await asyncio.sleep(0)
        return running, requests.running, settled, requests.take([])

    running, after, settled, replies = run(main())
    assert (running, after, settled) == (1, 0, ["t1"])
    assert replies == [Reply(id="t1", ok=True, payload="42")]


def test_a_task_that_settles_before_it_is_watched_is_swept_without_a_callback() -> None:
    async def main() -> tuple[int, int, list[str], list[Reply]]:
        requests = PendingRequests(INBOX)
        swept: list[str] = []

        async def work() -> Reply:
            return Reply(id="t1", ok=True, payload="1")

        requests.start("t1", "callValue", [], work())
        await asyncio.sleep(0)  # the task's one step
        loop = asyncio.get_running_loop()
        queued: Any = getattr(loop, "_ready")  # noqa: B009 - asyncio's private ready queue
        ready = len(queued)
        requests.sweep(lambda rid, _: swept.append(rid))
        return ready, requests.running, swept, requests.take([])

    ready, running, swept, replies = run(main())
    # Nothing was queued on the loop for the settled task: no done-callback was attached.
    assert (ready, running, swept) == (0, 0, ["t1"])
    assert replies == [Reply(id="t1", ok=True, payload="1")]


def test_watching_a_task_that_already_settled_reports_it_once() -> None:
    async def main() -> tuple[list[str], list[Reply]]:
        requests = PendingRequests(INBOX)
        settled: list[str] = []

        async def work() -> Reply:
            return Reply(id="t1", ok=True, payload="2")

        requests.start("t1", "callValue", [], work())
        await asyncio.sleep(0)
        requests.watch(lambda rid, _: settled.append(rid))
        requests.watch(lambda rid, _: settled.append("again " + rid))  # nothing new to watch
        for _ in range(3):
            await asyncio.sleep(0)
        return settled, requests.take([])

    settled, replies = run(main())
    assert settled == ["t1"]
    assert replies == [Reply(id="t1", ok=True, payload="2")]


def test_a_withdrawn_request_is_cancelled_and_no_longer_running() -> None:
    async def main() -> tuple[int, bool, int]:
        requests = PendingRequests(INBOX)
        never = asyncio.Event()

        async def work() -> Reply:
            await never.wait()
            raise AssertionError("unreachable")

        requests.start("t1", "callValue", [], work())
        requests.withdraw("t1")
        task = asyncio.all_tasks() - {asyncio.current_task()}
        await asyncio.gather(*task, return_exceptions=True)
        return requests.running, all(t.cancelled() for t in task), len(requests)

    assert run(main()) == (0, True, 0)


def test_a_withdrawn_request_whose_task_finished_unswept_is_no_longer_running() -> None:
    # The task finished before anything recorded it (no sweep, no done-callback yet): the
    # count of running requests must still drop, or the cell would wait for it forever.
    async def main() -> tuple[int, int]:
        requests = PendingRequests(INBOX)

        async def work() -> Reply:
            await asyncio.sleep(0)
            return Reply(id="t1", ok=True, payload="1")

        requests.start("t1", "callValue", [], work())
        task = next(iter(asyncio.all_tasks() - {asyncio.current_task()}))
        await task
        requests.withdraw("t1")
        return requests.running, len(requests)

    assert run(main()) == (0, 0)


def test_the_saved_state_keeps_ready_replies_and_leaves_running_requests_without_one() -> None:
    async def main() -> list[dict[str, Any]]:
        requests = PendingRequests(INBOX)
        never = asyncio.Event()

        async def work() -> Reply:
            await never.wait()
            raise AssertionError("unreachable")

        requests.start("t1", "callValue", ["slow"], work())
        _ready(requests, "r1", '"done"')
        requests.park_yield("y1", ["why"])
        state = requests.state()
        requests.cancel()
        return state

    assert run(main()) == [
        {"id": "t1", "method": "callValue", "args": ["slow"]},
        {"id": "r1", "method": "callValue", "args": [], "reply": {"ok": True, "payload": '"done"'}},
        {"id": "y1", "method": "yield", "args": ["why"]},
    ]


def test_a_revived_request_runs_again_only_when_replay_safe() -> None:
    requests = PendingRequests(INBOX)
    dispatched: list[tuple[str, str, list[Any]]] = []

    def dispatch(request_id: str, method: str, args: list[Any]) -> None:
        dispatched.append((request_id, method, args))

    saved = {"method": "callValue", "args": ["tool"]}
    requests.revive({"id": "safe", **saved}, replay_safe=True, run=dispatch)
    requests.revive({"id": "unsafe", **saved}, replay_safe=False, run=dispatch)
    requests.revive({"id": "y", "method": "yield", "args": []}, replay_safe=False, run=dispatch)
    reply = {"ok": True, "payload": "7"}
    requests.revive({"id": "r", **saved, "reply": reply}, replay_safe=False, run=dispatch)

    assert dispatched == [("safe", "callValue", ["tool"])]
    assert requests.has_yield
    unsafe, answered = requests.take([])
    assert (unsafe.id, unsafe.ok, answered) == (
        "unsafe",
        False,
        Reply(id="r", ok=True, payload="7"),
    )
    assert json.loads(unsafe.payload) == {"message": RESTART_MESSAGE, "code": "tool_error"}


def test_a_request_over_the_inbox_budget_is_answered_at_once_with_a_refusal() -> None:
    requests = PendingRequests(256)
    assert requests.admit("big", "callValue", json.dumps(["x" * 1024])) is None
    (refusal,) = requests.take([])
    assert (refusal.id, refusal.ok) == ("big", False)
    assert "pending-request budget exceeded" in json.loads(refusal.payload)["message"]
    assert requests.admit("small", "callValue", '["ok"]') == ["ok"]
