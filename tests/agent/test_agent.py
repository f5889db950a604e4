"""The agent loop through `Agent.run`, driven by `ScriptedModel`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import clawcell
from clawcell.agent import (
    Agent,
    CellFinished,
    CellOutput,
    ModelRequest,
    ModelResponse,
    ReplyEvent,
    ScriptedModel,
    TextDelta,
    ToolCall,
    TurnFinished,
    exec_call,
    wait_call,
)
from clawcell.catalog import ToolCallEvent
from clawcell.mcp import StdioServer
from tests.agent._helpers import collect, last_of, shipment_tools, types
from tests.conftest import run

CELL = (
    "text('looking');\n"
    "const rows = await list_shipments();\n"
    "await chart();\n"
    "return rows.filter((r) => !r.paid).map((r) => r.id);"
)
FINAL = 'b-202 is unpaid.\n[embed ref="cv_unpaid" title="Unpaid" /]'


def _agent(model: ScriptedModel, **options: Any) -> Agent:
    return Agent(model=model, tools=shipment_tools(), **options)


def test_a_turn_runs_a_cell_and_ends_with_a_reply_carrying_tool_media_and_the_embed() -> None:
    async def main() -> list[Any]:
        async with _agent(ScriptedModel([exec_call(CELL, title="Unpaid"), FINAL])) as agent:
            return await collect(agent, "chat-1", "Which shipments are unpaid?")

    events = run(main())
    assert types(events) == [
        "turn_started",
        "cell_started",
        "cell_output",
        "cell_finished",
        *["text_delta"] * 7,
        "reply",
        "turn_finished",
    ]
    assert events[1].to_dict()["code"] == CELL
    assert events[1].to_dict()["title"] == "Unpaid"
    assert events[2].to_dict()["item"] == {"type": "text", "text": "looking"}
    finished = last_of(events, CellFinished)
    assert finished.envelope["value"] == ["b-202"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == FINAL
    reply = last_of(events, ReplyEvent)
    assert reply.payloads[0]["text"] == "b-202 is unpaid."
    assert reply.payloads[0]["mediaUrls"] == ["https://example.com/chart.png"]
    assert [block["type"] for block in reply.content] == ["text", "canvas"]
    assert reply.content[1]["preview"]["viewId"] == "cv_unpaid"
    usage = last_of(events, TurnFinished).usage
    assert (usage.model_turns, usage.cells, usage.tool_calls) == (2, 1, 2)


def test_cell_output_is_delivered_before_the_cell_ends() -> None:
    release = asyncio.Event()
    seen: list[str] = []

    async def gate(_: dict[str, Any]) -> str:
        await release.wait()
        return "open"

    async def main() -> None:
        model = ScriptedModel([exec_call("text('before'); return await gate();"), "ok"])
        tools = [clawcell.Tool(name="gate", execute=gate)]
        async with Agent(model=model, tools=tools) as agent:
            async for event in agent.run("s", "go"):
                seen.append(event.type)
                if isinstance(event, CellOutput):
                    # The cell is still blocked on `gate`: the output came while it ran.
                    assert "cell_finished" not in seen
                    release.set()

    run(main())
    assert seen.index("cell_output") < seen.index("cell_finished")


def test_the_transcript_holds_the_user_message_the_tool_call_its_result_and_the_reply() -> None:
    async def main() -> list[dict[str, Any]]:
        async with _agent(ScriptedModel([exec_call(CELL), FINAL])) as agent:
            await collect(agent, "chat-1", "Which shipments are unpaid?")
            return await agent.transcript("chat-1")

    user, assistant, result, final = run(main())
    assert user["role"] == "user"
    assert user["content"] == [{"type": "text", "text": "Which shipments are unpaid?"}]
    assert assistant["content"] == [
        {"type": "toolCall", "id": "call_1", "name": "exec", "arguments": {"code": CELL}}
    ]
    assert (result["role"], result["toolCallId"], result["isError"]) == (
        "toolResult",
        "call_1",
        False,
    )
    assert json.loads(result["content"][0]["text"])["value"] == ["b-202"]
    assert [block["type"] for block in final["content"]] == ["text", "canvas"]


def test_the_next_model_call_sees_the_rendered_envelope_and_the_next_turn_the_whole_history() -> (
    None
):
    model = ScriptedModel([exec_call("return 41 + 1"), "42", "again"])

    async def main() -> None:
        async with _agent(model) as agent:
            await collect(agent, "s", "first")
            await collect(agent, "s", "second")

    run(main())
    second = model.requests[1].messages
    assert second[-1]["content"][0]["text"].startswith('{"status":"completed"')
    third = model.requests[2].messages
    assert [m["role"] for m in third] == ["user", "assistant", "toolResult", "assistant", "user"]
    assert [t["name"] for t in model.requests[0].tools] == ["exec", "wait"]


def test_a_call_rejected_outright_goes_back_to_the_model_as_an_error_result() -> None:
    model = ScriptedModel([wait_call("cm_nope"), "sorry"])

    async def main() -> list[Any]:
        async with _agent(model) as agent:
            return await collect(agent, "s", "continue")

    events = run(main())
    finished = last_of(events, CellFinished)
    assert (finished.envelope, finished.error) == (None, "code mode run is unavailable or expired.")
    assert events[1].to_dict()["runId"] == "cm_nope"
    result = model.requests[1].messages[-1]
    assert result["isError"] is True
    assert result["content"] == [
        {"type": "text", "text": "code mode run is unavailable or expired."}
    ]
    assert types(events)[-2:] == ["reply", "turn_finished"]


def test_an_unknown_tool_name_is_an_error_result_naming_the_real_tools() -> None:
    model = ScriptedModel([ToolCall(id="t1", name="python", arguments={"code": "1"}), "ok"])

    async def main() -> None:
        async with _agent(model) as agent:
            await collect(agent, "s", "go")

    run(main())
    assert model.requests[1].messages[-1]["content"][0]["text"] == (
        "unknown Code Mode tool 'python'; the tools are `exec` and `wait`."
    )


def test_a_failed_cell_is_an_error_result_and_the_turn_goes_on() -> None:
    model = ScriptedModel([exec_call("throw new Error('boom')"), "it failed"])

    async def main() -> list[Any]:
        async with _agent(model) as agent:
            return await collect(agent, "s", "go")

    events = run(main())
    assert last_of(events, CellFinished).envelope["status"] == "failed"
    assert model.requests[1].messages[-1]["isError"] is True
    assert last_of(events, ReplyEvent).payloads[0]["text"] == "it failed"


def test_a_waiting_cell_is_continued_with_the_run_id_the_model_read() -> None:
    def continue_it(request: ModelRequest) -> ToolCall:
        envelope = json.loads(request.messages[-1]["content"][0]["text"])
        return wait_call(envelope["runId"])

    model = ScriptedModel(
        [exec_call("const r = await yield_control('later'); return r.status;"), continue_it, "done"]
    )

    async def main() -> list[Any]:
        async with _agent(model) as agent:
            return await collect(agent, "s", "go")

    events = run(main())
    envelopes = [e.envelope or {} for e in events if isinstance(e, CellFinished)]
    assert [e["status"] for e in envelopes] == ["waiting", "completed"]
    assert envelopes[1]["value"] == "yielded"


def test_several_tool_calls_of_one_model_turn_are_answered_in_order() -> None:
    both = ModelResponse(
        text="Two cells.",
        tool_calls=(exec_call("return 1", id="a"), exec_call("return 2", id="b")),
        input_tokens=10,
        output_tokens=3,
    )
    model = ScriptedModel([both, ModelResponse(text="3", input_tokens=20, output_tokens=1)])

    async def main() -> list[Any]:
        async with _agent(model) as agent:
            return await collect(agent, "s", "go")

    events = run(main())
    assert [(e.envelope or {})["value"] for e in events if isinstance(e, CellFinished)] == [1, 2]
    results = model.requests[1].messages[-2:]
    assert [r["toolCallId"] for r in results] == ["a", "b"]
    usage = last_of(events, TurnFinished).usage
    assert (usage.input_tokens, usage.output_tokens, usage.cells) == (30, 4, 2)
    assert model.requests[1].messages[1]["usage"] == {"input": 10, "output": 3}


def test_sessions_have_their_own_code_mode_and_store_entries() -> None:
    model = ScriptedModel(
        [exec_call("await store('k', 'from a'); return 1"), "a", exec_call("return load('k')"), "b"]
    )

    async def main() -> list[Any]:
        async with _agent(model) as agent:
            assert agent.mode("a") is agent.mode("a")
            assert agent.mode("a") is not agent.mode("b")
            await collect(agent, "a", "store it")
            return await collect(agent, "b", "load it")

    events = run(main())
    assert last_of(events, CellFinished).envelope["value"] is None


def test_turns_of_one_session_run_one_after_the_other() -> None:
    model = ScriptedModel(["one", "two"])

    async def main() -> None:
        async with _agent(model) as agent:
            await asyncio.gather(collect(agent, "s", "first"), collect(agent, "s", "second"))

    run(main())
    # The second turn's model call saw the whole first turn.
    assert [m["role"] for m in model.requests[1].messages] == ["user", "assistant", "user"]


def test_history_and_sessions_work_from_a_new_agent_over_the_same_database(
    tmp_path: Path,
) -> None:
    db = tmp_path / "state.db"

    async def first() -> None:
        store = clawcell.SQLiteStore(db)
        async with _agent(ScriptedModel([exec_call(CELL), FINAL]), store=store) as agent:
            await collect(agent, "chat-42", "Which shipments are unpaid?")
        await store.close()

    async def second() -> tuple[list[Any], list[Any]]:
        store = clawcell.SQLiteStore(db)
        async with _agent(ScriptedModel([]), store=store) as agent:
            result = await agent.history("chat-42"), await agent.sessions()
        await store.close()
        return result

    run(first())
    history, sessions = run(second())
    assert [m["role"] for m in history] == ["user", "assistant", "toolResult", "assistant"]
    assert history[-1]["content"][0]["text"] == FINAL  # embeds are the Control UI's to render
    assert history[-1]["content"][1]["preview"]["viewId"] == "cv_unpaid"
    assert [(s.session_id, s.entries) for s in sessions] == [("chat-42", 4)]


def test_history_hides_silent_replies_and_strips_directive_tags() -> None:
    model = ScriptedModel(["[[reply_to_current]] Hello.", "NO_REPLY"])

    async def main() -> list[Any]:
        async with _agent(model) as agent:
            await collect(agent, "s", "hi")
            await collect(agent, "s", "ok")
            return await agent.history("s")

    history = run(main())
    assert [(m["role"], m["content"][0]["text"].strip()) for m in history] == [
        ("user", "hi"),
        ("assistant", "Hello."),
        ("user", "ok"),
    ]


def test_a_closed_agent_refuses_work_and_closing_twice_is_fine() -> None:
    async def main() -> None:
        agent = _agent(ScriptedModel([]))
        mode = agent.mode("s")
        await agent.aclose()
        await agent.aclose()
        with pytest.raises(clawcell.ClosedError, match="this Agent is closed"):
            agent.mode("s")
        with pytest.raises(clawcell.ClosedError):
            await agent.history("s")
        with pytest.raises(clawcell.ClosedError, match="this CodeMode is closed"):
            await mode.exec("return 1")

    run(main())


def test_the_reply_to_current_tag_uses_the_message_id() -> None:
    async def main() -> list[Any]:
        async with _agent(ScriptedModel(["[[reply_to_current]] Yes."])) as agent:
            return [e async for e in agent.run("s", "ok?", message_id="msg-7")]

    reply = last_of(run(main()), ReplyEvent)
    assert reply.payloads[0]["replyToId"] == "msg-7"


def test_mcp_servers_and_hooks_reach_every_session_code_mode() -> None:
    from tests.mcp._helpers import BIN

    seen: list[str] = []

    def before(event: ToolCallEvent) -> None:
        seen.append(event.tool_name)

    server = StdioServer(command=str(BIN / "mcp-server-time"), args=["--local-timezone", "UTC"])
    code = (
        "const r = await MCP.time.convertTime({ source_timezone: 'UTC', time: '12:00', "
        "target_timezone: 'Asia/Tokyo' }); await list_shipments(); "
        "return r.structuredContent.target.datetime.slice(11, 16);"
    )
    model = ScriptedModel([exec_call(code), "21:00 in Tokyo"])

    async def main() -> list[Any]:
        agent = _agent(
            model,
            mcp_servers={"time": server},
            before_tool_call=[before],
            limits=clawcell.Limits(timeout_ms=30_000),
        )
        async with agent:
            return await collect(agent, "s", "noon UTC in Tokyo?")

    events = run(main())
    assert (last_of(events, CellFinished).envelope or {})["value"] == "21:00"
    assert seen == ["list_shipments"]
