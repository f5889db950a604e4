"""`[builtin_tools.subagents]`: the agent of `clawcell chat` and `clawcell serve` gets sub-agents
from its `clawcell.toml`; a wrong table is refused with its place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawcell.agent import CellFinished, ScriptedModel, exec_call
from clawcell.cli import configured_agent, load_settings
from clawcell.errors import ConfigurationError
from tests.conftest import run

PARENT_CELL = """
const listed = await agents_list();
const h = await sessions_spawn({profile: "reader", task: "read the note"});
const done = await agents_wait({runIds: [h.runId]});
return {profiles: listed.profiles, maxChildren: listed.maxChildren, reply: done.runs[0].reply};
"""
CHILD_CELL = "return (await read({ path: 'note.txt' })).text;"

PROFILE = """
[builtin_tools.subagents]
max_children = 2

[builtin_tools.subagents.profiles.reader]
description = "Reads notes."
instructions = "Quote the note."
tools = ["read"]
max_model_turns = 4
limits = { timeoutMs = 20000 }
"""


def _config(tmp_path: Path, subagents: str) -> Path:
    (tmp_path / "notes").mkdir(exist_ok=True)
    (tmp_path / "notes" / "note.txt").write_text("hi from the workspace\n", "utf-8")
    config = tmp_path / "clawcell.toml"
    config.write_text(f'[builtin_tools.workspace]\nroot = "notes"\nread_only = true\n{subagents}')
    return config


def test_the_configured_agent_spawns_a_configured_sub_agent_with_its_tools(
    tmp_path: Path,
) -> None:
    # One scripted model serves parent and child (a profile without `model` uses the
    # agent's): the parent's cell, then the child's two turns, then the parent's reply.
    def child_reply(request: Any) -> str:
        return "The note: " + request.messages[-1]["content"][0]["text"]

    model = ScriptedModel([exec_call(PARENT_CELL), exec_call(CHILD_CELL), child_reply, "done"])
    settings = load_settings(_config(tmp_path, PROFILE))

    async def main() -> Any:
        async with configured_agent(settings, model=model) as agent:
            events = [e async for e in agent.run("chat", "read it via a helper")]
        (finished,) = [e for e in events if isinstance(e, CellFinished)]
        assert finished.envelope is not None
        return finished.envelope["value"]

    value = run(main())
    assert value["profiles"] == [
        {"name": "reader", "description": "Reads notes.", "model": "scripted", "tools": ["read"]}
    ]
    assert value["maxChildren"] == 2
    assert "hi from the workspace" in value["reply"]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            "[builtin_tools.subagents]\nmax_depth = 1\n",
            "[builtin_tools.subagents] names no profile: add a "
            "`[builtin_tools.subagents.profiles.<name>]` table with at least a `description`.",
        ),
        (
            "[builtin_tools.subagents]\nmax_kids = 1\n",
            "[builtin_tools.subagents]: unknown key 'max_kids'; the keys are "
            "keep_finished_runs, max_children, max_depth, profiles.",
        ),
        (
            '[builtin_tools.subagents.profiles.r]\ntools = ["shell"]\n',
            "[builtin_tools.subagents] profiles.r: the agent has no tool 'shell'; a profile's "
            "`tools` name the agent's own tools: ['find', 'grep', 'list', 'read'].",
        ),
        (
            '[builtin_tools.subagents.profiles.r]\nprompt = "x"\n',
            "[builtin_tools.subagents] profiles.r: unknown key 'prompt'; the keys are "
            "description, instructions, limits, max_model_turns, max_turn_seconds, model, tools.",
        ),
        (
            "[builtin_tools.subagents]\nmax_depth = 9\n[builtin_tools.subagents.profiles.r]\n",
            "`max_depth` must be an integer from 1 to 5, got 9.",
        ),
        (
            "[builtin_tools.subagents]\nkeep_finished_runs = 0\n"
            "[builtin_tools.subagents.profiles.r]\n",
            "`keep_finished_runs` must be an integer from 1 to 100000, got 0.",
        ),
    ],
    ids=["no-profile", "unknown-key", "unknown-tool", "unknown-profile-key", "depth", "keep"],
)
def test_a_wrong_subagents_table_is_refused_with_its_place(
    tmp_path: Path, table: str, message: str
) -> None:
    settings = load_settings(_config(tmp_path, table))

    async def main() -> None:
        async with configured_agent(settings, model=ScriptedModel([])):
            pass

    with pytest.raises(ConfigurationError) as caught:
        run(main())
    assert caught.value.message == message


def test_the_tools_table_leaves_subagents_to_the_agent(tmp_path: Path) -> None:
    settings = load_settings(_config(tmp_path, PROFILE))
    assert [t.name for t in settings.build_tools()] == ["read", "list", "grep", "find"]


def test_a_profile_model_is_built_like_the_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    table = '[builtin_tools.subagents.profiles.r]\nmodel = "openai:gpt-x"\n'
    settings = load_settings(_config(tmp_path, table))

    async def main() -> None:
        async with configured_agent(settings, model=ScriptedModel([])):
            pass

    with pytest.raises(ConfigurationError, match=r"`openai:gpt-x` needs an API key: set OPENAI"):
        run(main())
