"""Shell detection: whether a cell starts like a shell command rather than JavaScript.

It looks only at the start of the cell, after leading comments and `NAME=value` prefixes. It
flags shapes that are a syntax error in JavaScript (two words in a row, `cmd --flag`, a leading
path, `if [ … ]`, `for f in …`) and a few valid-but-implausible starts with well-known commands
(`ls -la`, a lone `git`, `ls | wc -l`). The release decides with a JavaScript parser; without
one, this port differs in two deliberate ways: a cell that merely fails to parse is left to the
parser's syntax error (the release calls `result = foo(;` shell), and a command word the cell
declares anywhere is never shell.
"""

from __future__ import annotations

import re

__all__ = ["looks_like_shell"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


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

# The patterns below stay text until a cell needs them: `re` compiles one on its first use and
# keeps it in its own cache. Compiling all ten at import took 0.8 ms of every process's cold
# start, and most cells never reach them (`_PLAIN_JAVASCRIPT` decides first).
_LEADING_COMMENTS = r"(?s)(?:(?://|#)[^\n]*(?:\n|\Z)|/\*.*?\*/|\s+)*+"
_SHELL_CONTROL = (
    r"(?:if|while|until)[ \t]+[^\s(]|for[ \t]+(?!await\b)[^\s(]"
    r"|case[ \t]+\S+[ \t]+in\b|function[ \t]+[\w-]+[ \t]*\{"
)
_ENV_ASSIGNMENT = r"""[A-Za-z_]\w*=((?:"(?:\\.|[^"\\])*+"|'[^']*+'|[^\s;&|'"])*+)[ \t]+"""
_PATH_COMMAND = (
    r"(?:\.{1,2}/|~/)\S|\.[ \t]+[\w~./]"
    r"|/(?:usr|bin|sbin|opt|etc|home|tmp|var)(?:/[\w.+-]+)*(?:\s|$)"
)
_COMMAND_WORD = r"[A-Za-z_$][\w$]*(?:-[\w$]+)*"
_BARE_ARGUMENT = r"""(?!(?:in|instanceof)\b)[\w$]|["']|~/|\.{1,2}/|--\w"""
_FLAG_OR_PATH = r"[-+][A-Za-z\d]|/|\*[\w.]|\.(?:\s|$)"
_SHELL_OPERATOR = r"\|\|?|&&|;|\d?>>?|<<?|&>"
_CONTINUATION = r"[.?(\[+\-*/%=&|^<>,:]|in\b|instanceof\b"
_DECLARED = r"\b(?:function|var|let|const|class)\s+{}\b"
# Most cells start with one of these keywords, which no check below can read as shell: not a
# control word, a path, a `NAME=` prefix or a command word (a `-`, `$` or word character after
# it would make a longer word, `=` an assignment: those take the checks).
_PLAIN_JAVASCRIPT = re.compile(
    r"(?:return|const|let|await|var|async|throw|try|class|new)(?![\w$=-])"
)


def looks_like_shell(code: str) -> bool:
    """Whether `code` starts like a shell command rather than JavaScript."""
    text = code.strip()
    if _PLAIN_JAVASCRIPT.match(text):
        return False
    if text.startswith("#!"):
        return True
    comments = re.match(_LEADING_COMMENTS, text)
    text = text[comments.end() :] if comments else text
    if not text:
        return False
    if re.match(_SHELL_CONTROL, text) or re.match(_PATH_COMMAND, text):
        return True
    at = 0
    assignments = re.compile(_ENV_ASSIGNMENT)  # (from `re`'s cache after the first cell)
    while (assignment := assignments.match(text, at)) and assignment.group(1) not in (
        _JS_LEADING_WORDS
    ):
        at = assignment.end()  # no slicing per prefix: linear in many `A=1 ` prefixes
    text = text[at:]
    word = re.match(_COMMAND_WORD, text)
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
    if command in _SHELL_ONLY_COMMANDS and re.match(_SHELL_OPERATOR, argument):
        return True
    if len(argument) == len(line):
        return False  # `ls(`, `git.status`: no space, JavaScript continues
    if re.match(_BARE_ARGUMENT, argument):
        return True  # two words in a row: never JavaScript
    return command in _SHELL_COMMANDS and re.match(_FLAG_OR_PATH, argument) is not None


def _ends_command(following: str) -> bool:
    """Whether the lines after a lone command word do not continue a JavaScript expression."""
    following = following.lstrip()
    return not following or re.match(_CONTINUATION, following) is None
