"""Behaviour of `clawcell.reply`, driven through its public functions."""

from __future__ import annotations

from typing import Any, cast

import pytest

import clawcell.reply
from clawcell.reply import (
    ToolMedia,
    build_reply,
    extract_canvas_shortcodes,
    is_allowed_remote_media_url,
    parse_inline_directives,
    split_canvas_shortcodes,
    split_media_from_output,
    strip_inline_directive_tags_for_delivery,
)


def test_public_names_are_sorted_and_all_exist() -> None:
    names = clawcell.reply.__all__
    assert names == sorted(names)
    assert all(hasattr(clawcell.reply, name) for name in names)


def test_media_line_inside_a_fence_stays_text() -> None:
    text = "```\nMEDIA:/tmp/a.png\n```"
    assert "mediaUrls" not in split_media_from_output(text)
    assert split_media_from_output(text)["text"] == text


def test_media_line_outside_a_fence_is_extracted_and_removed() -> None:
    split = split_media_from_output("Done.\nMEDIA:/tmp/a.png")
    assert split.get("mediaUrls") == ["/tmp/a.png"]
    assert split["text"] == "Done."


def test_markdown_image_stays_text_unless_opted_in() -> None:
    text = "![chart](https://example.com/c.png)"
    assert "mediaUrls" not in split_media_from_output(text)
    lifted = split_media_from_output(text, extract_markdown_images=True)
    assert lifted.get("mediaUrls") == ["https://example.com/c.png"]


def test_allowlisted_image_is_promoted_without_the_flag() -> None:
    text = "![x](https://example.com/x.png) ![y](https://example.com/y.png)"
    split = split_media_from_output(text, markdown_image_allowlist=["https://example.com/y.png"])
    assert split.get("mediaUrls") == ["https://example.com/y.png"]


def test_traversal_reference_is_hidden_and_not_attached() -> None:
    assert split_media_from_output("MEDIA:../../.env") == {"text": "", "segments": []}


def test_http_and_private_media_urls_stay_visible_text() -> None:
    for url in ("http://example.com/a.png", "https://10.0.0.1/a.png", "https://0x7f.1/a.png"):
        split = split_media_from_output(f"MEDIA:{url}")
        assert "mediaUrls" not in split
        assert split["text"] == f"MEDIA:{url}"


def test_cloud_metadata_endpoints_are_refused() -> None:
    assert not is_allowed_remote_media_url("https://169.254.169.254/latest/meta-data")
    assert not is_allowed_remote_media_url("https://metadata.google.internal./v1/")
    assert not is_allowed_remote_media_url("https://[fd00:ec2::254]/")


def test_reply_to_current_falls_back_to_the_current_message_id() -> None:
    parsed = parse_inline_directives("[[reply_to_current]] hi", current_message_id=" m-1 ")
    assert parsed.get("replyToId") == "m-1"
    assert parsed["text"] == "hi"


def test_removing_a_tag_between_words_keeps_one_space() -> None:
    assert parse_inline_directives("a[[audio_as_voice]]b")["text"] == "a b"


def test_a_tag_assembled_by_removing_another_is_removed_too() -> None:
    result = strip_inline_directive_tags_for_delivery("x [[[[audio_as_voice]]audio_as_voice]] y")
    assert "audio_as_voice" not in result["text"]


def test_dangerous_embed_url_stays_text_without_preview() -> None:
    text = '[embed url="&#106;avascript:alert(1)" /]'
    assert extract_canvas_shortcodes(text) == {"text": text, "previews": []}


def test_embed_height_is_clamped_to_1200() -> None:
    previews = extract_canvas_shortcodes('[embed ref="a" height="5000" /]')["previews"]
    assert previews[0].get("preferredHeight") == 1200


@pytest.mark.parametrize(
    "call",
    [
        lambda: split_media_from_output(cast(Any, None)),
        lambda: parse_inline_directives(cast(Any, 3)),
        lambda: is_allowed_remote_media_url(cast(Any, b"https://x.com")),
        lambda: build_reply(cast(Any, ["text"])),
    ],
)
def test_non_string_input_raises_a_type_error(call: Any) -> None:
    with pytest.raises(TypeError, match="must be a str"):
        call()


def test_build_reply_merges_tool_media_and_stores_canvas_blocks() -> None:
    tool = ToolMedia.from_result(
        {"content": [{"type": "text", "text": "Rendered.\nMEDIA:/tmp/chart.png"}]}, trusted=True
    )
    text = (
        "[[reply_to_current]] Here is the weekly chart.\n"
        "MEDIA:https://cdn.example.com/summary.pdf\n"
        '[embed ref="cv_42" title="Status" height="320" /]'
    )
    reply = build_reply(text, tool_media=[tool], current_message_id="msg-7")
    assert reply.to_dict() == {
        "payloads": [
            {
                "text": "Here is the weekly chart.",
                "mediaUrls": ["https://cdn.example.com/summary.pdf", "/tmp/chart.png"],
                "mediaUrl": "https://cdn.example.com/summary.pdf",
                "replyToId": "msg-7",
                "replyToCurrent": True,
                "replyToTag": True,
                "trustedLocalMedia": True,
            }
        ],
        "content": [
            {"type": "text", "text": text},
            {
                "type": "canvas",
                "preview": {
                    "kind": "canvas",
                    "surface": "assistant_message",
                    "render": "url",
                    "url": "/__openclaw__/canvas/documents/cv_42/index.html",
                    "viewId": "cv_42",
                    "title": "Status",
                    "preferredHeight": 320,
                },
            },
        ],
        "isSilent": False,
    }


def test_untrusted_tool_media_keeps_only_urls() -> None:
    tool = ToolMedia.from_result(
        {"content": [{"type": "text", "text": "MEDIA:/etc/x.png\nMEDIA:https://e.com/a.png"}]}
    )
    assert tool.urls == ("https://e.com/a.png",)


def test_silent_reply_delivers_nothing() -> None:
    reply = build_reply("NO_REPLY")
    assert reply.is_silent
    assert reply.payloads == ()


def test_media_already_sent_by_block_streaming_is_not_sent_again() -> None:
    reply = build_reply("Done\nMEDIA:/tmp/a.png", already_sent_media_urls=["file:///tmp/a.png"])
    assert reply.payloads == ({"text": "Done"},)


@pytest.mark.parametrize(
    "text",
    [
        'a [embed ref="x" /] b [embed ref="y"]body[/embed] c `[embed ref="z" /]`',
        'only [embed ref="x" /]',
        '[embed url="javascript:alert(1)" /] [embed ref="ok" /]',
        "no shortcode at all",
        '```\n[embed ref="in-code" /]\n```',
    ],
)
def test_split_canvas_shortcodes_agrees_with_extract(text: str) -> None:
    pieces = split_canvas_shortcodes(text)
    extracted = extract_canvas_shortcodes(text)
    assert "".join(p for p in pieces if isinstance(p, str)) == extracted["text"]
    assert [p for p in pieces if not isinstance(p, str)] == extracted["previews"]
    assert all(isinstance(p, str) == (i % 2 == 0) for i, p in enumerate(pieces))
    assert isinstance(pieces[-1], str)
