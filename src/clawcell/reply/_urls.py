"""Remote media URL policy: which `https:` URLs a reply may ask a channel to fetch.

Threat model: reply text is attacker-influenced (a model can be prompt-injected through web
pages, files or tool results). A `MEDIA:` line or a promoted Markdown image names a URL that the
gateway, a channel adapter or a client will later *fetch*. An attacker wants that fetch to reach
something private: loopback, LAN and link-local addresses, the cloud metadata service
(`169.254.169.254`, `metadata.google.internal`, `fd00:ec2::254`), single-label intranet names,
`.local`/`.internal` zones, or credentials smuggled into the URL. The policy therefore allows
only `https:` URLs without userinfo whose host is a dotted public name or a public IPv4 literal.

URLs are parsed with a WHATWG parser (`ada-url`), the same algorithm browsers and Node use, so
that the host this policy judges is the host a fetcher will connect to: numeric IPv4 spellings
(`0x7f.1`, `2130706433`, octal parts) are canonicalised first, percent-encoded and fullwidth hosts
are decoded, IDNs are punycoded. Python's `urllib.parse` would judge a different host.

Limits, stated honestly: every IPv6 literal is refused (as in the recorded release, because the
"must contain a dot" rule runs first), DNS is not resolved here, and redirects are the fetcher's
concern. Rejected URLs simply stay visible text; nothing is fetched by this module.
"""

from __future__ import annotations

import re
from typing import Final

import ada_url

from ._ip import (
    extract_embedded_ipv4_from_ipv6,
    is_blocked_special_use_ipv4_address,
    is_blocked_special_use_ipv6_address,
    is_canonical_dotted_decimal_ipv4,
    is_legacy_ipv4_literal,
    parse_canonical_ip_address,
)
from ._text import js_trim, require_str

__all__ = [
    "allowed_remote_media_href",
    "is_allowed_remote_media_url",
    "is_blocked_remote_media_hostname",
    "normalize_remote_media_hostname",
    "parse_whatwg_url",
]

_BLOCKED_NAMES: Final = frozenset(
    {"localhost", "localhost.localdomain", "metadata.google.internal"}
)
_PLAIN_HTTPS_URL: Final = re.compile(
    r"[hH][tT][tT][pP][sS]://(?!(?:[a-z0-9-]*\.)*xn--)"
    r"((?:[a-z0-9-]+\.)+[a-z0-9-]*[g-wyz])(?=[/?#]|\Z)[^\\\x00-\x20\x7f]*\Z"
)
# Letters no numeric host label ends with (hex digits end `0x…` labels, and `0x` alone is zero).
_NOT_HEX_LETTERS: Final = frozenset("ghijklmnopqrstuvwyz")
_BLOCKED_SUFFIXES: Final = (".localhost", ".local", ".internal")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_URL_PARTS: Final = ("href", "protocol", "username", "password", "hostname", "host")
# `https://` + an authority with no character a non-WHATWG parser could read differently.
_PLAIN_AUTHORITY: Final = re.compile(
    r"https://([^/?#\\%@\x00-\x20\x7f]*)(?:[/?#]|\Z)(?!.*[\\\x00-\x20\x7f])", re.I | re.S
)
_HTTP_SCHEME: Final = re.compile("http:", re.IGNORECASE | re.ASCII)


def normalize_remote_media_hostname(hostname: str) -> str:
    """Trim, lower-case, unbracket and drop trailing dots; `""` when a label is empty."""
    value = js_trim(require_str(hostname, "hostname")).lower()
    value = value.removeprefix("[").removesuffix("]").rstrip(".")
    if any(not label for label in value.split(".")):
        return ""
    return value


def is_blocked_remote_media_hostname(hostname: str) -> bool:
    """Whether remote media must not be fetched from this (already parsed) host name."""
    normalized = normalize_remote_media_hostname(hostname)
    if not normalized or "." not in normalized:
        return True
    if normalized in _BLOCKED_NAMES or normalized.endswith(_BLOCKED_SUFFIXES):
        return True
    if normalized[-1] in _NOT_HEX_LETTERS and ":" not in normalized:
        # A name ending in a letter that is no hex digit (nor the `x` of `0x`) is a DNS name:
        # no IP literal or legacy numeric form (`0x7f.1`, `1.0xa`, `0x.0x`) ends that way.
        return False
    address = parse_canonical_ip_address(normalized)
    if address is not None:
        if address.version == 4:
            return is_blocked_special_use_ipv4_address(normalized)
        if is_blocked_special_use_ipv6_address(normalized):
            return True
        embedded = extract_embedded_ipv4_from_ipv6(normalized)
        return embedded is not None and is_blocked_special_use_ipv4_address(embedded)
    if ":" in normalized:
        # Not a valid IPv6 literal (a canonical parse would have succeeded): host:port and junk.
        return True
    return not is_canonical_dotted_decimal_ipv4(normalized) and is_legacy_ipv4_literal(normalized)


def parse_whatwg_url(candidate: str, base: str | None = None) -> ada_url.URL | None:
    """Parse like JavaScript's `new URL(candidate, base)`; `None` where that would throw."""
    text = _LONE_SURROGATE.sub("\ufffd", candidate)
    try:
        return ada_url.URL(text) if base is None else ada_url.URL(text, base=base)
    except (ValueError, UnicodeError):
        return None


def allowed_remote_media_href(candidate: str) -> str | None:
    """The URL to emit for an allowed remote media `candidate`, or `None` when it is refused.

    The emitted URL is `candidate` as written when its authority, lower-cased, is exactly the
    host WHATWG parses (the recorded release keeps `HTTPS://EXAMPLE.COM/X.PNG` and unescaped
    query characters); otherwise it is the WHATWG serialisation, so that a consumer whose URL
    parser is not WHATWG (`https://example.com\\@127.0.0.1/`, `https:example.com`,
    `https://0x7f000001.example.org/`, percent-encoded or non-ASCII hosts) reads the host this
    policy judged.
    """
    plain = _PLAIN_HTTPS_URL.match(require_str(candidate, "candidate"))
    if plain is not None:
        # Lower-case ASCII labels, no port, userinfo, `xn--` label or numeric last label, and
        # nothing a URL parser rewrites: WHATWG would give exactly this host, so skip the parse.
        host = plain.group(1)
        blocked = host in _BLOCKED_NAMES or host.endswith(_BLOCKED_SUFFIXES)
        return None if blocked else candidate
    text = _LONE_SURROGATE.sub("\ufffd", candidate)
    if _HTTP_SCHEME.match(text):
        return None  # the scheme is read up to the first colon: this is `http:` for sure
    try:
        # One call reads every component; each `ada_url.URL` attribute is a separate FFI trip.
        parts = ada_url.parse_url(text, attributes=_URL_PARTS)
    except (ValueError, UnicodeError):
        return None
    if parts.get("protocol") != "https:" or parts.get("username") or parts.get("password"):
        return None
    if is_blocked_remote_media_hostname(str(parts.get("hostname", ""))):
        return None
    written = _PLAIN_AUTHORITY.match(text)
    if written is not None and written.group(1).lower() == parts.get("host"):
        return candidate
    return str(parts.get("href", ""))


def is_allowed_remote_media_url(candidate: str) -> bool:
    """Whether `candidate` is a public `https:` URL that reply media may reference."""
    return allowed_remote_media_href(candidate) is not None
