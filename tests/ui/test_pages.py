"""The chat and playground pages: CSP, no inline script, sessions and history."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from clawcell import Tool
from tests.ui._client import client
from tests.ui._fakes import FakeAgent

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "
    "media-src 'self' https: data:; "
    "frame-src http://127.0.0.1:8788 https://www.youtube-nocookie.com; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))
        self.handlers += [name for name, _ in attrs if name.startswith("on")]


def _parse(html: str) -> _Scripts:
    parser = _Scripts()
    parser.feed(html)
    return parser


def _agent() -> FakeAgent:
    return FakeAgent(
        history={
            "older": [{"role": "user", "content": "first"}],
            "main": [
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": "[[reply_to_current]] Hi, *you*."},
                {"role": "assistant", "content": "NO_REPLY"},
            ],
        }
    )


@pytest.mark.parametrize("path", ["/", "/playground"])
def test_pages_have_a_strict_csp_and_only_external_module_scripts(path: str) -> None:
    response = client(_agent()).get(path)
    assert response.headers["content-security-policy"] == CSP
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    parsed = _parse(response.text)
    assert parsed.scripts and all(
        (s.get("src") or "").startswith("/static/") for s in parsed.scripts
    )
    assert all(s.get("type") == "module" for s in parsed.scripts)
    assert parsed.handlers == []
    assert "<script>" not in response.text


def test_external_embed_urls_widen_frame_src_only_when_allowed() -> None:
    csp = client(allow_external_embed_urls=True).get("/").headers["content-security-policy"]
    assert "frame-src http://127.0.0.1:8788 http: https:;" in csp


def test_the_chat_page_lists_sessions_and_shows_the_projected_history() -> None:
    html = client(_agent()).get("/?session=main").text
    assert re.findall(r'href="/\?session=(\w+)"', html) == ["older", "main"]
    assert 'aria-current="page">main<' in html
    assert "<p>hello</p>" in html
    assert "<p>Hi, <em>you</em>.</p>" in html
    assert "NO_REPLY" not in html and "[[reply_to_current]]" not in html


def test_the_chat_page_opens_the_most_recent_session_by_default() -> None:
    html = client(_agent()).get("/").text
    assert 'data-session="older"' in html


def test_the_chat_page_carries_the_csrf_token_in_a_meta_tag() -> None:
    html = client().get("/").text
    assert re.search(r'<meta name="csrf-token" content="[0-9a-f]{64}">', html)


@pytest.mark.parametrize(
    ("session", "reason"),
    [
        ("", "a session id is a non-empty string"),
        ("x" * 1025, "a session id has at most 1024 characters"),
        ("a\x00b", "it holds the control character '\\x00'"),
        ("a\nb", "it holds the control character '\\n'"),
        ("..", "`.` and `..` cannot travel in a URL path"),
        (".", "`.` and `..` cannot travel in a URL path"),
    ],
    ids=["empty", "too-long", "nul", "newline", "dot-dot", "dot"],
)
def test_a_bad_session_id_is_refused(session: str, reason: str) -> None:
    response = client().get("/", params={"session": session})
    assert response.status_code == 400
    assert response.json() == {"error": f"session id {session!r:.80} is not allowed: {reason}."}


def test_the_playground_lists_the_sessions_tools() -> None:
    async def forecast(_: dict[str, object]) -> float:
        return 21.5

    agent = FakeAgent(tools=[Tool(name="forecast", execute=forecast)])
    html = client(agent).get("/playground").text
    assert "<code>forecast</code>" in html
    assert 'data-session="playground"' in html


def test_the_sessions_api_lists_sessions_as_camel_case_json() -> None:
    assert client(_agent()).get("/api/sessions").json() == [
        {"sessionId": "older", "updatedAt": 0.0},
        {"sessionId": "main", "updatedAt": 1.0},
    ]


def test_the_history_api_returns_the_projection() -> None:
    history = client(_agent()).get("/api/sessions/main/history").json()
    assert history == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": " Hi, *you*."},
    ]


@pytest.mark.parametrize("path", ["/static/chat.js", "/static/stream.js", "/static/playground.js"])
def test_static_modules_are_served_as_javascript(path: str) -> None:
    response = client().get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")


def test_an_unknown_route_is_404() -> None:
    assert client().get("/admin").status_code == 404


def test_each_message_carries_its_markdown_for_copy_message_escaped() -> None:
    text = "## Title\n\n**bold** <script>x</script> ~~gone~~"
    history = {"s": [{"role": "assistant", "content": [{"type": "text", "text": text}]}]}
    page = client(FakeAgent(history=history)).get("/?session=s").text
    assert (
        '<template class="message-source">## Title\n\n**bold** &lt;script&gt;x&lt;/script&gt; '
        "~~gone~~</template>"
    ) in page


def test_the_session_list_is_bounded_and_the_api_searches_every_session() -> None:
    history = {f"chat-{n:03d}": [{"role": "user", "content": "hi"}] for n in range(120)}
    test_client = client(FakeAgent(history=history))
    page = test_client.get("/?session=chat-000").text
    listed = re.findall(r'<li><a href="/\?session=([^"]+)"', page)
    assert listed == [f"chat-{n:03d}" for n in range(50)]
    assert '<p class="sessions-more" id="sessions-more">70 older not listed: search' in page
    assert 'aria-label="Search sessions"' in page
    found = test_client.get("/api/sessions?q=CHAT-11&limit=5").json()
    assert [s["sessionId"] for s in found] == [f"chat-11{n}" for n in range(5)]
    assert len(test_client.get("/api/sessions").json()) == 120  # unbounded without a limit
    refused = test_client.get("/api/sessions?limit=0")
    assert refused.status_code == 400
    assert refused.json()["error"] == "`limit` must be a count from 1 to 1000, got '0'."
