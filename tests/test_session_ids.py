"""Session ids: control characters and lone surrogates are refused, naming the first one."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from clawcell import ConfigurationError
from clawcell._session_ids import check_session_id  # pyright: ignore[reportPrivateUsage]


def test_exactly_the_control_characters_and_surrogates_are_refused() -> None:
    refused: list[int] = []
    for code in range(sys.maxunicode + 1):
        try:
            check_session_id(f"a{chr(code)}b")
        except ConfigurationError:
            refused.append(code)
    expected = [
        code
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in ("Cc", "Cs")
    ]
    assert refused == expected


@pytest.mark.parametrize(
    ("session_id", "first"),
    [("a\x00b\x1f", "\x00"), ("ok\x85\n", "\x85"), ("x\ud800", "\ud800"), ("\x7f", "\x7f")],
)
def test_the_message_names_the_first_refused_character(session_id: str, first: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        check_session_id(session_id)
    assert caught.value.message == (
        f"`session_id` {session_id!r} contains the control character {first!r}; use "
        "printable characters only (ids such as `user-42` or a UUID)."
    )


def test_a_valid_id_is_returned_as_it_is() -> None:
    for session_id in ("default", "user-42", "é中🦞", "a b"):
        assert check_session_id(session_id) is session_id
