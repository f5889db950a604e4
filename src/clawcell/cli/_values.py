"""Option values checked when the command line is parsed, before anything is created.

Each function is an argparse `type`: a value it refuses becomes the usual one-line usage
error (exit 2) naming the option, so `clawcell mcp serve --port 99999` stops before it opens
a store, and a bad `--host` is told about the host, not the port.
"""

from __future__ import annotations

import argparse
import re
import socket

from .._session_ids import check_session_id
from ..errors import ConfigurationError

__all__ = ["TOKEN_CHARACTERS", "bind_host", "http_token", "port_number", "session_id"]

TOKEN_CHARACTERS = "ASCII letters, digits and - . _ ~ + / ="
# RFC 6750's b64token: what an HTTP client can put after `Bearer ` (and in a cookie).
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_MAX_PORT = 65535


def port_number(text: str) -> int:
    """A TCP port, 0–65535 (0 picks a free one)."""
    try:
        port = int(text, 10)
    except ValueError:
        port = -1
    if not 0 <= port <= _MAX_PORT:
        raise argparse.ArgumentTypeError(
            f"must be a TCP port 0–65535 (0 picks a free one), got {text!r}"
        )
    return port


def bind_host(text: str) -> str:
    """An address to listen on: an IP address or a name this machine resolves."""
    try:
        socket.getaddrinfo(text, None, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither an IP address nor a name that resolves ({reason}); give an "
            "address such as 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)"
        ) from exc
    return text


def http_token(text: str) -> str:
    """A bearer token an HTTP client can send: RFC 6750 characters only."""
    if not _TOKEN.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} cannot be sent by HTTP clients; use {TOKEN_CHARACTERS} "
            "(such as the output of `python -c 'import secrets; print(secrets.token_urlsafe())'`)"
        )
    return text


def session_id(text: str) -> str:
    """A session id as the store accepts it: not empty, no control characters."""
    try:
        return check_session_id(text)
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(exc.message.rstrip(".")) from exc
