"""`clawcell chat`: a terminal chat with an agent, streaming text and showing each cell.

```text
clawcell chat --model openai:gpt-5.1 [--base-url URL] [--tools module:attr] [--store state.db]
```

`--model` is `<api>:<model>` with `<api>` one of `openai` (Chat Completions, also for
OpenAI-compatible servers with `--base-url`), `openai-responses` and `anthropic`. The API key
comes from the SDK's usual variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`); without one the
command says which to set, except with `--base-url`, where local servers need none.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final, TextIO

from .. import SQLiteStore, Tool
from ..errors import ClawcellError, ConfigurationError
from ._agent import Agent
from ._anthropic import AnthropicModel, anthropic_sdk
from ._chat_view import ChatView
from ._model import Model
from ._openai_chat import OpenAIChatModel, openai_sdk
from ._openai_responses import OpenAIResponsesModel

__all__ = ["build_model", "configure_chat", "run_chat"]

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
    parser.add_argument(
        "--model",
        required=True,
        help="API and model: openai:gpt-5.1, openai-responses:gpt-5.1, anthropic:<model>",
    )
    parser.add_argument("--base-url", help="an OpenAI-compatible (or proxy) server's base URL")
    parser.add_argument("--tools", action="append", default=[], help="module:attribute of tools")
    parser.add_argument("--instructions", default=_INSTRUCTIONS, help="the system prompt")
    parser.add_argument("--session", default="chat", help="the session id (default: chat)")
    parser.add_argument("--store", type=Path, help="a SQLite file keeping the transcript")


def run_chat(args: argparse.Namespace) -> int:
    """Run the chat until end of input; 2 for bad arguments or a missing API key."""
    try:
        model = build_model(args.model, base_url=args.base_url, environ=os.environ)
        from ..cli import load_tools  # deferred: the CLI helpers are not needed to import agents

        tools = load_tools(args.tools)
    except ClawcellError as exc:
        print(f"clawcell chat: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(_chat(model, tools, args, sys.stdin, sys.stdout))


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
        client = anthropic_sdk().AsyncAnthropic(api_key=key, base_url=base_url)
        return AnthropicModel(name, client=client)
    adapter = OpenAIChatModel if api == "openai" else OpenAIResponsesModel
    return adapter(
        name, client=openai_sdk(adapter.__name__).AsyncOpenAI(api_key=key, base_url=base_url)
    )


async def _chat(
    model: Model, tools: list[Tool], args: argparse.Namespace, stdin: TextIO, stdout: TextIO
) -> int:
    store = SQLiteStore(args.store) if args.store is not None else None
    view = ChatView(stdout)
    try:
        async with Agent(
            model=model, tools=tools, store=store, instructions=args.instructions
        ) as agent:
            view.banner(model.name, [t.name for t in tools])
            while (line := await asyncio.to_thread(_prompt, stdin, view)) is not None:
                if line.strip():
                    await _turn(agent, args.session, line.strip(), view)
    finally:
        if store is not None:
            await store.close()
    return 0


def _prompt(stdin: TextIO, view: ChatView) -> str | None:
    view.prompt()
    line = stdin.readline()
    return None if not line or line.strip() in ("/exit", "/quit") else line


async def _turn(agent: Agent, session_id: str, text: str, view: ChatView) -> None:
    try:
        async for event in agent.run(session_id, text):
            view.show(event)
    except ClawcellError as exc:  # a cap or the model failed: say so, keep chatting
        view.failure(exc.message)
