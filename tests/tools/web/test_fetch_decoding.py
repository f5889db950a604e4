"""`web_fetch` decoding: bombs stay bounded; odd encodings never escape as raw errors."""

from __future__ import annotations

import gzip
import time
import zlib
from collections.abc import Callable
from typing import Any

import pytest
import zstandard

from clawcell import Tool, ToolError
from clawcell.tools import FetchSettings, web
from clawcell.tools._web import _html
from clawcell.tools._web._decoding import BoundedDecoder
from clawcell.tools._web._html import extract

from .._bombs import BOMB_MB, empty_blocks_bomb, gzip_bomb, gzip_gzip_bomb, traced_peak, zstd_bomb
from .._server import LocalServer, Response
from ..conftest import call

TEXT = {"Content-Type": "text/plain; charset=utf-8"}
CAP = 1 << 20
PEAK = 24 << 20


def _tools(**options: Any) -> list[Tool]:
    return web(allow_loopback_for_tests=True, **options)


def _fetch(server: LocalServer, encoding: str, body: bytes, **options: Any) -> dict[str, Any]:
    headers = {**TEXT, "Content-Encoding": encoding}
    server.route("/z", Response(headers=headers, body=body))
    settings = FetchSettings(max_bytes=CAP, max_chars=10)
    return call(_tools(settings=settings, **options), "web_fetch", {"url": f"{server.base}/z"})


@pytest.mark.parametrize(
    ("encoding", "bomb"),
    [("gzip, gzip", gzip_gzip_bomb), ("gzip", gzip_bomb), ("zstd", zstd_bomb)],
    ids=["gzip-gzip", "gzip", "zstd"],
)
def test_a_decompression_bomb_is_cut_at_the_byte_cap_without_decoding_it_all(
    server: LocalServer, encoding: str, bomb: Any
) -> None:
    body: bytes = bomb()
    assert len(body) < BOMB_MB << 20 >> 8
    result, peak = traced_peak(lambda: _fetch(server, encoding, body))
    assert result["bytes"] == CAP
    assert result["overflow"]["bodyTruncated"] is True
    assert peak < PEAK, f"decoding held {peak >> 20} MiB at its peak"


def _zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


PACKERS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": ("gzip", gzip.compress),
    "x-gzip": ("x-gzip", gzip.compress),
    "zlib": ("deflate", zlib.compress),
    "raw-deflate": ("deflate", lambda data: zlib.compress(data, wbits=-15)),
    "zstd": ("zstd", _zstd),
    "gzip-gzip": ("gzip, gzip", lambda data: gzip.compress(gzip.compress(data))),
    "zstd-gzip": ("zstd, gzip", lambda data: gzip.compress(_zstd(data))),
    "case": ("identity, GZIP", gzip.compress),
    "identity": ("identity", bytes),
}


@pytest.mark.parametrize(("encoding", "pack"), list(PACKERS.values()), ids=list(PACKERS))
def test_every_supported_encoding_round_trips(
    server: LocalServer, encoding: str, pack: Callable[[bytes], bytes]
) -> None:
    text = "".join(f"line {n} of the page\n" for n in range(20_000)).encode()
    server.route("/e", Response(headers={**TEXT, "Content-Encoding": encoding}, body=pack(text)))
    result = call(_tools(), "web_fetch", {"url": f"{server.base}/e", "maxChars": 38})
    assert result["text"] == "line 0 of the page\nline 1 of the page\n"
    assert result["bytes"] == len(text)
    assert result["overflow"]["bodyTruncated"] is False


@pytest.mark.parametrize(
    "encoding", ["br", "compress", "gzip, br", "gzip, gzip, gzip, gzip, gzip", "utf-8"]
)
def test_an_encoding_that_cannot_be_bounded_is_refused(server: LocalServer, encoding: str) -> None:
    server.route("/b", Response(headers={**TEXT, "Content-Encoding": encoding}, body=b"xx"))
    with pytest.raises(ToolError) as refused:
        call(_tools(), "web_fetch", {"url": f"{server.base}/b"})
    assert refused.value.code == "unsupported_encoding"
    assert "decodes gzip, deflate and zstd (at most 4 layers)" in refused.value.message


def test_corrupt_compressed_data_is_a_fetch_failure(server: LocalServer) -> None:
    server.route("/c", Response(headers={**TEXT, "Content-Encoding": "gzip"}, body=b"\x1f\x8bnope"))
    with pytest.raises(ToolError) as failed:
        call(_tools(), "web_fetch", {"url": f"{server.base}/c"})
    assert failed.value.code == "fetch_failed"
    assert failed.value.message.startswith("The gzip-encoded body could not be decoded: ")


def test_a_zstd_frame_asking_for_a_huge_window_is_refused(server: LocalServer) -> None:
    params = zstandard.ZstdCompressionParameters(window_log=27, write_content_size=False)
    packer = zstandard.ZstdCompressor(compression_params=params)
    chunker = packer.compressobj()
    body = chunker.compress(b"a" * 100) + chunker.flush()
    with pytest.raises(ToolError) as failed:
        _fetch(server, "zstd", body)
    assert failed.value.code == "fetch_failed"
    assert "zstd-encoded body could not be decoded" in failed.value.message


