"""`UiSettings`: how `clawcell serve` binds, authenticates and renders embeds and media.

Read from the `[ui]` table of `clawcell.toml` with the Control UI's camelCase names
(`embedSandbox`, `allowExternalEmbedUrls`, `mediaRoots`) or built directly in Python.
Defaults are the spec's: `embedSandbox = "scripts"`, external embed URLs blocked. Every string
of the table may name an environment variable as `${env:NAME}` (the `token` should), and an
unset variable is refused: a secret never silently becomes the placeholder's text.
"""

from __future__ import annotations

import ipaddress
import secrets
import tomllib
import urllib.parse
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Final, Literal, cast

from .._lazy import value_class
from ..errors import ConfigurationError
from ..mcp import expand_env

__all__ = ["EmbedSandbox", "UiSettings", "load_settings"]

EmbedSandbox = Literal["strict", "scripts", "trusted"]

_SANDBOXES: Final = ("strict", "scripts", "trusted")
_KEYS: Final = {
    "host": "host",
    "port": "port",
    "canvasPort": "canvas_port",
    "canvasOrigin": "canvas_origin",
    "token": "token",
    "embedSandbox": "embed_sandbox",
    "allowExternalEmbedUrls": "allow_external_embed_urls",
    "mediaRoots": "media_roots",
    "allowedHosts": "allowed_hosts",
    "agent": "agent",
    "maxAttachmentBytes": "max_attachment_bytes",
    "maxAttachments": "max_attachments",
    "maxMessageAttachmentBytes": "max_message_attachment_bytes",
}
_COUNTS: Final = ("max_attachment_bytes", "max_attachments", "max_message_attachment_bytes")


def _new_token() -> str:
    return secrets.token_urlsafe(24)


@value_class
class UiSettings:
    """Settings of the web Control UI.

    Attributes:
        host: The address to bind; loopback (`127.0.0.1`) by default.
        port: The TCP port; `0` picks a free one.
        canvas_port: The TCP port of the canvas host, the second listener that serves
            hosted canvas documents from their own origin; `0` picks a free one at start.
        canvas_origin: The canvas host's public origin (`https://canvas.example.com`) when
            a reverse proxy serves it, the same for every worker; pages frame canvases
            from it and admit it in their CSP. Without it, `http://<page's host>:<canvas
            port>`.
        token: The access token every request must carry (`?token=` once, then a cookie);
            a fresh random one when omitted.
        embed_sandbox: The iframe sandbox tier for canvases (`strict`, `scripts`, `trusted`).
        allow_external_embed_urls: Whether absolute `http(s)` embed URLs may render
            (dangerous; prefer hosted canvases).
        media_roots: Directories local media may be served from; empty serves none.
        allowed_hosts: Extra `Host` header names accepted besides the bind address,
            `localhost` and `127.0.0.1` (for a reverse proxy).
        agent: `module:attribute` of a callable returning the agent to serve (the config
            file's way to name it); unused by `create_app`.
        max_attachment_bytes: The largest file the composer may attach (5 MiB: the
            largest image every model API takes); `0` turns attachments off.
        max_attachments: How many files one message may carry (4).
        max_message_attachment_bytes: The most bytes the files of one message may hold
            together (10 MiB). They are stored in the transcript, so every later model
            call of the session sends them again.
    """

    host: str = "127.0.0.1"
    port: int = 8787
    canvas_port: int = 0
    canvas_origin: str | None = None
    token: str = field(default_factory=_new_token)
    embed_sandbox: EmbedSandbox = "scripts"
    allow_external_embed_urls: bool = False
    media_roots: tuple[Path, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    agent: str | None = None
    max_attachment_bytes: int = 5 * 1024 * 1024
    max_attachments: int = 4
    max_message_attachment_bytes: int = 10 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.embed_sandbox not in _SANDBOXES:
            raise ConfigurationError(
                f"`embedSandbox` must be one of 'strict', 'scripts' or 'trusted', "
                f"got {self.embed_sandbox!r}."
            )
        for name, port in (("port", self.port), ("canvasPort", self.canvas_port)):
            if isinstance(cast(object, port), bool) or not 0 <= port <= 65535:
                raise ConfigurationError(f"`{name}` must be an integer 0–65535, got {port!r}.")
        for name in _COUNTS:
            count = getattr(self, name)
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ConfigurationError(f"`{name}` must be a whole number ≥ 0, got {count!r}.")
        if self.canvas_origin is not None:
            _check_origin(self.canvas_origin)
        if len(self.token) < 16:
            raise ConfigurationError(
                f"`token` must be at least 16 characters, got {len(self.token)}; "
                "omit it to get a random one."
            )

    @property
    def is_loopback(self) -> bool:
        """Whether the bind address is a loopback address (or `localhost`)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> UiSettings:
        """Build settings from a `[ui]` table (camelCase or snake_case keys).

        Raises:
            ConfigurationError: for an unknown key or a value of the wrong type.
        """
        values: dict[str, Any] = {}
        for key, value in config.items():
            name = _KEYS.get(key, key if key in _KEYS.values() else None)
            if name is None:
                known = ", ".join(sorted(_KEYS))
                raise ConfigurationError(f"unknown `[ui]` setting {key!r}; known: {known}.")
            values[name] = _coerce(name, value)
        return cls(**values)


def _check_origin(origin: str) -> None:
    parsed = urllib.parse.urlsplit(origin)
    try:
        _ = parsed.port
    except ValueError:
        parsed = parsed._replace(netloc="")
    if (
        parsed.scheme not in ("http", "https")
        or not parsed.hostname
        or origin != (f"{parsed.scheme}://{parsed.netloc}")
    ):
        raise ConfigurationError(
            f"`canvasOrigin` must be an origin such as 'https://canvas.example.com' (scheme, "
            f"host and optional port, no path or trailing slash), got {origin!r}."
        )


def _coerce(name: str, value: object) -> object:
    where = f"`[ui]` setting `{name}`"
    if isinstance(value, str):
        value = expand_env(value, where=where)
    if name in ("media_roots", "allowed_hosts"):
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, str) for v in cast(list[object], value)
        ):
            raise ConfigurationError(f"`{name}` must be a list of strings, got {value!r}.")
        items = [expand_env(v, where=where) for v in cast(list[str], value)]
        return tuple(Path(v).expanduser() for v in items) if name == "media_roots" else tuple(items)
    expected = {"port": int, "canvas_port": int, "allow_external_embed_urls": bool,
                **dict.fromkeys(_COUNTS, int)}.get(name, str)  # fmt: skip
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise ConfigurationError(f"`{name}` must be of type {expected.__name__}, got {value!r}.")
    return value


def load_settings(path: Path | None, **overrides: Any) -> UiSettings:
    """Settings from the `[ui]` table of a TOML file (if given), then `overrides`.

    Raises:
        ConfigurationError: when the file cannot be read or parsed, or a setting is wrong.
    """
    table: dict[str, Any] = {}
    if path is not None:
        try:
            document = tomllib.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigurationError(f"cannot read the config file {str(path)!r}: {exc}") from exc
        ui = document.get("ui", {})
        if not isinstance(ui, dict):
            raise ConfigurationError(f"`[ui]` in {str(path)!r} must be a table, got {ui!r}.")
        table = cast(dict[str, Any], ui)
    settings = UiSettings.from_config(table)
    given = {k: v for k, v in overrides.items() if v is not None}
    return UiSettings(**{**_as_kwargs(settings), **given}) if given else settings


def _as_kwargs(settings: UiSettings) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in _KEYS.values()}
