"""The streamed draft never shows a raw directive: `MEDIA:` lines and embeds become
placeholders, reply and voice tags vanish, and ordinary text goes out at once."""

from __future__ import annotations

import time

import pytest

from clawcell.ui import UiSettings
from clawcell.ui._media import MediaRoots
from clawcell.ui._render._messages import Renderer
from clawcell.ui._stream._draft import DraftFilter, DraftPiece, Placeholder
from clawcell.ui._stream._events import TurnStream
from tests._growth import tail_growth

REPLY = (
    "Here is the chart:\n"
    "MEDIA:https://cdn.example.com/reports/weekly%20chart.png?x=1\n"
    "[[audio_as_voice]]\n"
    "Threaded [[reply_to_current]]answer, with [[not a tag]] kept.\n"
    '[embed ref="cv_42" title="Status board" /]\n'
    "  media: ./out/summary.pdf\n"
    "Media coverage is fine text.\n"
    "```js\n"
    "MEDIA:not-a-directive-in-code\n"
    "```\n"
    "The end."
)


def _stream(text: str, step: int) -> list[DraftPiece]:
    draft = DraftFilter()
    pieces: list[DraftPiece] = []
    for start in range(0, len(text), step):
        pieces += draft.feed(text[start : start + step])
    return pieces


def _shown(pieces: list[DraftPiece]) -> str:
    return "".join(p if isinstance(p, str) else f"<{p.label}>\n" for p in pieces)


@pytest.mark.parametrize("step", [1, 2, 3, 7, 1000])
def test_directives_become_placeholders_however_the_text_is_cut(step: int) -> None:
    assert _shown(_stream(REPLY, step)) == (
        "Here is the chart:\n"
        "<attaching weekly chart.png…>\n"
        "Threaded answer, with [[not a tag]] kept.\n"
        "<embedding Status board…>\n"
        "<attaching summary.pdf…>\n"
        "Media coverage is fine text.\n"
        "```js\n"
        "MEDIA:not-a-directive-in-code\n"
        "```\n"
        "The end."
    )


def test_no_piece_ever_holds_a_raw_directive() -> None:
    for piece in _stream(REPLY.replace("```js\nMEDIA:not-a-directive-in-code\n```\n", ""), 1):
        if isinstance(piece, str):
            assert "MEDIA:" not in piece.upper() and "[[a" not in piece and "[[r" not in piece
            assert "[embed" not in piece


def test_ordinary_text_goes_out_at_once() -> None:
    draft = DraftFilter()
    assert draft.feed("Hello wor") == ["Hello wor"]
    assert draft.feed("ld.\nNext") == ["ld.\n", "Next"]


def test_text_that_may_open_a_directive_waits_until_it_is_decided() -> None:
    draft = DraftFilter()
    assert draft.feed("Intro\nMED") == ["Intro\n"]
    assert draft.feed("IA:https://x.example/a.png") == []
    assert draft.feed("\n") == [Placeholder("media", "attaching a.png…")]
    assert draft.feed("see [[reply_") == ["see "]
    assert draft.feed("to: msg-1]] now [emb") == [" now "]
    assert draft.feed("er]") == ["[ember]"]  # not an embed after all


def test_a_block_embed_hides_its_body_until_it_closes() -> None:
    text = 'Look:\n[embed ref="cv_1"]\n<b>inline html</b>\n[/embed]\nAfter.'
    assert _shown(_stream(text, 4)) == "Look:\n<embedding a canvas…>\nAfter."


def test_the_leading_space_a_tag_leaves_is_trimmed() -> None:
    assert _shown(_stream("[[reply_to_current]]  Hi.\n", 3)) == "Hi.\n"


def test_the_silent_token_never_shows() -> None:
    assert _stream("NO_REPLY", 1) == []
    assert _shown(_stream("NO, really.", 1)) == "NO, really."


@pytest.mark.parametrize(
    "head",
    ["x", "MEDIA:https://example.com/", "text [[reply_to_current"],
    ids=["ordinary", "a-media-line-held", "an-unclosed-tag"],
)
def test_a_delta_costs_the_same_after_a_long_line(head: str) -> None:
    def tail_seconds(length: int) -> float:
        draft = DraftFilter()
        draft.feed(head + "x" * length)
        started = time.thread_time()
        for _ in range(2000):
            draft.feed("word ")
        return time.thread_time() - started

    ratio = tail_growth(tail_seconds, 1_000, 8_000_000, bound=4.0)
    assert ratio < 4.0, f"2,000 deltas after 8 MB cost {ratio:.1f}x those after 1 KB"


def test_a_placeholder_is_escaped_in_the_page() -> None:
    settings = UiSettings(token="t" * 20)
    renderer = Renderer(settings=settings, media=MediaRoots([]), canvas_host_url=None)
    stream = TurnStream(renderer=renderer, container="transcript")
    ops = stream.ops(
        {"type": "text_delta", "text": "MEDIA:https://x.example/%3Cimg%20onerror=1%3E\n"}
    )
    (placeholder,) = [op for op in ops if op.get("op") == "before"]
    assert placeholder.get("target", "").endswith("-draft-1-tail")
    assert placeholder.get("html") == (
        '<div class="draft-block"><div class="draft-directive draft-media" role="status">'
        "attaching &lt;img onerror=1&gt;…</div></div>"
    )