def test_every_layer_of_a_stack_is_capped_not_only_the_last() -> None:
    # The inner layer is 20 MB of empty deflate blocks (it decodes to nothing); the outer gzip
    # makes that a few KB. Only a cap on the intermediate stream stops the work.
    decoder = BoundedDecoder(["gzip", "gzip"], cap=CAP)
    decoder.push(empty_blocks_bomb())
    taken = b""
    while piece := decoder.pull(CAP):
        taken += piece
    assert taken == b""
    assert decoder.exhausted is True


NOT_TEXT_CODECS = [
    "zlib", "base64", "bz2", "hex", "uu", "quopri", "rot13", "punycode", "idna",
    "unicode_escape", "raw_unicode_escape", "utf-7", "mbcs", "undefined", "x-bogus", "",
    "utf-8;x", "../../etc",
]  # fmt: skip


@pytest.mark.parametrize("charset", NOT_TEXT_CODECS)
def test_a_charset_that_is_not_a_text_encoding_reads_as_utf8(
    server: LocalServer, charset: str
) -> None:
    server.route(
        "/t",
        Response(
            headers={"Content-Type": f"text/plain; charset={charset}"},
            body="café \\u00e9 +AGE-".encode(),
        ),
    )
    server.route(
        "/h",
        Response(
            headers={"Content-Type": "text/html"},
            body=f"<html><head><meta charset='{charset}'></head><body>café</body></html>".encode(),
        ),
    )
    tools = _tools()
    assert call(tools, "web_fetch", {"url": f"{server.base}/t"})["text"] == "café \\u00e9 +AGE-"
    assert call(tools, "web_fetch", {"url": f"{server.base}/h"})["text"] == "café"


@pytest.mark.parametrize(
    ("charset", "text"),
    [("shift_jis", "日本語"), ("koi8-r", "Привет"), ("windows-1252", "naïve €"),
     ("latin1", "café"), ("gb18030", "中文"), ("utf-16", "wide")],
)  # fmt: skip
def test_text_encodings_browsers_know_still_decode(
    server: LocalServer, charset: str, text: str
) -> None:
    body = text.encode(charset)
    server.route(
        "/t", Response(headers={"Content-Type": f"text/plain; charset={charset}"}, body=body)
    )
    html = f"<html><head><meta charset='{charset}'></head><body><p>{text}</p></body></html>"
    server.route(
        "/h",
        Response(
            headers={"Content-Type": "text/html"},
            body=html.encode(charset if charset != "utf-16" else "utf-8"),
        ),
    )
    tools = _tools()
    assert call(tools, "web_fetch", {"url": f"{server.base}/t"})["text"] == text
    assert call(tools, "web_fetch", {"url": f"{server.base}/h"})["text"] == text


def test_html_past_the_deadline_is_a_timeout_not_a_thread_that_runs_on() -> None:
    body = b"<html><body>" + b"<p>para</p>" * 10_000 + b"</body></html>"
    for mode in ("markdown", "text"):
        with pytest.raises(ToolError) as late:
            extract(body, mime="text/html", charset=None, mode=mode, deadline=time.monotonic() - 1)
        assert late.value.code == "timeout"
        assert late.value.message == (
            "Reading the page took longer than the fetch's time budget; fetch a smaller page "
            "or raise `timeout_seconds`."
        )


def test_markup_is_parsed_in_pieces_without_losing_what_spans_them() -> None:
    body = b"<html><body><main><p>" + b"x" * 40_000 + b"</p><h1>After the cut</h1></main></html>"
    found = extract(
        body, mime="text/html", charset=None, mode="markdown", deadline=time.monotonic() + 60
    )
    assert found.text == "x" * 40_000 + "\n\n# After the cut"
    assert found.cut is False


def test_markup_past_the_extraction_cap_is_cut_and_reported(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_html, "MAX_MARKUP_CHARS", 1_000)
    page = b"<html><body><p>" + b"a" * 900 + b"</p><p>" + b"b" * 900 + b"</p></body></html>"
    server.route("/big", Response(headers={"Content-Type": "text/html"}, body=page))
    result = call(_tools(), "web_fetch", {"url": f"{server.base}/big"})
    assert result["text"] == "a" * 900 + "\n\n" + "b" * 78  # the markup stops at 1,000
    assert result["truncated"] is True
    assert result["overflow"]["bodyTruncated"] is True
    assert result["bytes"] == len(page)


def test_html_nested_deeper_than_markdownify_can_recurse_reads_as_text(
    server: LocalServer,
) -> None:
    page = b"<html><body>" + b"<div>" * 5_000 + b"deep" + b"</div>" * 5_000 + b"</body></html>"
    server.route("/deep", Response(headers={"Content-Type": "text/html"}, body=page))
    result = call(_tools(), "web_fetch", {"url": f"{server.base}/deep"})
    assert result["text"] == "deep"
    assert result["extractor"] == "text"
