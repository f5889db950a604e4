"""Messages to views: markdown sanitizing, attachments, voice notes, reply targets, canvases."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest

from clawcell.reply import build_reply
from clawcell.ui import UiSettings
from clawcell.ui._media import MediaRoots
from clawcell.ui._render._markdown import highlight_css, render_markdown
from clawcell.ui._render._messages import Renderer
from clawcell.ui._render._views import AttachmentView, CanvasView, HtmlView

TOKEN = "t" * 20
HOST = "http://127.0.0.1:8787/__openclaw__/cap/abc"
TABLE = '<div class="table-scroll" tabindex="0" role="region" aria-label="Table"><table>'
LINK = '<a href="{0}" target="_blank" rel="noopener noreferrer">{1}</a>'


def _renderer(**settings: Any) -> Renderer:
    return Renderer(
        settings=UiSettings(token=TOKEN, **settings), media=MediaRoots([]), canvas_host_url=HOST
    )


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        (
            "<script>window.pwned = 1</script>",
            "<p>&lt;script&gt;window.pwned = 1&lt;/script&gt;</p>",
        ),
        ("<img src=x onerror=alert(1)>", "<p>&lt;img src=x onerror=alert(1)&gt;</p>"),
        ("[x](javascript:alert(1))", "<p>[x](javascript:alert(1))</p>"),
        (
            "[x](https://example.com)",
            '<p><a href="https://example.com" target="_blank" rel="noopener noreferrer">x</a></p>',
        ),
        (
            "![a](https://cdn.example.com/a.png)",
            '<p><img src="https://cdn.example.com/a.png" alt="a"></p>',
        ),
        ("![a](https://10.0.0.1/a.png)", '<p><img alt="a"></p>'),
        ("**b** `c`", "<p><strong>b</strong> <code>c</code></p>"),
        ("~~gone~~ kept", "<p><s>gone</s> kept</p>"),  # struck, not dropped
        (
            "|l|r|c|\n|:-|-:|:-:|\n|1|2|3|",  # aligned: classes (the CSP allows no inline style)
            f'{TABLE}\n<thead>\n<tr>\n<th class="align-left">l</th>\n'
            '<th class="align-right">r</th>\n<th class="align-center">c</th>\n</tr>\n</thead>\n'
            '<tbody>\n<tr>\n<td class="align-left">1</td>\n<td class="align-right">2</td>\n'
            '<td class="align-center">3</td>\n</tr>\n</tbody>\n</table></div>',
        ),
        ('<td class="evil">x</td>', '<p>&lt;td class="evil"&gt;x&lt;/td&gt;</p>'),
        (
            "|a|\n|-|\n|1|",
            f"{TABLE}\n<thead>\n<tr>\n<th>a</th>\n</tr>\n"
            "</thead>\n<tbody>\n<tr>\n<td>1</td>\n</tr>\n</tbody>\n</table></div>",
        ),  # it scrolls in its own box, which takes focus
    ],
)
def test_markdown_is_rendered_and_sanitized(markdown: str, html: str) -> None:
    assert render_markdown(markdown).strip() == html


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("see https://a.dev/x.", "see " + LINK.format("https://a.dev/x", "https://a.dev/x") + "."),
        (
            "(https://a.dev/y), then!",
            "(" + LINK.format("https://a.dev/y", "https://a.dev/y") + "), then!",
        ),
        (
            "https://en.wikipedia.org/wiki/Foo_(bar)).",
            LINK.format(*["https://en.wikipedia.org/wiki/Foo_(bar)"] * 2) + ").",
        ),
        (
            "www.example.com/p?q=1;",
            LINK.format("https://www.example.com/p?q=1", "www.example.com/p?q=1") + ";",
        ),
        ("javascript:alert(1)", "javascript:alert(1)"),  # never a scheme but http(s)
        ("data:text/html,<b>x</b>", "data:text/html,&lt;b&gt;x&lt;/b&gt;"),
        ("vbscript:msgbox(1) http:// www.", "vbscript:msgbox(1) http:// www."),
        ("`https://in.code/` ok", "<code>https://in.code/</code> ok"),
        ("[named](https://a.dev/) text", LINK.format("https://a.dev/", "named") + " text"),
        (
            'https://a.dev/"><script>',
            LINK.format("https://a.dev/", "https://a.dev/") + '"&gt;&lt;script&gt;',
        ),
        ("xhttps://glued.dev", "xhttps://glued.dev"),
    ],
    ids=[
        "full-stop", "parentheses", "balanced-paren", "www", "javascript", "data", "bare-schemes",
        "code", "written-link", "quote-ends-it", "glued",
    ],
)  # fmt: skip
def test_bare_urls_are_linked_with_safe_schemes_only(markdown: str, html: str) -> None:
    assert render_markdown(markdown).strip() == f"<p>{html}</p>"


class _Inputs(HTMLParser):
    """Each `<input>`'s attributes (nh3 writes the attributes it sets in no fixed order)."""

    def __init__(self) -> None:
        super().__init__()
        self.inputs: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "input":
            self.inputs.append(dict(attrs))


