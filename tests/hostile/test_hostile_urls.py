"""Hostile URLs, paths and embeds: each case pins whether `clawcell.reply` accepts or refuses it.

The cases are what an attacker who controls reply text (through prompt injection) would try to
make a gateway, a channel adapter or the Control UI fetch or render: loopback, private,
link-local and metadata addresses in every spelling WHATWG parsers accept, credentials and
parser-confusion tricks, traversal and network shares through local paths and `file:` URLs,
control characters a URL parser drops, and script URLs in `[embed]` shortcodes hidden behind
HTML character references. Names that only *resolve* to private space (`127.0.0.1.nip.io`) are
allowed: the policy judges names, and the fetcher must check resolved addresses (docs/reply.md).
"""

from __future__ import annotations

from typing import Any

import pytest

from clawcell.reply import (
    extract_canvas_shortcodes,
    is_allowed_remote_media_url,
    is_valid_media,
    resolve_canvas_iframe_url,
    split_media_from_output,
)

# (url, allowed) for `is_allowed_remote_media_url`.
REMOTE: list[tuple[str, bool]] = [
    ("https://cdn.example.com/a.png", True),
    ("HTTPS://EXAMPLE.COM/X.PNG", True),
    ("https://example.com:8443/a.png", True),
    ("https://:@example.com/a.png", True),
    ("https://example.com\\@127.0.0.1/a.png", True),  # the host is example.com (WHATWG)
    ("https:example.com/a.png", True),
    ("https:///example.com/a.png", True),
    ("https://exa\tmple.com/a.png", True),  # the tab is removed: example.com
    ("https://b\u00fccher.de/a.png", True),
    ("https://xn--bcher-kva.de/a.png", True),
    ("https://8.8.8.8/a.png", True),
    ("https://0x08.0x08.0x08.0x08/a.png", True),
    ("https://134744072/a.png", True),
    ("https://010.010.010.010/a.png", True),  # octal: 8.8.8.8
    ("https://192.175.48.1/a.png", True),  # AS112 is not special-use here
    ("https://127.0.0.1.nip.io/a.png", True),  # a DNS name: the fetcher checks addresses
    ("https://kubernetes.default.svc/a.png", True),
    ("https://localhost4.localdomain4/a.png", True),
    ("https://10.0.0.1.example.com/a.png", True),
    ("http://example.com/a.png", False),
    ("HTTP://example.com/a.png", False),
    ("ftp://example.com/a.png", False),
    ("//example.com/a.png", False),
    ("example.com/a.png", False),
    ("javascript:alert(1)", False),
    ("data:image/png;base64,AAAA", False),
    ("https://localhost/a.png", False),
    ("https://LOCALHOST/a.png", False),
    ("https://localhost./a.png", False),
    ("https://a.localhost/a.png", False),
    ("https://localhost.localdomain/a.png", False),
    ("https://loc%61lhost/a.png", False),
    ("https://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/a.png", False),
    ("https://metadata.google.internal/a.png", False),
    ("https://metadata.google.internal./a.png", False),
    ("https://x.internal/a.png", False),
    ("https://printer.local/a.png", False),
    ("https://intranet/a.png", False),
    ("https://example..com/a.png", False),
    ("https://127.0.0.1/a.png", False),
    ("https://127.1/a.png", False),
    ("https://127.0.1/a.png", False),
    ("https://0x7f.1/a.png", False),
    ("https://0x7f000001/a.png", False),
    ("https://2130706433/a.png", False),
    ("https://017700000001/a.png", False),
    ("https://0177.0.0.1/a.png", False),
    ("https://0x7F.0.0.1/a.png", False),
    ("https://127.000.000.001/a.png", False),
    ("https://0/a.png", False),
    ("https://0.0.0.0/a.png", False),
    ("https://10.0.0.1/a.png", False),
    ("https://10.1/a.png", False),
    ("https://100.64.0.1/a.png", False),
    ("https://100.100.100.200/a.png", False),  # Alibaba metadata (CGNAT)
    ("https://169.254.169.254/latest/meta-data/", False),
    ("https://0xa9fea9fe/latest/meta-data/", False),
    ("https://2852039166/latest/meta-data/", False),
    ("https://169.254.169.254.:443/", False),
    ("https://172.16.0.1/a.png", False),
    ("https://172.31.255.255/a.png", False),
    ("https://192.0.0.1/a.png", False),
    ("https://192.0.2.1/a.png", False),
    ("https://192.88.99.1/a.png", False),
    ("https://192.168.1.1/a.png", False),
    ("https://198.18.0.1/a.png", False),
    ("https://198.51.100.1/a.png", False),
    ("https://203.0.113.1/a.png", False),
    ("https://224.0.0.1/a.png", False),
    ("https://239.255.255.250/a.png", False),
    ("https://240.0.0.1/a.png", False),
    ("https://255.255.255.255/a.png", False),
    ("https://1.2.3.4.5/a.png", False),
    ("https://0x.0x.0x.0x/a.png", False),  # `0x` alone is zero: 0.0.0.0
    ("https://0x7f.0x/a.png", False),
    ("https://1.0xa/a.png", True),  # 1.0.0.10, a public address
    ("https://a.0x/a.png", False),
    ("https://[::1]/a.png", False),
    ("https://[::]/a.png", False),
    ("https://[0:0:0:0:0:0:0:1]/a.png", False),
    ("https://[::ffff:127.0.0.1]/a.png", False),
    ("https://[::ffff:7f00:1]/a.png", False),
    ("https://[::ffff:8.8.8.8]/a.png", False),  # every IPv6 literal is refused
    ("https://[2606:4700::1111]/a.png", False),
    ("https://[fe80::1]/a.png", False),
    ("https://[fe80::1%25eth0]/a.png", False),
    ("https://[fc00::1]/a.png", False),
    ("https://[fd00:ec2::254]/a.png", False),  # AWS metadata over IPv6
    ("https://[64:ff9b::a9fe:a9fe]/a.png", False),  # NAT64 of 169.254.169.254
    ("https://[2002:7f00:1::]/a.png", False),  # 6to4 of 127.0.0.1
    ("https://user@example.com/a.png", False),
    ("https://u:p@example.com/a.png", False),
    ("https://example.com@127.0.0.1/a.png", False),
    ("https://example.com:99999/a.png", False),
    ("https://exa mple.com/a.png", False),
]

