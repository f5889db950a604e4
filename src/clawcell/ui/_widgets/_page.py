"""Widget documents: the script check, the canonical page and the canvas-host route.

`show_widget` code is checked before anything is stored: every inline `<script>` the browser
would run as JavaScript (classic or module; not one with `src` or another `type`) is parsed
with acorn, and the first syntax error rejects the call with its line and column in the
widget code. The code is then wrapped once in the canonical page (`widget_assets/base.css`,
the design tokens, and `widget_assets/bridge.js`, which runs before the widget's own scripts).
The canvas host serves it with the realm guard (`_realm.py`: no WebRTC, no frames) as its
first script.

Threat model: widget code is model-written and hostile. It is served only by the canvas host
(another origin than the app), with `Content-Security-Policy: sandbox allow-scripts` (plain
`sandbox` in `strict`) and a resource policy that allows inline script and style, `data:`/
`blob:` images and fonts, `https:`/`data:`/`blob:` media, and nothing else: no `connect-src`,
no frames, no form targets, no base URL. The chat's frame never has `allow-same-origin`, so
the document's origin is opaque in every tier; it cannot read the app's cookie or call its
API, and its only way out is the bridge's port (see `static/surfaces.js`).
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Final

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..._lazy import value_class
from ...errors import ToolError
from .._protocol import DocumentStore
from .._realm import REALM_POLICY, with_realm_guard
from .._settings import EmbedSandbox

__all__ = [
    "BASE_CSS",
    "REPORT_CSP",
    "REPORT_PREFIX",
    "REPORT_SANDBOX",
    "WIDGETS_PATH",
    "InlineScript",
    "check_widget_scripts",
    "inline_scripts",
    "widget_csp",
    "widget_page",
    "widget_route",
]

WIDGETS_PATH: Final = "/__openclaw__/canvas/widgets/{ref}/index.html"
_HERE: Final = Path(__file__).parents[1] / "widget_assets"
BASE_CSS: Final = (_HERE / "base.css").read_text("utf-8")
_BRIDGE_JS: Final = (_HERE / "bridge.js").read_text("utf-8")
_JS_TYPES: Final = frozenset(
    {
        "", "application/ecmascript", "application/javascript", "application/x-ecmascript",
        "application/x-javascript", "text/ecmascript", "text/javascript", "text/javascript1.0",
        "text/javascript1.1", "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
        "text/javascript1.5", "text/jscript", "text/livescript", "text/x-ecmascript",
        "text/x-javascript",
    }
)  # fmt: skip
_POLICY: Final = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:; media-src https: data: blob:; connect-src 'none'; "
    "frame-src 'none'; child-src 'none'; worker-src 'none'; form-action 'none'; "
    "base-uri 'none'; " + REALM_POLICY
)

REPORT_PREFIX: Final = "wgr_"
"""The refs of `show_widget` reports (`_report`): static documents, no script."""
REPORT_SANDBOX: Final = "allow-popups allow-popups-to-escape-sandbox"
"""A report's frame and document sandbox: no script; a clicked link opens a new tab."""
REPORT_CSP: Final = (
    f"sandbox {REPORT_SANDBOX}; default-src 'none'; script-src 'none'; "
    "style-src 'unsafe-inline'; img-src data:; frame-src 'none'; child-src 'none'; "
    "worker-src 'none'; form-action 'none'; base-uri 'none'"
)


@value_class
class InlineScript:
    """An inline script the browser runs as JavaScript, and where its text starts (1-based)."""

    code: str
    module: bool
    line: int
    column: int


