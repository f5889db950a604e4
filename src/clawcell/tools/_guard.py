"""The address guard of `web_fetch`: which hosts a fetch may connect to, decided per address.

Threat model: the model (or a page it read) names a URL hoping the host fetches from loopback,
a private network, a link-local cloud metadata endpoint or another special-use range (SSRF),
directly, through a redirect, or through a DNS name that resolves (or is rebound) to such an
address. The guard resolves every host itself and judges *every* resolved address with
`clawcell.reply`'s special-use policy (one implementation for media URLs and fetches), including
IPv4 addresses embedded in IPv6 forms; if any address is refused the host is refused. The
transport then connects to exactly the checked address (`_transport.py`), so there is no
second lookup an attacker could answer differently.

Limits: the guard does not look at what a public server says; a public host can still serve
hostile content, which is why fetched text reaches the model wrapped as untrusted content.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import field
from typing import Protocol

from .._lazy import value_class
from ..errors import ToolError
from ..reply import (
    extract_embedded_ipv4_from_ipv6,
    ipv4_special_use_range,
    ipv6_special_use_range,
    is_blocked_special_use_ipv4_address,
    is_blocked_special_use_ipv6_address,
)

__all__ = ["AddressGuard", "Resolver", "SystemResolver", "refused_range"]


class Resolver(Protocol):
    """Turns a host name into the IP addresses to connect to (the injectable DNS seam)."""

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        """The addresses of `host`, as text (`"93.184.216.34"`, `"2606:2800::1"`)."""
        ...


@value_class
class SystemResolver:
    """The operating system's resolver (`getaddrinfo`), run off the event loop."""

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        """The TCP addresses `getaddrinfo` gives for `host`, in its order, deduplicated."""
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        return list(dict.fromkeys(str(info[4][0]) for info in infos))


def refused_range(address: str) -> str | None:
    """The special-use range label that refuses `address`, or `None` when it is public."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    text = str(ip)
    if ip.version == 4:
        return ipv4_special_use_range(text) if is_blocked_special_use_ipv4_address(text) else None
    if is_blocked_special_use_ipv6_address(text):
        return ipv6_special_use_range(text)
    embedded = extract_embedded_ipv4_from_ipv6(text)
    if embedded is not None and is_blocked_special_use_ipv4_address(embedded):
        return f"{ipv4_special_use_range(embedded)} (embedded in IPv6)"
    return None


def _is_loopback(address: str) -> bool:
    return ipaddress.ip_address(address.split("%", 1)[0]).is_loopback


@value_class
class AddressGuard:
    """Resolves hosts and refuses any that has a special-use address.

    Attributes:
        resolver: The DNS seam (`SystemResolver()` by default; tests inject their own).
        allow_loopback_for_tests: Let loopback addresses (127.0.0.0/8, ::1) through, so tests
            can fetch from a local server. Never set this in production: it opens every
            service listening on the host to the model.
    """

    resolver: Resolver = field(default_factory=SystemResolver)
    allow_loopback_for_tests: bool = False

    async def addresses(self, host: str, port: int) -> list[str]:
        """The checked addresses to connect to for `host`; a `ToolError` if any is refused."""
        found = await self._lookup(host, port)
        for address in found:
            label = self._refusal(address)
            if label is not None:
                raise ToolError(
                    f"Refused to connect to {host!r}: it resolves to {address}, a {label} "
                    "address. `web_fetch` only reaches public internet addresses.",
                    code="blocked_address",
                )
        return found

    def _refusal(self, address: str) -> str | None:
        try:
            label = refused_range(address)
        except ValueError:
            return "malformed"
        if label is not None and self.allow_loopback_for_tests and _is_loopback(address):
            return None
        return label

    async def _lookup(self, host: str, port: int) -> list[str]:
        bare = host.strip("[]")
        try:
            ipaddress.ip_address(bare.split("%", 1)[0])
        except ValueError:
            pass
        else:
            return [bare]
        try:
            found = list(await self.resolver.resolve(bare, port))
        except OSError as exc:
            raise ToolError(
                f"Cannot resolve host {host!r}: {exc}. Check the URL.", code="dns_error"
            ) from exc
        if not found:
            raise ToolError(f"Host {host!r} has no addresses. Check the URL.", code="dns_error")
        return found