# (candidate, accepted) for `is_valid_media(candidate, allow_spaces=True)`.
LOCAL: list[tuple[str, bool]] = [
    ("/tmp/a.png", True),
    ("/tmp/My Report.pdf", True),
    ("./media/a.png", True),
    ("media/a.png", True),
    ("~/a.png", True),
    ("C:\\Users\\a.png", True),
    ("\\\\server\\share\\a.png", True),  # UNC paths are part of the protocol
    ("file:///tmp/a.png", True),
    ("FILE:///tmp/a.png", True),
    ("file:/tmp/a.png", True),
    ("file://localhost/tmp/a.png", True),
    ("file:///C:/x/a.png", True),
    ("/tmp/%2e%2e/a.png", True),  # a plain path: `%2e%2e` is a literal directory name
    ("https://example.com/a.png", True),
    ("../etc/passwd", False),
    ("/tmp/../etc/passwd", False),
    ("/tmp/..", False),
    ("./..", False),
    ("..", False),
    ("~", False),
    ("~bob/a.png", False),
    ("C:\\x\\..\\y.png", False),
    ("media/../../.env", False),
    ("//127.0.0.1/x.png", False),  # `MEDIA://127.0.0.1/x.png`: protocol-relative to a renderer
    ("//server/share/a.png", False),
    ("file:///tmp/%2e%2e/etc/passwd", False),
    ("file:///tmp/%2E%2e/etc/passwd", False),
    ("file:///tmp/.%2e/etc/passwd", False),
    ("file:///tmp/%2e./etc/passwd", False),
    ("file:/tmp/%2e%2e/etc/passwd", False),
    ("file:///tmp/..%2fetc/passwd", False),  # path decoders turn `%2f` into `/`
    ("file:///tmp/..%5cetc/passwd", False),
    ("file://evil.com/share/x.png", False),  # a network share
    ("file://127.0.0.1/etc/passwd", False),
    ("FILE://Server/Share/x.png", False),
    ("\x00https://127.0.0.1/x.png", False),
    ("\x01https://127.0.0.1/x.png", False),
    ("\x1fhttps://169.254.169.254/x.png", False),
    ("\x00http://127.0.0.1/x.png", False),
    ("ht\ttps://127.0.0.1/x.png", False),
    ("https://exa\tmple.com/a.png", False),  # tabs are refused in media candidates
    ("/tmp/a\tb.png", False),
    ("/tmp/a\x7fb.png", False),
    ("/tmp/..\r", False),
    ("/tmp/a\nb.png", False),
    ("https://127.0.0.1/a.png", False),
    ("https://10.0.0.1/a.png", False),
    ("http://example.com/a.png", False),
    ("javascript:alert(1)", False),
    ("data:image/png;base64,AAAA", False),
    ("media://inbound/a.png", False),
    ("mailto:a@example.com", False),
    ("/tmp/" + "a" * 5000, False),
]

