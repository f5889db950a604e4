"""End to end through `clawcell.CodeMode`: search → fetch → summarize into a workspace file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import clawcell
from clawcell import CodeMode, Limits
from clawcell.tools import SearxngProvider, web, workspace

from .._server import LocalServer, Response

ARTICLE = (
    b"<html><head><title>clawcell 0.2</title></head><body><main><h1>clawcell 0.2</h1>"
    b"<p>Built-in tools arrive.</p><ul><li>workspace files</li><li>web fetch</li></ul>"
    b"</main></body></html>"
)
CELL = """
const found = await web_search({ query: "clawcell release", count: 3 });
const page = await web_fetch({ url: found.results[0].url, maxChars: 4000 });
const bullets = page.text.split("\\n").filter((line) => line.startsWith("* "));
const saved = await write({
  path: "notes/release.md",
  content: `# ${page.title}\\n\\nSource: ${page.finalUrl}\\n\\n${bullets.join("\\n")}\\n`,
});
return { saved, cache: page.cache, hits: found.results.length };
"""


def _routes(server: LocalServer) -> None:
    results = {
        "results": [
            {"title": "clawcell 0.2", "url": f"{server.base}/release", "content": "Release notes"}
        ]
    }
    server.route(
        "/search",
        Response(headers={"Content-Type": "application/json"}, body=json.dumps(results).encode()),
    )
    server.route("/release", Response(headers={"Content-Type": "text/html"}, body=ARTICLE))


def _run(root: Path, server: LocalServer) -> tuple[dict[str, Any], str]:
    tools = [
        *workspace(root),
        *web(search=SearxngProvider(url=server.base), allow_loopback_for_tests=True),
    ]

    async def main() -> tuple[dict[str, Any], str]:
        async with CodeMode(tools, limits=Limits(timeout_ms=20_000)) as mode:
            envelope = await mode.call_tool("exec", {"code": CELL})
            return dict(envelope), clawcell.render(envelope)

    return asyncio.run(main())


def test_one_cell_searches_fetches_and_writes_a_summary(root: Path, server: LocalServer) -> None:
    _routes(server)
    envelope, _ = _run(root, server)
    summary = f"# clawcell 0.2\n\nSource: {server.base}/release\n\n* workspace files\n* web fetch\n"
    assert envelope["status"] == "completed"
    assert envelope["value"] == {
        "saved": {"path": "notes/release.md", "bytes": len(summary), "created": True},
        "cache": "miss",
        "hits": 1,
    }
    assert (root / "notes" / "release.md").read_text() == summary


def test_the_model_reads_the_composed_cell_as_untrusted_web_content(
    root: Path, server: LocalServer
) -> None:
    _routes(server)
    _, text = _run(root, server)
    assert text.startswith("SECURITY NOTICE: The content below comes from an EXTERNAL, UNTRUSTED")
    assert "<<<EXTERNAL_UNTRUSTED_CONTENT>>>" in text


def test_a_workspace_only_cell_is_not_wrapped(root: Path) -> None:
    (root / "a.md").write_text("hello\n")

    async def main() -> str:
        async with CodeMode(workspace(root), limits=Limits(timeout_ms=20_000)) as mode:
            envelope = await mode.call_tool(
                "exec", {"code": 'return (await read({ path: "a.md" })).text;'}
            )
            return clawcell.render(envelope)

    text = asyncio.run(main())
    assert text.startswith('{"status":"completed"')
    assert "hello" in text


def test_a_tool_error_reaches_the_cell_with_its_code(root: Path) -> None:
    code = """
    try { await read({ path: "../etc/passwd" }); }
    catch (error) { return { code: error.code, message: error.message }; }
    """

    async def main() -> Any:
        async with CodeMode(workspace(root), limits=Limits(timeout_ms=20_000)) as mode:
            return (await mode.call_tool("exec", {"code": code}))["value"]

    assert asyncio.run(main()) == {
        "code": "invalid_path",
        "message": "Path '../etc/passwd' contains `..`. Use a relative path inside the "
        "workspace, such as `notes/a.md`.",
    }
