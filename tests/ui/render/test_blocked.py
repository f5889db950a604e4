"""`MEDIA:` directives the parser kept as text become blocked items, never raw text."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell.reply import expand_text_content
from clawcell.ui import UiSettings
from clawcell.ui._media import MediaRoots
from clawcell.ui._render._blocked import BLOCKED_KEY, blocked_directives, refusal_of
from clawcell.ui._render._messages import Renderer
from clawcell.ui._render._views import AttachmentView, HtmlView
from clawcell.ui._templates import fragment


def _renderer() -> Renderer:
    return Renderer(settings=UiSettings(token="t" * 20), media=MediaRoots([]), canvas_host_url=None)


def _items(text: str) -> list[dict[str, Any]]:
    return blocked_directives(expand_text_content(text)["content"])


@pytest.mark.parametrize(
    ("reference", "reason"),
    [
        ("https://127.0.0.1/a.png", "remote media blocked by the media policy"),
        ("http://cdn.example.com/a.mp4", "plain http media is not loaded"),
        ("ftp://cdn.example.com/a.png", "ftp: media is not loaded"),
        ("screenshot", "not a URL or an absolute path"),
        ("", "no media reference after MEDIA:"),
    ],
)
def test_each_refusal_says_why(reference: str, reason: str) -> None:
    assert refusal_of(reference) == reason


def test_a_refused_remote_directive_splits_its_text_around_a_blocked_item() -> None:
    items = _items("Here:\nMEDIA: https://127.0.0.1/a.png\nDone.")
    assert items == [
        {"type": "text", "text": "Here:"},
        {
            "type": "attachment",
            "attachment": {
                "url": "https://127.0.0.1/a.png",
                "kind": "image",
                "label": "https://127.0.0.1/a.png",
                BLOCKED_KEY: "remote media blocked by the media policy",
            },
        },
        {"type": "text", "text": "Done."},
    ]


@pytest.mark.parametrize(
    "text",
    [
        "```\nMEDIA: http://x.example/a.png\n```",
        "~~~~\n```\nMEDIA: http://x.example/a.png\n~~~~",
        "**MEDIA:http://x.example/a.png**",
        "see MEDIA:http://x.example/a.png",
        "`MEDIA:http://x.example/a.png`",
        "    MEDIA: http://x.example/a.png",
    ],
)
def test_code_wrapped_and_mid_line_directives_stay_text(text: str) -> None:
    assert _items(text) == [{"type": "text", "text": text}]


def test_a_quoted_payload_loses_its_quotes_and_long_labels_are_cut() -> None:
    (item,) = _items('MEDIA:"http://cdn.example.com/clip.mp4"')
    assert item["attachment"]["url"] == "http://cdn.example.com/clip.mp4"
    assert item["attachment"]["kind"] == "video"
    (long,) = _items("MEDIA: http://cdn.example.com/" + "a" * 400)
    assert len(long["attachment"]["label"]) == 200 and long["attachment"]["label"].endswith("…")


def test_the_rendered_message_shows_blocked_lines_and_no_raw_directive() -> None:
    text = "Two files:\nMEDIA: http://cdn.example.com/a.png\nMEDIA:https://10.0.0.1/b.ogg\nEnd."
    view = _renderer().reply_text(text)
    kinds = [type(item).__name__ for item in view.items]
    assert kinds == ["HtmlView", "AttachmentView", "AttachmentView", "HtmlView"]
    first, second = view.items[1], view.items[2]
    assert isinstance(first, AttachmentView) and isinstance(second, AttachmentView)
    assert (first.src, first.media) == (None, "image")
    assert first.refusal == "plain http media is not loaded"
    assert (second.src, second.media) == (None, "audio")
    html = fragment("message", value=view)
    assert "MEDIA:" not in html
    assert "blocked: http://cdn.example.com/a.png" in html
    assert "(plain http media is not loaded)" in html


def test_a_hostile_reference_is_escaped_in_its_blocked_line() -> None:
    view = _renderer().reply_text('MEDIA: http://x.example/<img src=x onerror="alert(1)">.png')
    html = fragment("message", value=view)
    assert "<img src=x" not in html and "&lt;img src=x onerror=" in html


def test_an_allowed_directive_still_renders_as_media_not_blocked() -> None:
    view = _renderer().reply_text("MEDIA: https://cdn.example.com/a.png")
    (item,) = view.items
    assert isinstance(item, AttachmentView) and item.src == "https://cdn.example.com/a.png"
    html = fragment("message", value=view)
    assert 'class="media-open"' in html and "blocked" not in html


def test_user_messages_keep_their_text() -> None:
    view = _renderer().message({"role": "user", "content": "MEDIA: http://x.example/a.png"})
    link = '<a href="http://x.example/a.png" target="_blank" rel="noopener noreferrer">'
    (item,) = view.items  # text, not an attachment (its bare URL is linked as any other)
    assert isinstance(item, HtmlView)
    assert item.html == f"<p>MEDIA: {link}http://x.example/a.png</a></p>\n"
