"""Checks on an `exec` call before any engine runs (spec `code-mode.md` §2.1, §2.2).

A model sometimes sends the wrong thing: no code, TypeScript options, a shell command, or a
cell that reaches for Node's module system. These are answered before a guest is started,
with the exact protocol messages of the shipped release (`release-differences.md` §2):

* `read_exec_args` / `read_wait_args` read the tool arguments. Empty or blank `code` (and a
  blank `runId`) **raise** `InputError`: the recorded release rejects the tool call itself.
  Every other argument problem is **returned** as a message string, for the caller to answer
  with a `failed` / `invalid_input` envelope (`language`/`typecheck`, `restartSafe` not a
  boolean, `code` and `command` that differ, a `title` that is not a string of at most 120
  characters — the release's schema rejects those titles; its wording is not recorded), and
  `code` over `MAX_SOURCE_BYTES` (1 MiB of UTF-8; a cap of this port, the release sets none).
* `check_source` finds module access (`import(…)`, `import.meta`, calls of `require`, also
  through `(require)(…)`, `(0, require)(…)` and `require?.(…)`) and shell-looking source.
  Static `import`/`export` declarations are left to the JavaScript parser, which reports
  them as syntax errors, as the release does.
* `format_syntax_error` renders a parser error the way the release does, and
  `syntax_error_message` takes its words and position from acorn, the release's parser
  (`runtime.parse_failure`), when QuickJS refuses a cell.

Module access is found on the tokens of `_tokenizer` (which skips strings, comments, regular
expression literals and template text, so `"require("` in a string is fine); shell-looking
source is `_shell`'s decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..errors import InputError
from ..runtime import wire
from ._shell import looks_like_shell
from ._tokenizer import Token, tokenize

__all__ = [
    "LANGUAGE_MESSAGE",
    "MAX_SOURCE_BYTES",
    "MODULE_ACCESS_MESSAGE",
    "SHELL_SOURCE_MESSAGE",
    "ExecArgs",
    "SourceProblem",
    "check_source",
    "format_syntax_error",
    "read_exec_args",
    "read_wait_args",
    "syntax_error_message",
]

MODULE_ACCESS_MESSAGE = "code mode module access is disabled."
SHELL_SOURCE_MESSAGE = (
    "code-mode exec runs JavaScript, not shell commands. Call an enabled async tool global "
    "from guest JavaScript; use catalog.search(query) when the bounded quick index omits it. "
    "Do not retry the same shell command as code."
)
LANGUAGE_MESSAGE = (
    "Code Mode accepts JavaScript only. Remove language and typecheck; "
    "use API.read(...) for tool types."
)
EMPTY_CODE_MESSAGE = "code or command must be a non-empty string."
CODE_COMMAND_MISMATCH_MESSAGE = "code and command must match when both are provided."
RESTART_SAFE_MESSAGE = "restartSafe must be a boolean."
TITLE_MESSAGE = "title must be a string of at most 120 characters."
EMPTY_RUN_ID_MESSAGE = "runId must be a non-empty string."
MAX_TITLE_CHARS = 120
MAX_SOURCE_BYTES = 1024 * 1024
SOURCE_SIZE_MESSAGE = (
    "code is {size} bytes of UTF-8; Code Mode accepts at most {limit} bytes of JavaScript. "
    "Keep data out of the source: fetch it with a tool or keep it with results.save()."
)


# --- arguments -------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ExecArgs:
    """The readable arguments of one `exec` call."""

    code: str
    title: str | None = None
    restart_safe: bool = False


def _non_blank(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    return value if isinstance(value, str) and value.strip() else None


def read_exec_args(args: Mapping[str, Any]) -> ExecArgs | str:
    """Read `exec` arguments; return them, or the message of a `failed` input envelope.

    Raises:
        InputError: Neither `code` nor `command` is a non-empty string.
    """
    code, command = _non_blank(args, "code"), _non_blank(args, "command")
    if code is not None and command is not None and code != command:
        return CODE_COMMAND_MISMATCH_MESSAGE
    source = code if code is not None else command
    if source is None:
        raise InputError(EMPTY_CODE_MESSAGE)
    if "language" in args or "typecheck" in args:
        return LANGUAGE_MESSAGE
    too_large = _source_size_problem(source)
    if too_large is not None:
        return too_large
    restart_safe = args.get("restartSafe", False)
    if not isinstance(restart_safe, bool):
        return RESTART_SAFE_MESSAGE
    title = args.get("title")
    if title is not None and (not isinstance(title, str) or len(title) > MAX_TITLE_CHARS):
        return TITLE_MESSAGE
    return ExecArgs(code=source, title=title, restart_safe=restart_safe)


def _source_size_problem(source: str) -> str | None:
    """The message for a source over `MAX_SOURCE_BYTES` (D3, D4: a 100 MB cell used to
    exhaust guest memory, and large ones blocked the event loop in the checks)."""
    if len(source) * 3 <= MAX_SOURCE_BYTES:  # at most 3 UTF-8 bytes per UTF-16 unit
        return None
    # An ASCII string's length is its UTF-8 size: a huge one is measured without a copy.
    size = len(source) if source.isascii() else len(source.encode("utf-8", "surrogatepass"))
    if size <= MAX_SOURCE_BYTES:
        return None
    return SOURCE_SIZE_MESSAGE.format(size=size, limit=MAX_SOURCE_BYTES)


def read_wait_args(args: Mapping[str, Any]) -> str:
    """Read the trimmed `runId` (or `run_id`) of a `wait` call.

    Raises:
        InputError: The id is missing, not a string or blank.
    """
    run_id = args.get("runId", args.get("run_id"))
    if not isinstance(run_id, str) or not run_id.strip():
        raise InputError(EMPTY_RUN_ID_MESSAGE)
    return run_id.strip()


def format_syntax_error(message: str, line: int, column: int) -> str:
    """The release's syntax-error text for the submitted code (1-based line and column).

    The release writes `<parser message>.` before its advice; a message that already ends
    in a period keeps just one.
    """
    return (
        f"SyntaxError at openclaw-code-mode:user.js:{line}:{column}: {message.rstrip('.')}. "
        "No tools were dispatched; correct the JavaScript source and submit it again."
    )


# --- source checks ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SourceProblem:
    """Why a cell's source is refused before it runs, with the protocol message."""

    kind: Literal["module_access", "shell"]
    message: str


