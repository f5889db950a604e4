"""Special-use IP address ranges: which literal addresses remote media may never point at.

Threat model: a model (or a prompt-injected tool result) names a remote media URL whose host is
an IP literal, hoping the gateway fetches from loopback, a private network, a cloud metadata
endpoint or another non-public range (SSRF). This module answers "is this address special-use?"
for IPv4 and IPv6, including IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4, Teredo,
IPv4-compatible, ISATAP), whose embedded address is judged too. Range labels and their order
follow the ipaddr.js 2.5 tables the protocol was recorded with; `as112` and `amt` are *not*
blocked, matching the original.

Limits: this is a policy on address *literals*. It does not resolve DNS names, so a public name
that resolves to a private address is the fetcher's problem (fetchers apply their own guard).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

from ._text import js_trim

__all__ = [
    "extract_embedded_ipv4_from_ipv6",
    "ipv4_special_use_range",
    "ipv6_special_use_range",
    "is_blocked_special_use_ipv4_address",
    "is_blocked_special_use_ipv6_address",
    "is_canonical_dotted_decimal_ipv4",
    "is_legacy_ipv4_literal",
    "parse_canonical_ip_address",
]

_IPv4 = ipaddress.IPv4Address
_IPv6 = ipaddress.IPv6Address


def _nets4(*cidrs: str) -> tuple[ipaddress.IPv4Network, ...]:
    return tuple(ipaddress.IPv4Network(cidr) for cidr in cidrs)


def _nets6(*cidrs: str) -> tuple[ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.IPv6Network(cidr) for cidr in cidrs)


# First match wins, in this order (ipaddr.js 2.5 special ranges).
_IPV4_RANGES: Final = (
    ("unspecified", _nets4("0.0.0.0/8")),
    ("broadcast", _nets4("255.255.255.255/32")),
    ("multicast", _nets4("224.0.0.0/4")),
    ("linkLocal", _nets4("169.254.0.0/16")),
    ("loopback", _nets4("127.0.0.0/8")),
    ("carrierGradeNat", _nets4("100.64.0.0/10")),
    ("private", _nets4("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")),
    (
        "reserved",
        _nets4(
            "192.0.0.0/24",
            "192.0.2.0/24",
            "192.88.99.0/24",
            "198.18.0.0/15",
            "198.51.100.0/24",
            "203.0.113.0/24",
            "240.0.0.0/4",
        ),
    ),
    ("as112", _nets4("192.175.48.0/24", "192.31.196.0/24")),
    ("amt", _nets4("192.52.193.0/24")),
)
_BLOCKED_IPV4: Final = frozenset(
    {
        "unspecified",
        "broadcast",
        "multicast",
        "linkLocal",
        "loopback",
        "carrierGradeNat",
        "private",
        "reserved",
    }
)
_BENCHMARK_IPV4: Final = ipaddress.IPv4Network("198.18.0.0/15")

_IPV6_RANGES: Final = (
    ("unspecified", _nets6("::/128")),
    ("linkLocal", _nets6("fe80::/10")),
    ("multicast", _nets6("ff00::/8")),
    ("loopback", _nets6("::1/128")),
    ("uniqueLocal", _nets6("fc00::/7")),
    ("ipv4Mapped", _nets6("::ffff:0:0/96")),
    ("deprecatedSiteLocal", _nets6("fec0::/10")),
    ("discard", _nets6("100::/64")),
    ("rfc6145", _nets6("::ffff:0:0:0/96")),
    ("rfc6052", _nets6("64:ff9b::/96", "64:ff9b:1::/48")),
    ("6to4", _nets6("2002::/16")),
    ("teredo", _nets6("2001::/32")),
    ("benchmarking", _nets6("2001:2::/48")),
    ("amt", _nets6("2001:3::/32")),
    ("as112v6", _nets6("2001:4:112::/48", "2620:4f:8000::/48")),
    ("deprecatedOrchid", _nets6("2001:10::/28")),
    ("orchid2", _nets6("2001:20::/28")),
    ("droneRemoteIdProtocolEntityTags", _nets6("2001:30::/28")),
    ("segmentRouting", _nets6("5f00::/16")),
    ("reserved", _nets6("2001::/23", "2001:db8::/32", "3fff::/20")),
)
_BLOCKED_IPV6: Final = frozenset(
    {
        "unspecified",
        "loopback",
        "linkLocal",
        "uniqueLocal",
        "multicast",
        "reserved",
        "benchmarking",
        "discard",
        "orchid2",
    }
)
_NAT64_LOCAL_USE: Final = ipaddress.IPv6Network("64:ff9b:1::/48")
_NAT64_WELL_KNOWN: Final = ipaddress.IPv6Network("64:ff9b::/96")

_FOUR_PART_DECIMAL: Final = re.compile(r"(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*)){3}")
_LEGACY_PART: Final = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]+")


def _four_part_decimal(value: str) -> bool:
    if not value.isascii() or _FOUR_PART_DECIMAL.fullmatch(value) is None:
        return False
    return all(int(part) <= 255 for part in value.split("."))


def _ip_text(value: str) -> str:
    """An address as written: JavaScript-trimmed, then without one pair of enclosing brackets
    (`" [::1] "` → `"::1"`); a lone bracket stays."""
    trimmed = js_trim(value)
    if len(trimmed) >= 2 and trimmed.startswith("[") and trimmed.endswith("]"):
        return trimmed[1:-1]
    return trimmed


def is_canonical_dotted_decimal_ipv4(value: str) -> bool:
    """Four decimal parts without leading zeros, each at most 255 (`8.8.8.8`), once trimmed
    and unbracketed."""
    return _four_part_decimal(_ip_text(value))


def is_legacy_ipv4_literal(value: str) -> bool:
    """Whether `value` (trimmed, unbracketed) is a numeric IPv4 spelling other than the
    canonical one: 1-4 decimal or `0x` hex parts (`0x7f.1`, `127.1`, `010.0.0.1`); a canonical
    dotted-decimal address (`8.8.8.8`) is not legacy."""
    body = _ip_text(value)
    if not body or ":" in body or not body.isascii() or _four_part_decimal(body):
        return False
    parts = body.split(".")
    return len(parts) <= 4 and all(_LEGACY_PART.fullmatch(part) for part in parts)


def _parse_ipv6(value: str) -> ipaddress.IPv6Address | None:
    body = _ip_text(value)
    if ":" not in body or not body.isascii():
        return None
    try:
        return _IPv6(body)
    except ValueError:
        return None


def _parse_ipv4(value: str) -> ipaddress.IPv4Address | None:
    body = _ip_text(value)
    return _IPv4(body) if _four_part_decimal(body) else None


def parse_canonical_ip_address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """A canonical dotted-decimal IPv4 address or any valid IPv6 address, else `None`."""
    return _parse_ipv4(value) or _parse_ipv6(value)


def ipv4_special_use_range(address: str) -> str | None:
    """The ipaddr.js range label of a dotted-decimal IPv4 address (`"unicast"` by default)."""
    parsed = _parse_ipv4(address)
    return None if parsed is None else _label4(parsed)


def _label4(address: ipaddress.IPv4Address) -> str:
    for label, networks in _IPV4_RANGES:
        if any(address in network for network in networks):
            return label
    return "unicast"


def _label6(address: ipaddress.IPv6Address) -> str:
    plain = address if address.scope_id is None else _IPv6(str(address).split("%", 1)[0])
    for label, networks in _IPV6_RANGES:
        if any(plain in network for network in networks):
            return label
    return "unicast"


def is_blocked_special_use_ipv4_address(
    address: str, *, allow_rfc2544_benchmark_range: bool = False
) -> bool:
    """Whether a dotted-decimal IPv4 address is in a range remote media may not use."""
    parsed = _parse_ipv4(address)
    if parsed is None:
        return False
    if allow_rfc2544_benchmark_range and parsed in _BENCHMARK_IPV4:
        return False
    return _label4(parsed) in _BLOCKED_IPV4


def ipv6_special_use_range(address: str) -> str | None:
    """The ipaddr.js range label of an IPv6 address (`"unicast"` by default)."""
    parsed = _parse_ipv6(address)
    return None if parsed is None else _label6(parsed)


def is_blocked_special_use_ipv6_address(
    address: str, *, allow_unique_local_range: bool = False
) -> bool:
    """Whether an IPv6 address is itself special-use (embedded IPv4 is judged separately)."""
    parsed = _parse_ipv6(address)
    if parsed is None:
        return False
    if parsed in _NAT64_LOCAL_USE:
        return True
    label = _label6(parsed)
    if label == "uniqueLocal" and allow_unique_local_range:
        return False
    if label in _BLOCKED_IPV6:
        return True
    return (int(parsed) >> 112) & 0xFFC0 == 0xFEC0


def extract_embedded_ipv4_from_ipv6(address: str) -> str | None:
    """The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4, Teredo …), else `None`."""
    parsed = _parse_ipv6(address)
    if parsed is None:
        return None
    value = int(parsed)
    hextets = [(value >> (112 - 16 * index)) & 0xFFFF for index in range(8)]
    low32 = value & 0xFFFFFFFF
    label = _label6(parsed)
    if label in ("ipv4Mapped", "rfc6145") or parsed in _NAT64_WELL_KNOWN:
        return str(_IPv4(low32))
    if label == "6to4":
        return str(_IPv4((hextets[1] << 16) | hextets[2]))
    if label == "teredo":
        return str(_IPv4(((hextets[6] ^ 0xFFFF) << 16) | (hextets[7] ^ 0xFFFF)))
    if all(hextet == 0 for hextet in hextets[:6]):
        return str(_IPv4(low32))
    if hextets[4] & 0xFCFF == 0 and hextets[5] == 0x5EFE:
        return str(_IPv4(low32))
    return None
