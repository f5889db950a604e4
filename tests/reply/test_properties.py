"""Properties of the reply protocol that must hold for every input, checked with Hypothesis."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

import ada_url
from hypothesis import given, settings
from hypothesis import strategies as st

from clawcell import reply

# Any code point, lone surrogates included, mixed with the protocol's own syntax.
_ANY_CHAR = st.characters(exclude_categories=())
_SYNTAX = st.sampled_from(
    [
        "MEDIA:", "media: ", "[[", "]]", "audio_as_voice", "reply_to_current", "reply_to:",
        "[embed ", "/]", "[/embed]", 'ref="a"', 'url="', "```", "~~~", "    ", "\t", "\n",
        "\r\n", "`", "![a](", "https://", "http://", "/tmp/a.png", "../", "~", '"', "'",
        "file://", "> ", "- ", "1. ", "HEARTBEAT_OK", "NO_REPLY", " ", "\u00a0", "\ufeff",
    ]
)  # fmt: skip
_TEXT = st.lists(st.one_of(_SYNTAX, st.text(_ANY_CHAR, max_size=6)), max_size=24).map("".join)

_STRING_FUNCTIONS: list[Callable[[str], Any]] = [
    reply.split_media_from_output,
    lambda s: reply.split_media_from_output(s, extract_markdown_images=True),
    lambda s: reply.split_media_from_output(s, preserve_trailing_whitespace=True),
    reply.parse_reply_directives,
    reply.parse_inline_directives,
    lambda s: reply.parse_inline_directives(s, preserve_trailing_whitespace=True),
    reply.strip_inline_directive_tags_for_display,
    reply.strip_inline_directive_tags_for_delivery,
    reply.sanitize_reply_directive_id,
    reply.find_code_regions,
    reply.is_allowed_remote_media_url,
    reply.is_blocked_remote_media_hostname,
    reply.normalize_remote_media_hostname,
    reply.is_valid_media,
    reply.clean_candidate,
    reply.unwrap_quoted,
    reply.split_unquoted_media_directive_parts,
    reply.extract_canvas_shortcodes,
    reply.parse_canvas_attributes,
    reply.default_canvas_entry_url,
    reply.extract_canvas_from_text,
    reply.resolve_canvas_iframe_url,
    reply.expand_text_content,
    reply.strip_heartbeat_token,
    reply.is_silent_reply_text,
    reply.build_reply,
    reply.is_blocked_special_use_ipv4_address,
    reply.is_blocked_special_use_ipv6_address,
    reply.extract_embedded_ipv4_from_ipv6,
    reply.is_legacy_ipv4_literal,
]


@settings(max_examples=300)
@given(text=_TEXT)
def test_no_string_input_ever_raises(text: str) -> None:
    for function in _STRING_FUNCTIONS:
        function(text)


_FENCE_BODY_LINE = st.sampled_from(
    [
        "MEDIA:/fenced/a.png",
        "MEDIA: https://fenced.example.com/a.png",
        "   MEDIA:/fenced/b.png",
        "![x](https://fenced.example.com/x.png)",
        "[[audio_as_voice]]",
        "plain words",
        "",
    ]
)
_PROSE_LINE = st.sampled_from(["Intro", "", "MEDIA:/tmp/outside.png", "- item", "> quote"])


@given(
    before=st.lists(_PROSE_LINE, max_size=4),
    body=st.lists(_FENCE_BODY_LINE, max_size=6),
    after=st.lists(_PROSE_LINE, max_size=4),
    fence=st.sampled_from(["```", "~~~", "````", "```python"]),
    closed=st.booleans(),
)
def test_nothing_inside_a_code_fence_is_ever_extracted(
    before: list[str], body: list[str], after: list[str], fence: str, closed: bool
) -> None:
    closer = fence.rstrip("python")
    lines = [*before, "", fence, *body, *([closer] if closed else [])]
    lines += ["", *after] if closed else []
    text = "\n".join(lines)
    split = reply.split_media_from_output(text, extract_markdown_images=True)
    assert not any("fenced" in url for url in split.get("mediaUrls", []))
    tags = reply.parse_inline_directives("\n".join([fence, *body, closer]))
    assert not tags["hasAudioTag"]


_SPECIAL_USE = [
    ipaddress.ip_network(cidr)
    for cidr in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
        "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    )
]  # fmt: skip
_IPV4 = st.ip_addresses(v=4).map(int)
_HOST = st.one_of(
    _IPV4.map(lambda n: str(ipaddress.IPv4Address(n))),
    _IPV4.map(str),
    _IPV4.map(hex),
    _IPV4.map(lambda n: ".".join(f"0{b:o}" for b in ipaddress.IPv4Address(n).packed)),
    _IPV4.map(lambda n: f"{n >> 24}.{n & 0xFFFFFF}"),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
    st.sampled_from(["example.com", "localhost", "a.local", "x.internal", "intranet", "cdn.x.io"]),
)


def _join(scheme: str, userinfo: str, host: str, path: str) -> str:
    return f"{scheme}{userinfo}{host}{path}"


_URL = st.builds(
    _join,
    st.sampled_from(["https://", "HTTPS://", "http://", "https:", "https:///", "ftp://"]),
    st.sampled_from(["", "user@", "u:p@", ":@"]),
    _HOST,
    st.sampled_from(["", "/", "/a.png", ":8443/a.png", "/../x?y#z"]),
)


@settings(max_examples=400)
@given(url=_URL)
def test_every_accepted_remote_url_is_https_and_resolves_to_no_special_use_address(
    url: str,
) -> None:
    if not reply.is_allowed_remote_media_url(url):
        return
    parsed = ada_url.URL(url)
    assert parsed.protocol == "https:"
    assert not parsed.username and not parsed.password
    host = parsed.hostname.strip("[]")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        assert "." in host and host not in ("localhost",)
        return
    assert address.version == 4
    assert not any(address in network for network in _SPECIAL_USE)


@settings(max_examples=300)
@given(text=_TEXT)
def test_stripping_directives_twice_equals_stripping_once(text: str) -> None:
    for strip in (
        reply.strip_inline_directive_tags_for_display,
        reply.strip_inline_directive_tags_for_delivery,
    ):
        once = strip(text)["text"]
        assert strip(once)["text"] == once