# (reply text, media URLs it yields) for `split_media_from_output` with image extraction.
SPLIT: list[tuple[str, list[str]]] = [
    ("MEDIA:https://cdn.example.com/a.png", ["https://cdn.example.com/a.png"]),
    ("MEDIA:https://example.com\\@127.0.0.1/a.png", ["https://example.com/@127.0.0.1/a.png"]),
    ("MEDIA:https:example.com/a.png", []),  # no `//`: neither a URL nor a path here
    ("MEDIA:https://0x08.0x08.0x08.0x08/a.png", ["https://8.8.8.8/a.png"]),
    ("MEDIA:https://ex%61mple.com/a.png", ["https://example.com/a.png"]),
    ("MEDIA:https://b\u00fccher.de/a.png", ["https://xn--bcher-kva.de/a.png"]),
    ("MEDIA:HTTPS://EXAMPLE.COM/X.PNG", ["HTTPS://EXAMPLE.COM/X.PNG"]),
    ("MEDIA://127.0.0.1/x.png", []),
    ("MEDIA: //169.254.169.254/latest", []),
    ("MEDIA:\x00https://127.0.0.1/x.png", []),
    ("MEDIA:\x01https://127.0.0.1/x.png", []),
    ('MEDIA:"ht\ttps://127.0.0.1/x.png"', []),
    ("MEDIA:file:///tmp/%2e%2e/etc/passwd", []),
    ("MEDIA:file://evil.com/share/x.png", []),
    ("MEDIA: /tmp/..\r\nnext", []),
    ("MEDIA:https://0x7f.1/a.png", []),
    ("MEDIA:https://169.254.169.254/x.png", []),
    ("MEDIA:https://[::ffff:127.0.0.1]/x.png", []),
    ("MEDIA:../../.env", []),
    ("MEDIA:~root/.ssh/id_rsa", []),
    ("![x](https://cdn.example.com/a.png)", ["https://cdn.example.com/a.png"]),
    ("![x](https://example.com\\@127.0.0.1/a.png)", []),  # CommonMark: the `\@` is an `@`
    ("![x](https://127.0.0.1&#x2e;nip.io/a.png)", ["https://127.0.0.1.nip.io/a.png"]),
    ("![x](https://localhost&#46;/a.png)", []),
    ("![x](<https://127.0.0.1/a.png>)", []),
    ("![x](https://169.254.169.254/a.png)", []),
    ("![x](http://cdn.example.com/a.png)", []),
    ("![x](/etc/passwd)", []),
    ("![x](file:///etc/passwd)", []),
    ("`![x](https://cdn.example.com/a.png)`", []),
]

_SAFE_URL = "/__openclaw__/canvas/documents/a/index.html"

# (shortcode text, whether it yields a preview) for `extract_canvas_shortcodes`.
EMBEDS: list[tuple[str, bool]] = [
    ('[embed ref="cv_1" /]', True),
    (f'[embed url="{_SAFE_URL}" /]', True),
    ('[embed ref="cv_1" onload="alert(1)" /]', True),  # the handler is dropped
    ('[embed ref="cv_1" title="&lt;script&gt;" /]', True),  # raw title: renderers escape it
    ('[embed url="data:image/png;base64,AA" /]', True),  # no script; the iframe refuses it
    ('[embed url="javascript:alert(1)" /]', False),
    ('[embed url="JAVASCRIPT:alert(1)" /]', False),
    ('[embed url=" javascript:alert(1)" /]', False),
    ('[embed url="&#x6A;avascript:alert(1)" /]', False),
    ('[embed url="&#X6a;avascript:alert(1)" /]', False),
    ('[embed url="&#0106;avascript:alert(1)" /]', False),
    ('[embed url="&#106avascript:alert(1)" /]', False),
    ('[embed url="&#106;&#97;&#118;&#97;script:alert(1)" /]', False),
    ('[embed url="javascript&colon;alert(1)" /]', False),
    ('[embed url="javascript&#58;alert(1)" /]', False),
    ('[embed url="java&Tab;script:alert(1)" /]', False),
    ('[embed url="java&NewLine;script:alert(1)" /]', False),
    ('[embed url="java\tscript:alert(1)" /]', False),
    ('[embed url="\x01javascript:alert(1)" /]', False),
    ('[embed url="\x00javascript:alert(1)" /]', False),
    ('[embed url="vbscript:msgbox(1)" /]', False),
    ('[embed url="&#118;bscript:msgbox(1)" /]', False),
    ('[embed url="data:text/html,<script>alert(1)</script>" /]', False),
    ('[embed url="data:text/html;base64,PHNjcmlwdD4=" /]', False),
    ('[embed url="data:application/xhtml+xml,x" /]', False),
    ('[embed url="&#100;ata:text/html,x" /]', False),
    ('[embed ref="javascript:alert(1)" /]', False),
    ('[embed ref="&#x6A;avascript:alert(1)" /]', False),
    ('[embed url="javascript:alert(1)"]body[/embed]', False),
    ("[embed url='javascript:alert(1)' /]", False),
]

