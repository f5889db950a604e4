"""Hosted canvas documents: the `canvas` tool and the routes serving its documents."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest

from clawcell import CodeMode, ToolError
from clawcell.store import MemoryStore
from clawcell.ui import canvas_tool
from clawcell.ui._security import Secrets
from tests.ui._client import TOKEN, canvas_client, client
from tests.ui._fakes import Documents

HTML = "<!doctype html><p>hi</p><script src='app.js'></script>"


def _call(documents: Documents, arguments: dict[str, Any]) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        return await canvas_tool(documents).execute(arguments)

    return asyncio.run(main())


def test_the_canvas_tool_creates_a_document_and_returns_its_ref_and_embed() -> None:
    documents = Documents()
    result = _call(
        documents,
        {
            "html": HTML,
            "title": 'Sales "Q3"',
            "height": 320,
            "assets": {"app.js": "window.ok = 1", "img/a.png": "base64:iVBO"},
        },
    )
    ref = result["ref"]
    assert ref.startswith("cv_") and len(ref) == 19
    assert result == {
        "ref": ref,
        "url": f"/__openclaw__/canvas/documents/{ref}/index.html",
        "embed": f'[embed ref="{ref}" title="Sales \'Q3\'" height="320" /]',
    }
    assert documents.files[ref] == {
        "index.html": HTML.encode(),
        "app.js": b"window.ok = 1",
        "img/a.png": base64.b64decode("iVBO"),
    }


def test_the_canvas_tool_replaces_an_existing_document() -> None:
    documents = Documents()
    ref = _call(documents, {"html": "<p>v1</p>", "assets": {"a.css": "p{}"}})["ref"]
    assert _call(documents, {"html": "<p>v2</p>", "ref": ref})["ref"] == ref
    assert documents.files[ref] == {"index.html": b"<p>v2</p>"}


def test_updating_an_unknown_document_is_refused() -> None:
    with pytest.raises(ToolError) as caught:
        _call(Documents(), {"html": "x", "ref": "cv_missing"})
    assert caught.value.message == (
        "no canvas document 'cv_missing' to update; omit `ref` to create a new one."
    )


@pytest.mark.parametrize("path", ["../x.js", "/etc/passwd", "a//b", "index.html", ".env", "a b"])
def test_unsafe_asset_paths_are_refused(path: str) -> None:
    with pytest.raises(ToolError) as caught:
        _call(Documents(), {"html": "x", "assets": {path: "y"}})
    assert caught.value.message == (
        f"canvas asset path {path!r} is not allowed; use a relative path such as "
        "`style.css` or `img/chart.png` (letters, digits, `.`, `_`, `-`)."
    )


def test_a_document_over_the_size_cap_is_refused_and_nothing_is_stored() -> None:
    documents = Documents()
    with pytest.raises(ToolError) as caught:
        _call(documents, {"html": "x" * (2 * 1024 * 1024 + 1)})
    assert caught.value.message == (
        "canvas document is 2097153 bytes; the limit is 2097152 bytes "
        "(make the HTML smaller or drop assets)."
    )
    assert documents.files == {}


def test_a_document_with_too_many_files_is_refused() -> None:
    with pytest.raises(ToolError) as caught:
        _call(Documents(), {"html": "x", "assets": {f"f{i}.txt": "" for i in range(64)}})
    assert caught.value.message == "a canvas document holds at most 64 files, got 65."


def test_bad_base64_assets_are_refused() -> None:
    with pytest.raises(ToolError) as caught:
        _call(Documents(), {"html": "x", "assets": {"a.png": "base64:@@"}})
    assert caught.value.message.startswith("canvas asset 'a.png' is not valid base64: ")


def test_a_cell_can_call_the_canvas_tool_with_the_real_store() -> None:
    async def main() -> dict[str, Any]:
        store = MemoryStore()
        async with CodeMode([canvas_tool(store)], store=store) as mode:
            envelope = await mode.exec('return await canvas({ html: "<p>from a cell</p>" });')
        ref = envelope["value"]["ref"]
        assert await store.get_document_file(ref, "index.html") == b"<p>from a cell</p>"
        return envelope

    assert asyncio.run(main())["status"] == "completed"


def _served(tier: str, path: str = "index.html") -> Any:
    documents = Documents()
    documents.files["cv_1"] = {"index.html": b"<p>doc</p>", "app.js": b"1", "x.bin": b"\0"}
    prefix = f"/__openclaw__/cap/{Secrets(token=TOKEN).canvas_cap}"
    test_client = canvas_client(documents, embed_sandbox=tier)
    return test_client.get(f"{prefix}/__openclaw__/canvas/documents/cv_1/{path}")


@pytest.mark.parametrize(
    ("tier", "policy"),
    [
        ("scripts", "sandbox allow-scripts"),
        ("strict", "sandbox"),
        ("trusted", "sandbox allow-scripts allow-same-origin"),
    ],
)
def test_documents_are_served_with_the_sandbox_csp_of_the_tier(tier: str, policy: str) -> None:
    response = _served(tier)
    assert response.status_code == 200
    assert response.text == "<p>doc</p>"
    assert response.headers["content-security-policy"] == policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-type"] == "text/html; charset=utf-8"


def test_documents_and_assets_load_through_the_capability_path_without_a_cookie() -> None:
    response = _served("scripts", "app.js")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.headers["content-security-policy"] == "sandbox allow-scripts"
    assert "set-cookie" not in response.headers


def test_an_unknown_asset_type_is_sent_as_octet_stream() -> None:
    assert _served("scripts", "x.bin").headers["content-type"] == "application/octet-stream"


@pytest.mark.parametrize("path", ["missing.js", "..%2Fx", ".hidden"])
def test_a_missing_or_unsafe_document_path_is_404(path: str) -> None:
    assert _served("scripts", path).status_code == 404


def test_without_a_document_store_canvas_urls_are_404() -> None:
    from starlette.testclient import TestClient

    from clawcell.ui import UiSettings, create_app
    from tests.ui._fakes import FakeAgent

    app = create_app(FakeAgent(), UiSettings(token=TOKEN))
    test_client = TestClient(app.state.canvas_app, base_url="http://127.0.0.1:8788")
    cap = Secrets(token=TOKEN).canvas_cap
    url = f"/__openclaw__/cap/{cap}/__openclaw__/canvas/documents/cv_1/index.html"
    assert test_client.get(url).status_code == 404


def test_the_app_itself_never_serves_a_document() -> None:
    documents = Documents()
    documents.files["cv_1"] = {"index.html": b"<p>doc</p>"}
    test_client = client(documents=documents)
    cap = Secrets(token=TOKEN).canvas_cap
    for url in (
        "/__openclaw__/canvas/documents/cv_1/index.html",
        f"/__openclaw__/cap/{cap}/__openclaw__/canvas/documents/cv_1/index.html",
    ):
        assert test_client.get(url).status_code == 404
