"""The UI's front door: Host validation, the access token, CSRF checks and default headers.

Threat model: the server runs on a developer's machine and can run tools, so every request must
prove it comes from someone holding the token `clawcell serve` printed. Attacks considered:

* **Another local user or a web page guessing URLs**: every route needs the token (`?token=`
  once, exchanged for an HttpOnly, SameSite=Strict cookie; or `Authorization: Bearer`).
* **DNS rebinding** (a hostile name resolving to 127.0.0.1): the `Host` header must name the
  bind address, `localhost`, a loopback literal or a configured `allowedHosts` entry.
* **CSRF** (a hostile page posting to the server with the cookie attached): state-changing
  requests need the per-server CSRF token from the page's `<meta>` in `X-CSRF-Token`, and a
  cross-site `Origin` / `Sec-Fetch-Site` is refused.
* **Canvas documents acting as the user**: documents are never served by this app but by the
  canvas host, a listener on its own port (`_canvas_host.py`), so in every tier they run in
  another origin. Their requests to this app are refused: a POST's `Origin` must be this
  app's own origin (host and port), and `Sec-Fetch-Site` must be `same-origin` (or `none`)
  for every POST and for every API and media GET.

Limits: a process of the same user can read the token from the terminal or the process list
(as with a notebook server); there is no TLS, so bind beyond loopback only behind a proxy.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import urllib.parse
from http.cookies import CookieError, SimpleCookie
from typing import Final

from starlette.datastructures import URL, Headers, MutableHeaders
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._lazy import value_class
from ._settings import UiSettings

__all__ = [
    "CAP_PREFIX",
    "Guard",
    "HostCheck",
    "Secrets",
    "host_name",
    "with_default_headers",
]

CAP_PREFIX: Final = "/__openclaw__/cap/"
_SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
_UNAUTHORIZED: Final = (
    "This clawcell server needs its access token: open the URL `clawcell serve` printed "
    "(http://HOST:PORT/?token=…)."
)


@value_class
class Secrets:
    """The values derived from the access token (each a separate capability)."""

    token: str

    def _derive(self, purpose: str) -> str:
        return hmac.new(self.token.encode(), purpose.encode(), hashlib.sha256).hexdigest()

    @property
    def cookie_name(self) -> str:
        """Per-server cookie name (cookies are shared between ports of one host)."""
        return "clawcell_" + self._derive("cookie-name")[:10]

    @property
    def cookie_value(self) -> str:
        """What the session cookie holds (never the token itself)."""
        return self._derive("cookie")

    @property
    def csrf(self) -> str:
        """The CSRF token pages send back in `X-CSRF-Token`."""
        return self._derive("csrf")

    @property
    def canvas_cap(self) -> str:
        """The capability that grants reading hosted canvas documents, and nothing else."""
        return self._derive("canvas")[:32]


def host_name(host_header: str) -> str | None:
    """The host name of a `Host` header value (`None` when malformed)."""
    parsed = urllib.parse.urlsplit("//" + host_header)
    try:
        _ = parsed.port  # raises ValueError for a malformed port
    except ValueError:
        return None
    return parsed.hostname


def _allowed_host_names(settings: UiSettings) -> frozenset[str]:
    """Host names a request may carry: the bind address, loopback names, configured extras."""
    names = {"localhost", "127.0.0.1", "::1", settings.host.lower().strip("[]")}
    return frozenset(names | {h.lower() for h in settings.allowed_hosts})


@value_class
class HostCheck:
    """Which `Host` header names a listener answers (DNS rebinding): the allowed names, and
    any IP literal when it is bound to every address (a LAN peer reaches it by its IP)."""

    names: frozenset[str]
    any_ip: bool

    @classmethod
    def of(cls, settings: UiSettings, *, also: frozenset[str] = frozenset()) -> HostCheck:
        """The check of a listener of `settings`, admitting the names `also` as well."""
        any_ip = settings.host in ("0.0.0.0", "::")
        return cls(names=_allowed_host_names(settings) | also, any_ip=any_ip)

    def admits(self, host_header: str) -> bool:
        """Whether a request with this `Host` header is for this listener."""
        name = host_name(host_header)
        if name is None:
            return False
        return name in self.names or (self.any_ip and _is_ip(name))


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class Guard:
    """ASGI middleware that admits only requests with a valid Host and credentials."""

    def __init__(self, app: ASGIApp, *, settings: UiSettings, secrets: Secrets) -> None:
        self.app = app
        self.secrets = secrets
        self.hosts = HostCheck.of(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the UI has none; never let one past unchecked
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, with_default_headers(send))

    def _refusal(self, scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        if not self.hosts.admits(headers.get("host", "")):
            return PlainTextResponse(
                f"Refused: unexpected Host header {headers.get('host', '')!r} "
                "(add it to `allowedHosts` if a proxy sends it).",
                status_code=403,
            )
        token = _query_token(scope)
        if token is not None:
            return self._exchange(scope, token)
        if not self._authenticated(headers):
            return PlainTextResponse(_UNAUTHORIZED, status_code=401)
        if scope["method"] not in _SAFE_METHODS:
            return self._csrf_refusal(headers)
        if str(scope["path"]).startswith(_FETCHED):
            return _cross_site_refusal(headers)
        return None

    def _exchange(self, scope: Scope, token: str) -> Response:
        if not hmac.compare_digest(token.encode(), self.secrets.token.encode()):
            return PlainTextResponse("Refused: wrong access token.", status_code=401)
        url = URL(scope=scope)
        query = [(k, v) for k, v in urllib.parse.parse_qsl(url.query) if k != "token"]
        target = url.path + ("?" + urllib.parse.urlencode(query) if query else "")
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            self.secrets.cookie_name,
            self.secrets.cookie_value,
            httponly=True,
            samesite="strict",
            path="/",
        )
        return response

    def _authenticated(self, headers: Headers) -> bool:
        bearer = headers.get("authorization", "")
        if bearer.startswith("Bearer ") and hmac.compare_digest(
            bearer[7:].encode(), self.secrets.token.encode()
        ):
            return True
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except CookieError:  # junk is no credential
            return False
        morsel = cookie.get(self.secrets.cookie_name)
        return morsel is not None and hmac.compare_digest(
            morsel.value.encode(), self.secrets.cookie_value.encode()
        )

    def _csrf_refusal(self, headers: Headers) -> Response | None:
        refusal = _cross_site_refusal(headers)
        if refusal is not None:
            return refusal
        origin = headers.get("origin")
        if origin is not None and urllib.parse.urlsplit(origin).netloc.lower() != (
            headers.get("host", "").lower()
        ):  # the same origin: host *and* port (the canvas host is another port)
            return PlainTextResponse(f"Refused: cross-origin request from {origin!r}.", 403)
        sent = headers.get("x-csrf-token", "")
        if not hmac.compare_digest(sent.encode(), self.secrets.csrf.encode()):
            return PlainTextResponse(
                "Refused: missing or wrong `X-CSRF-Token` header (reload the page).", 403
            )
        return None


_FETCHED: Final = ("/api/", "/media")
"""Paths only the app's own pages fetch (never a navigation, never another origin)."""


def _cross_site_refusal(headers: Headers) -> Response | None:
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return PlainTextResponse(f"Refused: cross-site request ({site!r}).", 403)
    return None


def _query_token(scope: Scope) -> str | None:
    for key, value in urllib.parse.parse_qsl(scope.get("query_string", b"").decode("latin-1")):
        if key == "token":
            return value
    return None


_DEFAULTS: Final = (
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cache-control", "no-store"),
)


def with_default_headers(send: Send) -> Send:
    """`send` adding `nosniff`, `no-referrer` and `no-store` to responses without them."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in _DEFAULTS:
                if name not in headers:
                    headers[name] = value
        await send(message)

    return wrapped