# (entry URL, iframe src) for `resolve_canvas_iframe_url` (external embeds not allowed).
IFRAMES: list[tuple[str, str | None]] = [
    ("/__openclaw__/canvas/a.html", "/__openclaw__/canvas/a.html"),
    ("/__openclaw__/a2ui/x?y=1#z", "/__openclaw__/a2ui/x?y=1#z"),
    ("http://localhost/__openclaw__/canvas/a.html", "/__openclaw__/canvas/a.html"),
    (" /__openclaw__/canvas/a.html ", "/__openclaw__/canvas/a.html"),
    ("/__openclaw__/canvas/\ta.html", "/__openclaw__/canvas/a.html"),
    ("/__openclaw__/canvas/../x", None),
    ("/__openclaw__/canvas/%2e%2e/x", None),
    ("/__openclaw__/canvas/.%2E/x", None),
    ("/__openclaw__/canvasx", None),
    ("/__openclaw__/cap/x", None),
    ("//evil.example/__openclaw__/canvas/a", None),
    ("\\\\evil.example\\__openclaw__\\canvas\\a", None),
    ("/\\evil.example/__openclaw__/canvas/a", None),
    ("https://evil.example/__openclaw__/canvas/a", None),
    ("http://localhost:8080/__openclaw__/canvas/a", None),
    ("javascript:alert(1)", None),
    ("data:text/html,x", None),
    ("data:image/png;base64,AA", None),
    ("", None),
]


def _ids(cases: list[tuple[Any, Any]]) -> list[Any]:
    return [pytest.param(*case, id=repr(case[0])[:60]) for case in cases]


def test_the_corpus_holds_at_least_150_cases() -> None:
    assert len(REMOTE) + len(LOCAL) + len(SPLIT) + len(EMBEDS) + len(IFRAMES) >= 150


@pytest.mark.parametrize(("url", "allowed"), _ids(REMOTE))
def test_remote_media_url_is_allowed_exactly_when_public_https(url: str, allowed: bool) -> None:
    assert is_allowed_remote_media_url(url) is allowed


@pytest.mark.parametrize(("candidate", "accepted"), _ids(LOCAL))
def test_media_reference_is_accepted_exactly_when_safe(candidate: str, accepted: bool) -> None:
    assert is_valid_media(candidate, allow_spaces=True) is accepted


@pytest.mark.parametrize(("text", "urls"), _ids(SPLIT))
def test_reply_text_yields_exactly_the_safe_media(text: str, urls: list[str]) -> None:
    split = split_media_from_output(text, extract_markdown_images=True)
    assert split.get("mediaUrls", []) == urls


@pytest.mark.parametrize(("text", "previews"), _ids(EMBEDS))
def test_embed_yields_a_preview_exactly_when_its_url_is_safe(text: str, previews: bool) -> None:
    extracted = extract_canvas_shortcodes(text)
    assert bool(extracted["previews"]) is previews
    assert (extracted["text"] == text) is not previews  # a refused embed stays visible text


@pytest.mark.parametrize(("entry", "src"), _ids(IFRAMES))
def test_iframe_source_is_a_same_origin_canvas_path_or_nothing(entry: str, src: str | None) -> None:
    assert resolve_canvas_iframe_url(entry) == src


def test_external_embed_urls_pass_only_when_allowed_and_only_http() -> None:
    assert (
        resolve_canvas_iframe_url("https://evil.example/x", allow_external_embed_urls=True)
        == "https://evil.example/x"
    )
    assert resolve_canvas_iframe_url("javascript:alert(1)", allow_external_embed_urls=True) is None
    assert resolve_canvas_iframe_url("data:text/html,x", allow_external_embed_urls=True) is None