class _ScriptFinder(HTMLParser):
    """Collects inline JavaScript `<script>` elements as the browser's tokenizer reads them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.found: list[InlineScript] = []
        self._open: tuple[bool, int, int] | None = None  # module, line, column of the text
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "script":
            return
        values = {name: value or "" for name, value in attrs}
        kind = values.get("type", "").strip().lower()
        if "src" in values or (kind != "module" and kind not in _JS_TYPES):
            return
        line, column = self.getpos()
        tag_text = self.get_starttag_text() or ""
        lines = tag_text.split("\n")
        if len(lines) > 1:
            line, column = line + len(lines) - 1, len(lines[-1])
        else:
            column += len(tag_text)
        self._open, self._text = (kind == "module", line, column + 1), []

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._open is not None:
            module, line, column = self._open
            code = "".join(self._text)
            self.found.append(InlineScript(code=code, module=module, line=line, column=column))
            self._open = None

    def close(self) -> None:
        super().close()
        self.handle_endtag("script")  # an unclosed script still runs to the end of the code


def inline_scripts(code: str) -> Iterator[InlineScript]:
    """Every inline JavaScript `<script>` of `code`, in document order."""
    finder = _ScriptFinder()
    finder.feed(code)
    finder.close()
    yield from finder.found


def check_widget_scripts(code: str) -> None:
    """Parse every inline script of `code`; the first syntax error raises `ToolError`."""
    from ...runtime import script_failure

    for number, script in enumerate(inline_scripts(code), 1):
        try:
            failure = script_failure(script.code, module=script.module)
        except FileNotFoundError as exc:
            raise ToolError(
                "widget scripts cannot be checked: acorn is not installed "
                "(`clawcell/runtime/vendor/acorn.js`; run `make`), so widgets with inline "
                "scripts are refused."
            ) from exc
        except TimeoutError as exc:
            raise ToolError(
                f"widget script {number} could not be checked in time (it is too large or "
                "too deeply nested); split it or make it smaller."
            ) from exc
        if failure is not None:
            line = script.line + failure.line - 1
            column = failure.column + (script.column - 1 if failure.line == 1 else 0)
            kind = "module script" if script.module else "script"
            raise ToolError(
                f"widget {kind} {number} has a syntax error at line {line}, column {column} "
                f"of `widget_code`: {failure.message}. Fix the script and call `show_widget` "
                "again; nothing was stored."
            )


def widget_page(title: str, code: str) -> str:
    """The canonical widget document: tokens, base styles and the bridge, then the code
    (SVG mode when it starts with `<svg`)."""
    svg = code.lstrip()[:4].lower() == "<svg"
    body_class = ' class="svg-widget"' if svg else ""
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{BASE_CSS}</style>\n"
        f"<script>\n{_BRIDGE_JS}</script>\n</head>\n<body{body_class}>\n{code}\n</body>\n</html>\n"
    )


def widget_csp(tier: EmbedSandbox) -> str:
    """The widget documents' `Content-Security-Policy` for a sandbox tier (never with
    `allow-same-origin`; no scripts in `strict`)."""
    sandbox = "sandbox" if tier == "strict" else "sandbox allow-scripts"
    return f"{sandbox}; {_POLICY}"


def widget_route(
    store: DocumentStore, tier: EmbedSandbox, is_widget_ref: Callable[[str], bool]
) -> Callable[[Request], Awaitable[Response]]:
    """The canvas-host endpoint serving `…/__openclaw__/canvas/widgets/<ref>/index.html`."""
    headers = {
        "content-security-policy": widget_csp(tier),
        "referrer-policy": "no-referrer",
        "cache-control": "no-store",
    }

    report = {**headers, "content-security-policy": REPORT_CSP}

    async def endpoint(request: Request) -> Response:
        ref = request.path_params["ref"]
        data = await store.get_document_file(ref, "index.html") if is_widget_ref(ref) else None
        if data is None:
            return PlainTextResponse(f"No widget {ref!r}.", 404)
        if ref.startswith(REPORT_PREFIX):  # no script can run in it: no guard needed
            return Response(data, media_type="text/html; charset=utf-8", headers=report)
        return Response(
            with_realm_guard(data), media_type="text/html; charset=utf-8", headers=headers
        )

    return endpoint
