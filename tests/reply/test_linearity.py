"""Every reply function runs in time linear in its input, whatever the input repeats.

Issue 17 (R1, R2) found regex scans that were quadratic on adversarial repetitions of one syntax
fragment (`[embed ` with no closing tag, `*` runs after `HEARTBEAT_OK`, `<` with no `>`). This
test repeats every syntax fragment of the protocol in several shapes and measures each function
at two sizes, `n` and `8n`, in the same test: a linear function takes about 8 times as long on
the larger input, a quadratic one about 64 times. The bound is a ratio (no absolute deadline),
so the test does not depend on the machine's speed; the factor leaves room for noise.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

import pytest

from clawcell import reply

_GROWTH = 8
# Linear work grows by 8; quadratic by 64 (the defects of issue 17 measured 64-86 here). Memory
# effects on a loaded shared machine push linear functions to about 25, so the bound is 32.
_MAX_RATIO = 32.0
_REPEATS = 64  # then 512: enough for a quadratic term to dominate (issue 17's were 64x+)
_MAX_ROUNDS = 4096
_MIN_BASELINE_SECONDS = 0.001

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


def _cost(function: Callable[[str], Any], inputs: list[str], rounds: int) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(rounds):
            for text in inputs:
                function(text)
        best = min(best, time.perf_counter() - started)
    return best


def _growth_ratio(function: Callable[[str], Any], fragment: str) -> float:
    # The garbage collector's pauses grow with the number of live objects (in a process that
    # collected the whole suite, one collection takes a tenth of a second), not with the work
    # the function does: it is collected once and paused so that the ratio measures the
    # algorithm.
    gc.collect()
    gc.disable()
    try:
        return _measured_growth(function, fragment)
    finally:
        gc.enable()


def _measured_growth(function: Callable[[str], Any], fragment: str) -> float:
    small = _shapes(fragment, _REPEATS)
    rounds = 1
    baseline = _cost(function, small, rounds)
    # Repeat short calls until the clock can see them; the cap keeps a function that answers
    # from a cache (filled by earlier tests in the same process) from doubling forever.
    while baseline < _MIN_BASELINE_SECONDS and rounds < _MAX_ROUNDS:
        rounds *= 2
        baseline = _cost(function, small, rounds)
    grown = _cost(function, _shapes(fragment, _REPEATS * _GROWTH), rounds)
    return grown / baseline


@pytest.mark.slow
@pytest.mark.isolated
@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_reply_function_time_grows_linearly_with_repeated_syntax(name: str) -> None:
    function = _FUNCTIONS[name]
    worst = max(((_growth_ratio(function, f), f) for f in _FRAGMENTS), key=lambda r: r[0])
    if worst[0] >= _MAX_RATIO:
        # A second measurement rules out a one-off stall of the shared machine.
        worst = (_growth_ratio(function, worst[1]), worst[1])
    assert worst[0] < _MAX_RATIO, f"{name} grew {worst[0]:.1f}x on 8x {worst[1]!r}"