def test_task_list_items_get_disabled_checkboxes() -> None:
    html = render_markdown("- [ ] write it\n- [x] test it\n- [X] ship it\n- plain\n- [y] not")
    parser = _Inputs()
    parser.feed(html)
    box = {"type": "checkbox", "disabled": "disabled"}
    assert parser.inputs == [
        {**box, "aria-label": "to do"},
        {**box, "aria-label": "done", "checked": ""},
        {**box, "aria-label": "done", "checked": ""},
    ]
    assert re.sub(r"<input[^>]*>", "[box]", html).strip() == (
        '<ul>\n<li class="task">[box] write it</li>\n<li class="task">[box] test it</li>\n'
        '<li class="task">[box] ship it</li>\n<li>plain</li>\n<li>[y] not</li>\n</ul>'
    )


@pytest.mark.parametrize(
    "markdown",
    ["<input type=text autofocus onfocus=alert(1)>", "[ ] not in a list", "- `[ ] code`"],
)
def test_no_input_but_a_tasks_checkbox_is_ever_rendered(markdown: str) -> None:
    assert "<input" not in render_markdown(markdown)


def test_a_reply_with_media_voice_note_reply_target_and_canvases() -> None:
    text = (
        "[[reply_to_current]] Here you go.\n[[audio_as_voice]]\n"
        "MEDIA:https://cdn.example.com/chart.png\nMEDIA:https://cdn.example.com/note.ogg\n"
        '[embed ref="cv_a" title="A" height="300" /]\n[embed ref="cv_b" /]'
    )
    view = _renderer().reply_text(text)
    assert view.reply_target == "the current message"
    html, image, audio, first, second = view.items
    assert html == HtmlView(html="<p>Here you go.</p>\n")
    assert image == AttachmentView(
        media="image",
        src="https://cdn.example.com/chart.png",
        label="chart.png",
        mime_type="image/png",
        voice_note=False,
    )
    assert isinstance(audio, AttachmentView) and audio.voice_note and audio.media == "audio"
    assert first == CanvasView(
        src=f"{HOST}/__openclaw__/canvas/documents/cv_a/index.html",
        sandbox="allow-scripts",
        height=300,
        title="A",
        url="/__openclaw__/canvas/documents/cv_a/index.html",
    )
    assert isinstance(second, CanvasView) and second.height == 360 and second.title == "cv_b"


@pytest.mark.parametrize(
    ("tier", "sandbox"),
    [("strict", ""), ("scripts", "allow-scripts"), ("trusted", "allow-scripts allow-same-origin")],
)
def test_the_canvas_sandbox_follows_the_tier(tier: str, sandbox: str) -> None:
    view = _renderer(embed_sandbox=tier).reply_text('[embed ref="cv_a" /]')
    assert isinstance(view.items[0], CanvasView) and view.items[0].sandbox == sandbox


def test_a_previews_own_strict_ceiling_wins_over_the_tier() -> None:
    preview = {
        "kind": "canvas",
        "url": "/__openclaw__/canvas/documents/x/index.html",
        "sandbox": "strict",
    }
    view = _renderer(embed_sandbox="trusted").canvas(preview)
    assert isinstance(view, CanvasView) and view.sandbox == ""


def test_external_embeds_are_blocked_unless_allowed() -> None:
    text = '[embed url="https://example.com/board" /]'
    blocked = _renderer().reply_text(text).items[0]
    allowed = _renderer(allow_external_embed_urls=True).reply_text(text).items[0]
    assert isinstance(blocked, CanvasView) and blocked.src is None
    assert isinstance(allowed, CanvasView) and allowed.src == "https://example.com/board"


@pytest.mark.parametrize(
    "text",
    [
        '[embed url="javascript:window.pwned=1" /]',
        '[embed url="data:text/html,<script>window.pwned=1</script>" /]',
        '[embed ref="javascript:alert(1)" /]',
    ],
)
def test_dangerous_embeds_never_become_iframes(text: str) -> None:
    items = _renderer(allow_external_embed_urls=True).reply_text(text).items
    assert all(not isinstance(item, CanvasView) or item.src is None for item in items)
    assert all("<iframe" not in getattr(item, "html", "") for item in items)


def test_a_same_origin_path_outside_the_canvas_roots_is_blocked() -> None:
    view = _renderer().reply_text('[embed url="/__openclaw__/canvas/../api/sessions" /]')
    assert isinstance(view.items[0], CanvasView) and view.items[0].src is None


def test_stored_canvas_blocks_are_not_shown_twice() -> None:
    reply = build_reply('Look.\n[embed ref="cv_a" /]')
    view = _renderer().message({"role": "assistant", "content": list(reply.content)})
    assert [type(item).__name__ for item in view.items] == ["HtmlView", "CanvasView"]


def test_a_canvas_block_without_text_still_renders() -> None:
    block = {
        "type": "canvas",
        "preview": {
            "kind": "canvas",
            "surface": "assistant_message",
            "render": "url",
            "url": "/__openclaw__/canvas/documents/cv_z/index.html",
        },
    }
    view = _renderer().message({"role": "assistant", "content": [block]})
    assert isinstance(view.items[0], CanvasView) and view.items[0].src is not None


