"""`clawcell serve`: run the Control UI with uvicorn and print its URL with the token."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import sys
import tempfile
from collections.abc import AsyncGenerator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from ..errors import ConfigurationError
from ..ui import ChatAgent, UiSettings, load_settings
from ._event_loop import run_serving
from ._serve_options import configure

if TYPE_CHECKING:
    from .. import Tool

__all__ = ["configure", "run", "serve"]


def run(args: argparse.Namespace) -> int:
    """Run `clawcell serve` until interrupted; 2 for a configuration error."""
    overrides = {"host": args.host, "port": args.port, "embed_sandbox": args.embed_sandbox}
    with tempfile.TemporaryDirectory(prefix="clawcell-demo-") as scratch:
        try:
            settings = load_settings(args.config, **overrides)
            if args.demo:
                if args.store is not None:
                    raise ConfigurationError(
                        f"--store {args.store!r} is for the agent of the [agent] table; the "
                        "--demo agent keeps its scripted sessions in memory."
                    )
                media = Path(scratch)
                settings = dataclasses.replace(settings, media_roots=(*settings.media_roots, media))
                factory = _demo_factory(media)
            else:
                factory = _agent_factory(settings, args.config, args.store)
            # Ctrl-C ends the server gracefully, then comes back as KeyboardInterrupt, which
            # the command line turns into "interrupted" and exit status 130.
            run_serving(serve(factory, settings))
        except ConfigurationError as exc:
            print(f"clawcell: {exc}", file=sys.stderr)
            return 2
    return 0


AgentFactory = Callable[[], contextlib.AbstractAsyncContextManager[ChatAgent]]


def _demo_factory(media: Path) -> AgentFactory:
    from ..ui import demo_agent

    return lambda: demo_agent(media)


def _agent_factory(settings: UiSettings, config: Path | None, store: str | None) -> AgentFactory:
    if settings.agent is None:
        return _configured_factory(config, store)
    if store is not None:
        raise ConfigurationError(
            f"--store {store!r} is for the agent of the [agent] table; the factory "
            f"{settings.agent!r} of the [ui] table makes its own store."
        )
    from ._settings import add_import_paths

    # Imported as `--tools` specs are: from the current directory and the config file's.
    add_import_paths(config.resolve().parent if config is not None else None)
    module_name, _, attribute = settings.agent.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigurationError(f"cannot load the agent {settings.agent!r}: {exc}") from exc
    return lambda: _entered(factory())


def _configured_factory(config: Path | None, store: str | None) -> AgentFactory:
    """The agent of the config file's `[agent]` table, with its tools (built-in included)."""
    from ._chat import configured_agent
    from ._runtime import store_option
    from ._settings import Settings, load_settings

    described = load_settings(config) if config is not None else None
    if described is not None and store is not None:
        described = described.merged(Settings(store=store_option(store)))
    if described is None or described.model is None:
        raise ConfigurationError(
            '`clawcell serve` needs an agent: set `agent = "module:factory"` in the [ui] '
            'table of the config file, or `model = "openai:gpt-5.1"` in its [agent] table, '
            "or pass --demo."
        )
    tools = described.build_tools()  # configuration errors before the server starts
    return lambda: _with_worker(
        described.builtin_tools,
        described.build_tools,
        cast(
            contextlib.AbstractAsyncContextManager[ChatAgent],
            configured_agent(described, tools=tools),
        ),
    )


@contextlib.asynccontextmanager
async def _with_worker(
    builtin_tools: Mapping[str, Any],
    build: Callable[[], list[Tool]],
    agent: contextlib.AbstractAsyncContextManager[ChatAgent],
) -> AsyncGenerator[ChatAgent]:
    """The agent, beside an automations worker when `[builtin_tools.automations]` asks."""
    from ..automations import embedded_worker

    async with embedded_worker(builtin_tools, build), agent as entered:
        yield entered


@contextlib.asynccontextmanager
async def _entered(agent: Any) -> AsyncGenerator[ChatAgent]:
    if hasattr(agent, "__aenter__"):
        async with agent:
            yield cast(ChatAgent, agent)
    else:
        yield cast(ChatAgent, agent)


def access_url(settings: UiSettings, port: int) -> str:
    """The URL to open, with the token: `http://127.0.0.1:8787/?token=…`."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(settings.host, settings.host)
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/?token={settings.token}"


async def serve(
    factory: AgentFactory,
    settings: UiSettings,
    *,
    out: TextIO | None = None,
) -> None:
    """Serve the UI (and its canvas host) for the agent `factory` yields until stopped."""
    from ..ui import bind_listeners, serve_ui

    out = out or sys.stdout
    sock, canvas = bind_listeners(settings)  # a taken port fails before the agent is built
    try:
        async with factory() as agent, serve_ui(agent, settings, sockets=(sock, canvas)) as ui:
            print(access_url(settings, sock.getsockname()[1]), file=out, flush=True)
            if not settings.is_loopback:
                print(
                    f"clawcell: warning: bound to {settings.host}, not loopback; anyone who "
                    "can reach it and learns the token can run your tools.",
                    file=sys.stderr,
                )
            await ui.wait()
    finally:
        sock.close()
        canvas.close()
