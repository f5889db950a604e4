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
* `format_syntax_error` renders a parser error the way the release does.

Module access is found on a light JavaScript tokenizer that skips strings, comments, regular
expression literals and template text (but not `${…}` code), so `"require("` in a string is
fine. Shell detection looks only at the start of the cell, after leading comments and
`NAME=value` prefixes. It flags shapes that are a syntax error in JavaScript (two words in a
row, `cmd --flag`, a leading path, `if [ … ]`, `for f in …`) and a few valid-but-implausible
starts with well-known commands (`ls -la`, a lone `git`, `ls | wc -l`). The release decides
with a JavaScript parser; without one, this port differs in two deliberate ways: a cell that
merely fails to parse is left to the parser's syntax error (the release calls
`result = foo(;` shell), and a command word the cell declares anywhere is never shell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from .errors import InputError
from .runtime import wire

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
    if _accesses_modules(_tokens(code)):
        return SourceProblem(kind="module_access", message=MODULE_ACCESS_MESSAGE)
    if looks_like_shell(code):
        return SourceProblem(kind="shell", message=SHELL_SOURCE_MESSAGE)
    return None


# --- a light JavaScript tokenizer ------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """End of `pattern` matched at `pos`; the patterns given here also match empty text."""
    found = pattern.match(text, pos)
    return pos if found is None else found.end()


# Possessive repeats (`*+`): the alternatives are disjoint, so no backtracking is ever
# needed, and Python's engine would otherwise keep a backtrack point per repetition.
_SPACE = re.compile(r"(?:\s+|//[^\n]*|/\*.*?(?:\*/|\Z))*+", re.S)
_WORD = re.compile(r"[\w$\u0080-\U0010ffff]+")
_PUNCT = re.compile(r"\?\.(?!\d)|=>|\.\.\.|[^\s\w]")
_STRING = {
    '"': re.compile(r'"(?:[^"\\\n]|\\.)*+"?', re.S),
    "'": re.compile(r"'(?:[^'\\\n]|\\.)*+'?", re.S),
}
_REGEX = re.compile(r"/(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*+\]?)*+/?[\w$]*")
_TEMPLATE_TEXT = re.compile(r"(?:[^`\\$]|\\.|\$(?!\{))*+", re.S)
# After these words a `/` starts a regular expression, not a division.
_KEYWORDS_BEFORE_EXPRESSION = _words(
    "return typeof instanceof in of new delete void throw case do else yield await"
)


@dataclass(frozen=True)
class _Token:
    kind: Literal["word", "punct", "literal"]
    text: str


