"""Hostile pages for `web_fetch`: decompression bombs, odd encodings and charsets, redirects to
other schemes, markup built to be slow. Each case pins its outcome, and a clean fetch through
the same tools afterwards comes back intact (nothing cached, wedged or leaked).

The server is local (loopback allowed for tests); the address guard itself is covered by
`tests/tools/web/test_web_fetch.py` and `test_hostile_urls.py`.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import zstandard

from clawcell import Tool, ToolError
from clawcell.tools import FetchSettings, web
from tests.tools._bombs import (
    empty_blocks_bomb,
    gzip_bomb,
    gzip_gzip_bomb,
    traced_peak,
    zstd_bomb,
)
from tests.tools._server import LocalServer, Response, local_server
from tests.tools.conftest import call

CAP = 256 * 1024
PEAK = 24 << 20  # Python allocations while one bomb is fetched (64 MiB and more decoded)
CLEAN = b"<html><head><title>Clean</title></head><body><main><p>still fine</p></main></body></html>"


@dataclass(frozen=True, kw_only=True)
class Case:
    """A hostile reply and what `web_fetch` must make of it."""

    headers: dict[str, str] = field(default_factory=dict[str, str])
    body: Callable[[], bytes] = lambda: b""
    status: int = 200
    code: str | None = None  # the `ToolError` code, or None for a result
    check: Callable[[dict[str, Any]], bool] = lambda _result: True


def _text(encoding: str) -> dict[str, str]:
    return {"Content-Type": "text/plain; charset=utf-8", "Content-Encoding": encoding}


def _cut(result: dict[str, Any]) -> bool:
    overflow: dict[str, Any] = result.get("overflow", {})
    return overflow.get("bodyTruncated") is True


def _layers(count: int) -> bytes:
    data = b"\0" * (8 << 20)
    for _ in range(count):
        data = gzip.compress(data, 9)
    return data


def _zstd_gzip() -> bytes:
    return gzip.compress(zstd_bomb(), 9)


def _huge_window() -> bytes:
    params = zstandard.ZstdCompressionParameters(window_log=30, write_content_size=False)
    packer = zstandard.ZstdCompressor(compression_params=params).compressobj()
    return packer.compress(b"x" * 10) + packer.flush()


def _raw_deflate_bomb() -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return b"".join(packer.compress(b"\0" * (1 << 20)) for _ in range(32)) + packer.flush()


def _html(charset: str) -> Callable[[], bytes]:
    page = f"<html><head><meta charset='{charset}'></head><body><p>café</p></body></html>"
    return page.encode


BOMBS: dict[str, Case] = {
    "gzip_gzip_800_bytes": Case(headers=_text("gzip, gzip"), body=gzip_gzip_bomb, check=_cut),
    "gzip_64_mib": Case(headers=_text("gzip"), body=gzip_bomb, check=_cut),
    "zstd_64_mib": Case(headers=_text("zstd"), body=zstd_bomb, check=_cut),
    "zstd_inside_gzip": Case(headers=_text("zstd, gzip"), body=_zstd_gzip, check=_cut),
    "raw_deflate_32_mib": Case(headers=_text("deflate"), body=_raw_deflate_bomb, check=_cut),
    "four_gzip_layers": Case(headers=_text("gzip, gzip, gzip, gzip"), body=lambda: _layers(4),
                             check=_cut),
    "five_gzip_layers": Case(headers=_text("gzip, gzip, gzip, gzip, gzip"),
                             body=lambda: _layers(5), code="unsupported_encoding"),
    "empty_deflate_blocks_inside_gzip": Case(
        headers=_text("gzip, gzip"), body=empty_blocks_bomb,
        check=lambda result: result["text"] == "" and _cut(result),
    ),
    "zstd_window_of_1_gib": Case(headers=_text("zstd"), body=_huge_window, code="fetch_failed"),
    "brotli": Case(headers=_text("br"), body=lambda: b"\x1b\x00\x00", code="unsupported_encoding"),
    "compress": Case(headers=_text("compress"), body=lambda: b"\x1f\x9d",
                     code="unsupported_encoding"),
    "unknown_token": Case(headers=_text("x-evil"), body=lambda: b"x", code="unsupported_encoding"),
    "corrupt_gzip": Case(headers=_text("gzip"), body=lambda: gzip.compress(b"")[:10] + b"\xff" * 20,
                         code="fetch_failed"),
    "truncated_gzip_keeps_what_decoded": Case(
        headers=_text("gzip"), body=lambda: gzip.compress(b"partial text " * 100)[:60],
        check=lambda result: str(result["text"]).startswith("partial text"),
    ),
    "gzip_with_trailing_garbage": Case(
        headers=_text("gzip"), body=lambda: gzip.compress(b"kept") + b"\xff" * 5000,
        check=lambda result: result["text"] == "kept",
    ),
}  # fmt: skip

CHARSETS: dict[str, Case] = {
    name: Case(
        headers={"Content-Type": f"text/plain; charset={charset}"},
        body="café +AGE- \\u00e9".encode,
        check=lambda result: result["text"] == "café +AGE- \\u00e9",
    )
    for name, charset in {
        "zlib": "zlib", "base64": "base64", "punycode": "punycode", "rot13": "rot13",
        "utf7": "utf-7", "bz2": "bz2", "unicode_escape": "unicode_escape", "hex": "hex",
        "quoted_zlib": '"zlib"', "uu": "uu",
    }.items()
} | {
    f"meta_{name}": Case(
        headers={"Content-Type": "text/html"}, body=_html(name),
        check=lambda result: result["text"] == "café",
    )
    for name in ("zlib", "punycode", "unicode_escape", "utf-16", "bz2")
}  # fmt: skip

REDIRECTS: dict[str, Case] = {
    f"redirect_to_{name}": Case(status=302, headers={"Location": target}, code="invalid_url")
    for name, target in {
        "javascript": "javascript:alert(1)",
        "javascript_mixed_case": "JaVaScRiPt:alert(1)",
        "javascript_leading_space": " javascript:alert(1)",
        "data": "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
        "file": "file:///etc/passwd",
        "vbscript": "vbscript:msgbox(1)",
        "unparsable": "//[::1",
        "credentials": "http://user:secret@127.0.0.1/",
        "gopher": "gopher://127.0.0.1:70/",
    }.items()
} | {
    "redirect_to_itself_forever": Case(
        status=302, headers={"Location": "http://"}, code="too_many_redirects"
    )
}

SLOW_MARKUP: dict[str, Case] = {
    "nested_20000_divs": Case(
        headers={"Content-Type": "text/html"},
        body=lambda: b"<div>" * 20_000 + b"deep" + b"</div>" * 20_000,
        check=lambda result: result["text"] == "deep",
    ),
    "unclosed_comment_200_kib": Case(
        headers={"Content-Type": "text/html"},
        body=lambda: b"<html><body><p>seen</p><!--" + b"x" * (200 << 10),
        check=lambda result: str(result["text"]).startswith("seen"),
    ),
    "unclosed_script_200_kib": Case(
        headers={"Content-Type": "text/html"},
        body=lambda: b"<html><body><p>seen</p><script>" + b"<" * (200 << 10),
        check=lambda result: result["text"] == "seen",
    ),
    "attribute_200_kib": Case(
        headers={"Content-Type": "text/html"},
        body=lambda: b"<html><body><p title='" + b"a" * (200 << 10) + b"'>seen</p></body></html>",
        check=lambda result: result["text"] == "seen",
    ),
}
ALL = BOMBS | CHARSETS | REDIRECTS | SLOW_MARKUP


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with local_server() as state:
        state.route("/clean", Response(headers={"Content-Type": "text/html"}, body=CLEAN))
        yield state


def _tools() -> list[Tool]:
    # No case here is about the time budget: a roomy one keeps a parse of 20,000 nested divs
    # (0.5 s of CPU alone, 6 s under coverage beside three other workers) from timing out on
    # a loaded machine (it did at load 17).
    return web(
        allow_loopback_for_tests=True,
        settings=FetchSettings(max_bytes=CAP, max_chars=1000, timeout_seconds=120),
    )


@pytest.mark.parametrize("name", list(ALL))
def test_a_hostile_page_ends_as_recorded_and_a_clean_fetch_after_it_is_intact(
    server: LocalServer, name: str
) -> None:
    case = ALL[name]
    server.route(f"/{name}", Response(status=case.status, headers=case.headers, body=case.body()))
    tools = _tools()
    try:
        result, peak = traced_peak(
            lambda: call(tools, "web_fetch", {"url": f"{server.base}/{name}"})
        )
        assert name not in BOMBS or peak < PEAK, f"{peak >> 20} MiB held while decoding"
    except ToolError as failed:
        assert failed.code == case.code, failed.message
    else:
        assert case.code is None, result
        assert int(result["bytes"]) <= CAP
        assert case.check(result), result
    clean = call(tools, "web_fetch", {"url": f"{server.base}/clean"})
    assert (clean["text"], clean["title"], clean["truncated"]) == ("still fine", "Clean", False)


def test_the_fetch_corpus_is_large() -> None:
    assert len(ALL) >= 40
