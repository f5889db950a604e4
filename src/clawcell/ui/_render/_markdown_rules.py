"""Two markdown-it core rules of our own: bare URLs become links, `[ ]`/`[x]` items become tasks.

Bare links: a `http://`, `https://` or `www.` address in ordinary text (not in code, not
inside a link already) becomes a link; no other scheme is ever linked, so a bare
`javascript:` or `data:` address stays text. Trailing punctuation (`.,;:!?'"*_~`) and a
closing `)` or `]` without its opening one stay outside the link, so "see https://a.dev/x."
links `https://a.dev/x`. The address then passes markdown-it's own `validateLink` and nh3's
scheme allowlist like a written link. (linkify-it-py would also find bare domains and e-mail
addresses; it would be a new dependency for a rule this small, and links to bare domains
guessed from text are more often wrong than right in model replies.)

Task lists: a list item whose text starts with `[ ] `, `[x] ` or `[X] ` gets a disabled
checkbox (checked for `x`) in place of the marker and the class `task`. The checkbox is an
`html_inline` token only this rule makes (the parser's own HTML is off), and nh3 then forces
`type="checkbox" disabled` on every `input` it keeps.
"""

from __future__ import annotations

import re
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

__all__ = ["use_bare_links", "use_task_lists"]

_BARE: Final = re.compile(r"(?<![\w/.@:-])(?:https?://|www\.)[^\s<>\"'`]+", re.IGNORECASE)
_BARE_PREFIXES: Final = ("http://", "https://", "www.")
_TRAILING: Final = ".,;:!?'\"*_~"
_PAIRS: Final = {")": "(", "]": "["}
_TASK: Final = re.compile(r"\[([ xX])\][ \t]")


def use_bare_links(md: MarkdownIt) -> None:
    """Link bare `http(s)://` and `www.` addresses in `md`'s text (see the module docstring)."""

    def rule(state: StateCore) -> None:
        for token in state.tokens:
            if token.type == "inline" and token.children:
                token.children = _linked(md, token.children)

    md.core.ruler.push("bare_links", rule)


def _linked(md: MarkdownIt, children: list[Token]) -> list[Token]:
    out: list[Token] = []
    depth = 0  # inside a written link: no link in a link
    for token in children:
        depth += token.type == "link_open"
        depth -= token.type == "link_close"
        if token.type != "text" or depth > 0 or not _BARE.search(token.content):
            out.append(token)
            continue
        out += _split(md, token)
    return out


def _split(md: MarkdownIt, token: Token) -> list[Token]:
    text, start, out = token.content, 0, list[Token]()
    for match in _BARE.finditer(text):
        address = _trimmed(match.group(0))
        href = md.normalizeLink(address if "://" in address else f"https://{address}")
        if address.lower() in _BARE_PREFIXES or not md.validateLink(href):
            continue
        out.append(_text(text[start : match.start()], token))
        link = Token("link_open", "a", 1, attrs={"href": href}, level=token.level)
        out += [link, _text(address, token), Token("link_close", "a", -1, level=token.level)]
        start = match.start() + len(address)
    out.append(_text(text[start:], token))
    return [t for t in out if t.type != "text" or t.content]


def _trimmed(address: str) -> str:
    """`address` without the punctuation that ends the sentence around it."""
    while address:
        last = address[-1]
        opener = _PAIRS.get(last)
        if last in _TRAILING or (opener and address.count(last) > address.count(opener)):
            address = address[:-1]
        else:
            break
    return address


def _text(content: str, like: Token) -> Token:
    return Token("text", "", 0, content=content, level=like.level)


def use_task_lists(md: MarkdownIt) -> None:
    """Render `[ ]`/`[x]` list items as tasks with disabled checkboxes in `md`."""

    def rule(state: StateCore) -> None:
        tokens = state.tokens
        for index in range(2, len(tokens)):
            inline = tokens[index]
            if tokens[index - 2].type != "list_item_open" or inline.type != "inline":
                continue
            first = inline.children[0] if inline.children else None
            marker = _TASK.match(first.content) if first and first.type == "text" else None
            if first is None or marker is None:
                continue
            done = marker.group(1) != " "
            first.content = first.content[marker.end() :]
            box = Token("html_inline", "", 0, content=_checkbox(done=done))
            inline.children = [box, *(inline.children or [])]
            tokens[index - 2].attrSet("class", "task")

    md.core.ruler.push("task_lists", rule)


def _checkbox(*, done: bool) -> str:
    state, label = (" checked", "done") if done else ("", "to do")
    return f'<input type="checkbox" disabled{state} aria-label="{label}"> '
