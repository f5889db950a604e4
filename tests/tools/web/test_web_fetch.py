"""`web_fetch` against a local server: SSRF refusals, pinning, caps, encodings and the cache."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from clawcell import ConfigurationError, Tool, ToolError
from clawcell.tools import FetchCache, FetchSettings, web

from .._fakes import Clock, ScriptedResolver
from .._server import LocalServer, Request, Response
from .._tls import tls_listener
from ..conftest import call

PAGE = (
    b"<!doctype html><html><head><title>Release notes</title><style>p{}</style></head><body>"
    b"<nav>Home | About</nav><main><h1>Version 2</h1><p>Faster <a href='/x'>cells</a>.</p>"
    b"<ul><li>one</li><li>two</li></ul></main><script>track()</script><footer>(c)</footer>"
    b"</body></html>"
)
HTML = {"Content-Type": "text/html; charset=utf-8"}


def _tools(**options: Any) -> list[Tool]:
    return web(allow_loopback_for_tests=True, **options)


def _code(tools: list[Tool], url: str) -> str:
    with pytest.raises(ToolError) as failed:
        call(tools, "web_fetch", {"url": url})
    return failed.value.code


def test_an_html_page_comes_back_as_markdown_with_its_metadata(server: LocalServer) -> None:
    server.route("/notes", Response(headers=HTML, body=PAGE))
    result = call(_tools(), "web_fetch", {"url": f"{server.base}/notes"})
    fetched_at = result.pop("fetchedAt")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", fetched_at)
    assert result == {
        "url": f"{server.base}/notes",
        "finalUrl": f"{server.base}/notes",
        "status": 200,
        "contentType": "text/html; charset=utf-8",
        "extractor": "markdown",
        "text": "# Version 2\n\nFaster [cells](/x).\n\n* one\n* two",
        "bytes": len(PAGE),
        "cache": "miss",
        "truncated": False,
        "title": "Release notes",
    }


def test_text_mode_drops_the_markup(server: LocalServer) -> None:
    server.route("/notes", Response(headers=HTML, body=PAGE))
    result = call(_tools(), "web_fetch", {"url": f"{server.base}/notes", "extractMode": "text"})
    assert result["text"] == "Version 2\nFaster\ncells\n.\none\ntwo"
    assert result["extractor"] == "text"


def test_loopback_is_refused_by_default_and_nothing_is_sent(server: LocalServer) -> None:
    server.route("/", Response(body=b"private"))
    with pytest.raises(ToolError) as refused:
        call(web(), "web_fetch", {"url": f"{server.base}/"})
    assert refused.value.code == "blocked_address"
    assert refused.value.message == (
        "Refused to connect to '127.0.0.1': it resolves to 127.0.0.1, a loopback address. "
        "`web_fetch` only reaches public internet addresses."
    )
    assert server.requests == []


@pytest.mark.parametrize(
    "target",
    [
        "http://10.0.0.1/",
        "http://192.168.1.1:8080/admin",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "http://[fd00::1]/",
        "http://[::ffff:10.0.0.1]/",
        "http://internal.test/",
        "http://[::ffff:127.0.0.1]/",
    ],
)
def test_a_redirect_to_a_private_address_is_refused(server: LocalServer, target: str) -> None:
    server.route("/go", Response(status=302, headers={"Location": target}))
    resolver = ScriptedResolver(answers={"internal.test": [["10.20.30.40"]]})
    assert _code(_tools(resolver=resolver), f"{server.base}/go") == "blocked_address"
    assert server.hits("/go") == 1


@pytest.mark.parametrize(
    "target",
    [
        "file:///etc/passwd",
        "gopher://127.0.0.1/",
        "ftp://example.com/x",
        "javascript:alert(1)",
        "JavaScript:alert(document.domain)",
        " javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "mailto:someone@example.com",
        "about:blank",
        "blob:https://example.com/uuid",
        "java\tscript:alert(1)",
        "//[::1",
        "http://[::1",
    ],
)
def test_a_redirect_to_another_scheme_is_refused(server: LocalServer, target: str) -> None:
    server.route("/go", Response(status=301, headers={"Location": target}))
    assert _code(_tools(), f"{server.base}/go") == "invalid_url"


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "javascript:alert(1)", "http://user:pw@127.0.0.1/", "http:///x"]
)
def test_urls_that_are_not_plain_http_are_refused_before_any_lookup(url: str) -> None:
    resolver = ScriptedResolver(answers={})
    assert _code(_tools(resolver=resolver), url) == "invalid_url"
    assert resolver.calls == []


def test_relative_redirects_are_followed_and_the_final_url_reported(server: LocalServer) -> None:
    server.route("/old", Response(status=301, headers={"Location": "/new"}))
    server.route("/new", Response(headers={"Content-Type": "text/plain"}, body=b"moved here"))
    result = call(_tools(), "web_fetch", {"url": f"{server.base}/old"})
    assert (result["finalUrl"], result["text"]) == (f"{server.base}/new", "moved here")


def test_redirects_are_capped(server: LocalServer) -> None:
    server.route("/loop", Response(status=302, headers={"Location": "/loop"}))
    tools = _tools(settings=FetchSettings(max_redirects=3))
    assert _code(tools, f"{server.base}/loop") == "too_many_redirects"
    assert server.hits("/loop") == 4


def test_the_connection_goes_to_the_checked_address_and_keeps_the_host_name(
    server: LocalServer,
) -> None:
    seen: list[Request] = []

    def page(request: Request) -> Response:
        seen.append(request)
        return Response(headers={"Content-Type": "text/plain"}, body=b"pinned")

    server.route("/pin", page)
    resolver = ScriptedResolver(answers={"site.test": [["127.0.0.1"], ["10.0.0.5"]]})
    url = f"http://site.test:{server.port}/pin"
    assert call(_tools(resolver=resolver), "web_fetch", {"url": url})["text"] == "pinned"
    assert resolver.calls == ["site.test"]
    assert seen[0].headers["host"] == f"site.test:{server.port}"


def test_a_dns_answer_that_changes_to_a_private_address_is_refused_next_time(
    server: LocalServer,
) -> None:
    server.route("/a", Response(headers={"Content-Type": "text/plain"}, body=b"first"))
    server.route("/b", Response(headers={"Content-Type": "text/plain"}, body=b"second"))
    resolver = ScriptedResolver(answers={"rebind.test": [["127.0.0.1"], ["10.0.0.5"]]})
    tools = _tools(resolver=resolver)
    assert (
        call(tools, "web_fetch", {"url": f"http://rebind.test:{server.port}/a"})["text"] == "first"
    )
    assert _code(tools, f"http://rebind.test:{server.port}/b") == "blocked_address"
    assert server.hits("/b") == 0


def test_a_huge_body_is_cut_at_the_byte_cap_with_overflow_metadata(server: LocalServer) -> None:
    chunks = [b"a" * 65536 for _ in range(80)]
    server.route("/huge", Response(headers={"Content-Type": "text/plain"}, chunks=chunks))
    tools = _tools(settings=FetchSettings(max_bytes=100_000, max_chars=1_000_000))
    result = call(tools, "web_fetch", {"url": f"{server.base}/huge"})
    assert result["bytes"] == 100_000
    assert result["truncated"] is True
    assert result["overflow"] == {
        "totalChars": 100_000,
        "returnedChars": 100_000,
        "bodyTruncated": True,
    }


def test_text_over_max_chars_is_cut_and_the_overflow_says_how_much(server: LocalServer) -> None:
    server.route("/t", Response(headers={"Content-Type": "text/plain"}, body=b"x" * 500))
    result = call(_tools(), "web_fetch", {"url": f"{server.base}/t", "maxChars": 120})
    assert len(result["text"]) == 120
    assert result["overflow"] == {"totalChars": 500, "returnedChars": 120, "bodyTruncated": False}


def test_a_body_that_never_finishes_times_out(server: LocalServer) -> None:
    slow = Response(
        headers={"Content-Type": "text/plain", "Content-Length": "1000"},
        chunks=[b"partial"],
        block=server.release,
    )
    server.route("/slow", slow)
    tools = _tools(settings=FetchSettings(timeout_seconds=0.5))
    with pytest.raises(ToolError) as failed:
        call(tools, "web_fetch", {"url": f"{server.base}/slow"})
    assert failed.value.code == "timeout"
    assert failed.value.message == (
        f"Fetching '{server.base}/slow' took longer than 0.5 s; try again later or another URL."
    )


@pytest.mark.parametrize(
    ("content_type", "body", "text"),
    [
        ("text/plain; charset=utf-8", b"caf\xc3\xa9 \xff\xfe end", "café \ufffd\ufffd end"),
        ("text/plain; charset=x-bogus", b"caf\xc3\xa9", "café"),
        ("text/plain; charset=iso-8859-1", b"caf\xe9", "café"),
        (
            "text/html",
            b"<html><head><meta charset='windows-1251'></head><body>\xcf\xf0\xe8</body>",
            "При",
        ),
        ("text/html; charset=utf-8", b"<html><body><p>bad \xc3(</p></body></html>", "bad \ufffd("),
        ("", b"<!DOCTYPE html><html><body><p>unlabelled</p></body></html>", "unlabelled"),
        ("application/json", b'{"a": 1}', '{"a": 1}'),
    ],
    ids=[
        "utf8-invalid",
        "unknown-charset",
        "latin1",
        "meta-charset",
        "html-invalid",
        "no-type",
        "json",
    ],
)
def test_broken_and_unusual_encodings_decode_without_failing(
    server: LocalServer, content_type: str, body: bytes, text: str
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    server.route("/enc", Response(headers=headers, body=body))
    assert call(_tools(), "web_fetch", {"url": f"{server.base}/enc"})["text"] == text


def test_binary_content_is_refused(server: LocalServer) -> None:
    server.route("/img", Response(headers={"Content-Type": "image/png"}, body=b"\x89PNG\x00"))
    assert _code(_tools(), f"{server.base}/img") == "unsupported_content"


def test_an_error_status_is_reported_and_not_cached(server: LocalServer) -> None:
    server.route(
        "/gone", Response(status=410, headers={"Content-Type": "text/plain"}, body=b"gone")
    )
    tools = _tools()
    first = call(tools, "web_fetch", {"url": f"{server.base}/gone"})
    second = call(tools, "web_fetch", {"url": f"{server.base}/gone"})
    assert (first["status"], first["text"], second["cache"]) == (410, "gone", "miss")
    assert server.hits("/gone") == 2


def test_a_fresh_entry_is_a_hit_without_asking_the_server(server: LocalServer) -> None:
    server.route("/p", Response(headers={"Content-Type": "text/plain"}, body=b"cached"))
    tools = _tools()
    assert call(tools, "web_fetch", {"url": f"{server.base}/p"})["cache"] == "miss"
    assert call(tools, "web_fetch", {"url": f"{server.base}/p", "maxChars": 3})["cache"] == "hit"
    assert server.hits("/p") == 1


def _validated(header: str, token: str) -> Any:
    def page(request: Request) -> Response:
        if request.headers.get(header) == token:
            return Response(status=304)
        validator = "ETag" if header == "if-none-match" else "Last-Modified"
        return Response(headers={"Content-Type": "text/plain", validator: token}, body=b"v1")

    return page


@pytest.mark.parametrize(
    ("header", "token"),
    [("if-none-match", '"v1"'), ("if-modified-since", "Tue, 01 Dec 2026 08:00:00 GMT")],
)
def test_a_stale_entry_is_revalidated_with_its_validator(
    server: LocalServer, header: str, token: str
) -> None:
    server.route("/v", _validated(header, token))
    clock = Clock()
    tools = _tools(cache=FetchCache(ttl_seconds=60, clock=clock))
    assert call(tools, "web_fetch", {"url": f"{server.base}/v"})["cache"] == "miss"
    clock.now += 61
    again = call(tools, "web_fetch", {"url": f"{server.base}/v"})
    assert (again["cache"], again["text"]) == ("revalidated", "v1")
    assert server.requests[-1].headers[header] == token
    assert call(tools, "web_fetch", {"url": f"{server.base}/v"})["cache"] == "hit"
    assert server.hits("/v") == 2


def test_a_stale_entry_without_validators_is_fetched_again(server: LocalServer) -> None:
    server.route("/n", Response(headers={"Content-Type": "text/plain"}, body=b"plain"))
    clock = Clock()
    tools = _tools(cache=FetchCache(ttl_seconds=5, clock=clock))
    call(tools, "web_fetch", {"url": f"{server.base}/n"})
    clock.now += 10
    assert call(tools, "web_fetch", {"url": f"{server.base}/n"})["cache"] == "miss"
    assert server.hits("/n") == 2


def test_web_tools_are_network_content() -> None:
    assert all(tool.network for tool in web())


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://[::1]/",
        "http://[::ffff:7f00:1]/",
    ],
)
def test_the_system_resolver_path_refuses_every_spelling_of_loopback(url: str) -> None:
    assert _code(web(), url) == "blocked_address"


def test_https_keeps_the_host_name_for_sni_while_connecting_to_the_checked_address(
    tmp_path: Path,
) -> None:
    with tls_listener(tmp_path) as listener:
        resolver = ScriptedResolver(answers={"site.test": [["127.0.0.1"]]})
        tools = _tools(resolver=resolver)
        code = _code(tools, f"https://site.test:{listener.port}/")
    assert code == "fetch_failed"  # the self-signed certificate is not trusted
    assert listener.names == ["site.test"]
    assert resolver.calls == ["site.test"]


def test_a_huge_title_is_cut(server: LocalServer) -> None:
    body = b"<html><head><title>" + b"T" * 10_000 + b"</title></head><body>x</body></html>"
    server.route("/t", Response(headers=HTML, body=body))
    assert len(call(_tools(), "web_fetch", {"url": f"{server.base}/t"})["title"]) == 300


def test_without_the_web_extra_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in (
        "clawcell.tools._web._fetch",
        "clawcell.tools._web._web_fetch",
        "clawcell.tools._web._transport",
    ):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(ConfigurationError) as missing:
        web()
    assert missing.value.message == (
        "`web_fetch` needs httpx, beautifulsoup4 and markdownify (httpx is missing): "
        "`pip install 'clawcell[web]'` (in a clawcell checkout: "
        "`.venv/bin/pip install -e '.[web]'`)."
    )
