"""`clawcell mcp serve --http`: the SDK client over streamable HTTP on loopback, the bearer
token and Host/Origin checks, and a chain client → clawcell → mcp-server-git /
mcp-server-time / the SDK test server, with a parked cell resumed after SIGKILL."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import pytest

from tests.mcp._helpers import BIN, ROOT
from tests.mcp.test_reference_servers import _repository  # pyright: ignore[reportPrivateUsage]
from tests.mcp_server._serve import call, config_file, http_client_of, http_server

CHAIN = f"""
[mcp.servers.kitchen]
command = {sys.executable!r}
args = ["-m", "tests.mcp.servers.kitchen"]
cwd = {str(ROOT)!r}

[mcp.servers.git]
command = {str(BIN / "mcp-server-git")!r}

[mcp.servers.time]
command = {str(BIN / "mcp-server-time")!r}
args = ["--local-timezone", "UTC"]
"""
CHAIN_CELL = """
const log = await MCP.git.gitLog({ repo_path: REPO, max_count: 5 });
const tokyo = await MCP.time.convertTime({
  source_timezone: "UTC", time: "12:00", target_timezone: "Asia/Tokyo",
});
await yield_control("parked between servers");
const echo = await MCP.kitchen.echo({ value: "after the restart" });
return {
  log: log.content[0].text.includes("second commit"),
  tokyo: tokyo.structuredContent.target.datetime.slice(11, 16),
  echo: echo.structuredContent.input.value,
};
"""


def _request(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], object]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.putrequest("POST", parts.path, skip_host=True)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
        for name, value in {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Content-Length": str(len(body)),
            **headers,
        }.items():
            connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        payload = response.read()
        return response.status, dict(response.getheaders()), json.loads(payload or b"null")
    finally:
        connection.close()


@pytest.fixture
def endpoint() -> object:
    with http_server(["--store", ":memory:", "--tools", "tests.cli.test_main:TOOLS"]) as server:
        yield server.url


def test_the_sdk_client_runs_a_cell_over_streamable_http(endpoint: str) -> None:
    async def main() -> dict[str, object]:
        async with http_client_of(endpoint, "test-token") as client:
            return await call(client, "exec", {"code": "return await double({ n: 21 });"})

    assert urlsplit(endpoint).hostname == "127.0.0.1"
    assert anyio.run(main)["value"] == {"twice": 42}


def _host(url: str) -> str:
    return urlsplit(url).netloc


def test_a_request_without_the_token_is_refused_with_401(endpoint: str) -> None:
    status, headers, body = _request(endpoint, {"Host": _host(endpoint)})
    assert status == 401
    assert headers["www-authenticate"] == 'Bearer realm="clawcell"'
    assert body == {
        "error": "Missing or wrong bearer token: send `Authorization: Bearer <token>` with the "
        "token given to `clawcell mcp serve` (`--token` or `CLAWCELL_MCP_TOKEN`)."
    }


def test_a_wrong_token_is_refused_with_401(endpoint: str) -> None:
    status, _, _ = _request(endpoint, {"Host": _host(endpoint), "Authorization": "Bearer nope"})
    assert status == 401


def test_a_foreign_host_header_is_refused_even_with_the_token(endpoint: str) -> None:
    port = urlsplit(endpoint).port
    status, _, body = _request(
        endpoint, {"Host": f"evil.example:{port}", "Authorization": "Bearer test-token"}
    )
    assert status == 421
    assert body == {
        "error": f"Host 'evil.example:{port}' is not served here; use one of "
        f"127.0.0.1:{port}, [::1]:{port}, localhost:{port} (add others with `--allow-host`)."
    }


def test_a_foreign_origin_is_refused_even_with_the_token(endpoint: str) -> None:
    status, _, body = _request(
        endpoint,
        {
            "Host": _host(endpoint),
            "Origin": "https://evil.example",
            "Authorization": "Bearer test-token",
        },
    )
    assert (status, body) == (
        403,
        {"error": "Origin 'https://evil.example' may not call this server."},
    )


def test_a_loopback_origin_with_the_token_is_served(endpoint: str) -> None:
    status, _, _ = _request(
        endpoint,
        {
            "Host": _host(endpoint),
            "Origin": f"http://{_host(endpoint)}",
            "Authorization": "Bearer test-token",
        },
    )
    assert status not in (401, 403, 421)


@pytest.mark.slow
def test_a_chain_through_three_servers_resumes_after_the_server_is_killed(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _repository(repo)
    config = config_file(tmp_path, CHAIN)
    args = ["--config", config, "--store", str(tmp_path / "state.db"), "--session", "chain"]
    code = f"const REPO = {str(repo)!r};\n{CHAIN_CELL}"

    async def exec_cell(url: str) -> dict[str, object]:
        async with http_client_of(url, "test-token") as client:
            return await call(client, "exec", {"code": code})

    async def wait_cell(url: str, run_id: object) -> dict[str, object]:
        async with http_client_of(url, "test-token") as client:
            return await call(client, "wait", {"runId": run_id})

    with http_server(args) as first:
        parked = anyio.run(exec_cell, first.url)
        first.process.send_signal(signal.SIGKILL)
        assert first.process.wait(timeout=30) == -signal.SIGKILL
    assert parked["status"] == "waiting", parked
    with http_server(args) as second:
        resumed = anyio.run(wait_cell, second.url, parked["runId"])
    assert resumed["status"] == "completed", resumed
    assert resumed["value"] == {"log": True, "tokyo": "21:00", "echo": "after the restart"}


def test_http_mode_without_a_token_generates_one_and_says_so(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clawcell",
            "mcp",
            "serve",
            "--http",
            "--port",
            "0",
            "--store",
            ":memory:",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},  # its caches: not in the checkout
    )
    try:
        assert process.stderr is not None
        notice = process.stderr.readline()
        ready = process.stderr.readline()
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()
    prefix = "clawcell: no --token or $CLAWCELL_MCP_TOKEN given; clients must send "
    assert notice.startswith(prefix + "`Authorization: Bearer ")
    assert len(notice.removeprefix(prefix).split()[-1].rstrip("`\n")) >= 40
    assert ready.startswith("clawcell: MCP endpoint http://127.0.0.1:")


def test_an_allowed_proxy_host_is_served() -> None:
    with http_server(["--store", ":memory:", "--allow-host", "proxy.example"]) as server:
        port = urlsplit(server.url).port
        headers = {"Host": f"proxy.example:{port}", "Authorization": "Bearer test-token"}
        status, _, _ = _request(server.url, headers)
        refused, _, _ = _request(server.url, {**headers, "Host": f"other.example:{port}"})
    assert status not in (401, 403, 421)
    assert refused == 421
