"""`transcript_text`: the one reading of a transcript entry's text."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell.store import transcript_text

CASES: list[tuple[dict[str, Any], str]] = [
    ({"role": "user", "content": [{"type": "text", "text": "hello"}]}, "hello"),
    (
        {"content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]},
        "first\nsecond",
    ),
    ({"content": "a plain string"}, "a plain string"),
    ({"content": ({"type": "text", "text": "a tuple of blocks"},)}, "a tuple of blocks"),
    (
        {
            "content": [
                {"type": "thinking", "thinking": "hidden"},
                {"type": "text", "text": "shown"},
                {"type": "toolCall", "id": "c1", "name": "exec", "arguments": {}},
                {"type": "image", "data": "…"},
            ]
        },
        "shown",
    ),
    ({"content": ["not a block", 7, None, {"type": "text", "text": "kept"}]}, "kept"),
    ({"content": [{"type": "text", "text": None}, {"type": "text", "text": 3}]}, ""),
    ({"content": [{"type": "text"}]}, ""),
    ({"content": None}, ""),
    ({"content": {"type": "text", "text": "an object, not a list"}}, ""),
    ({"role": "assistant"}, ""),
]


@pytest.mark.parametrize(
    ("entry", "text"),
    CASES,
    ids=[
        "one-block", "blocks-are-lines", "string-content", "tuple-content", "other-blocks-out",
        "non-objects-out", "non-string-text-out", "text-missing", "none", "object-content",
        "no-content",
    ],
)  # fmt: skip
def test_the_text_of_an_entry_is_its_text_blocks_one_per_line(
    entry: dict[str, Any], text: str
) -> None:
    assert transcript_text(entry) == text


def test_the_blocks_of_two_words_do_not_run_together() -> None:
    entry = {"content": [{"type": "text", "text": "quokka"}, {"type": "text", "text": "island"}]}
    assert transcript_text(entry).split() == ["quokka", "island"]
