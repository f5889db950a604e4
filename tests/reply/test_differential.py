"""The optimised scanners behave exactly like the pre-optimisation ones (`_reference`).

Each public text function runs on the same input through `clawcell.reply` and through the frozen
copy in `tests/reply/_reference`; results (or exception types) must be identical. Inputs are
Hypothesis-generated Markdown-ish lines built from the protocol's own syntax, plus slices of the
shared benchmark corpus when the `../shared` checkout sits beside this one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawcell import reply
from clawcell.reply._directives import normalize_directive_whitespace
from clawcell.reply._text import Utf16Offsets, utf16_len

from ._reference import _directives as ref_directives
from ._reference import _embeds as ref_embeds
from ._reference import _fences as ref_fences
from ._reference import _media as ref_media
from ._reference import _reply as ref_reply
from ._reference import _tags as ref_tags
from ._reference import _text as ref_text
from ._reference import _tokens as ref_tokens
from ._reference import _urls as ref_urls


def _utf16_offsets(text: str) -> list[int]:
    offsets = Utf16Offsets(text)
    return [offsets.at(index) for index in range(len(text) + 1)]


_Pair = tuple[Callable[[str], Any], Callable[[str], Any]]
_ALLOW = ["https://cdn.example.com/a.png", "./diagrams/1.svg", " x.png "]

PAIRS: dict[str, _Pair] = {
    "find_code_regions": (reply.find_code_regions, ref_fences.find_code_regions),
    "split": (reply.split_media_from_output, ref_media.split_media_from_output),
    "split_images": (
        lambda s: reply.split_media_from_output(s, extract_markdown_images=True),
        lambda s: ref_media.split_media_from_output(s, extract_markdown_images=True),
    ),
    "split_allowlist": (
        lambda s: reply.split_media_from_output(s, markdown_image_allowlist=_ALLOW),
        lambda s: ref_media.split_media_from_output(s, markdown_image_allowlist=_ALLOW),
    ),
    "split_preserve": (
        lambda s: reply.split_media_from_output(
            s, preserve_trailing_whitespace=True, extract_markdown_images=True
        ),
        lambda s: ref_media.split_media_from_output(
            s, preserve_trailing_whitespace=True, extract_markdown_images=True
        ),
    ),
    "split_no_directives": (
        lambda s: reply.split_media_from_output(
            s, extract_media_directives=False, extract_audio_directives=False
        ),
        lambda s: ref_media.split_media_from_output(
            s, extract_media_directives=False, extract_audio_directives=False
        ),
    ),
    "inline": (reply.parse_inline_directives, ref_tags.parse_inline_directives),
    "inline_options": (
        lambda s: reply.parse_inline_directives(
            s, current_message_id=" m1 ", strip_audio_tag=False, preserve_trailing_whitespace=True
        ),
        lambda s: ref_tags.parse_inline_directives(
            s, current_message_id=" m1 ", strip_audio_tag=False, preserve_trailing_whitespace=True
        ),
    ),
    "inline_keep_reply": (
        lambda s: reply.parse_inline_directives(s, strip_reply_tags=False),
        lambda s: ref_tags.parse_inline_directives(s, strip_reply_tags=False),
    ),
    "display": (
        reply.strip_inline_directive_tags_for_display,
        ref_tags.strip_inline_directive_tags_for_display,
    ),
    "delivery": (
        reply.strip_inline_directive_tags_for_delivery,
        ref_tags.strip_inline_directive_tags_for_delivery,
    ),
    "canvas": (reply.extract_canvas_shortcodes, ref_embeds.extract_canvas_shortcodes),
    "reply": (
        lambda s: reply.parse_reply_directives(s, current_message_id="m1"),
        lambda s: ref_reply.parse_reply_directives(s, current_message_id="m1"),
    ),
    "reply_images": (
        lambda s: reply.parse_reply_directives(s, extract_markdown_images=True),
        lambda s: ref_reply.parse_reply_directives(s, extract_markdown_images=True),
    ),
    "whitespace_trim": (
        normalize_directive_whitespace,
        ref_directives.normalize_directive_whitespace,
    ),
    "whitespace_preserve": (
        lambda s: normalize_directive_whitespace(s, "preserve"),
        lambda s: ref_directives.normalize_directive_whitespace(s, "preserve"),
    ),
    "whitespace_normalize": (
        lambda s: normalize_directive_whitespace(s, "normalize"),
        lambda s: ref_directives.normalize_directive_whitespace(s, "normalize"),
    ),
    "silent": (reply.is_silent_reply_text, ref_tokens.is_silent_reply_text),
    "silent_token": (
        lambda s: reply.is_silent_reply_text(s, "İx"),
        lambda s: ref_tokens.is_silent_reply_text(s, "İx"),
    ),
    "silent_payload": (
        reply.is_silent_reply_payload_text,
        ref_tokens.is_silent_reply_payload_text,
    ),
    "utf16_offsets": (_utf16_offsets, ref_text.utf16_offsets),
    "utf16_len": (utf16_len, ref_text.utf16_len),
}


def _outcome(function: Callable[[str], Any], text: str) -> Any:
    try:
        return function(text)
    except Exception as exc:  # an exception is an outcome to compare, not a failure here
        return ("raised", type(exc).__name__)


# Media references the reference accepted and clawcell now refuses or re-serialises (issue 17:
# C0 controls and tabs, `%2e%2e`, protocol-relative and remote-host `file:` references, URLs a
# non-WHATWG parser reads differently). Those texts are covered by `test_recorded.py` instead.
_SECURITY_FIXED = re.compile(r"[\x00-\x09\x0b-\x1f\x7f\\%]|//|https?:[^/]", re.I)
_MEDIA_PAIRS = ("split", "reply")


def _assert_same(text: str) -> None:
    fixed = _SECURITY_FIXED.search(text) is not None
    for name, (fast, reference) in PAIRS.items():
        if fixed and name.startswith(_MEDIA_PAIRS):
            continue
        assert _outcome(fast, text) == _outcome(reference, text), (name, text)


_PIECE = st.sampled_from(
    [
        "MEDIA:", "media: ", "MEDIA: https://cdn.example.com/a.png", "MEDIA:/tmp/a b.png",
        'MEDIA: "/tmp/my file.png"', "MEDIA: ./out/x.webp", "MEDIA: ../etc/passwd",
        "MEDIA: http://insecure.example.com/a.png", "MEDIA:`/tmp/t.png`", "medıa:",
        "MEDıA: /tmp/a.png",
        "x MEDIA: y", "\x0b",
        "[[", "]]", "[[audio_as_voice]]", "[[reply_to_current]]", "[[reply_to:msg-1]]",
        "[[ reply_to : t ]]", "[[ Audio_As_Voice ]]", "[embed ", "/]", "[/embed]", 'ref="a"',
        'url="https://e.com"', "[embed ref=\"cv\" /]", "[embed url='/x' title='T']body[/embed]",
        "```", "~~~", "````", "```py`", "    ", "  ", "\t", "\r", "`", "``", "\\`", "\\",
        "![a](https://cdn.example.com/a.png)", "![b](./diagrams/1.svg \"t\")", "![c](<x y.png>)",
        "![", "](", ")", "(", "https://", "/tmp/a.png", "~", '"', "'", "> ", "- ", "* ", "1. ",
        "2) ", "---", "***", "NO_REPLY", "HEARTBEAT_OK", " ", "\u00a0", "\ufeff", "\u2028",
        "\U0001f680", "\ud83d", "é", "word", "Word two", "İ", "i̇x", '{"action": "NO_REPLY"}',
        '{"action":"no_reply"}', '{"action": 1}', "{", "}", "NO_REPLY ", "\ufeff{}",
    ]
)  # fmt: skip
_LINE = st.lists(st.one_of(_PIECE, st.text(max_size=3)), max_size=6).map("".join)
_TEXT = st.lists(_LINE, max_size=12).map("\n".join)


_URL = st.builds(
    "".join,
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "https://", "HTTPS://", "http://", "http:", "Http:/", "https:", "ftp://",
                    "\t", " ", "\n", "ht\ttps://", "u:p@", "@", "[::1]", "127.0.0.1", "0x7f.1",
                    "localhost", "a.local", "cdn.example.com", "/a.png", ":8443", "?q", "#f",
                    "\ud800", "é", ".", "xn--",
                ]
            ),
            st.text(max_size=3),
        ),
        max_size=6,
    ),
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(url=_URL)
def test_remote_url_policy_matches_the_reference(url: str) -> None:
    assert reply.is_allowed_remote_media_url(url) == ref_urls.is_allowed_remote_media_url(url)


@settings(max_examples=600, deadline=None)
@given(text=_TEXT)
def test_optimised_scanners_match_the_reference_on_generated_text(text: str) -> None:
    _assert_same(text)


_NO_CORPUS = "../shared/bench-corpus is not beside the checkout"
TRICKY = {
    "unclosed fence with trailing blank lines": "Intro\n```\ncode  \n\n",
    "closing fence with trailing spaces": "```\ncode\n```   \n\n",
    "indented block at the end": "para\n\n    code   \n \n",
    "inline span at the end": "see `x`  \n",
    "indented block of js-only whitespace": "    \xa0",
    "blank runs before a js-whitespace block": "abc\n\n\n\n    \xa0\n",
    "tag line turning blank before indented code": "para\n[[audio_as_voice]]\n    code\n",
    "tag emptying a list item": "- [[reply_to_current]]\n  - nested\n\n      code",
    "tag making a thematic break": "* * * [[audio_as_voice]]\n    x",
    "media lines around a fence": "MEDIA: /a.png\n```\nMEDIA: /b.png\n```\n  media: ./c.png\n",
    "dotless i media line": "medıa: https://cdn.example.com/a.png\nMEDİA: /tmp/x.png",
    "blank lines between media": "a\n \n\t\nMEDIA: /a.png\n\u2028\n\nb\n\nMEDIA: /b.png\n\n",
    "crlf lines": "a  b\r\n[[audio_as_voice]] \r\n```\r\nx  \r\n```\r\n",
    "fence inside a quote": "> ```\n> MEDIA: /tmp/a.png\n> ```\nMEDIA: /tmp/b.png",
    "fence inside a list": "1. ```\n   [[audio_as_voice]]\n   ```\n[[audio_as_voice]]",
    "backticks across a blank line": "`a\n\nb` `c` \\`d` ``e`` `",
    "images": "![a](https://cdn.example.com/a.png) `![b](https://cdn.example.com/b.png)`",
    "silent json": ' \n{"action": "NO_REPLY"}',
}


@pytest.mark.parametrize("text", list(TRICKY.values()), ids=list(TRICKY))
def test_optimised_scanners_match_the_reference_on_tricky_inputs(text: str) -> None:
    _assert_same(text)
    _assert_same(text.replace("\n", "\r\n"))


_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "bench-corpus"


def _corpus_slices() -> list[str]:
    mixed, short = _CORPUS / "mixed-1mb.txt", _CORPUS / "short-replies.jsonl"
    if not mixed.is_file() or not short.is_file():
        return []
    text = mixed.read_text(encoding="utf-8")
    slices = [text[start : start + 6000] for start in range(0, len(text), 97_001)]
    lines = short.read_text(encoding="utf-8").splitlines()[::50]
    return [*slices, *(json.loads(line)["text"] for line in lines)]


@pytest.mark.skipif(not _corpus_slices(), reason=_NO_CORPUS)
def test_optimised_scanners_match_the_reference_on_the_benchmark_corpus() -> None:
    for text in _corpus_slices():
        _assert_same(text)


@pytest.mark.slow
@pytest.mark.skipif(not _corpus_slices(), reason=_NO_CORPUS)
def test_optimised_scanners_match_the_reference_on_the_whole_mixed_corpus() -> None:
    text = (_CORPUS / "mixed-1mb.txt").read_text(encoding="utf-8")
    for name in ("find_code_regions", "split", "split_images", "inline", "canvas", "reply"):
        fast, reference = PAIRS[name]
        assert fast(text) == reference(text), name
