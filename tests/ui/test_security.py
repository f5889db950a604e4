"""The front door: token, cookie, Host validation, CSRF and default headers."""

from __future__ import annotations

import pytest
from starlette.websockets import WebSocketDisconnect

from clawcell.ui._security import HostCheck, Secrets
from clawcell.ui._settings import UiSettings
from tests.ui._client import BASE, CANVAS, TOKEN, canvas_client, client, csrf

UNAUTHORIZED = (
    "This clawcell server needs its access token: open the URL `clawcell serve` printed "
    "(http://HOST:PORT/?token=…)."
)


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/playground",
        "/api/sessions",
        "/api/sessions/main/history",
        "/static/app.css",
        "/media?path=/etc/passwd",
        "/__openclaw__/canvas/documents/cv_1/index.html",
    ],
)
def test_every_route_refuses_a_request_without_the_token(path: str) -> None:
    response = client(login=False).get(path)
    assert response.status_code == 401
    assert response.text == UNAUTHORIZED


def test_a_wrong_token_is_refused() -> None:
    response = client(login=False).get("/?token=not-the-token")
    assert response.status_code == 401
    assert response.text == "Refused: wrong access token."
    assert "set-cookie" not in response.headers


def test_the_token_is_exchanged_for_an_httponly_strict_cookie_and_dropped_from_the_url() -> None:
    test_client = client(login=False)
    response = test_client.get(f"/?session=s1&token={TOKEN}", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/?session=s1"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert TOKEN not in cookie
    assert test_client.get("/").status_code == 200


def test_a_bearer_token_works_without_a_cookie() -> None:
    test_client = client(login=False)
    response = test_client.get("/api/sessions", headers={"authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    assert response.json() == []


def test_a_forged_cookie_is_refused() -> None:
    name = next(iter(client().cookies.keys()))
    response = client(login=False).get("/", headers={"cookie": f"{name}={'0' * 64}"})
    assert response.status_code == 401


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8787", "127.0.0.1.nip.io", ""])
def test_a_foreign_host_header_is_refused_even_with_the_token(host: str) -> None:
    response = client().get("/", headers={"host": host})
    assert response.status_code == 403
    assert response.text == (
        f"Refused: unexpected Host header {host!r} (add it to `allowedHosts` if a proxy sends it)."
    )


@pytest.mark.parametrize("host", ["127.0.0.1:8787", "localhost:8787", "[::1]:8787", "LOCALHOST"])
def test_loopback_host_headers_are_accepted(host: str) -> None:
    assert client().get("/", headers={"host": host}).status_code == 200


def test_configured_allowed_hosts_are_accepted() -> None:
    test_client = client(allowed_hosts=("ui.internal",))
    assert test_client.get("/", headers={"host": "ui.internal"}).status_code == 200


def test_a_post_without_the_csrf_header_is_refused() -> None:
    response = client().post("/api/sessions/main/turns", json={"text": "hi"})
    assert response.status_code == 403
    assert response.text == "Refused: missing or wrong `X-CSRF-Token` header (reload the page)."


def test_a_cross_site_post_is_refused_even_with_the_csrf_header() -> None:
    test_client = client()
    headers = {"x-csrf-token": csrf(test_client), "sec-fetch-site": "cross-site"}
    response = test_client.post("/api/sessions/main/turns", json={"text": "hi"}, headers=headers)
    assert response.status_code == 403
    assert response.text == "Refused: cross-site request ('cross-site')."


def test_a_cross_origin_post_is_refused_even_with_the_csrf_header() -> None:
    test_client = client()
    headers = {"x-csrf-token": csrf(test_client), "origin": "https://evil.example"}
    response = test_client.post("/api/sessions/main/turns", json={"text": "hi"}, headers=headers)
    assert response.status_code == 403
    assert response.text == "Refused: cross-origin request from 'https://evil.example'."


def test_a_same_origin_post_with_the_csrf_header_is_accepted() -> None:
    test_client = client()
    headers = {"x-csrf-token": csrf(test_client), "origin": BASE, "sec-fetch-site": "same-origin"}
    response = test_client.post("/api/playground/exec", json={"code": "return 1"}, headers=headers)
    assert response.status_code == 200


@pytest.mark.parametrize("path", ["/", "/api/sessions", "/static/chat.js", "/nope"])
def test_every_response_carries_the_default_security_headers(path: str) -> None:
    headers = client().get(path).headers
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["cache-control"] == "no-store"


def test_the_canvas_host_refuses_an_unknown_capability() -> None:
    response = canvas_client().get("/__openclaw__/cap/0000/__openclaw__/canvas/x/index.html")
    assert response.status_code == 404
    assert response.text == "Not found: unknown canvas capability."


def test_the_canvas_host_grants_nothing_but_documents() -> None:
    cap = Secrets(token=TOKEN).canvas_cap
    canvas = canvas_client()
    assert canvas.get(f"/__openclaw__/cap/{cap}/api/sessions").status_code == 404
    assert canvas.get(f"/__openclaw__/cap/{cap}/").status_code == 404
    assert canvas.get("/").status_code == 404
    assert canvas.get(f"/api/sessions?token={TOKEN}").status_code == 404  # no token, no API
    response = canvas.post(f"/__openclaw__/cap/{cap}/__openclaw__/canvas/documents/a/b")
    assert response.status_code == 405
    assert response.text == "Refused: the canvas host is read-only."


def test_the_canvas_host_checks_the_host_header() -> None:
    cap = Secrets(token=TOKEN).canvas_cap
    url = f"/__openclaw__/cap/{cap}/__openclaw__/canvas/documents/a/index.html"
    response = canvas_client().get(url, headers={"host": "evil.example:8788"})
    assert response.status_code == 403


def test_a_post_from_the_canvas_origin_is_refused_even_with_the_csrf_token() -> None:
    test_client = client()
    headers = {"x-csrf-token": csrf(test_client), "origin": CANVAS}
    response = test_client.post("/api/sessions/s/turns", json={"text": "hi"}, headers=headers)
    assert response.status_code == 403
    assert response.text == f"Refused: cross-origin request from {CANVAS!r}."


@pytest.mark.parametrize("path", ["/api/sessions", "/api/sessions/s/history", "/media?path=/x"])
def test_api_and_media_reads_from_another_site_or_port_are_refused(path: str) -> None:
    response = client().get(path, headers={"sec-fetch-site": "same-site"})
    assert response.status_code == 403
    assert response.text == "Refused: cross-site request ('same-site')."


def test_a_websocket_is_closed_without_being_let_in() -> None:
    with pytest.raises(WebSocketDisconnect) as caught, client().websocket_connect("/"):
        pass
    assert caught.value.code == 1008


@pytest.mark.parametrize(
    ("bind", "header", "admitted"),
    [
        ("127.0.0.1", "localhost:8000", True),
        ("127.0.0.1", "[::1]:8000", True),
        ("127.0.0.1", "proxy.example", True),  # an `allowedHosts` name
        ("127.0.0.1", "evil.example", False),  # DNS rebinding: a name nobody allowed
        ("127.0.0.1", "10.0.0.5:8000", False),  # an IP literal, on a loopback-only bind
        ("0.0.0.0", "10.0.0.5:8000", True),  # bound to every address: reached by its IP
        ("0.0.0.0", "evil.example", False),
        ("127.0.0.1", "localhost:port", False),  # a malformed port
        ("127.0.0.1", "", False),
    ],
)
def test_both_listeners_admit_the_host_names_they_serve(
    bind: str, header: str, admitted: bool
) -> None:
    check = HostCheck.of(UiSettings(host=bind, allowed_hosts=("proxy.example",)))
    assert check.admits(header) is admitted
    # The canvas host admits the same names, and its proxy's name on top.
    canvas = HostCheck.of(UiSettings(host=bind), also=frozenset({"canvas.example"}))
    assert canvas.admits("canvas.example:443")
