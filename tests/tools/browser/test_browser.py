"""The `browser` tool against pages on a loopback server (the test-only loopback allowance)."""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool, ToolError
from clawcell.catalog import Catalog, call_session
from clawcell.errors import ConfigurationError
from clawcell.tools import BrowserSettings, browser
from clawcell.tools._browser._browser import BrowserPool, find_chromium
from clawcell.tools._browser._browser_session import safe_filename

from .._server import LocalServer, Response, local_server

pytestmark = pytest.mark.slow
DOC = Path(__file__).resolve().parents[3] / "docs" / "tools.md"

HTML = {"Content-Type": "text/html; charset=utf-8"}
FORM = (
    b"<title>Sign up</title><h1>Sign up</h1><form action='/done' method='get'>"
    b"<label>Name <input name='name'></label>"
    b"<label>Plan <select name='plan'><option>free</option><option>pro</option></select></label>"
    b"<button>Send</button></form>"
)
ARTICLE = (
    b"<title>News</title><nav>menu home about</nav><main><article id='story'>"
    b"<h1>Big story</h1><p>Alpha beta gamma.</p><p>Delta epsilon.</p></article>"
    b"<aside id='ad'>Buy now</aside></main>"
)

Scenario = Callable[[Catalog, LocalServer], Awaitable[Any]]


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with local_server() as state:
        state.route("/", Response(headers=HTML, body=FORM))
        state.route("/done", Response(headers=HTML, body=b"<title>Done</title><p>thanks</p>"))
        state.route("/news", Response(headers=HTML, body=ARTICLE))
        yield state


def run(scenario: Scenario, server: LocalServer, tool: Tool | None = None) -> Any:
    """Run `scenario` with a catalog holding the browser tool, then close the browser."""
    used = tool or browser(allow_loopback_for_tests=True)

    async def main() -> Any:
        try:
            return await scenario(Catalog([used]), server)
        finally:
            assert isinstance(used.execute, BrowserPool)
            await used.execute.aclose()

    return asyncio.run(main())


def ref(snapshot: str, pattern: str) -> str:
    found = re.search(pattern + r" \[ref=(e\d+)\]", snapshot)
    assert found is not None, snapshot
    return found.group(1)


@pytest.mark.parametrize("executable", ["found on PATH", "chromium"])
def test_snapshot_refs_drive_a_form_submit(server: LocalServer, executable: str) -> None:
    """Headless finds the headless shell first; a full `chromium` named by the settings
    (what a window needs) drives the same form."""

    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        opened = await catalog.call("browser", {"action": "open", "url": f"{server.base}/"})
        snap = await catalog.call("browser", {"action": "snapshot"})
        name, plan = ref(snap["text"], 'textbox "Name"'), ref(snap["text"], 'combobox "Plan"')
        await catalog.call("browser", {"action": "type", "ref": name, "text": "Ada"})
        await catalog.call("browser", {"action": "select", "ref": plan, "values": ["pro"]})
        sent = await catalog.call(
            "browser", {"action": "click", "ref": ref(snap["text"], 'button "Send"')}
        )
        return opened, snap, sent

    path = shutil.which(executable) if executable == "chromium" else None
    settings = BrowserSettings(executable_path=path)
    tool = browser(settings=settings, allow_loopback_for_tests=True)
    opened, snap, sent = run(scenario, server, tool)
    assert opened == {"action": "open", "targetId": "t1", "url": f"{server.base}/",
                      "title": "Sign up", "status": 200}  # fmt: skip
    assert snap["text"].startswith("SECURITY NOTICE:")
    assert "<<<EXTERNAL_UNTRUSTED_CONTENT>>>" in snap["text"]
    assert sent["url"] == f"{server.base}/done?name=Ada&plan=pro"
    assert sent["title"] == "Done"
    assert server.hits("/done") == 1


