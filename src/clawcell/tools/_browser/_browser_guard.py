"""The address policy of the `browser` tool: which URLs it opens and which hosts pages reach.

Threat model: the model, or a page it opened, steers Chromium at a loopback service, a
private network or a cloud metadata endpoint (SSRF) - by navigation, redirect, a
subresource, a form post or a download - or at a local file (`file:`), a browser-internal
page (`chrome:`) or script (`javascript:`). Three layers stop it:

- `check_url` refuses every scheme but `http:` and `https:` for the URLs the model passes.
- The context's request route (`route_request`) aborts requests whose scheme or host is
  refused, so a page learns nothing and the tool can say why.
- Every connection Chromium makes goes through the session's guard proxy
  (`_browser_proxy.py`), which resolves the host itself, judges every address with the
  `web_fetch` policy (`AddressGuard`) and connects to exactly the checked address. Playwright
  does not show redirect hops to a route, so this layer is what refuses a redirect to a
  private address, and it also closes the DNS-rebinding gap (Chromium never resolves).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from typing import Any, Final
from urllib.parse import SplitResult, urlsplit

from ..._lazy import value_class
from ...errors import ToolError
from .._guard import AddressGuard

__all__ = ["BrowserGuard", "check_url", "first_refusal", "route_request"]

_WEB: Final = frozenset({"http", "https"})
_LOCAL: Final = frozenset({"data", "blob", "about"})  # never leave the browser


def check_url(url: str) -> SplitResult:
    """`url` parsed, when it is an absolute http(s) URL; a `ToolError` naming the fix otherwise."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError as exc:
        raise ToolError(f"Invalid URL {url!r}: {exc}.", code="invalid_url") from exc
    if parts.scheme.lower() not in _WEB:
        raise ToolError(
            f"Refused to open {url[:200]!r}: the browser opens only http and https URLs "
            f"(not {parts.scheme or 'a relative'!r} URLs).",
            code="blocked_url",
        )
    if not host:
        raise ToolError(
            f"URL {url[:200]!r} has no host. Pass an absolute http(s) URL.", code="invalid_url"
        )
    return parts


@value_class
class BrowserGuard:
    """Resolves hosts for the browser and refuses special-use addresses (unless allowed).

    Attributes:
        addresses_guard: The `web_fetch` guard (with its resolver and test-only loopback
            allowance).
        allow_private_network: Skip the address check (the host is still resolved here).
    """

    addresses_guard: AddressGuard
    allow_private_network: bool = False

    async def addresses(self, host: str, port: int) -> list[str]:
        """The addresses to connect to for `host`; a `ToolError` (`blocked_address`) if refused."""
        guard = self.addresses_guard
        if self.allow_private_network:
            guard = AddressGuard(resolver=guard.resolver, allow_loopback_for_tests=True)
            return await _resolve_any(guard, host, port)
        try:
            return await guard.addresses(host, port)
        except ToolError as exc:
            if exc.code != "blocked_address":
                raise
            reason = exc.message.split(". `web_fetch`", 1)[0]
            raise ToolError(
                f"{reason}. The browser only reaches public internet addresses.",
                code="blocked_address",
            ) from None


async def _resolve_any(guard: AddressGuard, host: str, port: int) -> list[str]:
    bare = host.strip("[]")
    try:
        ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        return list(await guard.resolver.resolve(bare, port))
    return [bare]


async def route_request(
    route: Any, guard: BrowserGuard, refused: Callable[[str, str], None]
) -> None:
    """The context's `**/*` route: abort refused schemes and hosts, let the rest through."""
    url = str(route.request.url)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in _LOCAL:
        await route.continue_()
        return
    reason = None
    if scheme not in _WEB or not parts.hostname:
        reason = f"the browser does not load {scheme!r} URLs"
    else:
        try:
            await guard.addresses(parts.hostname, parts.port or (443 if scheme == "https" else 80))
        except ToolError as exc:
            reason = exc.message
    if reason is None:
        await route.continue_()
        return
    refused(url, reason)
    await route.abort("blockedbyclient")


def first_refusal(refusals: Sequence[tuple[str, str]], url: str) -> str | None:
    """The reason `url`'s host was refused, if it was among `refusals`."""
    host = urlsplit(url).hostname
    for refused_url, reason in refusals:
        if refused_url == url or (host is not None and urlsplit(refused_url).hostname == host):
            return reason
    return None
