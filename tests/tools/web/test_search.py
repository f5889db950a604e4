"""`web_search` providers against local fakes of the SearXNG and Brave APIs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clawcell import ConfigurationError
from clawcell.tools import BraveProvider, SearxngProvider, web

from .._server import LocalServer, Request, Response
from ..conftest import call

JSON = {"Content-Type": "application/json"}
SEARXNG = {
    "query": "quickjs",
    "results": [
        {
            "title": "QuickJS-NG",
            "url": "https://quickjs-ng.github.io/",
            "content": "A <b>small</b> engine",
            "publishedDate": "2026-10-01T00:00:00",
            "engine": "ddg",
        },
        {"title": "QuickJS", "url": "https://bellard.org/quickjs/", "content": "Bellard"},
        {"title": "Third", "url": "https://example.org/3", "content": ""},
    ],
    "answers": [],
}
BRAVE = {
    "type": "search",
    "web": {
        "results": [
            {
                "title": "Wasmtime",
                "url": "https://wasmtime.dev/",
                "description": "A <strong>fast</strong> runtime",
                "page_age": "2026-09-30T12:00:00",
            },
            {
                "title": "WASI",
                "url": "https://wasi.dev/",
                "description": "Interfaces",
                "age": "2 days ago",
            },
        ]
    },
}


def _json(value: Any, status: int = 200) -> Response:
    return Response(status=status, headers=JSON, body=json.dumps(value).encode())


def _searxng(server: LocalServer) -> list[Any]:
    return web(fetch=False, search=SearxngProvider(url=server.base))


def test_searxng_results_are_normalized_and_bounded_by_count(server: LocalServer) -> None:
    server.route("/search", _json(SEARXNG))
    result = call(_searxng(server), "web_search", {"query": "quickjs", "count": 2})
    assert result == {
        "kind": "results",
        "provider": "searxng",
        "query": "quickjs",
        "results": [
            {
                "title": "QuickJS-NG",
                "url": "https://quickjs-ng.github.io/",
                "snippet": "A small engine",
                "published": "2026-10-01T00:00:00",
            },
            {"title": "QuickJS", "url": "https://bellard.org/quickjs/", "snippet": "Bellard"},
        ],
    }
    assert "format=json" in server.requests[0].path
    assert "q=quickjs" in server.requests[0].path


def test_a_searxng_direct_answer_becomes_the_answer_variant(server: LocalServer) -> None:
    server.route("/search", _json({**SEARXNG, "answers": ["42", {"answer": "forty-two"}]}))
    result = call(_searxng(server), "web_search", {"query": "answer"})
    assert (result["kind"], result["answer"]) == ("answer", "42\nforty-two")
    assert len(result["results"]) == 3


def test_a_provider_failure_is_an_error_outcome_not_an_exception(server: LocalServer) -> None:
    server.route("/search", Response(status=429, body=b"Too Many Requests"))
    result = call(_searxng(server), "web_search", {"query": "x"})
    assert result == {
        "kind": "error",
        "provider": "searxng",
        "query": "x",
        "error": "HTTP 429: Too Many Requests",
    }


def test_an_answer_that_is_not_json_is_an_error_outcome(server: LocalServer) -> None:
    server.route("/search", Response(headers={"Content-Type": "text/html"}, body=b"<html>"))
    result = call(_searxng(server), "web_search", {"query": "x"})
    assert result["kind"] == "error"
    assert result["error"].startswith("The answer is not JSON: ")


def test_an_unexpected_json_shape_comes_back_raw(server: LocalServer) -> None:
    server.route("/search", _json({"hits": [1, 2]}))
    result = call(_searxng(server), "web_search", {"query": "x"})
    assert result == {"kind": "raw", "provider": "searxng", "query": "x", "raw": {"hits": [1, 2]}}


def test_an_unreachable_provider_is_an_error_outcome() -> None:
    tools = web(fetch=False, search=SearxngProvider(url="http://127.0.0.1:9"))
    result = call(tools, "web_search", {"query": "x"})
    assert result["kind"] == "error"
    assert result["error"].startswith("ConnectError: ")


def test_brave_sends_the_token_and_normalizes_web_results(server: LocalServer) -> None:
    seen: list[Request] = []

    def api(request: Request) -> Response:
        seen.append(request)
        return _json(BRAVE)

    server.route("/res/v1/web/search", api)
    provider = BraveProvider(api_key="k-123", url=f"{server.base}/res/v1/web/search")
    result = call(web(fetch=False, search=provider), "web_search", {"query": "wasm"})
    assert result == {
        "kind": "results",
        "provider": "brave",
        "query": "wasm",
        "results": [
            {
                "title": "Wasmtime",
                "url": "https://wasmtime.dev/",
                "snippet": "A fast runtime",
                "published": "2026-09-30T12:00:00",
            },
            {
                "title": "WASI",
                "url": "https://wasi.dev/",
                "snippet": "Interfaces",
                "published": "2 days ago",
            },
        ],
    }
    assert seen[0].headers["x-subscription-token"] == "k-123"
    assert "count=5" in seen[0].path


def test_brave_rejects_a_bad_token_as_an_error_outcome(server: LocalServer) -> None:
    server.route("/res/v1/web/search", _json({"error": "unauthorized"}, status=401))
    provider = BraveProvider(api_key="bad", url=f"{server.base}/res/v1/web/search")
    result = call(web(fetch=False, search=provider), "web_search", {"query": "wasm"})
    assert (result["kind"], result["error"]) == ("error", 'HTTP 401: {"error": "unauthorized"}')


def test_providers_validate_their_configuration() -> None:
    with pytest.raises(ConfigurationError) as brave:
        BraveProvider(api_key="")
    assert brave.value.message == (
        "Brave needs an `api_key`; set `api_key` or the `BRAVE_API_KEY` variable."
    )
    with pytest.raises(ConfigurationError) as searxng:
        SearxngProvider(url="searx.local")
    assert searxng.value.message == (
        "SearXNG `url` must be an http(s) base URL, got 'searx.local'."
    )


def test_web_without_fetch_or_search_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        web(fetch=False)


def test_oversized_fields_are_cut(server: LocalServer) -> None:
    long = {"title": "t" * 5000, "url": "https://x.org/" + "u" * 5000, "content": "s" * 5000}
    server.route("/search", _json({"results": [long]}))
    (hit,) = call(_searxng(server), "web_search", {"query": "x"})["results"]
    assert (len(hit["title"]), len(hit["url"]), len(hit["snippet"])) == (300, 2048, 1000)
