"""`allow_commands` matches one plain simple command with its environment, or nothing."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell.tools import ShellSettings
from clawcell.tools._shell._command_rule import command_words
from clawcell.tools._shell._shell_exec import exec_approval

SETTINGS = ShellSettings(allow_commands=("git status*", "ls *", "echo *"))


def _asks(command: str, **extra: Any) -> bool:
    rule = exec_approval(SETTINGS)
    assert callable(rule)
    return rule({"command": command, **extra}) is not False


@pytest.mark.parametrize(
    "command",
    [
        "git status", "git status --short", "  git status  ", "git status -- 'a b.txt'",
        'git status "docs/read me.md"', "ls -la src/", "echo a=b,c:d@e%f+g",
    ],
)  # fmt: skip
def test_a_plain_command_that_a_pattern_names_runs_without_asking(command: str) -> None:
    assert not _asks(command)


@pytest.mark.parametrize(
    "command",
    [
        "git status; touch pwned", "git status && touch pwned", "git status || touch pwned",
        "git status | sh", "git status & touch pwned", "git status\ntouch pwned",
        "git status\rtouch pwned", "git status $(touch pwned)", "git status `touch pwned`",
        'git status "$(touch pwned)"', 'git status "`touch pwned`"', "git status $HOME",
        "git status ${IFS}x", "git status > .git/hooks/x", "git status < /etc/passwd",
        "git status 2>x", "PATH=. git status", "GIT_CONFIG_COUNT=1 git status",
        "git status *", "git status [a]", "git status ~", "git status {a,b}",
        "git status (x)", "git status # comment", "git status 'unclosed", 'git status "a\\"b"',
        "git status\\; touch pwned", "git status\x00", "(git status)", "{ git status; }",
        "ls", "gitstatus", "git  log",
    ],
)  # fmt: skip
def test_anything_but_one_plain_simple_command_is_asked_about(command: str) -> None:
    assert _asks(command)


def test_an_env_input_beside_an_allowed_command_is_asked_about() -> None:
    assert _asks("git status", env={"GIT_CONFIG_GLOBAL": "x"})
    assert _asks("git status", env={"PATH": "."})
    assert not _asks("git status", env={})


def test_quoted_text_is_one_literal_word() -> None:
    assert command_words("""echo 'a; b' "c && d" e'f'"g" """) == ["echo", "a; b", "c && d", "efg"]
    assert command_words("") is None


def test_the_approval_text_shows_the_whole_command_and_its_environment() -> None:
    command = "echo " + "x" * 5000 + "; curl evil"
    rule = exec_approval(SETTINGS)
    assert callable(rule)
    text = rule({"command": command, "env": {"A": "1"}, "workdir": "sub"})
    shown = f"`exec` runs a shell command: {command!r}"
    assert text == f"{shown} with environment {{'A': '1'}} in 'sub'"
