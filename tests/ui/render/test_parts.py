"""Long Markdown in parts: the same HTML, cut between top-level blocks, placed part by part."""

from __future__ import annotations

import re

from clawcell.ui._render._markdown import join_parts, render_markdown, render_markdown_parts
from tests.ui._client import client, post, sse
from tests.ui._fakes import FakeAgent, reply_turn

PARAGRAPH = "Some *words* about the report, and then a few more words about it.\n\n"
LONG = (
    "[ref][x]\n\n"
    + PARAGRAPH * 150
    + "- one\n\n- two\n  continued\n\n"
    + "```python\nx = 1\n" + "y = x\n" * 300 + "```\n\n"
    + "> quoted\n> still\n\n"
    + PARAGRAPH * 150
    + "[x]: https://example.com\n"
)  # fmt: skip


def test_the_parts_joined_are_the_whole_rendering() -> None:
    parts = render_markdown_parts(LONG, part_chars=1000)
    assert len(parts) > 5
    whole = render_markdown_parts(LONG, part_chars=10**9)
    assert len(whole) == 1 and "".join(parts) == whole[0]
    assert '<a href="https://example.com"' in parts[0]  # a reference defined at the end


def test_a_part_never_cuts_a_block() -> None:
    for part in render_markdown_parts(LONG, part_chars=10):
        for tag in ("ul", "li", "pre", "blockquote", "p", "div"):
            opened = len(re.findall(rf"<{tag}[ >]", part))
            assert opened == part.count(f"</{tag}>"), (tag, part[:80])


def test_short_text_is_one_part_without_a_wrapper() -> None:
    assert render_markdown("hi") == "<p>hi</p>\n"
    assert render_markdown_parts("") == []
    assert join_parts(("<p>a</p>",), wrap=True) == '<div class="md-part"><p>a</p></div>'


def test_long_text_is_wrapped_part_by_part_and_the_wrapper_cannot_be_forged() -> None:
    html = render_markdown(LONG + '<div class="md-part">x</div>')
    assert html.count('<div class="md-part">') == len(render_markdown_parts(LONG + "x"))
    assert "&lt;div class=" in html


def test_a_long_streamed_reply_takes_its_drafts_place_a_part_per_op() -> None:
    messages = sse(post(client(FakeAgent([reply_turn(LONG * 4)])), "/api/sessions/s/turns",
                        {"text": "x"}).text)  # fmt: skip
    names = [name for name, _ in messages]
    reply = names.index("reply")
    assert names[reply + 1] == "render"  # the later parts follow in their own messages
    ops = [op for _, data in messages[reply:] for op in data["ops"]]
    draft = ops[1]["target"]
    assert ops[0]["op"] == "before" and ops[0]["target"] == draft
    assert ops[1] == {"op": "remove", "target": draft}  # before the parts: they show as placed
    shell = re.search(r'<div class="markdown" id="([^"]+)">', ops[0]["html"])
    assert shell is not None and shell.group(1) == f"{draft}-md-0"
    appended = ops[2:]
    assert appended and {op["target"] for op in appended} == {shell.group(1)}
    placed = ops[0]["html"][shell.end() :].split("</div>\n  </div>", 1)[0] + "".join(
        op["html"] for op in appended
    )
    assert placed == join_parts(render_markdown_parts(LONG * 4), wrap=True)
    for _, data in messages[reply:]:
        assert sum(len(op.get("html", "")) for op in data["ops"]) < 2 * 65_536
