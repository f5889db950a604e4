"""`clawcell mcp serve`: code mode for any MCP client, over stdio (default) or HTTP."""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import sys
from typing import cast

from ..errors import ConfigurationError
from ._event_loop import run_serving
from ._runtime import add_cell_options, open_mode, settings_from
from ._settings import Settings, state_directory
from ._values import TOKEN_CHARACTERS, bind_host, http_token, port_number

__all__ = ["TOKEN_VARIABLE", "configure_mcp", "run_mcp"]

TOKEN_VARIABLE = "CLAWCELL_MCP_TOKEN"


def configure_mcp(parser: argparse.ArgumentParser) -> None:
    """Arguments of `clawcell mcp` (one subcommand: `serve`)."""
    actions = parser.add_subparsers(dest="mcp_command", required=True, metavar="ACTION")
    serve = actions.add_parser(
        "serve",
        help="serve exec and wait to an MCP client",
        description="Serve code mode (the tools exec and wait) to an MCP client.",
    )
    serve.add_argument(
        "--http", action="store_true", help="streamable HTTP instead of stdin/stdout"
    )
    serve.add_argument(
        "--host", type=bind_host, default="127.0.0.1", help="HTTP address (default: 127.0.0.1)"
    )
    serve.add_argument(
        "--port", type=port_number, default=8765, help="HTTP port (default: 8765; 0: any)"
    )
    serve.add_argument(
        "--token",
        type=http_token,
        help=f"the bearer token HTTP clients must send (default: ${TOKEN_VARIABLE})",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="another Host header to accept (for a proxy)",
    )
    add_cell_options(
        serve,
        store_help="the SQLite file for store values and parked cells "
        f"(default: {state_directory() / 'mcp.db'}; `:memory:` for none)",
    )


def run_mcp(args: argparse.Namespace) -> int:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="clawcell: %(message)s")
    settings = settings_from(args)
    run_serving(_serve(settings, args))
    return 0


async def _serve(settings: Settings, args: argparse.Namespace) -> None:
    from ..automations import embedded_worker
    from ..mcp_server import ApprovalPolicy, CodeModeServer, serve_http

    token = _token(args) if args.http else ""
    async with (
        open_mode(
            settings, default_store=state_directory() / "mcp.db", command="mcp serve"
        ) as mode,
        embedded_worker(settings.builtin_tools, settings.build_tools),
    ):
        server = CodeModeServer(mode, approvals=cast(ApprovalPolicy, settings.approvals))
        if not args.http:
            await server.serve_stdio()
            return
        await serve_http(
            server,
            token=token,
            host=args.host,
            port=args.port,
            allow_hosts=args.allow_host,
            on_ready=lambda url: print(
                f"clawcell: MCP endpoint {url}", file=sys.stderr, flush=True
            ),
        )


def _token(args: argparse.Namespace) -> str:
    token = args.token or os.environ.get(TOKEN_VARIABLE)
    if token == "":
        raise ConfigurationError(f"`--token` / ${TOKEN_VARIABLE} must not be empty.")
    if token is not None and not _sendable(token):
        raise ConfigurationError(
            f"${TOKEN_VARIABLE} {token!r} cannot be sent by HTTP clients; use {TOKEN_CHARACTERS}."
        )
    if token is None:
        token = secrets.token_urlsafe(32)
        print(
            f"clawcell: no --token or ${TOKEN_VARIABLE} given; clients must send "
            f"`Authorization: Bearer {token}`",
            file=sys.stderr,
            flush=True,
        )
    return token


def _sendable(token: str) -> bool:
    try:
        http_token(token)
    except argparse.ArgumentTypeError:
        return False
    return True
