"""Attachments: typed by their bytes, stored with the user's message, and handed to each
model API in the shape its SDK takes (images as image parts, text files as text)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from clawcell.agent import Agent, Attachment, ModelRequest, ScriptedModel
from clawcell.agent._models._anthropic import to_anthropic_messages
from clawcell.agent._models._openai_chat import to_chat_messages
from clawcell.agent._models._openai_responses import to_responses_input
from clawcell.errors import ConfigurationError, InputError
from tests.conftest import run

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PNG_B64 = base64.b64encode(PNG).decode()
NOTES = "# Notes\nship b-202 first\n"


def _attachments() -> list[Attachment]:
    return [Attachment.of("shot.png", PNG), Attachment.of("notes.md", NOTES.encode())]


def _stored_user_message(text: str, attachments: list[Attachment]) -> dict[str, Any]:
    """The user message `Agent.run` stores for `text` and `attachments`."""

    async def main() -> dict[str, Any]:
        async with Agent(model=ScriptedModel(["seen"])) as agent:
            async for _ in agent.run("s", text, attachments=attachments):
                pass
            return (await agent.transcript("s"))[0]

    return run(main())


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0" + b"\x00" * 8, "image/jpeg"),
        (b"GIF89a" + b"\x00" * 8, "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        ("héllo, plain text".encode(), "text/plain"),
        (b'<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>', "text/plain"),
    ],
    ids=["png", "jpeg", "gif", "webp", "utf8-text", "svg-is-text-never-an-image"],
)
def test_the_type_is_read_from_the_bytes(data: bytes, media_type: str) -> None:
    assert Attachment.of("whatever.png", data).media_type == media_type


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "attachment 'x' is empty (0 bytes); attach a file with content."),
        (
            b"%PDF-1.7\x00\xff",
            "attachment 'x' is neither an image (PNG, JPEG, GIF, WebP) nor UTF-8 text (it "
            "starts b'%PDF-1.7'); attach one of those, or paste its text.",
        ),
    ],
    ids=["empty", "binary"],
)
def test_empty_and_binary_files_are_refused_with_what_to_do(data: bytes, message: str) -> None:
    with pytest.raises(InputError) as caught:
        Attachment.of("../../x", data)
    assert caught.value.message == message


def test_a_type_claimed_against_the_bytes_is_refused() -> None:
    with pytest.raises(InputError, match="is not the 'image/png' it claims"):
        Attachment(name="a.png", media_type="image/png", data=b"plain text")


@pytest.mark.parametrize(
    ("name", "shown"),
    [("../../x", "x"), ("C:\\evil\\a.txt", "a.txt"), ("..", "attachment"),
     ("a\x00b\nc.png", "abc.png"), ("", "attachment"), ("x" * 300, "x" * 200)],
    ids=["dotdot", "backslashes", "only-dots", "control-chars", "empty", "long"],
)  # fmt: skip
def test_names_are_display_text_never_paths(name: str, shown: str) -> None:
    assert Attachment.of(name, b"hi").name == shown


def test_the_stored_user_message_carries_the_files_after_its_text() -> None:
    message = _stored_user_message("look at these", _attachments())
    assert message["content"] == [
        {"type": "text", "text": "look at these"},
        {"type": "image", "data": PNG_B64, "mimeType": "image/png", "name": "shot.png",
         "size": len(PNG), "sha256": Attachment.of("", PNG).sha256},
        {"type": "file", "text": NOTES, "mimeType": "text/plain", "name": "notes.md",
         "size": len(NOTES), "sha256": Attachment.of("", NOTES.encode()).sha256},
    ]  # fmt: skip


def test_a_message_of_only_files_has_no_empty_text_block() -> None:
    message = _stored_user_message("", [Attachment.of("shot.png", PNG)])
    assert [block["type"] for block in message["content"]] == ["image"]


def test_attachments_that_are_not_attachment_objects_are_refused() -> None:
    async def main() -> None:
        async with Agent(model=ScriptedModel(["x"])) as agent:
            raw: Any = [b"raw"]
            async for _ in agent.run("s", "hi", attachments=raw):
                pass

    with pytest.raises(ConfigurationError, match="must be a list of `Attachment`s"):
        run(main())


def test_the_scripted_model_sees_the_stored_blocks_in_its_request() -> None:
    model = ScriptedModel(["seen"])

    async def main() -> None:
        async with Agent(model=model) as agent:
            async for _ in agent.run("s", "look", attachments=_attachments()):
                pass

    run(main())
    request: ModelRequest = model.requests[0]
    blocks = request.messages[-1]["content"]
    assert [b["type"] for b in blocks] == ["text", "image", "file"]


def test_chat_completions_get_image_url_parts_and_text_parts() -> None:
    message = _stored_user_message("look", _attachments())
    assert to_chat_messages("", [message]) == [
        {"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
            {"type": "text", "text": f"[attached file 'notes.md' (text/plain, {len(NOTES)} "
                                     f"bytes)]\n{NOTES}\n[end of 'notes.md']"},
        ]},
    ]  # fmt: skip


def test_chat_completions_keep_a_plain_string_without_attachments() -> None:
    message = _stored_user_message("just text", [])
    assert to_chat_messages("", [message]) == [{"role": "user", "content": "just text"}]


def test_responses_get_input_image_and_input_text_parts() -> None:
    message = _stored_user_message("look", _attachments())
    [item] = to_responses_input([message])
    assert item["role"] == "user"
    assert item["content"][:2] == [
        {"type": "input_text", "text": "look"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG_B64}",
         "detail": "auto"},
    ]  # fmt: skip
    assert item["content"][2]["type"] == "input_text"
    assert item["content"][2]["text"].startswith("[attached file 'notes.md'")


def test_anthropic_gets_base64_image_blocks_before_the_text() -> None:
    message = _stored_user_message("look", _attachments())
    [entry] = to_anthropic_messages([message])
    assert entry["content"][0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
    }
    assert entry["content"][1]["type"] == "text"
    assert entry["content"][1]["text"].startswith("[attached file 'notes.md'")
    assert entry["content"][2] == {"type": "text", "text": "look"}


def test_a_damaged_stored_block_is_left_out_not_sent() -> None:
    message = {"role": "user", "content": [
        {"type": "text", "text": "hi"},
        {"type": "image", "data": "not base64!", "mimeType": "image/png", "name": "x.png"},
        {"type": "image", "data": base64.b64encode(b"text").decode(), "mimeType": "image/png"},
    ]}  # fmt: skip
    assert to_chat_messages("", [message]) == [{"role": "user", "content": "hi"}]
