"""The composer's attachments over HTTP: the upload route (caps enforced while reading, the
type read from the bytes, hostile names), sending them with a message, and the sent files
shown after a reload from any worker of one database (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from clawcell import Tool
from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, create_app
from clawcell.ui._responses import MAX_JSON_BODY
from clawcell.ui._security import Secrets
from tests.ui._client import BASE, TOKEN

from ..store.conftest import (
    AnyStore,
    StoreFactory,
    new_durable_store,
    postgres_dsn,
    postgres_schema,
)

__all__ = ["new_durable_store", "postgres_dsn", "postgres_schema"]

CSRF = {"x-csrf-token": Secrets(token=TOKEN).csrf}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
SHA = hashlib.sha256(PNG).hexdigest()


@contextmanager
def _worker(
    store: AnyStore | None = None, model: ScriptedModel | None = None, **settings: Any
) -> Generator[TestClient]:
    agent = Agent(model=model or ScriptedModel([]), store=store or MemoryStore())
    app = create_app(agent, UiSettings(token=TOKEN, **settings))
    with TestClient(app, base_url=BASE) as test_client:
        assert test_client.get(f"/?token={TOKEN}").status_code == 200
        try:
            yield test_client
        finally:  # a store passed to the agent stays ours to close, on the loop it ran on
            portal = test_client.portal
            assert portal is not None
            portal.call(agent.store.close)


def _upload(
    test_client: TestClient, data: bytes, name: str = "shot.png", session: str = "s", **headers: str
) -> Any:
    return test_client.post(
        f"/api/sessions/{session}/attachments",
        params={"name": name},
        content=data,
        headers={**CSRF, **headers},
    )


def _send(test_client: TestClient, text: str, ids: list[str], session: str = "s") -> Any:
    return test_client.post(
        f"/api/sessions/{session}/turns", json={"text": text, "attachments": ids}, headers=CSRF
    )


def test_a_file_uploaded_on_one_worker_is_sent_from_another_and_shown_after_reload_on_any(
    new_durable_store: StoreFactory,
) -> None:
    model = ScriptedModel(["a cat"])
    with (
        _worker(new_durable_store()) as a,
        _worker(new_durable_store(), model) as b,
    ):
        uploaded = _upload(a, PNG, "../../cat.png", **{"content-type": "text/html"})
        assert uploaded.status_code == 201
        answer = uploaded.json()
        assert {k: answer[k] for k in ("name", "kind", "mimeType", "size")} == {
            "name": "cat.png", "kind": "image", "mimeType": "image/png", "size": len(PNG)
        }  # fmt: skip
        sent = _send(b, "what is this?", [answer["id"]])
        assert sent.status_code == 200 and "event: done" in sent.text
        assert f"/api/sessions/s/attachments/{SHA}" in sent.text  # the live echo shows it
        [request] = model.requests
        blocks = request.messages[-1]["content"]
        assert [block["type"] for block in blocks] == ["text", "image"]
        for worker in (a, b):
            page = worker.get("/?session=s").text
            assert f'<img src="/api/sessions/s/attachments/{SHA}" alt="cat.png"' in page
            served = worker.get(f"/api/sessions/s/attachments/{SHA}")
            assert served.status_code == 200 and served.content == PNG
            assert served.headers["content-type"] == "image/png"
            assert served.headers["x-content-type-options"] == "nosniff"
            assert "sandbox" in served.headers["content-security-policy"]
            assert served.headers["cache-control"] == "private, max-age=86400, immutable"
        again = _send(a, "and again?", [answer["id"]])  # a sent upload is taken: gone
        assert again.status_code == 400 and "is unknown or expired" in again.json()["error"]


def test_html_sent_as_an_image_is_a_text_file_served_only_as_a_download() -> None:
    html = b"<html><script>alert(1)</script></html>"
    with _worker(model=ScriptedModel(["ok"])) as test_client:
        answer = _upload(test_client, html, "evil.png", **{"content-type": "image/png"}).json()
        assert (answer["kind"], answer["mimeType"]) == ("file", "text/plain")
        assert _send(test_client, "", [answer["id"]]).status_code == 200  # files alone: fine
        page = test_client.get("/?session=s").text
        digest = hashlib.sha256(html).hexdigest()
        assert re.search(rf'<a class="document" href="/api/sessions/s/attachments/{digest}"', page)
        served = test_client.get(f"/api/sessions/s/attachments/{digest}")
        assert served.headers["content-type"] == "text/plain; charset=utf-8"
        assert served.headers["content-disposition"] == "attachment; filename*=UTF-8''evil.png"


@pytest.mark.parametrize(
    ("data", "status", "code", "message"),
    [
        (b"", 400, "empty", "attachment 'x' is empty (0 bytes); attach a file with content."),
        (
            b"%PDF-1.7\n\xff\xfe",
            415,
            "unsupported_type",
            "attachment 'x' is neither an image (PNG, JPEG, GIF, WebP) nor UTF-8 text (it "
            "starts b'%PDF-1.7'); attach one of those, or paste its text.",
        ),
        (
            b"a" * 1025,
            413,
            "too_large",
            "file '../../x' is larger than the 1 KiB a file may be (1025 bytes); attach a "
            "smaller one.",
        ),
    ],
    ids=["zero-byte", "binary", "over-the-cap"],
)
def test_refused_files_say_why_and_how_to_fix_it(
    data: bytes, status: int, code: str, message: str
) -> None:
    with _worker(max_attachment_bytes=1024) as test_client:
        refused = _upload(test_client, data, "../../x")
    assert refused.status_code == status
    assert refused.json() == {"error": message, "code": code}


def _raw_upload(
    app: Any,
    headers: dict[str, str],
    chunks: Iterator[bytes],
    path: str = "/api/sessions/s/attachments",
) -> tuple[int, int]:
    """POST a body straight to the ASGI app; the status and how many chunks it read."""
    read, statuses = 0, list[int]()

    async def receive() -> dict[str, Any]:
        nonlocal read
        read += 1
        return {"type": "http.request", "body": next(chunks), "more_body": True}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    raw = [(k.encode(), v.encode()) for k, v in {**headers, "host": "127.0.0.1:8787",
           "authorization": f"Bearer {TOKEN}", **CSRF}.items()]  # fmt: skip
    scope = {"type": "http", "method": "POST", "path": path,
             "raw_path": path.encode(), "query_string": b"name=big.txt",
             "headers": raw, "scheme": "http", "server": ("127.0.0.1", 8787),
             "client": ("127.0.0.1", 5000), "http_version": "1.1", "root_path": ""}  # fmt: skip
    asyncio.run(app(scope, receive, send))
    return statuses[0], read


def _endless() -> Iterator[bytes]:
    while True:
        yield b"a" * 1000


def test_a_declared_gigabyte_is_refused_before_a_byte_is_read() -> None:
    app = create_app(Agent(model=ScriptedModel([])), UiSettings(token=TOKEN))
    status, read = _raw_upload(app, {"content-length": str(2**30)}, _endless())
    assert (status, read) == (413, 0)


def test_an_endless_body_without_a_length_is_cut_at_the_cap() -> None:
    app = create_app(
        Agent(model=ScriptedModel([])), UiSettings(token=TOKEN, max_attachment_bytes=10_000)
    )
    status, read = _raw_upload(app, {"transfer-encoding": "chunked"}, _endless())
    assert status == 413 and read == 11  # the chunk that passed 10,000 bytes was the last


def test_a_message_body_is_read_only_up_to_its_cap_too() -> None:
    app = create_app(Agent(model=ScriptedModel([])), UiSettings(token=TOKEN))
    path = "/api/sessions/s/turns"
    declared = _raw_upload(app, {"content-length": str(2**30)}, _endless(), path)
    assert declared == (400, 0)
    status, read = _raw_upload(app, {"transfer-encoding": "chunked"}, _endless(), path)
    assert status == 400 and read == MAX_JSON_BODY // 1000 + 1


def test_an_upload_without_the_csrf_header_is_refused() -> None:
    with _worker() as test_client:
        refused = test_client.post("/api/sessions/s/attachments?name=a.png", content=PNG)
    assert refused.status_code == 403


def test_a_message_carries_at_most_the_capped_count_and_bytes_of_files() -> None:
    with _worker(max_attachments=2, max_message_attachment_bytes=100) as test_client:
        ids = [_upload(test_client, PNG, f"{n}.png").json()["id"] for n in range(3)]
        too_many = _send(test_client, "x", ids)
        too_big = _send(test_client, "x", ids[:2])
    assert too_many.status_code == 400
    assert too_many.json()["error"] == "a message may carry 2 files, got 3: remove some."
    assert too_big.status_code == 400
    assert too_big.json()["error"] == (
        "the files hold 144 bytes together, more than the 100 bytes one message may carry: "
        "remove some."
    )


def test_an_upload_of_another_session_or_a_made_up_id_cannot_be_sent() -> None:
    with _worker() as test_client:
        upload_id = _upload(test_client, PNG, session="other").json()["id"]
        stolen = _send(test_client, "x", [upload_id])
        junk = _send(test_client, "x", ["../../etc/passwd"])
    assert stolen.status_code == 400
    assert stolen.json()["error"] == (
        f"upload {upload_id!r} is unknown or expired (uploads wait 60 minutes): attach the "
        "file again."
    )
    assert junk.json()["error"].startswith("`attachments` must be a list of upload ids")


def test_a_file_never_sent_in_the_session_is_not_served() -> None:
    with _worker() as test_client:
        _upload(test_client, PNG)  # uploaded, never sent: not part of the transcript
        missing = test_client.get(f"/api/sessions/s/attachments/{SHA}")
    assert missing.status_code == 404


def test_attachments_turned_off_hide_the_button_and_refuse_uploads() -> None:
    with _worker(max_attachment_bytes=0) as test_client:
        assert 'id="attach"' not in test_client.get("/").text
        refused = _upload(test_client, PNG)
    assert refused.status_code == 404 and refused.json()["code"] == "attachments_off"


def test_the_composer_shows_the_attach_button_with_its_caps() -> None:
    with _worker() as test_client:
        page = test_client.get("/").text
    assert 'data-attach-file="5242880" data-attach-count="4" data-attach-total="10485760"' in page
    assert '<button type="button" class="attach" id="attach"' in page


def test_a_message_with_files_is_not_queued_behind_a_running_turn_and_keeps_its_upload() -> None:
    async def main() -> None:
        gate, started = asyncio.Event(), asyncio.Event()

        async def hold(_: dict[str, Any]) -> str:
            started.set()
            await gate.wait()
            return "held"

        model = ScriptedModel([exec_call("return await hold();"), "first done", "saw it"])
        agent = Agent(model=model, tools=[Tool(name="hold", execute=hold)])
        app = create_app(agent, UiSettings(token=TOKEN))
        transport = httpx.ASGITransport(app=app)
        headers = {**CSRF, "authorization": f"Bearer {TOKEN}"}
        async with (
            agent,
            httpx.AsyncClient(transport=transport, base_url=BASE, headers=headers) as http,
        ):
            first = await http.post("/api/sessions/s/turns?follow=0", json={"text": "go"})
            await started.wait()
            url = "/api/sessions/s/attachments?name=cat.png"
            upload_id = (await http.post(url, content=PNG)).json()["id"]
            body = {"text": "and this?", "attachments": [upload_id]}
            refused = await http.post("/api/sessions/s/turns?follow=0", json=body)
            assert refused.status_code == 409
            assert refused.json()["error"] == (
                f"turn {first.json()['turnId']!r} is running: a message with files is not "
                "queued; send it once the turn ended."
            )
            gate.set()
            live = await http.get(f"/api/sessions/s/live?turn={first.json()['turnId']}&until=idle")
            assert "first done" in live.text
            sent = await http.post("/api/sessions/s/turns", json=body)  # the upload is still there
            assert sent.status_code == 200 and "saw it" in sent.text

    asyncio.run(main())
