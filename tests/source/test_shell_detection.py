"""Shell detection (`_source/_shell_detection.py`): whether a cell starts like a shell command
rather than JavaScript. The corpora in `tests/data/js_corpus/` hold real cells of both kinds."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from clawcell._source._shell_detection import looks_like_shell
from tests.source._corpus import javascript_cells, shell_commands


def test_the_corpora_are_large_enough() -> None:
    assert len(javascript_cells()) >= 60
    assert len(shell_commands()) >= 40


@pytest.mark.parametrize("cell", javascript_cells())
def test_real_javascript_does_not_look_like_shell(cell: str) -> None:
    assert not looks_like_shell(cell)


@pytest.mark.parametrize("command", shell_commands())
def test_real_shell_commands_look_like_shell(command: str) -> None:
    assert looks_like_shell(command)


@pytest.mark.parametrize(
    "code",
    [
        "// list the files\nls -la",
        "/* a note */ git status",
        "FOO=1 BAR='two words' npm test",
        "#!/bin/sh\necho hi",
        "./build.sh --release",
        "if [ -f x ]; then echo y; fi",
        "for f in *.txt; do cat $f; done",
    ],
    ids=["line-comment", "block-comment", "env-prefixes", "shebang", "path", "if", "for"],
)
def test_the_start_is_read_past_comments_and_assignments(code: str) -> None:
    assert looks_like_shell(code)


@pytest.mark.parametrize(
    "code",
    [
        "",
        "// only a comment",
        "result = foo(;",  # the parser's syntax error says more than the shell message would
        "const ls = () => 1;\nls -1",  # a command word the cell declares is its own name
        "git.status()",
        "ls\n.length",  # a lone command word continued by JavaScript on the next line
        "for (const x of [1]) {}",
        "for await (const x of xs) {}",
        "export const x = 1;",
        "sleep(10)",  # an everyday JavaScript name without flags or arguments
    ],
    ids=[
        "empty",
        "comment",
        "not-parsing",
        "declared",
        "member",
        "continued",
        "for-of",
        "for-await",
        "export-const",
        "call",
    ],
)
def test_javascript_that_starts_with_a_command_word_is_not_shell(code: str) -> None:
    assert not looks_like_shell(code)


def test_export_of_a_variable_is_shell() -> None:
    assert looks_like_shell("export PATH=/usr/bin")


_KEYWORDS = ["return", "const", "let", "await", "var", "async", "throw", "try", "class", "new"]
_PIECES = ["=", "1", " ", "\t", "\n", "ls", "-la", "git", "status", "$", "-", ".", "/", "~/", "|"]
_TAILS = st.lists(
    st.sampled_from([*_PIECES, "wc", "(", "x", "ü", "'a b'", "--flag"]), max_size=6
).map("".join)


@settings(max_examples=400)
@example(lead="", keyword="return", tail="=1 ls -la")  # a `NAME=value` prefix
@example(lead="", keyword="let", tail="=x ls")
@example(lead="", keyword="return", tail="-x --flag")  # a longer command word
@example(lead="", keyword="var", tail="$ ls -la")
@example(lead=" ", keyword="const", tail="ü ls")
@given(lead=st.sampled_from(["", " ", "\n  "]), keyword=st.sampled_from(_KEYWORDS), tail=_TAILS)
def test_a_cell_starting_with_a_plain_keyword_is_read_as_the_full_checks_read_it(
    lead: str, keyword: str, tail: str
) -> None:
    from clawcell._source import _shell_detection

    code = lead + keyword + tail
    quick = looks_like_shell(code)
    patch = pytest.MonkeyPatch()
    patch.setattr(_shell_detection, "_PLAIN_JAVASCRIPT", re.compile(r"(?!)"))  # never matches
    try:
        assert quick == looks_like_shell(code)
    finally:
        patch.undo()
