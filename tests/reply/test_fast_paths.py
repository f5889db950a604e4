"""The short-reply fast paths give exactly what the general paths give (issue 16).

Each property builds a second input that the fast path does not take but whose answer is known
from the first: an unclosed backtick at the end for shortcodes (it opens no code span, yet sends
the text through the code scanners), an explicit default token for reply directives.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from clawcell import reply

_ANY_CHAR = st.characters(exclude_categories=())
_EMBED_SYNTAX = st.sampled_from(
    [
        "[embed ", "[EMBED\t", "[Embed\n", "[embed", " /]", "/]", "]", "[/embed]", 'ref="a"',
        "ref='b c'", 'url="https://x.test/a"', 'url="javascript:x"', 'url="&#106;s:x"',
        'onload="x"', 'title=" T "', 'height="320"', 'height="0x200"', 'class="w"',
        'class_name="v"', 'style="s"', 'target="node_panel"', 'target="assistant_message"',
        'ref=""', "=", '"', "'", "    ", "\n", "\n\n", "~~~", "~", "- ", "> ", "1. ", " ", "a",
        "\u00a0", "\ufeff", "é", "🚀",
    ]
)  # fmt: skip
_EMBED_TEXT = st.lists(st.one_of(_EMBED_SYNTAX, st.text(_ANY_CHAR, max_size=4)), max_size=16).map(
    "".join
)
_PLAIN_SYNTAX = st.sampled_from(
    ["NO_REPLY", "no_reply", "{", '{"action": "NO_REPLY"}', "_", " ", "\n", "\t", "\u00a0", "a"]
)
_PLAIN_TEXT = st.lists(st.one_of(_PLAIN_SYNTAX, st.text(_ANY_CHAR, max_size=4)), max_size=12).map(
    "".join
)


@settings(max_examples=600)
@given(text=_EMBED_TEXT)
@example(text='Done.\n[embed ref="cv_1" title="Status" height="320" /]')
@example(text='a    b\n[embed url="https://x.test/a" class="w" /] c')
@example(text='x    y [embed ref="a"]body[/embed] tail')
def test_a_lone_shortcode_is_extracted_as_the_code_scanning_path_extracts_it(text: str) -> None:
    text = text.replace("`", "")
    fast = reply.extract_canvas_shortcodes(text)
    general = reply.extract_canvas_shortcodes(text + "\n`")
    assert general == {"text": fast["text"] + "\n`", "previews": fast["previews"]}


@settings(max_examples=400)
@given(text=_PLAIN_TEXT)
def test_a_reply_without_brackets_or_colons_parses_as_the_general_path_does(text: str) -> None:
    text = text.replace("[", "").replace(":", "")
    general = reply.parse_reply_directives(text, silent_token="NO_REPLY")
    assert reply.parse_reply_directives(text) == general
    assert list(reply.parse_reply_directives(text)) == list(general)
