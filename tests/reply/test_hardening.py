"""Issue 17's rich-output defects (R1–R5), each pinned by its exact input and outcome.

Timing is `test_linearity.py`'s concern; these tests pin what the adversarial inputs produce.
"""

from __future__ import annotations

from clawcell.reply import (
    build_reply,
    extract_canvas_shortcodes,
    is_valid_media,
    project_chat_display_messages,
    split_media_from_output,
    strip_heartbeat_token,
)


def test_r1_unclosed_embed_openings_stay_text_and_yield_no_canvas() -> None:
    text = "[embed " * 6000  # 42 KB: 2.96 s in 0.1
    reply = build_reply(text).to_dict()
    assert reply["payloads"] == [{"text": text.strip()}]
    assert reply["content"] == [{"type": "text", "text": text}]
    assert extract_canvas_shortcodes("[embed " * 100 + 'ref="a" /]')["previews"] == [
        {
            "kind": "canvas",
            "surface": "assistant_message",
            "render": "url",
            "url": "/__openclaw__/canvas/documents/a/index.html",
            "viewId": "a",
        }
    ]


def test_r2_heartbeat_token_before_a_star_run_is_stripped() -> None:
    raw = "HEARTBEAT_OK a" + "*" * 40_000 + "a"
    assert strip_heartbeat_token(raw) == {
        "shouldSkip": False,
        "text": "a" + "*" * 40_000 + "a",
        "didStrip": True,
    }


def test_r2_unclosed_angle_brackets_are_kept_and_never_skipped() -> None:
    raw = "<" * 80_000
    assert strip_heartbeat_token(raw) == {"shouldSkip": False, "text": raw, "didStrip": False}
    messages = [{"role": "assistant", "content": [{"type": "text", "text": raw}]}]
    assert len(project_chat_display_messages(messages)) == 1


def test_r2_repeated_heartbeat_tokens_are_all_stripped() -> None:
    assert strip_heartbeat_token("HEARTBEAT_OK " * 5000)["shouldSkip"] is True
    assert strip_heartbeat_token("x " + "HEARTBEAT_OK " * 3 + "!")["text"] == "x !"


def test_r3_control_characters_and_tabs_make_media_candidates_refused() -> None:
    for text in (
        "MEDIA:\x00https://127.0.0.1/x.png",
        "MEDIA:\x01https://127.0.0.1/x.png",
        "MEDIA:\x1fhttps://127.0.0.1/x.png",
        "MEDIA:\x00http://127.0.0.1/x.png",
        'MEDIA:"ht\ttps://127.0.0.1/x.png"',
    ):
        assert "mediaUrls" not in split_media_from_output(text), text


def test_r4_encoded_dot_segments_in_file_urls_are_refused() -> None:
    assert not is_valid_media("file:///tmp/%2e%2e/etc/passwd")
    assert split_media_from_output("MEDIA:file:///tmp/%2e%2e/etc/passwd") == {
        "text": "",
        "segments": [],
    }


def test_r5_entity_encoded_script_urls_yield_no_preview() -> None:
    for url in (
        "&#x6A;avascript:alert(1)",
        "&#0106;avascript:alert(1)",
        "&#106avascript:alert(1)",
        "javascript&colon;alert(1)",
        "java&Tab;script:alert(1)",
        "\x01javascript:alert(1)",
    ):
        text = f'[embed url="{url}" /]'
        assert extract_canvas_shortcodes(text) == {"text": text, "previews": []}, url


def test_protocol_relative_media_is_refused_and_hidden() -> None:
    assert split_media_from_output("MEDIA://127.0.0.1/x.png") == {"text": "", "segments": []}


def test_remote_media_is_emitted_as_the_url_a_whatwg_fetcher_reads() -> None:
    split = split_media_from_output("MEDIA:https://example.com\\@127.0.0.1/x.png")
    assert split.get("mediaUrls") == ["https://example.com/@127.0.0.1/x.png"]
