"""The tokenizer's word characters: `\\w`, `$` and every code point past ASCII."""

from __future__ import annotations

import re

from clawcell._source._tokenizer import _WORD, tokenize  # pyright: ignore[reportPrivateUsage]


def test_a_word_character_is_a_regex_word_character_a_dollar_or_past_ascii() -> None:
    for code in range(0x110000):
        char = chr(code)
        expected = code >= 0x80 or char == "$" or re.fullmatch(r"\w", char) is not None
        assert (_WORD.fullmatch(char) is not None) == expected, hex(code)


def test_words_with_dollars_and_non_ascii_letters_are_one_token_each() -> None:
    tokens = [(t.kind, t.text) for t in tokenize("const $élan = ok𝒳 + 1;")]
    assert ("word", "$élan") in tokens
    assert ("word", "ok𝒳") in tokens
    assert ("punct", "+") in tokens