def test_selector_query_and_max_chars_narrow_the_text(server: LocalServer) -> None:
    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        await catalog.call("browser", {"action": "open", "url": f"{server.base}/news"})
        whole = await catalog.call("browser", {"action": "text"})
        story = await catalog.call("browser", {"action": "text", "selector": "#story"})
        cut = await catalog.call("browser", {"action": "text", "selector": "#story", "maxChars": 9})
        query = await catalog.call("browser", {"action": "snapshot", "query": "BIG story"})
        return whole, story, cut, query

    whole, story, cut, query = run(scenario, server)
    assert "Alpha" in whole["text"]  # the first <article>, without the nav or the aside
    assert "menu" not in whole["text"] and "Buy now" not in whole["text"]
    assert "Alpha beta gamma." in story["text"] and "Buy now" not in story["text"]
    assert story["truncated"] is False
    assert story["returnedChars"] == story["totalChars"]
    assert cut["truncated"] is True and cut["returnedChars"] == 9
    assert cut["totalChars"] == story["totalChars"]
    assert "Big story\n" in cut["text"] and "Alpha" not in cut["text"]
    assert query["matches"] == 1
    assert 'heading "Big story"' in query["text"] and "Alpha" not in query["text"]


BLOCKED = {
    "http://10.0.0.7/": "blocked_address",
    "http://169.254.169.254/latest/meta-data/": "blocked_address",
    "http://[fd00::1]/": "blocked_address",
    "file:///etc/passwd": "blocked_url",
    "chrome://settings": "blocked_url",
    "javascript:alert(1)": "blocked_url",
}


def test_navigation_to_a_private_address_or_local_scheme_is_refused(server: LocalServer) -> None:
    # One browser for every URL (a launch is most of the cost); each refusal follows a fresh
    # `open`, and the comparison names every URL whose refusal differs.
    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        codes: dict[str, str] = {}
        for url in BLOCKED:
            await catalog.call("browser", {"action": "open", "url": f"{server.base}/"})
            with pytest.raises(ToolError) as caught:
                await catalog.call("browser", {"action": "navigate", "url": url})
            codes[url] = caught.value.code
        return codes

    assert run(scenario, server) == BLOCKED


def test_a_redirect_to_a_private_address_is_refused(server: LocalServer) -> None:
    server.route("/go", Response(status=302, headers={"Location": "http://10.255.0.9/admin"}))

    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        with pytest.raises(ToolError) as caught:
            await catalog.call("browser", {"action": "open", "url": f"{server.base}/go"})
        return caught.value

    error = run(scenario, server)
    assert error.code == "blocked_address"
    assert "10.255.0.9" in error.message and "private" in error.message


def test_a_subresource_on_a_private_address_is_never_fetched(server: LocalServer) -> None:
    server.route("/img", Response(headers=HTML, body=b"<img src='http://10.9.9.9/p.png'><p>ok</p>"))
    tool = browser(allow_loopback_for_tests=True)

    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        await catalog.call("browser", {"action": "open", "url": f"{server.base}/img"})
        assert isinstance(tool.execute, BrowserPool)
        return (await tool.execute.session("default")).refusals

    refusals = run(scenario, server, tool)
    assert [url for url, _ in refusals] == ["http://10.9.9.9/p.png"]


def download_page(server: LocalServer, name: str) -> None:
    server.route("/dl", Response(headers=HTML, body=b"<a href='/file'>get it</a>"))
    server.route(
        "/file",
        Response(
            headers={"Content-Type": "application/octet-stream",
                     "Content-Disposition": f'attachment; filename="{name}"'},
            body=b"payload",
        ),
    )  # fmt: skip


async def click_download(catalog: Catalog, server: LocalServer) -> Any:
    await catalog.call("browser", {"action": "open", "url": f"{server.base}/dl"})
    snap = await catalog.call("browser", {"action": "snapshot"})
    return await catalog.call(
        "browser", {"action": "click", "ref": ref(snap["text"], 'link "get it"')}
    )


def test_a_page_cannot_make_a_download_land_outside_the_downloads_directory(
    server: LocalServer, tmp_path: Path
) -> None:
    download_page(server, "../../escape.txt")
    downloads = tmp_path / "a" / "b" / "downloads"
    settings = BrowserSettings(downloads=True, downloads_dir=downloads, media_dir=tmp_path / "m")
    clicked = run(click_download, server, browser(settings=settings, allow_loopback_for_tests=True))
    [saved] = clicked["downloads"]
    assert saved["url"] == f"{server.base}/file"
    assert Path(saved["path"]).parent.parent == downloads.resolve()
    assert Path(saved["path"]).name.endswith("escape.txt")  # Chromium's or our plain name
    assert Path(saved["path"]).read_bytes() == b"payload"
    assert [p.resolve() for p in tmp_path.rglob("*escape*")] == [Path(saved["path"])]


