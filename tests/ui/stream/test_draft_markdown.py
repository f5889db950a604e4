"""The streaming draft as Markdown: finished blocks once, a bounded tail, fences as text."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import pytest

from clawcell.ui._render._markdown import render_markdown
from clawcell.ui._stream._draft_markdown import TAIL_CHARS, DraftMarkdown
from clawcell.ui._stream._ops import Op

_SHELL = re.compile(
    r'(<div class="code-block draft-code" id="[^"]+"><pre tabindex="0"><code '
    r'class="draft-text" id="[^"]+-text"></code></pre></div>)'
)


@dataclass
class _Page:
    """The draft as a page would hold it after the operations (a list of blocks, a tail)."""

    blocks: list[tuple[str | None, str]] = field(default_factory=list[tuple[str | None, str]])
    tail: str = ""
    code: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """The text streamed into each open fence's block."""
    ops: list[Op] = field(default_factory=list[Op])

    def apply(self, ops: list[Op]) -> None:
        self.ops += ops
        for op in ops:
            target, kind, markup = op.get("target", ""), op.get("op"), op.get("html", "")
            if kind == "before" and target == "d-tail":
                inner = markup.removeprefix('<div class="draft-block">')
                assert inner != markup and inner.endswith("</div>"), markup  # one block a run
                for piece in _SHELL.split(inner.removesuffix("</div>")):
                    shell = re.match(r'<div class="code-block draft-code" id="([^"]+)"', piece)
                    self.blocks.append((shell.group(1) if shell else None, piece))
            elif kind == "replace" and target == "d-tail":
                self.tail = markup
            elif kind == "replace":  # a closed fence: its highlighted rendering
                index = [name for name, _ in self.blocks].index(target)
                self.blocks[index] = (None, markup)
            elif kind == "text":
                self.code.setdefault(target.removesuffix("-text"), []).append(op.get("text", ""))
            else:
                raise AssertionError(op)

    @property
    def text(self) -> str:
        """What a reader sees, white space collapsed."""
        code = {name: html.escape("".join(text)) for name, text in self.code.items()}
        markup = "".join(
            shown.replace("</code>", code.get(name or "", "") + "</code>")
            for name, shown in self.blocks
        )
        markup += self.tail
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def _streamed(text: str, step: int) -> _Page:
    draft, page = DraftMarkdown(draft="d", render=render_markdown), _Page()
    for start in range(0, len(text), step):
        page.apply(draft.feed(text[start : start + step]))
    return page


REPLY = (
    "# Plan\n\nSome **bold** text and https://example.com/x.\n\n"
    "- [ ] first\n- [x] second\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\n"
    "```python\nprint('hi')\n``` not a close\n  ```\n\nAfter the ~~code~~.\n"
    "~~~\nraw <b>tag</b>\n~~~~\nend"
)


@pytest.mark.parametrize("step", [1, 3, 17, len(REPLY)], ids=["1", "3", "17", "whole"])
def test_the_draft_shows_the_same_markdown_however_the_deltas_are_cut(step: int) -> None:
    page = _streamed(REPLY, step)
    assert page.text == _streamed(REPLY, len(REPLY)).text
    assert page.text == (
        "Plan Some bold text and https://example.com/x . first second a b 1 2 "
        "Copy print ( 'hi' ) ``` not a close After the code . Copy raw <b>tag</b> end"
    )


def test_finished_blocks_are_rendered_once_and_the_tail_is_replaced() -> None:
    draft = DraftMarkdown(draft="d", render=render_markdown)
    first = draft.feed("Some **bo")
    tail = '<div class="draft-md-tail" id="d-tail">{}</div>'
    assert first == [
        {"op": "replace", "target": "d-tail", "html": tail.format("<p>Some **bo</p>\n")}
    ]
    second = draft.feed("ld**\n\nNext")
    block = '<div class="draft-block"><p>Some <strong>bold</strong></p>\n</div>'
    assert second == [
        {"op": "before", "target": "d-tail", "html": block},
        {"op": "replace", "target": "d-tail", "html": tail.format("<p>Next</p>\n")},
    ]


def test_an_unfinished_fence_streams_as_text_and_is_highlighted_once_closed() -> None:
    draft = DraftMarkdown(draft="d", render=render_markdown)
    opened = draft.feed("```python\nx = 1\n")
    assert opened[0] == {
        "op": "before", "target": "d-tail",
        "html": '<div class="draft-block"><div class="code-block draft-code" id="d-code-1">'
        '<pre tabindex="0"><code class="draft-text" id="d-code-1-text"></code></pre></div></div>',
    }  # fmt: skip
    assert opened[1] == {"op": "text", "target": "d-code-1-text", "text": "x = 1\n"}
    assert draft.feed("``") == []  # may still close the fence: held
    closed = draft.feed("`\n")
    assert [(op.get("op"), op.get("target")) for op in closed] == [("replace", "d-code-1")]
    assert '<span class="n">x</span>' in closed[0].get("html", "")


def test_a_held_fence_run_that_does_not_close_goes_out_as_code() -> None:
    draft = DraftMarkdown(draft="d", render=render_markdown)
    draft.feed("````\n")
    assert draft.feed("```") == []  # shorter than the opening run: only if more come
    assert draft.feed(" x\n") == [{"op": "text", "target": "d-code-1-text", "text": "``` x\n"}]


def test_an_unfinished_fence_of_a_megabyte_costs_what_its_text_does() -> None:
    line = "const value = compute(value) + 1; // a long unfinished fence\n"
    body = line * (1_000_000 // len(line))
    page = _streamed("Here:\n\n```js\n" + body, 4096)
    sizes = [len(op.get("html", "")) for op in page.ops]
    assert max(sizes) < 1_000  # no op carries the fence: it goes out as text
    texts = "".join(op.get("text", "") for op in page.ops if op.get("op") == "text")
    assert texts == body


def test_a_huge_table_streams_in_bounded_blocks() -> None:
    rows = "".join(f"| {n} | row {n} |\n" for n in range(5_000))
    page = _streamed("| n | name |\n|--:|---|\n" + rows, 1000)
    assert max(len(op.get("html", "")) for op in page.ops) < 8 * TAIL_CHARS
    assert page.text.count(" row ") == 5_000
    assert page.blocks[0][1].startswith('<div class="table-scroll"')


def test_a_line_longer_than_the_tail_is_cut_into_blocks() -> None:
    page = _streamed("x" * 50_000 + " end", 999)
    assert max(len(op.get("html", "")) for op in page.ops) < 2 * TAIL_CHARS
    assert page.text.replace(" ", "") == "x" * 50_000 + "end"


@pytest.mark.parametrize(
    "hostile",
    ["javascript:alert(1)", "see javascript:alert(document.cookie).", "<script>x</script>",
     "[x](javascript:alert(1))", "```\n</code></pre><script>x</script>\n"],
)  # fmt: skip
def test_hostile_draft_text_never_makes_a_script_or_a_javascript_link(hostile: str) -> None:
    page = _streamed(hostile, 2)
    for op in page.ops:
        assert "<script" not in op.get("html", "")
        assert 'href="javascript' not in op.get("html", "")
    assert "<script" not in "".join(shown for _, shown in page.blocks) + page.tail