def check_source(code: str) -> SourceProblem | None:
    """Refuse module access and shell commands; `None` when the source may run."""
    # Token texts are slices of the source (escapes are not decoded), so source without
    # either word has no token to find: most cells skip the tokenizer (4 ms of a 200-byte
    # cell's request in `clawcell mcp serve` under load).
    if ("import" in code or "require" in code) and _accesses_modules(tokenize(code)):
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


_USER_FILE: Final = wire.USER_FILE + ":"


def syntax_error_message(text: str, stack: str, code: str) -> str:
    """The `invalid_input` message of a cell QuickJS could not parse.

    The words and position are acorn's, the parser the release checks cells with
    (`runtime.parse_failure`). When acorn accepts the cell or cannot answer, they are
    QuickJS's: `text` and `stack` are its exception and stack, and the position is the first
    user-file frame's, moved up one line for the wrapper's header and clamped to the code.
    """
    from ..runtime import parse_failure  # acorn loads with the first syntax error

    found = parse_failure(code)
    if found is not None:
        return format_syntax_error(found.message, found.line, found.column)
    message = text.removeprefix("SyntaxError: ")
    line, column = 1, 1
    for frame in stack.splitlines():
        at = frame.find(_USER_FILE)
        if at >= 0:
            parts = frame[at + len(_USER_FILE) :].rstrip(")").split(":")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                line, column = int(parts[0]) - 1, int(parts[1])
                break
    last_line = code.count("\n") + 1
    line = min(max(line, 1), last_line)
    return format_syntax_error(message, line, column)