def test_a_download_over_max_download_bytes_is_not_saved(
    server: LocalServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    download_page(server, "big.bin")  # 7 bytes: "payload"
    downloads = tmp_path / "downloads"
    settings = BrowserSettings(
        downloads=True, downloads_dir=downloads, media_dir=tmp_path / "m", max_download_bytes=6
    )
    with caplog.at_level(logging.WARNING, logger="clawcell.tools"):
        clicked = run(
            click_download, server, browser(settings=settings, allow_loopback_for_tests=True)
        )
    assert "downloads" not in clicked
    assert not list(tmp_path.rglob("big.bin"))
    assert "a download of 7 bytes" in caplog.text and "`max_download_bytes` (6)" in caplog.text


def test_downloads_are_off_unless_configured(server: LocalServer, tmp_path: Path) -> None:
    download_page(server, "report.txt")
    settings = BrowserSettings(media_dir=tmp_path)
    clicked = run(click_download, server, browser(settings=settings, allow_loopback_for_tests=True))
    assert "downloads" not in clicked
    assert not list(tmp_path.rglob("report.txt"))


@pytest.mark.parametrize(
    ("suggested", "expected"),
    [("../../x.txt", "x.txt"), ("..\\..\\y.txt", "y.txt"), ("...", "download"),
     ("/etc/passwd", "passwd"), ("a\x00b:c.txt", "a_b_c.txt"), (".bashrc", "bashrc")],
)  # fmt: skip
def test_suggested_file_names_become_plain_names(suggested: str, expected: str) -> None:
    assert safe_filename(suggested) == expected


def test_screenshot_is_a_media_path_not_bytes(server: LocalServer, tmp_path: Path) -> None:
    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        await catalog.call("browser", {"action": "open", "url": f"{server.base}/news"})
        shot = await catalog.call("browser", {"action": "screenshot"})
        pdf = await catalog.call("browser", {"action": "pdf"})
        return shot, pdf

    tool = browser(settings=BrowserSettings(media_dir=tmp_path), allow_loopback_for_tests=True)
    shot, pdf = run(scenario, server, tool)
    for result, magic in ((shot, b"\x89PNG"), (pdf, b"%PDF")):
        path = Path(result["path"])
        assert path.is_relative_to(tmp_path) and path.read_bytes().startswith(magic)
        assert result["media"] == {"mediaUrl": str(path)}
        assert result["bytes"] == path.stat().st_size


def test_tabs_are_bounded_listed_and_closed(server: LocalServer) -> None:
    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        for _ in range(2):
            await catalog.call("browser", {"action": "open", "url": f"{server.base}/news"})
        with pytest.raises(ToolError) as caught:
            await catalog.call("browser", {"action": "open", "url": f"{server.base}/"})
        listed = await catalog.call("browser", {"action": "tabs"})
        closed = await catalog.call("browser", {"action": "close", "targetId": "t2"})
        return caught.value, listed, closed

    settings = BrowserSettings(max_tabs=2)
    error, listed, closed = run(
        scenario, server, browser(settings=settings, allow_loopback_for_tests=True)
    )
    assert error.code == "too_many_tabs"
    assert [(tab["targetId"], tab["active"]) for tab in listed["tabs"]] == [
        ("t1", False),
        ("t2", True),
    ]
    assert [tab["targetId"] for tab in closed["tabs"]] == ["t1"] and closed["targetId"] == "t1"


def test_each_session_has_its_own_isolated_context(server: LocalServer) -> None:
    server.route("/set", Response(headers={**HTML, "Set-Cookie": "who=first"}, body=b"<p>set</p>"))
    tool = browser(allow_loopback_for_tests=True)

    async def in_session(catalog: Catalog, session_id: str, url: str) -> Any:
        call_session.set(session_id)
        await catalog.call("browser", {"action": "navigate", "url": url})
        return await catalog.call("browser", {"action": "text"})

    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        await asyncio.create_task(in_session(catalog, "s1", f"{server.base}/set"))
        await asyncio.create_task(in_session(catalog, "s2", f"{server.base}/news"))
        await asyncio.create_task(in_session(catalog, "s1", f"{server.base}/news"))
        assert isinstance(tool.execute, BrowserPool)
        return sorted(tool.execute.session_ids)

    assert run(scenario, server, tool) == ["s1", "s2"]
    cookies = [r.headers.get("cookie") for r in server.requests if r.path == "/news"]
    assert cookies == [None, "who=first"]


def test_a_stale_or_forged_ref_is_a_clear_error(server: LocalServer) -> None:
    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        await catalog.call("browser", {"action": "open", "url": f"{server.base}/"})
        errors: list[ToolError] = []
        for bad in ("css=button", "e12\n"):
            with pytest.raises(ToolError) as caught:
                await catalog.call("browser", {"action": "click", "ref": bad})
            errors.append(caught.value)
        return errors

    errors = run(scenario, server)
    assert [error.code for error in errors] == ["invalid_input", "invalid_input"]
    assert "snapshot" in errors[0].message


def test_missing_chromium_is_a_clear_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ConfigurationError, match="needs Chromium"):
        find_chromium(BrowserSettings())
    with pytest.raises(ConfigurationError, match="not a file"):
        find_chromium(BrowserSettings(executable_path="/nonexistent/chromium"))


