"""A turn over Server-Sent Events: event order, page operations, refusals and failures."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from tests.ui._client import client, post, sse
from tests.ui._fakes import Event, FakeAgent, Turn, reply_event, reply_turn


def test_a_turn_streams_the_user_message_deltas_and_the_rendered_reply() -> None:
    agent = FakeAgent([reply_turn("Hello **world**")])
    response = post(client(agent), "/api/sessions/s1/turns", {"text": "hi <b>there</b>"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    messages = sse(response.text)
    names = [name for name, _ in messages]
    assert names == [
        "user",
        "turn_started",
        "text_delta",  # the two deltas arrived together: one message
        "reply",
        "turn_finished",
        "done",
    ]
    user_html = messages[0][1]["ops"][0]["html"]
    assert "<p>hi &lt;b&gt;there&lt;/b&gt;</p>" in user_html
    first_delta = messages[2][1]["ops"]
    assert first_delta[0]["op"] == "append" and 'class="draft markdown"' in first_delta[0]["html"]
    tail = first_delta[1]["target"]
    shown = "<p>Hello <strong>world</strong></p>\n"  # the draft is Markdown already
    html = f'<div class="draft-md-tail" id="{tail}">{shown}</div>'
    assert first_delta[1] == {"op": "replace", "target": tail, "html": html}
    reply_ops = messages[3][1]["ops"]  # the rendered reply takes the draft's place
    draft = tail.removesuffix("-tail")
    assert [(op["op"], op["target"]) for op in reply_ops] == [("before", draft), ("remove", draft)]
    assert "<p>Hello <strong>world</strong></p>" in reply_ops[0]["html"]
    assert agent.received == [("s1", "hi <b>there</b>")]


def test_each_message_carries_the_agent_event_as_sent() -> None:
    messages = sse(
        post(client(FakeAgent([reply_turn("ok")])), "/api/sessions/s/turns", {"text": "x"}).text
    )
    assert messages[2][1]["event"] == {"type": "text_delta", "text": "ok"}
    assert messages[3][1]["event"]["type"] == "reply"


def _cell_turn(envelope: Mapping[str, Any] | None, error: str | None = None) -> Turn:
    async def turn(_: str) -> AsyncIterator[Event]:
        yield Event(type="cell_started", fields={"callId": "k", "tool": "exec", "code": "go()"})
        yield Event(
            type="cell_output", fields={"callId": "k", "item": {"type": "json", "value": [1]}}
        )
        yield Event(
            type="cell_finished", fields={"callId": "k", "envelope": envelope, "error": error}
        )
        yield reply_event("done")

    return turn


def _cell_ops(envelope: Mapping[str, Any] | None, error: str | None = None) -> list[str]:
    agent = FakeAgent([_cell_turn(envelope, error)])
    messages = sse(post(client(agent), "/api/sessions/s/turns", {"text": "x"}).text)
    return [op.get("html", "") for _, data in messages for op in data["ops"]]


def test_a_cell_card_shows_code_live_output_and_final_value() -> None:
    envelope = {
        "status": "completed",
        "value": {"n": 2},
        "output": [{"type": "json", "value": [1]}],
    }
    html = "\n".join(_cell_ops(envelope))
    assert '<pre class="cell-code" tabindex="0"><code>go()</code></pre>' in html
    assert '<span class="status status-running" id="cell-' in html and ">running</span>" in html
    assert '<li class="out out-json"><pre tabindex="0">[\n  1\n]</pre></li>' in html
    assert re.search(r'class="status status-completed" id="cell-\d+-1-status">done</span>', html)
    assert '<p class="protocol-status">protocol status: <code>completed</code></p>' in html
    assert '<pre tabindex="0">{\n  &#34;n&#34;: 2\n}</pre>' in html


def test_a_failed_cell_shows_its_code_and_error() -> None:
    envelope: dict[str, Any] = {
        "status": "failed",
        "code": "timeout",
        "error": "deadline <exceeded>",
        "output": [],
    }
    html = "\n".join(_cell_ops(envelope))
    assert re.search(r'class="status status-failed" id="cell-\d+-1-status">timed out</span>', html)
    assert "protocol status: <code>failed · timeout</code>" in html
    assert '<pre class="cell-error" tabindex="0">deadline &lt;exceeded&gt;</pre>' in html


def test_a_waiting_cell_says_why_and_how_it_continues() -> None:
    envelope = {
        "status": "waiting",
        "runId": "cm_1",
        "reason": "yield",
        "output": [],
        "pendingToolCalls": [{"id": "bridge:yield:1", "method": "yield"}],
    }
    html = "\n".join(_cell_ops(envelope))
    assert re.search(r'class="status status-waiting" id="cell-\d+-1-status">waiting</span>', html)
    assert "waiting (yield) on <code>yield</code>; continues when the model calls" in html
    assert '<code class="run-id">cm_1</code>' in html


def test_a_cell_that_threw_says_so_in_words_and_shows_the_error() -> None:
    envelope: dict[str, Any] = {
        "status": "failed", "code": "internal_error", "error": "Error: nope", "output": []
    }  # fmt: skip
    html = "\n".join(_cell_ops(envelope))
    assert re.search(r'id="cell-\d+-1-status">threw an error</span>', html)
    assert '<p class="cell-threw">The cell\'s code threw an error:</p>' in html
    assert '<pre class="cell-error" tabindex="0">Error: nope</pre>' in html
    assert "protocol status: <code>failed · internal_error</code>" in html


def test_a_result_without_a_status_is_outcome_unknown() -> None:
    html = "\n".join(_cell_ops({"output": []}))
    assert re.search(r'class="status status-unknown" id="cell-\d+-1-status">outcome unknown<', html)


def test_a_turns_cells_sit_in_one_disclosure_that_folds_when_the_reply_comes() -> None:
    messages = sse(
        post(client(FakeAgent([_cell_turn({"status": "completed", "output": []})])),
             "/api/sessions/s/turns", {"text": "x"}).text
    )  # fmt: skip
    ops = [op for _, data in messages for op in data["ops"]]
    group = next(op for op in ops if 'class="work"' in op.get("html", ""))
    assert group["target"] == "transcript" and '<details class="work" open' in group["html"]
    card = next(op for op in ops if 'class="cell"' in op.get("html", ""))
    assert card["target"].endswith("-cells")
    folds = [op for op in ops if op["op"] == "fold"]
    assert folds[0]["target"].startswith("cell-")  # the completed cell folds to its row
    assert re.fullmatch(r"Worked for \d+\.\d s · 1 cell", folds[-1]["text"])


def test_a_truncated_output_shows_the_marker() -> None:
    marker = {"truncated": True, "omittedBytes": 4640, "guidance": "Rerun.", "prefix": "[{"}
    html = "\n".join(_cell_ops({"status": "completed", "output": [marker]}))
    assert (
        '<strong>output truncated</strong>: 4640 bytes omitted. Rerun.<pre tabindex="0">[{</pre>'
        in html
    )


def test_a_rejected_call_without_an_envelope_shows_the_rejection() -> None:
    html = "\n".join(_cell_ops(None, "code mode run is unavailable or expired."))
    assert re.search(r'class="status status-failed" id="cell-\d+-1-status">failed</span>', html)
    assert "protocol status: <code>failed · invalid_input</code>" in html
    assert "code mode run is unavailable or expired." in html


def test_an_agent_error_event_is_shown_once_even_when_the_agent_then_raises() -> None:
    async def turn(_: str) -> AsyncIterator[Event]:
        yield Event(type="error", fields={"code": "max_model_turns", "message": "too many turns"})
        raise RuntimeError("too many turns")

    messages = sse(post(client(FakeAgent([turn])), "/api/sessions/s/turns", {"text": "x"}).text)
    errors = [
        op["html"] for _, data in messages for op in data["ops"] if "turn-error" in op["html"]
    ]
    assert errors == ['<p class="turn-error">⚠ too many turns (max_model_turns)</p>']
    assert messages[-1][0] == "done"


def test_an_agent_that_raises_ends_the_stream_with_an_error_and_the_server_stays_up() -> None:
    async def turn(_: str) -> AsyncIterator[Event]:
        raise ValueError("model exploded")
        yield Event(type="never")

    agent = FakeAgent([turn, reply_turn("fine")])
    test_client = client(agent)
    messages = sse(post(test_client, "/api/sessions/s/turns", {"text": "x"}).text)
    assert messages[-2][1]["event"] == {
        "type": "error",
        "message": "ValueError: model exploded",
        "code": "error",
    }
    assert sse(post(test_client, "/api/sessions/s/turns", {"text": "y"}).text)[-1][0] == "done"


@pytest.mark.parametrize("body", [{}, {"text": ""}, {"text": "   "}, {"text": 5}, [1], "x"])
def test_a_turn_without_text_is_refused(body: object) -> None:
    response = post(client(), "/api/sessions/s/turns", body)
    assert response.status_code == 400
    assert response.json()["error"].startswith(
        'the body must be JSON `{"text": …}` with 1–100000 characters, got '
    )


def test_a_turn_for_a_bad_session_id_is_refused() -> None:
    response = post(client(), "/api/sessions/a%0Ab/turns", {"text": "x"})
    assert response.status_code == 400
    assert response.json() == {
        "error": "session id 'a\\nb' is not allowed: it holds the control character '\\n'."
    }


def test_unknown_event_types_are_passed_through_without_ops() -> None:
    async def turn(_: str) -> AsyncIterator[Event]:
        yield Event(type="tool_progress", fields={"tool": "rm"})

    messages = sse(post(client(FakeAgent([turn])), "/api/sessions/s/turns", {"text": "x"}).text)
    assert messages[1] == (
        "tool_progress",
        {"event": {"type": "tool_progress", "tool": "rm"}, "ops": []},
    )


def test_text_before_a_cell_stays_rendered_and_the_final_draft_gives_way_to_the_reply() -> None:
    async def turn(_: str) -> AsyncIterator[Event]:
        yield Event(type="text_delta", fields={"text": "Let me *check*."})
        yield Event(type="cell_started", fields={"callId": "k", "code": "1"})
        yield Event(type="text_delta", fields={"text": "All good."})
        yield reply_event("All good.")

    messages = sse(post(client(FakeAgent([turn])), "/api/sessions/s/turns", {"text": "x"}).text)
    ops = [op for _, data in messages for op in data["ops"]]
    drafts = [
        re.match(r'<div class="draft markdown" id="(turn-\d+-draft-\d)">', op["html"])
        for op in ops
        if op["op"] == "append" and 'class="draft markdown"' in op["html"]
    ]
    first, second = (match.group(1) for match in drafts if match is not None)
    assert first.endswith("-draft-1") and second.endswith("-draft-2")
    placed = {op["target"]: op["html"] for op in ops if op["op"] == "before"}
    assert "<p>Let me <em>check</em>.</p>" in placed[first]
    assert "<p>All good.</p>" in placed[second]
    assert {op["target"] for op in ops if op["op"] == "remove"} == {first, second}


def test_a_silent_reply_renders_nothing_and_removes_its_draft() -> None:
    messages = sse(post(client(FakeAgent([reply_turn("NO_REPLY")])), "/api/sessions/s/turns",
                        {"text": "x"}).text)  # fmt: skip
    reply_ops = next(data["ops"] for name, data in messages if name == "reply")
    assert len(reply_ops) == 1 and reply_ops[0]["op"] == "remove"
