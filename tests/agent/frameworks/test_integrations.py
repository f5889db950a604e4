"""Code mode inside other agent frameworks, each run with the real library and no network.

Each test imports its framework itself, and the module runs on one xdist worker: pytest
imports every test module in every worker to collect it, and openai-agents, pydantic-ai and
langchain-core at the top of this module (about 1.4 s of CPU, a sixth of collecting the whole
suite) were imported by all four workers for five tests on one of them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

import clawcell
from clawcell.agent import (
    anthropic_runner_tools,
    langchain_tools,
    openai_agents_tools,
    pydantic_ai_toolset,
)
from tests.agent._helpers import shipment_tools
from tests.agent._wire import Answer, WireServer
from tests.conftest import run

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models.function import AgentInfo

pytestmark = pytest.mark.xdist_group("tests.agent.frameworks.test_integrations")

CELL = "const rows = await list_shipments(); return rows.filter((r) => !r.paid).map((r) => r.id);"


def _value(rendered: str) -> Any:
    return json.loads(rendered)["value"]


def test_pydantic_ai_agent_runs_exec_and_reads_the_envelope() -> None:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    seen: list[Any] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            assert [t.name for t in info.function_tools] == ["exec", "wait"]
            return ModelResponse(parts=[ToolCallPart(tool_name="exec", args={"code": CELL})])
        seen.append(returns[-1].content)
        return ModelResponse(parts=[TextPart(content="b-202 is unpaid")])

    async def main() -> str:
        async with clawcell.CodeMode(shipment_tools()) as mode:
            agent = PydanticAgent(FunctionModel(script), toolsets=[pydantic_ai_toolset(mode)])
            return (await agent.run("Which are unpaid?")).output

    assert run(main()) == "b-202 is unpaid"
    assert _value(seen[0]) == ["b-202"]


def test_pydantic_ai_sees_a_rejected_call_as_a_failed_tool_result() -> None:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    seen: list[Any] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart(tool_name="wait", args={"runId": "cm_x"})])
        seen.append(returns[-1])
        return ModelResponse(parts=[TextPart(content="gone")])

    async def main() -> str:
        async with clawcell.CodeMode() as mode:
            agent = PydanticAgent(FunctionModel(script), toolsets=[pydantic_ai_toolset(mode)])
            return (await agent.run("continue")).output

    assert run(main()) == "gone"
    assert "code mode run is unavailable or expired." in str(seen[0].content)


def _chat_completion(message: dict[str, Any]) -> Answer:
    return Answer(
        body={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-test",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )


def test_openai_agents_runner_calls_the_function_tools() -> None:
    import openai
    from agents import Agent as OpenAIAgent
    from agents import OpenAIChatCompletionsModel, RunConfig, Runner

    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "exec", "arguments": json.dumps({"code": CELL})},
    }
    answers = [
        _chat_completion({"role": "assistant", "content": None, "tool_calls": [call]}),
        _chat_completion({"role": "assistant", "content": "b-202 is unpaid"}),
    ]

    async def main() -> tuple[str, WireServer]:
        async with WireServer(answers) as server, clawcell.CodeMode(shipment_tools()) as mode:
            client = openai.AsyncOpenAI(api_key="k", base_url=f"{server.url}/v1", max_retries=0)
            model = OpenAIChatCompletionsModel(model="gpt-test", openai_client=client)
            agent = OpenAIAgent(name="shipping", tools=list(openai_agents_tools(mode)))
            result = await Runner.run(
                agent, "Which are unpaid?", run_config=RunConfig(model=model, tracing_disabled=True)
            )
            return str(result.final_output), server

    output, server = run(main())
    assert output == "b-202 is unpaid"
    tools = server.requests[0].body["tools"]
    assert [(t["function"]["name"], t["function"].get("strict")) for t in tools] == [
        ("exec", False),
        ("wait", True),
    ]
    tool_message = server.requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert _value(tool_message["content"]) == ["b-202"]


def _message(content: list[dict[str, Any]], stop: str) -> Answer:
    return Answer(
        body={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": content,
            "model": "claude-test",
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )


def test_anthropic_tool_runner_calls_the_tools_and_reports_rejections_as_errors() -> None:
    import anthropic

    uses = [
        {"type": "tool_use", "id": "toolu_1", "name": "exec", "input": {"code": CELL}},
        {"type": "tool_use", "id": "toolu_2", "name": "wait", "input": {"runId": "cm_x"}},
    ]
    answers = [
        _message(uses, "tool_use"),
        _message([{"type": "text", "text": "b-202 is unpaid"}], "end_turn"),
    ]

    async def main() -> tuple[str, WireServer]:
        async with WireServer(answers) as server, clawcell.CodeMode(shipment_tools()) as mode:
            client = anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0)
            runner = client.beta.messages.tool_runner(
                model="claude-test",
                max_tokens=512,
                messages=[{"role": "user", "content": "Which are unpaid?"}],
                tools=anthropic_runner_tools(mode),
            )
            final = await runner.until_done()
            return "".join(b.text for b in final.content if b.type == "text"), server

    text, server = run(main())
    assert text == "b-202 is unpaid"
    assert [t["name"] for t in server.requests[0].body["tools"]] == ["exec", "wait"]
    ok, rejected = server.requests[1].body["messages"][-1]["content"]
    assert ok["tool_use_id"] == "toolu_1"
    assert _value(_text_of(ok["content"])) == ["b-202"]
    assert rejected["is_error"] is True
    assert "code mode run is unavailable or expired." in _text_of(rejected["content"])


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def test_langchain_structured_tools_answer_tool_calls() -> None:
    from langchain_core.messages import ToolMessage

    async def main() -> tuple[Any, Any, list[str]]:
        async with clawcell.CodeMode(shipment_tools()) as mode:
            exec_tool, wait_tool = langchain_tools(mode)
            ok = await exec_tool.ainvoke(
                {"name": "exec", "args": {"code": CELL}, "id": "c1", "type": "tool_call"}
            )
            rejected = await wait_tool.ainvoke(
                {"name": "wait", "args": {"runId": "cm_x"}, "id": "c2", "type": "tool_call"}
            )
            return ok, rejected, [exec_tool.name, wait_tool.name]

    ok, rejected, names = run(main())
    assert names == ["exec", "wait"]
    assert isinstance(ok, ToolMessage)
    assert _value(str(ok.content)) == ["b-202"]
    assert isinstance(rejected, ToolMessage)
    assert rejected.content == "code mode run is unavailable or expired."
    assert rejected.status == "error"
