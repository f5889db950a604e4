"""Starlette test clients for the UI, logged in or not, and SSE parsing."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.testclient import TestClient

from clawcell.ui import UiSettings, create_app
from tests.ui._fakes import Documents, FakeAgent

TOKEN = "test-token-0123456789abcdef"
BASE = "http://127.0.0.1:8787"
CANVAS_PORT = 8788
CANVAS = f"http://127.0.0.1:{CANVAS_PORT}"


def client(
    agent: FakeAgent | None = None,
    *,
    documents: Documents | None = None,
    login: bool = True,
    **settings: Any,
) -> TestClient:
    """A test client for a UI over `agent` (an empty fake by default)."""
    settings.setdefault("canvas_port", CANVAS_PORT)
    app = create_app(
        agent or FakeAgent(),
        UiSettings(token=TOKEN, **settings),
        documents=documents if documents is not None else Documents(),
    )
    test_client = TestClient(app, base_url=BASE)
    if login:
        assert test_client.get(f"/?token={TOKEN}").status_code == 200
    return test_client


def canvas_client(documents: Documents | None = None, **settings: Any) -> TestClient:
    """A test client for the canvas host (the second listener) of a UI over `documents`."""
    app = create_app(FakeAgent(), UiSettings(token=TOKEN, canvas_port=CANVAS_PORT, **settings),
                     documents=documents if documents is not None else Documents())  # fmt: skip
    return TestClient(app.state.canvas_app, base_url=CANVAS)


def csrf(test_client: TestClient) -> str:
    """The CSRF token from the chat page's `<meta>`."""
    match = re.search(r'name="csrf-token" content="([^"]+)"', test_client.get("/").text)
    assert match is not None
    return match.group(1)


def post(test_client: TestClient, url: str, body: object) -> Any:
    """A same-origin JSON POST with the CSRF header."""
    return test_client.post(url, json=body, headers={"x-csrf-token": csrf(test_client)})


def sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """`(event name, data)` of each Server-Sent Events message."""
    messages: list[tuple[str, dict[str, Any]]] = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        messages.append((lines["event"], json.loads(lines["data"])))
    return messages
