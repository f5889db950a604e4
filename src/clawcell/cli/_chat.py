"""`clawcell chat`: a terminal chat with an agent, streaming text and showing each cell.

```text
clawcell chat --model openai:gpt-5.1 [--base-url URL] [--config clawcell.toml] [--tools module:attr]
              [--mcp FILE] [--limit NAME=N] [--store state.db] [--session ID]
```

`--model` is `<api>:<model>` with `<api>` one of `openai` (Chat Completions, also for
OpenAI-compatible servers with `--base-url`), `openai-responses` and `anthropic`. The API key
comes from the SDK's usual variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`); without one the
command says which to set, except with `--base-url`, where local servers need none. A
`clawcell.toml` (`--config`) may name all of it, including the built-in tools of its
`[builtin_tools]` table and the model of its `[agent]` table; options given on the command
line win. `configured_agent(settings)` builds the same agent for `clawcell serve`.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, TextIO

from .. import Tool
from .._lazy import install_hint
from ..agent import Agent, AnthropicModel, Model, OpenAIChatModel, OpenAIResponsesModel
from ..errors import ClawcellError, ConfigurationError
from ._chat_view import ChatView, terminal_safe
from ._event_loop import read_line

if TYPE_CHECKING:
    from ._settings import Settings

__all__ = ["build_model", "configure_chat", "configured_agent", "run_chat"]

_KEYS: Final = {
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
_INSTRUCTIONS: Final = (
    "You are a helpful assistant. Use the `exec` tool to run JavaScript that calls the "
    "available tools; answer briefly once you know."
)
_UNUSED_KEY: Final = "unused"  # OpenAI-compatible local servers accept any key


def configure_chat(parser: argparse.ArgumentParser) -> None:
    """Add the `chat` arguments."""
    from ._runtime import add_cell_options

    parser.add_argument(
        "--model",
        help="API and model: openai:gpt-5.1, openai-responses:gpt-5.1, anthropic:<model> "
        "(default: `model` in the [agent] table of --config)",
    )
    parser.add_argument("--base-url", help="an OpenAI-compatible (or proxy) server's base URL")
    parser.add_argument("--instructions", help="the system prompt")
    add_cell_options(
        parser,
        store_help="a SQLite file or postgresql:// URL keeping the transcript",
        default_session="chat",
    )


def run_chat(args: argparse.Namespace) -> int:
    """Run the chat until end of input; 2 for bad arguments or a missing API key."""
    from ._runtime import settings_from
    from ._settings import Settings

    try:
        given = Settings(model=args.model, base_url=args.base_url, instructions=args.instructions)
        settings = settings_from(args).merged(given)
        model = _model(settings)
        tools = settings.build_tools()
    except ClawcellError as exc:
        print(f"clawcell chat: {terminal_safe(str(exc))}", file=sys.stderr)
        return 2
    return asyncio.run(_chat(settings, model, tools, sys.stdin, sys.stdout))


def _model(settings: Settings) -> Model:
    if settings.model is None:
        raise ConfigurationError(
            "a model is needed: pass --model (such as `openai:gpt-5.1`) or set `model` in the "
            "[agent] table of the --config file."
        )
    return build_model(settings.model, base_url=settings.base_url, environ=os.environ)


@asynccontextmanager
async def configured_agent(
    settings: Settings, *, model: Model | None = None, tools: Sequence[Tool] | None = None
) -> AsyncGenerator[Agent]:
    """The `Agent` a `clawcell.toml` describes, with its store closed on exit.

    Its model is the `[agent]` table's (API key from the environment), its tools the `tools`
    modules and the `[builtin_tools]` (`clawcell.tools.from_config`; its `subagents` table
    gives the agent sub-agents), with the file's MCP servers, limits and store (in memory when
    none is named).

    Args:
        settings: What `clawcell.cli.load_settings` / `settings_from` read.
        model: Use this model instead of building the configured one.
        tools: Use these tools instead of loading the configured ones.

    Raises:
        ConfigurationError: No model is configured, its API key is missing, or a tool setting
            is wrong.
    """
    from ..tools import bind_agent
    from ._runtime import open_settings_store
    from ._subagents_config import configure_subagents

    model = model if model is not None else _model(settings)
    tools = list(tools) if tools is not None else settings.build_tools()
    async with (
        open_settings_store(settings, default=None) as store,
        Agent(
            model=model,
            tools=tools,
            store=store,
            instructions=settings.instructions or _INSTRUCTIONS,
            options=settings.options(store),
        ) as agent,
    ):
        bind_agent(tools, agent)  # `[builtin_tools] sessions` act for this agent
        configure_subagents(
            agent,
            settings.builtin_tools.get("subagents"),
            tools=tools,
            build_model=lambda spec: build_model(
                spec, base_url=settings.base_url, environ=os.environ
            ),
        )
        yield agent


def build_model(spec: str, *, base_url: str | None, environ: Mapping[str, str]) -> Model:
    """The model named by `<api>:<model>`, with a client for `base_url` when given.

    Raises:
        ConfigurationError: The spec is malformed or the API key variable is not set.
    """
    api, _, name = spec.partition(":")
    if api not in _KEYS or not name:
        raise ConfigurationError(
            f"--model takes `<api>:<model>` with <api> one of openai, openai-responses, "
            f"anthropic (such as `openai:gpt-5.1`), got {spec!r}."
        )
    key = environ.get(_KEYS[api]) or (_UNUSED_KEY if base_url else None)
    if key is None:
        raise ConfigurationError(
            f"`{spec}` needs an API key: set {_KEYS[api]} (for example "
            f"`export {_KEYS[api]}=...`), or pass --base-url for a compatible server that "
            "needs none."
        )
    if api == "anthropic":
        client = _sdk(spec, "anthropic").AsyncAnthropic(api_key=key, base_url=base_url)
        return AnthropicModel(name, client=client)
    adapter = OpenAIChatModel if api == "openai" else OpenAIResponsesModel
    return adapter(name, client=_sdk(spec, "openai").AsyncOpenAI(api_key=key, base_url=base_url))


def _sdk(spec: str, module: str) -> Any:
    """The SDK `module` the command builds the model's client with (the adapters build one
    only from the environment, and `--base-url` and the key are the command's)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigurationError(
            f"--model {spec!r} needs the `{module}` package: {install_hint(module)}."
        ) from exc


async def _chat(
    settings: Settings, model: Model, tools: list[Tool], stdin: TextIO, stdout: TextIO
) -> int:
    view = ChatView(stdout)
    session = settings.session or "chat"
    async with configured_agent(settings, model=model, tools=tools) as agent:
        view.banner(model.name, [t.name for t in tools])
        while (line := await _prompt(stdin, view)) is not None:
            if line.strip():
                await _turn(agent, session, line.strip(), view)
    return 0


async def _prompt(stdin: TextIO, view: ChatView) -> str | None:
    view.prompt()
    line = await read_line(stdin)
    return None if not line or line.strip() in ("/exit", "/quit") else line


async def _turn(agent: Agent, session_id: str, text: str, view: ChatView) -> None:
    try:
        async for event in agent.run(session_id, text):
            view.show(event)
    except ClawcellError as exc:  # a cap or the model failed: say so, keep chatting
        view.failure(exc.message)