def test_refused_media_is_shown_as_refused() -> None:
    view = _renderer().reply_text("MEDIA:/etc/passwd.png")
    item = view.items[0]
    assert isinstance(item, AttachmentView)
    assert item.src is None and item.refusal == "local file outside the configured media roots"


def test_delivery_facts_mark_voice_notes_and_reply_targets_in_history() -> None:
    message = {
        "role": "assistant",
        "content": "MEDIA:https://cdn.example.com/n.ogg",
        "openclawDelivery": {"audioAsVoice": True, "replyToId": "m-9"},
    }
    view = _renderer().message(message)
    assert view.reply_target == "message m-9"
    assert isinstance(view.items[0], AttachmentView) and view.items[0].voice_note


def test_user_messages_are_markdown_without_directive_processing() -> None:
    view = _renderer().message({"role": "user", "content": "MEDIA:https://cdn.example.com/a.png"})
    assert view.items == (HtmlView(html="<p>MEDIA:https://cdn.example.com/a.png</p>\n"),)


def test_tool_results_and_empty_messages_are_not_displayed() -> None:
    views = _renderer().messages(
        [
            {"role": "toolResult", "content": "x"},
            {"role": "assistant", "content": []},
            {"role": "assistant", "content": "hi"},
        ]
    )
    assert [v.role for v in views] == ["assistant"]


def test_video_and_document_attachments_get_a_player_and_a_link() -> None:
    from clawcell.ui._templates import fragment

    view = _renderer().reply_text(
        "MEDIA:https://cdn.example.com/clip.mp4\nMEDIA:https://cdn.example.com/q3%20report.pdf"
    )
    html = fragment("message", value=view)
    assert '<video controls preload="metadata" src="https://cdn.example.com/clip.mp4">' in html
    assert (
        '<a class="document" href="https://cdn.example.com/q3%20report.pdf" target="_blank" '
        'rel="noopener noreferrer">q3 report.pdf</a> <span class="mime">application/pdf</span>'
    ) in html


def test_fenced_code_is_highlighted_on_the_server_and_gets_a_copy_button() -> None:
    from clawcell.ui._render._markdown import render_markdown

    html = render_markdown('```python\nx = "<b>"\n```\n\nSee `<pre><code>`.')
    assert html.startswith(
        '<div class="code-block"><button type="button" class="copy copy-code" '
        'aria-label="Copy code">Copy</button><pre tabindex="0"><code class="language-python">'
        '<span class="n">x</span> <span class="o">=</span> <span class="s2">"&lt;b&gt;"</span>'
    )
    assert "<p>See <code>&lt;pre&gt;&lt;code&gt;</code>.</p>" in html  # inline: escaped, no button


def test_an_unknown_language_is_shown_plain_and_span_classes_stay_token_names() -> None:
    from clawcell.ui._render._markdown import render_markdown

    assert '<code class="language-nope">a &lt; b\n</code>' in render_markdown("```nope\na < b\n```")
    assert "<span" not in render_markdown('<span class="x" onclick="y">z</span>')


def test_a_canvas_is_drawn_where_its_shortcode_stood() -> None:
    text = (
        "Before the board.\n\n"
        '[embed ref="cv_a" title="A" /]\n\n'
        "Between.\nMEDIA:https://cdn.example.com/chart.png\n"
        '[embed ref="cv_b" title="B"]ignored body[/embed] After `[embed ref="cv_c" /]`.'
    )
    items = _renderer().reply_text(text).items
    kinds = [(type(item).__name__, getattr(item, "title", None)) for item in items]
    assert kinds == [
        ("HtmlView", None), ("CanvasView", "A"), ("HtmlView", None), ("AttachmentView", None),
        ("CanvasView", "B"), ("HtmlView", None),
    ]  # fmt: skip
    first, _, between, _, _, after = items
    assert isinstance(first, HtmlView) and first.html == "<p>Before the board.</p>\n"
    assert isinstance(between, HtmlView) and between.html == "<p>Between.</p>\n"
    assert isinstance(after, HtmlView)
    assert after.html == '<p>After <code>[embed ref="cv_c" /]</code>.</p>\n'  # code: literal


def test_every_highlight_colour_contrasts_4_5_to_1_with_the_code_background() -> None:
    def rgb(hex_colour: str) -> tuple[int, ...]:
        full = "".join(c * 2 for c in hex_colour) if len(hex_colour) == 3 else hex_colour
        return tuple(int(full[i : i + 2], 16) for i in (0, 2, 4))

    def luminance(colour: tuple[int, ...]) -> float:
        linear = [c / 3294 if c <= 10 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in colour]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = highlight_css().split("@media (prefers-color-scheme: dark)")
    for rules, background in ((light, "f0f2f5"), (dark, "262d38")):  # `--code` in app.css
        colours = re.findall(r"(?<![-\w])color: #([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b", rules)
        assert len(colours) > 20
        for colour in colours:
            high, low = sorted((luminance(rgb(colour)), luminance(rgb(background))))[::-1]
            assert (high + 0.05) / (low + 0.05) >= 4.5, colour
