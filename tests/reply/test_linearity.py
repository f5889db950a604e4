"""Every reply function runs in time linear in its input, whatever the input repeats.

Issue 17 (R1, R2) found regex scans that were quadratic on adversarial repetitions of one syntax
fragment (`[embed ` with no closing tag, `*` runs after `HEARTBEAT_OK`, `<` with no `>`). This
test repeats every syntax fragment of the protocol in several shapes and measures each function
at two sizes, `n` and `16n`, in the same test: a linear function costs about 16 times as much
on the larger input, a quadratic one about 256 times. The cost is the thread's CPU time and the
bound a ratio (`tests/_growth.py`), so neither the machine's speed nor its load decides the
outcome; the last tests show the same measurement failing quadratic stand-ins.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pytest

from clawcell import reply
from tests._growth import worst_growth

_GROWTH = 16
# Linear work grows by 16, quadratic by 256 once the quadratic term dominates. Memory effects
# took linear functions to 34 on a machine at load 23; the regex scans of issue 17 measure
# 210-270 (the stand-ins below), `strip_heartbeat_token` with its tag removal turned back into
# that regex 82-150 (its linear work still counts at `n`). Four times linear is the bound.
_MAX_RATIO = 64.0
_REPEATS = 64  # then 1,024: enough for a quadratic scan to dominate

_FRAGMENTS = [
    "[embed ", "[EMBED\t", "]", 'ref="', "<", "*", "`", "```", "    ", "\t", "\n", " ",
    "MEDIA:", "MEDIA:/a ", 'MEDIA:"', "[[", "[[reply_to:", "[[reply_to_current]]", "![", "![a](",
    "\\", "&#", "HEARTBEAT_OK ", "> ", "- ", "{", "a",
]  # fmt: skip


def _shapes(fragment: str, repeats: int) -> list[str]:
    run = fragment * repeats
    return [
        run,
        run + "x]",
        "MEDIA:" + run,
        "HEARTBEAT_OK a" + run + "a",
        (fragment + "a ") * repeats,
        (fragment + "\n") * repeats,
        "[embed " + run + " /]",
        "MEDIA:/a " + (fragment + " ") * repeats,
        "![a](" + run,
    ]


_FUNCTIONS: dict[str, Callable[[str], Any]] = {
    "build_reply": reply.build_reply,
    "split_media_from_output": lambda s: reply.split_media_from_output(
        s, extract_markdown_images=True
    ),
    "parse_reply_directives": reply.parse_reply_directives,
    "parse_inline_directives": reply.parse_inline_directives,
    "strip_inline_directive_tags_for_delivery": reply.strip_inline_directive_tags_for_delivery,
    "find_code_regions": reply.find_code_regions,
    "extract_canvas_shortcodes": reply.extract_canvas_shortcodes,
    "strip_heartbeat_token": reply.strip_heartbeat_token,
    "project_chat_display_messages": lambda s: reply.project_chat_display_messages(
        [{"role": "assistant", "content": [{"type": "text", "text": s}]}]
    ),
    "is_valid_media": lambda s: reply.is_valid_media(s, allow_spaces=True),
    "clean_candidate": reply.clean_candidate,
    "split_unquoted_media_directive_parts": reply.split_unquoted_media_directive_parts,
    "is_allowed_remote_media_url": reply.is_allowed_remote_media_url,
}


def _worst_growth(
    function: Callable[[str], Any], retry_over: float = _MAX_RATIO
) -> tuple[float, str]:
    cases = ((repr(f), _shapes(f, _REPEATS), _shapes(f, _REPEATS * _GROWTH)) for f in _FRAGMENTS)
    return worst_growth(function, cases, bound=retry_over)


@pytest.mark.slow
@pytest.mark.isolated
@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_reply_function_time_grows_linearly_with_repeated_syntax(name: str) -> None:
    ratio, fragment = _worst_growth(_FUNCTIONS[name])
    assert ratio < _MAX_RATIO, f"{name} grew {ratio:.1f}x on {_GROWTH}x {fragment}"


_TAG = re.compile(r"<[^>]*>")  # the scan of issue 17: rescans to the end after each `<`
_OPENING = re.compile(r"\[embed\s([^\]]*)\]")  # R1: each `[embed ` rescans for its `]`


_QUADRATIC: dict[str, Callable[[str], Any]] = {
    "html_tag_regex": lambda s: _TAG.sub(" ", s),
    "embed_opening_regex": _OPENING.findall,
    "linear_work_beside_a_quadratic_scan": lambda s: (
        reply.strip_heartbeat_token(s),
        reply.find_code_regions(s),
        _TAG.sub(" ", s),
    ),
}


@pytest.mark.isolated
@pytest.mark.parametrize("name", sorted(_QUADRATIC))
def test_the_measure_fails_a_quadratic_scanner(name: str) -> None:
    # The same measurement over the same inputs, of stand-ins with the defects the test exists
    # for: it must see them (a measurement that passed everything would prove nothing). One
    # measurement each: the retry over the bound only spares linear functions a stall.
    ratio, _ = _worst_growth(_QUADRATIC[name], retry_over=math.inf)
    assert ratio >= _MAX_RATIO, f"the quadratic {name} grew only {ratio:.1f}x on {_GROWTH}x"