class _Scanner:
    """Significant tokens of a JavaScript source; literal contents collapse to one token."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.pos = 2 if code.startswith("#!") else 0
        if self.pos:
            newline = code.find("\n")
            self.pos = len(code) if newline < 0 else newline
        self.tokens: list[_Token] = []
        self.braces: list[bool] = []  # True where a `{` opened a template substitution

    def run(self) -> list[_Token]:
        while True:
            self.pos = _end(_SPACE, self.code, self.pos)
            if self.pos >= len(self.code):
                return self.tokens
            self._step(self.code[self.pos])

    def _step(self, char: str) -> None:
        if char in _STRING:
            self._literal(_STRING[char])
        elif char == "`" or (char == "}" and self.braces and self.braces[-1]):
            if char == "}":
                self.braces.pop()
            self._template()
        elif char == "/" and self._regex_allowed():
            self._literal(_REGEX)
        elif word := _WORD.match(self.code, self.pos):
            self._push("word", word.group(), word.end())
        else:
            self._punct()

    def _literal(self, pattern: re.Pattern[str]) -> None:
        end = pattern.match(self.code, self.pos)
        self._push("literal", "", end.end() if end else self.pos + 1)

    def _template(self) -> None:
        end = _end(_TEMPLATE_TEXT, self.code, self.pos + 1)
        if self.code.startswith("${", end):
            self.braces.append(True)
            end += 2
        elif end < len(self.code):
            end += 1  # the closing backtick
        self._push("literal", "", end)

    def _punct(self) -> None:
        text = self.code[self.pos : _end(_PUNCT, self.code, self.pos)] or self.code[self.pos]
        if text == "{":
            self.braces.append(False)
        elif text == "}" and self.braces:
            self.braces.pop()
        self._push("punct", text, self.pos + len(text))

    def _push(self, kind: Literal["word", "punct", "literal"], text: str, end: int) -> None:
        self.tokens.append(_Token(kind, text))
        self.pos = end

    def _regex_allowed(self) -> bool:
        if not self.tokens:
            return True
        last = self.tokens[-1]
        if last.kind == "word":
            return last.text in _KEYWORDS_BEFORE_EXPRESSION
        return last.kind == "punct" and last.text not in (")", "]")


def _tokens(code: str) -> list[_Token]:
    return _Scanner(code).run()


def _accesses_modules(tokens: list[_Token]) -> bool:
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


def _closing_parens(tokens: list[_Token]) -> dict[int, int]:
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


def _text_at(tokens: list[_Token], index: int) -> str:
    return tokens[index].text if index < len(tokens) else ""


def _is_dynamic_import(tokens: list[_Token], index: int, closing: dict[int, int]) -> bool:
    after = _text_at(tokens, index + 1)
    if after == ".":
        return _text_at(tokens, index + 2) == "meta"
    return after == "(" and not _is_method_definition(tokens, index + 1, closing)


def _is_require_call(
    tokens: list[_Token], index: int, before: str, closing: dict[int, int]
) -> bool:
    at = index + 1
    if before in ("(", ","):  # `(require)(…)` and `(0, require)(…)`
        while _text_at(tokens, at) == ")":
            at += 1
    if _text_at(tokens, at) == "?.":
        at += 1
    return _text_at(tokens, at) == "(" and not _is_method_definition(tokens, at, closing)


def _is_method_definition(tokens: list[_Token], open_paren: int, closing: dict[int, int]) -> bool:
    """Whether the parenthesis at `open_paren` is a parameter list followed by a body."""
    close = closing.get(open_paren)
    return close is not None and _text_at(tokens, close + 1) == "{"


# --- shell-looking source --------------------------------------------------------------------

# Commands no JavaScript cell starts with: alone, or before `|`, `&&`, `>`, `;`, they are shell.
_SHELL_ONLY_COMMANDS = _words(
    """ag apk apt apt-get awk az bash brew bun bundle cargo cat cd chgrp chmod chown clang
    cls cmake composer cp crontab curl deno df dnf docker docker-compose dotnet du egrep
    emacs eslint ffmpeg fish gcc gem gh git gofmt gradle grep gunzip gzip helm history
    hostname htop javac jest journalctl jq kubectl killall ll ln ls lsof make man mkdir
    mocha mv mvn mysql nano netstat npm npx nslookup openssl pandoc perl php pip pip3 pipx
    pkill pnpm poetry powershell prettier printf ps psql pwd pwsh pytest python python3
    rails rg rm rmdir rsync ruby rustc rustup scp sed sh sqlite3 ssh su sudo systemctl
    tar tee terraform touch traceroute tsc uname unzip uv uvx vi vim vitest wc wget
    whoami xargs yarn yum zip zsh"""
)
# Commands that are also everyday JavaScript names: shell only with flags or arguments.
_SHELL_COMMANDS = _SHELL_ONLY_COMMANDS | _words(
    """alias cmd code cut date diff dir echo env exec exit file find go head help id ip java
    kill less local more node open read service set shift sleep sort source stat tail test
    time top tree type uniq wait which"""
)
_JS_LEADING_WORDS = _words(
    """async await break case catch class const continue debugger default delete do else
    enum export extends false finally for function if import in instanceof let new null of
    return static super switch this throw true try typeof undefined var void while with
    yield Array Boolean Date Error JSON Map Math Number Object Promise Reflect RegExp Set
    String Symbol console globalThis"""
)

_LEADING_COMMENTS = re.compile(r"(?:(?://|#)[^\n]*(?:\n|\Z)|/\*.*?\*/|\s+)*+", re.S)
_SHELL_CONTROL = re.compile(
    r"(?:if|while|until)[ \t]+[^\s(]|for[ \t]+(?!await\b)[^\s(]"
    r"|case[ \t]+\S+[ \t]+in\b|function[ \t]+[\w-]+[ \t]*\{"
)
_ENV_ASSIGNMENT = re.compile(
    r"""[A-Za-z_]\w*=((?:"(?:\\.|[^"\\])*+"|'[^']*+'|[^\s;&|'"])*+)[ \t]+"""
)
_PATH_COMMAND = re.compile(
    r"(?:\.{1,2}/|~/)\S|\.[ \t]+[\w~./]"
    r"|/(?:usr|bin|sbin|opt|etc|home|tmp|var)(?:/[\w.+-]+)*(?:\s|$)"
)
_COMMAND_WORD = re.compile(r"[A-Za-z_$][\w$]*(?:-[\w$]+)*")
_BARE_ARGUMENT = re.compile(r"""(?!(?:in|instanceof)\b)[\w$]|["']|~/|\.{1,2}/|--\w""")
_FLAG_OR_PATH = re.compile(r"[-+][A-Za-z\d]|/|\*[\w.]|\.(?:\s|$)")
_SHELL_OPERATOR = re.compile(r"\|\|?|&&|;|\d?>>?|<<?|&>")
_CONTINUATION = re.compile(r"[.?(\[+\-*/%=&|^<>,:]|in\b|instanceof\b")
_DECLARED = r"\b(?:function|var|let|const|class)\s+{}\b"


