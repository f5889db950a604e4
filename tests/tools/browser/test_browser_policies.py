"""The `browser` tool's policies that a second path could skip: folders a command redirected
with a symbolic link, tabs of refused `open`s, and WebRTC's UDP past the guard proxy."""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clawcell import ToolError
from clawcell.catalog import Catalog
from clawcell.tools import BrowserSettings, browser
from clawcell.tools._browser._browser import BrowserPool

from .._server import LocalServer, Response, local_server
from .test_browser import ARTICLE, HTML, click_download, download_page, run

pytestmark = pytest.mark.slow

SESSION_FOLDER = hashlib.sha256(b"default").hexdigest()[:16]


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with local_server() as state:
        state.route("/news", Response(headers=HTML, body=ARTICLE))
        yield state


def redirect(folder: Path, outside: Path) -> None:
    """What a sandboxed command can do: replace the session's folder with a symbolic link."""
    if folder.exists():
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()
    folder.symlink_to(outside, target_is_directory=True)


@pytest.mark.parametrize("before_first_write", [True, False], ids=["made-early", "swapped"])
def test_screenshots_are_never_written_through_a_redirected_folder(
    server: LocalServer, tmp_path: Path, before_first_write: bool
) -> None:
    media, outside = tmp_path / "media", tmp_path / "outside"
    outside.mkdir()
    tool = browser(settings=BrowserSettings(media_dir=media), allow_loopback_for_tests=True)

    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        await catalog.call("browser", {"action": "open", "url": f"{server.base}/news"})
        if not before_first_write:
            await catalog.call("browser", {"action": "screenshot"})
        redirect(media / SESSION_FOLDER, outside)
        errors: list[ToolError] = []
        for action in ("screenshot", "pdf"):
            with pytest.raises(ToolError) as caught:
                await catalog.call("browser", {"action": action})
            errors.append(caught.value)
        return errors

    errors = run(scenario, server, tool)
    assert [error.code for error in errors] == ["blocked_path", "blocked_path"]
    assert "symbolic link" in errors[0].message and str(media) in errors[0].message
    assert list(outside.iterdir()) == []


def test_a_download_is_never_written_through_a_redirected_folder(
    server: LocalServer, tmp_path: Path
) -> None:
    download_page(server, "report.txt")
    downloads, outside = tmp_path / "downloads", tmp_path / "outside"
    outside.mkdir()
    settings = BrowserSettings(downloads=True, downloads_dir=downloads, media_dir=tmp_path / "m")
    tool = browser(settings=settings, allow_loopback_for_tests=True)

    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        first = await click_download(catalog, server)
        redirect(downloads / SESSION_FOLDER, outside)
        second = await click_download(catalog, server)
        return first, second

    first, second = run(scenario, server, tool)
    assert [Path(d["path"]).name for d in first["downloads"]] == ["report.txt"]
    assert "downloads" not in second
    assert list(outside.iterdir()) == []


def test_a_refused_open_leaves_no_tab_behind(server: LocalServer) -> None:
    server.route("/go", Response(status=302, headers={"Location": "http://10.255.0.9/admin"}))

    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        await catalog.call("browser", {"action": "open", "url": f"{server.base}/news"})
        codes: list[str] = []
        for url in (f"{server.base}/go", "http://10.255.0.9/", "http://192.168.1.1:8080/"):
            with pytest.raises(ToolError) as caught:
                await catalog.call("browser", {"action": "open", "url": url})
            codes.append(caught.value.code)
        return codes, await catalog.call("browser", {"action": "tabs"})

    codes, listed = run(scenario, server)
    assert codes == ["blocked_address"] * 3
    assert [(tab["targetId"], tab["active"]) for tab in listed["tabs"]] == [("t1", True)]


WEBRTC = b"""<title>rtc</title><script>
window.done = (async () => {
  const pc = new RTCPeerConnection({iceServers: [{urls: "stun:127.0.0.1:PORT"}]});
  const found = [];
  pc.onicecandidate = (e) => { if (e.candidate) found.push(e.candidate.candidate); };
  pc.createDataChannel("x");
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((r) => { pc.onicegatheringstatechange = () => {
    if (pc.iceGatheringState === "complete") r(); }; });
  return found.join("\\n") || "none";
})();
</script><p>rtc</p>"""


def test_webrtc_sends_no_udp_past_the_guard_proxy(server: LocalServer) -> None:
    # A STUN server on a loopback UDP port: Chromium's ICE gathering would send it a binding
    # request, past the HTTP guard proxy, unless non-proxied UDP is off.
    stun = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stun.bind(("127.0.0.1", 0))
    stun.setblocking(False)
    port = stun.getsockname()[1]
    server.route("/rtc", Response(headers=HTML, body=WEBRTC.replace(b"PORT", str(port).encode())))

    tool = browser(allow_loopback_for_tests=True)

    async def scenario(catalog: Catalog, server: LocalServer) -> Any:
        await catalog.call("browser", {"action": "open", "url": f"{server.base}/rtc"})
        assert isinstance(tool.execute, BrowserPool)
        _, page = (await tool.execute.session("default")).tab(None)
        return await page.evaluate("window.done")

    try:
        candidates = run(scenario, server, tool)
        with pytest.raises(BlockingIOError):
            stun.recvfrom(2048)
    finally:
        stun.close()
    assert candidates == "none"
