"""The `browser` tool's actions over one session's tabs (Playwright pages)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Awaitable, Callable
from typing import Any, Final, cast

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from ...errors import ToolError
from ._browser_guard import check_url
from ._browser_session import BrowserSession
from ._browser_text import narrow

__all__ = ["run_action"]

_REF: Final = re.compile(r"(?:f\d{1,6})?e\d{1,9}")
_READABLE: Final = ("article", "main", "body")
_TITLE_CHARS: Final = 300
_DOWNLOAD_WAIT: Final = 5.0

Params = dict[str, Any]
Handler = Callable[[BrowserSession, Params], Awaitable[dict[str, Any]]]


async def run_action(session: BrowserSession, params: Params) -> dict[str, Any]:
    """Run `params["action"]` in `session`; Playwright failures become `ToolError`s."""
    action = str(params.get("action"))
    handler = _HANDLERS.get(action)
    if handler is None:
        raise ToolError(
            f"Unknown browser action {action!r}; use one of: {', '.join(_HANDLERS)}.",
            code="invalid_input",
        )
    since = len(session.refusals)
    try:
        result = await handler(session, params)
    except PlaywrightTimeout as exc:
        raise ToolError(_first_line(exc, action, params), code="timeout") from None
    except PlaywrightError as exc:
        reason = session.refusals[since][1] if len(session.refusals) > since else None
        if reason is not None and action in ("open", "navigate", "click", "back", "forward",
                                             "reload", "press", "type"):  # fmt: skip
            raise ToolError(reason, code="blocked_address") from None
        raise ToolError(_first_line(exc, action, params), code="browser_error") from None
    url = result.get("url")
    if isinstance(url, str):
        reason = session.refusal_of(url, since)
        if reason is not None:
            raise ToolError(f"{reason} (loading {url[:200]!r})", code="blocked_address")
    if "downloads" in result or action in _PAGE_CHANGING:
        result.pop("downloads", None)
        downloads = await session.take_downloads(_DOWNLOAD_WAIT)
        if downloads:
            result["downloads"] = downloads
    return result


def _first_line(exc: Exception, action: str, params: Params) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    hint = " Take a new snapshot: refs change when the page does." if "ref" in params else ""
    return f"browser {action} failed: {message[:400]}.{hint}"


def _required(params: Params, name: str, action: str) -> Any:
    value = params.get(name)
    if value is None or value == "":
        raise ToolError(f"browser {action!r} needs `{name}`.", code="invalid_input")
    return value


def _locator(page: Any, params: Params, action: str) -> Any:
    ref = str(_required(params, "ref", action))
    if not _REF.fullmatch(ref):
        raise ToolError(
            f"Element ref {ref[:40]!r} is not a snapshot ref such as 'e12'. Take a snapshot "
            "and pass a ref it shows.",
            code="invalid_input",
        )
    return page.locator(f"aria-ref={ref}")


def _timeout(session: BrowserSession, params: Params) -> float:
    cap = session.settings.action_timeout_seconds * 1000
    asked = params.get("timeoutMs")
    return min(float(asked), cap) if isinstance(asked, int) and asked > 0 else cap


async def _page_result(
    action: str, target: str, page: Any, status: int | None = None
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "action": action,
        "targetId": target,
        "url": str(page.url),
        "title": (await page.title())[:_TITLE_CHARS],
    }
    if status is not None:
        result["status"] = status
    return result


async def _goto(session: BrowserSession, page: Any, url: str) -> int | None:
    check_url(url)
    response = await page.goto(url, timeout=session.settings.action_timeout_seconds * 1000)
    return int(response.status) if response is not None else None


async def _open(session: BrowserSession, params: Params) -> dict[str, Any]:
    url = str(_required(params, "url", "open"))
    check_url(url)
    since = len(session.refusals)
    target, page = await session.new_tab()
    try:
        status = await _goto(session, page, url)
        result = await _page_result("open", target, page, status)
        reason = session.refusal_of(result["url"], since)
        if reason is not None:
            raise ToolError(f"{reason} (loading {url[:200]!r})", code="blocked_address")
    except BaseException:
        # A refused or failed open leaves no tab (and no half-loaded page) behind.
        await session.close_tab(target)
        raise
    return result


async def _navigate(session: BrowserSession, params: Params) -> dict[str, Any]:
    url = str(_required(params, "url", "navigate"))
    check_url(url)
    if not session.pages:
        return {**await _open(session, params), "action": "navigate"}
    target, page = session.tab(params.get("targetId"))
    status = await _goto(session, page, url)
    return await _page_result("navigate", target, page, status)


def _history(name: str) -> Handler:
    async def move(session: BrowserSession, params: Params) -> dict[str, Any]:
        target, page = session.tab(params.get("targetId"))
        if name == "reload":
            response = await page.reload()
        elif name == "back":
            response = await page.go_back()
        else:
            response = await page.go_forward()
        status = int(response.status) if response is not None else None
        return await _page_result(name, target, page, status)

    return move


async def _tabs_result(session: BrowserSession, action: str) -> dict[str, Any]:
    tabs = [
        {"targetId": target, "url": str(page.url), "title": (await page.title())[:_TITLE_CHARS],
         "active": target == session.active}
        for target, page in list(session.pages.items())
    ]  # fmt: skip
    result: dict[str, Any] = {"action": action, "tabs": tabs}
    if session.active is not None:
        result["targetId"] = session.active
    return result


async def _tabs(session: BrowserSession, params: Params) -> dict[str, Any]:
    return await _tabs_result(session, "tabs")


async def _focus(session: BrowserSession, params: Params) -> dict[str, Any]:
    target, page = session.tab(str(_required(params, "targetId", "focus")))
    session.active = target
    await page.bring_to_front()
    return await _page_result("focus", target, page)


async def _close(session: BrowserSession, params: Params) -> dict[str, Any]:
    target, _ = session.tab(params.get("targetId"))
    await session.close_tab(target)
    return await _tabs_result(session, "close")


async def _observed(
    session: BrowserSession, params: Params, action: str, *, tab: tuple[str, Any], raw: str
) -> dict[str, Any]:
    target, page = tab
    limit = session.settings.max_chars
    asked = params.get("maxChars")
    if isinstance(asked, int) and asked > 0:
        limit = min(asked, limit)
    query = params.get("query")
    seen = narrow(raw, query=query if isinstance(query, str) else None, max_chars=limit)
    return {**await _page_result(action, target, page), **seen.fields()}


async def _snapshot(session: BrowserSession, params: Params) -> dict[str, Any]:
    target, page = session.tab(params.get("targetId"))
    selector = params.get("selector")
    scope = page.locator(str(selector)).first if selector else page
    raw = await scope.aria_snapshot(mode="ai")
    return await _observed(session, params, "snapshot", tab=(target, page), raw=str(raw))


async def _text(session: BrowserSession, params: Params) -> dict[str, Any]:
    target, page = session.tab(params.get("targetId"))
    selector = params.get("selector")
    raw = ""
    if selector:
        raw = await page.locator(str(selector)).first.inner_text()
    else:
        for candidate in _READABLE:
            found = page.locator(candidate)
            if await found.count():
                raw = await found.first.inner_text()
                break
    return await _observed(session, params, "text", tab=(target, page), raw=str(raw))


def _element(name: str) -> Handler:
    async def act(session: BrowserSession, params: Params) -> dict[str, Any]:
        target, page = session.tab(params.get("targetId"))
        element = _locator(page, params, name)
        timeout = _timeout(session, params)
        if name == "click":
            await element.click(timeout=timeout)
        elif name == "hover":
            await element.hover(timeout=timeout)
        elif name == "type":
            text = params.get("text")
            if not isinstance(text, str):
                raise ToolError("browser 'type' needs `text`.", code="invalid_input")
            await element.fill(text, timeout=timeout)
            if params.get("submit") is True:
                await element.press("Enter", timeout=timeout)
        else:
            values = params.get("values")
            if not isinstance(values, list) or not values:
                raise ToolError("browser 'select' needs `values`.", code="invalid_input")
            chosen = [str(value) for value in cast("list[object]", values)]
            await element.select_option(chosen, timeout=timeout)
        await _settle(page)
        return await _page_result(name, target, page)

    return act


async def _settle(page: Any) -> None:
    """Let a navigation an action started commit, so the result shows the new page."""
    with contextlib.suppress(PlaywrightError):
        await page.wait_for_load_state("load", timeout=5_000)


async def _press(session: BrowserSession, params: Params) -> dict[str, Any]:
    target, page = session.tab(params.get("targetId"))
    key = str(_required(params, "key", "press"))
    if params.get("ref"):
        await _locator(page, params, "press").press(key, timeout=_timeout(session, params))
    else:
        await page.keyboard.press(key)
    await _settle(page)
    return await _page_result("press", target, page)


async def _wait(session: BrowserSession, params: Params) -> dict[str, Any]:
    target, page = session.tab(params.get("targetId"))
    timeout = _timeout(session, params)
    if params.get("selector"):
        await page.locator(str(params["selector"])).first.wait_for(timeout=timeout)
    elif isinstance(params.get("text"), str) and params["text"]:
        await page.get_by_text(str(params["text"])).first.wait_for(timeout=timeout)
    else:
        raise ToolError("browser 'wait' needs `selector` or `text`.", code="invalid_input")
    return await _page_result("wait", target, page)


async def _capture(session: BrowserSession, params: Params, kind: str) -> dict[str, Any]:
    target, page = session.tab(params.get("targetId"))
    if kind == "pdf":
        data, suffix, mime = await page.pdf(), ".pdf", "application/pdf"
    else:
        data = await page.screenshot(full_page=params.get("fullPage") is True)
        suffix, mime = ".png", "image/png"
    path = session.save_media(suffix, bytes(data))
    return {
        **await _page_result(kind, target, page),
        "path": str(path),
        "mimeType": mime,
        "bytes": len(data),
        "media": {"mediaUrl": str(path)},
    }


async def _screenshot(session: BrowserSession, params: Params) -> dict[str, Any]:
    return await _capture(session, params, "screenshot")


async def _pdf(session: BrowserSession, params: Params) -> dict[str, Any]:
    return await _capture(session, params, "pdf")


_PAGE_CHANGING: Final = frozenset(
    {"open", "navigate", "click", "type", "press", "select", "back", "forward", "reload"}
)
_HANDLERS: Final[dict[str, Handler]] = {
    "open": _open,
    "navigate": _navigate,
    "tabs": _tabs,
    "focus": _focus,
    "close": _close,
    "snapshot": _snapshot,
    "text": _text,
    "click": _element("click"),
    "type": _element("type"),
    "press": _press,
    "select": _element("select"),
    "hover": _element("hover"),
    "wait": _wait,
    "screenshot": _screenshot,
    "pdf": _pdf,
    "back": _history("back"),
    "forward": _history("forward"),
    "reload": _history("reload"),
}
