"""The realm guard put into widget and MCP App documents: first script, no frame markup."""

from __future__ import annotations

import pytest

from clawcell.ui._mcp_apps._host import mcp_app_csp
from clawcell.ui._realm import REALM_POLICY, REALM_SCRIPT, with_realm_guard, without_frames
from clawcell.ui._widgets._page import widget_csp


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ("<p>a</p>", "<p>a</p>"),
        ('<IFRAME src="x"></IFRAME>', '<blocked-IFRAME src="x"></IFRAME>'),
        ("a\r\x0cb\n <embed src=y/><frame-x>", "a\r\x0cb\n <blocked-embed src=y/><frame-x>"),
        ('<script>var s = "<iframe>";</script>', '<script>var s = "<iframe>";</script>'),
        (
            "<object data=x></object><frameset>",
            "<blocked-object data=x></object><blocked-frameset>",
        ),
    ],
    ids=["none", "iframe", "line-breaks", "inside-script", "object-frameset"],
)
def test_frames_in_markup_are_renamed_and_nothing_else_changes(
    document: str, expected: str
) -> None:
    assert without_frames(document) == expected


@pytest.mark.parametrize(
    ("document", "head"),
    [
        (b"<!DOCTYPE html><p>x", b"<!DOCTYPE html>"),
        (b"\xef\xbb\xbf <!doctype html>", None),
        (b"<p>no doctype", b""),
        (b"<!-- made by x -->\n<!doctype html><p>", b"<!-- made by x -->\n<!doctype html>"),
    ],
    ids=["doctype", "bom", "none", "comment-first"],
)
def test_the_guard_is_the_first_script_after_the_doctype(
    document: bytes, head: bytes | None
) -> None:
    guarded = with_realm_guard(document)
    script = b"<script>\n" + REALM_SCRIPT.encode() + b"</script>\n"
    prefix = document[: document.index(b">") + 1] if head is None else head
    assert guarded == prefix + script + document[len(prefix) :]


def test_both_policies_require_trusted_types_for_the_guard() -> None:
    for policy in (widget_csp("scripts"), mcp_app_csp("trusted"), widget_csp("strict")):
        assert policy.endswith("; " + REALM_POLICY)
