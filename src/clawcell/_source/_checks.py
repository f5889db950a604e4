"""Checks on the source of an `exec` call before any engine runs (spec `code-mode.md` §2.1).

A model sometimes sends a cell that reaches for Node's module system, or a shell command
instead of JavaScript. These are answered before a guest is started, with the exact protocol
messages of the shipped release (`release-differences.md` §2):

* `check_source` finds module access (`import(…)`, `import.meta`, calls of `require`, also
  through `(require)(…)`, `(0, require)(…)` and `require?.(…)`) and shell-looking source.
  Static `import`/`export` declarations are left to the JavaScript parser, which reports
  them as syntax errors, as the release does (the cell's failures word them:
  `_cell/_failures.py`).

The call's arguments are read before this, by `_call` (`read_exec_args`). Module access is
found on the tokens of `_tokenizer` (which skips strings, comments, regular expression
literals and template text, so `"require("` in a string is fine); shell-looking source is
`_shell_detection`'s decision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from .._lazy import value_class
from ._shell_detection import looks_like_shell

if TYPE_CHECKING:
    from ._tokenizer import Token

__all__ = ["MODULE_ACCESS_MESSAGE", "SHELL_SOURCE_MESSAGE", "SourceProblem", "check_source"]

MODULE_ACCESS_MESSAGE = "code mode module access is disabled."
SHELL_SOURCE_MESSAGE = (
    "code-mode exec runs JavaScript, not shell commands. Call an enabled async tool global "
    "from guest JavaScript; use catalog.search(query) when the bounded quick index omits it. "
    "Do not retry the same shell command as code."
)


# --- source checks ---------------------------------------------------------------------------


@value_class
class SourceProblem:
    """Why a cell's source is refused before it runs, with the protocol message."""

    kind: Literal["module_access", "shell"]
    message: str


def check_source(code: str) -> SourceProblem | None:
    """Refuse module access and shell commands; `None` when the source may run."""
    # Token texts are slices of the source (escapes are not decoded), so source without
    # either word has no token to find: most cells skip the tokenizer (4 ms of a 200-byte
    # cell's request in `clawcell mcp serve` under load), and a process whose cells name
    # neither never loads it (its seven patterns and `Token`: docs/benchmarks.md, "Cold
    # start, fifth pass").
    if "import" in code or "require" in code:
        from ._tokenizer import tokenize

        if _accesses_modules(tokenize(code)):
            return SourceProblem(kind="module_access", message=MODULE_ACCESS_MESSAGE)
    if looks_like_shell(code):
        return SourceProblem(kind="shell", message=SHELL_SOURCE_MESSAGE)
    return None


# --- module access -------------------------------------------------------------------------


def _accesses_modules(tokens: list[Token]) -> bool:
    closing = _closing_parens(tokens)
    for index, token in enumerate(tokens):
        if token.kind != "word" or token.text not in ("import", "require"):
            continue
        before = tokens[index - 1].text if index else ""
        if before in (".", "?.", "function"):
            continue  # a property, a method call on an object, or a declaration
        if token.text == "import" and _is_dynamic_import(tokens, index, closing):
            return True
        if token.text == "require" and _is_require_call(tokens, index, before, closing):
            return True
    return False


def _closing_parens(tokens: list[Token]) -> dict[int, int]:
    """The index of the matching `)` of every `(` that is closed, in one pass (D4: the
    scan used to walk forward from each call, quadratic in nested calls)."""
    closing: dict[int, int] = {}
    opened: list[int] = []
    for at, token in enumerate(tokens):
        if token.kind != "punct":
            continue
        if token.text == "(":
            opened.append(at)
        elif token.text == ")" and opened:
            closing[opened.pop()] = at
    return closing


def _text_at(tokens: list[Token], index: int) -> str:
    return tokens[index].text if index < len(tokens) else ""


def _is_dynamic_import(tokens: list[Token], index: int, closing: dict[int, int]) -> bool:
    after = _text_at(tokens, index + 1)
    if after == ".":
        return _text_at(tokens, index + 2) == "meta"
    return after == "(" and not _is_method_definition(tokens, index + 1, closing)


def _is_require_call(tokens: list[Token], index: int, before: str, closing: dict[int, int]) -> bool:
    at = index + 1
    if before in ("(", ","):  # `(require)(…)` and `(0, require)(…)`
        while _text_at(tokens, at) == ")":
            at += 1
    if _text_at(tokens, at) == "?.":
        at += 1
    return _text_at(tokens, at) == "(" and not _is_method_definition(tokens, at, closing)


def _is_method_definition(tokens: list[Token], open_paren: int, closing: dict[int, int]) -> bool:
    """Whether the parenthesis at `open_paren` is a parameter list followed by a body."""
    close = closing.get(open_paren)
    return close is not None and _text_at(tokens, close + 1) == "{"