def looks_like_shell(code: str) -> bool:
    """Whether `code` starts like a shell command rather than JavaScript."""
    text = code.strip()
    if text.startswith("#!"):
        return True
    text = text[_end(_LEADING_COMMENTS, text, 0) :]
    if not text:
        return False
    if _SHELL_CONTROL.match(text) or _PATH_COMMAND.match(text):
        return True
    at = 0
    while (assignment := _ENV_ASSIGNMENT.match(text, at)) and assignment.group(1) not in (
        _JS_LEADING_WORDS
    ):
        at = assignment.end()  # no slicing per prefix: linear in many `A=1 ` prefixes
    text = text[at:]
    word = _COMMAND_WORD.match(text)
    if word is None:
        return False
    if word.group() == "export":
        return re.match(r"export[ \t]+[A-Za-z_]\w*(?:=|\s|$)", text) is not None and not (
            re.match(r"export[ \t]+(?:const|let|var|function|class|async|default)\b", text)
        )
    if word.group() in _JS_LEADING_WORDS or re.search(
        _DECLARED.format(re.escape(word.group())), code
    ):
        return False
    return _is_invocation(word.group(), text[word.end() :])


def _is_invocation(command: str, rest: str) -> bool:
    line = rest.split("\n", 1)[0]
    argument = line.lstrip(" \t")
    if not argument.strip():
        return command in _SHELL_ONLY_COMMANDS and _ends_command(rest[len(line) :])
    if command in _SHELL_ONLY_COMMANDS and _SHELL_OPERATOR.match(argument):
        return True
    if len(argument) == len(line):
        return False  # `ls(`, `git.status`: no space, JavaScript continues
    if _BARE_ARGUMENT.match(argument):
        return True  # two words in a row: never JavaScript
    return command in _SHELL_COMMANDS and _FLAG_OR_PATH.match(argument) is not None


def _ends_command(following: str) -> bool:
    """Whether the lines after a lone command word do not continue a JavaScript expression."""
    following = following.lstrip()
    return not following or _CONTINUATION.match(following) is None


_USER_FILE: Final = wire.USER_FILE + ":"


def syntax_error_message(text: str, stack: str, code: str) -> str:
    """The `invalid_input` message of a cell QuickJS could not parse.

    `text` and `stack` are the parser's exception and its stack; the position is the first
    user-file frame's, moved up one line for the wrapper's header and clamped to the code.
    """
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
