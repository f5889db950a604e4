"""The release's parser (acorn) on the syntax-error path: its words, its positions, no effects."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import clawcell.runtime
from clawcell.runtime import (
    ParseFailure,
    _parser,  # pyright: ignore[reportPrivateUsage]
    parse_failure,
)


def test_a_syntax_error_gets_acorns_words_and_cell_relative_position() -> None:
    assert parse_failure("const a = 1;\nconst = 2;") == ParseFailure(
        message="Unexpected token", line=2, column=7
    )


def test_top_level_await_and_return_are_legal_as_in_the_release() -> None:
    assert parse_failure("const x = await Promise.resolve(1);\nreturn x;") is None


def test_an_import_declaration_is_worded_as_the_release_words_it() -> None:
    found = parse_failure("import fs from 'fs';")
    assert found == ParseFailure(
        message="'import' and 'export' may only appear at the top level", line=1, column=1
    )


def test_an_unterminated_cell_points_past_its_last_line() -> None:
    assert parse_failure("foo(") == ParseFailure(message="Unexpected token", line=2, column=1)


def test_source_that_closes_the_wrapper_is_parsed_never_run() -> None:
    escape = "}); globalThis.ran = 1; (async () => {"
    assert parse_failure(escape) is None
    assert parse_failure("return typeof ran === 'undefined' ? ; : 1;") is not None
    assert parse_failure("throw new Error('not run'") == ParseFailure(
        message="Unexpected token", line=2, column=1
    )


def test_the_fetched_parser_is_the_pinned_release_version_with_its_licence() -> None:
    vendor = Path(clawcell.runtime.__file__).with_name("vendor")
    digest = hashlib.sha256((vendor / "acorn.js").read_bytes()).hexdigest()
    assert digest == "fc3ed7b81e58464715d0291402892f22c3d86ea75302645a330390f85d8015c9"
    assert 'version = "8.18.0"' in (vendor / "acorn.js").read_text("utf-8")
    assert (vendor / "LICENSE.acorn").read_text("utf-8").startswith("MIT License")


def test_without_the_fetched_parser_quickjs_keeps_its_own_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_parser, "_ACORN", tmp_path / "absent.js")
    monkeypatch.setattr(_parser, "_parser", [])
    assert parse_failure("const = 2;") is None