def test_the_tool_is_network_content_and_never_replay_safe() -> None:
    tool = browser()
    assert tool.name == "browser" and tool.network and not tool.replay_safe


BROWSER_CELL = """
const page = await browser({ action: "open", url: "https://shop.example/signup" });
const form = await browser({ action: "snapshot", selector: "form" });
const ref = (label) => form.text.match(new RegExp(`${label} \\\\[ref=(e\\\\d+)\\\\]`))[1];
await browser({ action: "type", ref: ref('textbox "Name"'), text: "Ada" });
const done = await browser({ action: "click", ref: ref('button "Send"') });
const reply = await browser({ action: "text", maxChars: 200 });
return { from: page.title, to: done.url, thanked: reply.text.includes("thanks") };
"""


def test_the_documented_cell_signs_up_in_one_exec(server: LocalServer) -> None:
    server.route("/signup", Response(headers=HTML, body=FORM))
    tool = browser(allow_loopback_for_tests=True)
    cell = BROWSER_CELL.replace("https://shop.example", server.base)

    async def main() -> Any:
        async with CodeMode([tool], limits=Limits(timeout_ms=60_000)) as mode:
            try:
                return await mode.exec(cell)
            finally:
                assert isinstance(tool.execute, BrowserPool)
                await tool.execute.aclose()

    envelope = asyncio.run(main())
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == {
        "from": "Sign up",
        "to": f"{server.base}/done?name=Ada&plan=free",
        "thanked": True,
    }


def test_the_docs_show_the_cell_the_test_runs() -> None:
    assert f"```js\n{BROWSER_CELL.strip()}\n```" in DOC.read_text("utf-8")
    # and the Python block that runs it against a page served on loopback runs the same cell
    assert f'CELL = r"""\n{BROWSER_CELL.strip()}\n"""' in DOC.read_text("utf-8")


def test_an_idle_session_is_closed_and_chromium_stops(server: LocalServer) -> None:
    tool = browser(settings=BrowserSettings(idle_seconds=0.5), allow_loopback_for_tests=True)
    pool = tool.execute
    assert isinstance(pool, BrowserPool)

    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        await catalog.call("browser", {"action": "open", "url": f"{server.base}/"})
        opened = (pool.session_ids, pool.running)
        for _ in range(400):  # the reaper runs every idle_seconds / 4
            if not pool.running:
                break
            await asyncio.sleep(0.05)
        reopened = await catalog.call("browser", {"action": "tabs"})
        return opened, reopened

    opened, reopened = run(scenario, server, tool)
    assert opened == (["default"], True)
    assert reopened["tabs"] == []  # a fresh context: the idle one was closed


def test_headless_prefers_the_headless_shell_and_a_window_needs_chromium(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("chromium", "chromium-headless-shell"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_chromium(BrowserSettings()) == str(tmp_path / "chromium-headless-shell")
    assert find_chromium(BrowserSettings(headless=False)) == str(tmp_path / "chromium")
    (tmp_path / "chromium").unlink()
    with pytest.raises(ConfigurationError, match="looked for chromium, chromium-browser"):
        find_chromium(BrowserSettings(headless=False))
