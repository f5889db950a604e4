"""`allow_commands`: a rule matches one plain simple command, or it does not match.

Threat model: the model writes `exec` commands that a person's `allow_commands` rule lets run
without asking. A rule such as `git status*` must not let anything else run: no second
command (`;`, `&&`, `||`, `|`, `&`, a newline), no substitution (`$(…)`, backticks, `$VAR`),
no redirection (`>`, `<`), no globbing or brace expansion (workspace file names would become
arguments), no variable assignment in front (`PATH=. git status`, `GIT_CONFIG_…=`), no
`env` input beside it. So a command is first split into words by a small tokenizer that
accepts only a plain simple command: bare words of safe characters, single-quoted text
(literal) and double-quoted text without `$`, backtick or backslash. Anything else yields
`None`, and a command that cannot be parsed never matches: it is asked about. A parsed command
is matched as its words joined by one space, with `fnmatch` against each pattern.

What a rule cannot say: an allowed program may itself run workspace content (`git` reads the
workspace's `.git/config`, which can name a pager or hook to run; `make`, `npm`, `cargo`,
`pytest` run the workspace's build files). `docs/tools.md` lists them; allow only programs
whose every argument you would approve.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = ["command_words", "rule_matches"]

_BARE: Final = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
_SINGLE: Final = re.compile(r"'([^']*)'")
_DOUBLE: Final = re.compile(r'"([^"$`\\]*)"')
_BLANK: Final = re.compile(r"[ \t]+")
_CONTROL: Final = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def command_words(command: str) -> list[str] | None:
    """The words of `command` when it is one plain simple command, else `None`."""
    if _CONTROL.search(command):
        return None
    words: list[str] = []
    position = _skip_blanks(command, 0)
    while position < len(command):
        word, position = _word(command, position)
        if word is None:
            return None
        words.append(word)
        position = _skip_blanks(command, position)
    if not words or _ASSIGNMENT.match(words[0]):
        return None  # empty, or an assignment in front of the command
    return words


def _skip_blanks(command: str, position: int) -> int:
    blank = _BLANK.match(command, position)
    return blank.end() if blank else position


def _word(command: str, position: int) -> tuple[str | None, int]:
    """One word from `position` to the next blank: bare and quoted parts, nothing else."""
    parts: list[str] = []
    while position < len(command) and command[position] not in " \t":
        for pattern in (_BARE, _SINGLE, _DOUBLE):
            found = pattern.match(command, position)
            if found:
                parts.append(found.group(1) if pattern is not _BARE else found.group(0))
                position = found.end()
                break
        else:
            return None, position  # a metacharacter, or an unclosed or unsafe quote
    return "".join(parts), position


def rule_matches(patterns: Sequence[str], params: Mapping[str, Any]) -> bool:
    """Whether an `exec` call's `params` match one of `patterns` (and nothing beside it)."""
    if params.get("env"):
        return False  # a rule names a command, not the environment it runs in
    command = params.get("command")
    if not isinstance(command, str):
        return False
    words = command_words(command)
    if words is None:
        return False
    text = " ".join(words)
    return any(fnmatch.fnmatchcase(text, pattern) for pattern in patterns)
