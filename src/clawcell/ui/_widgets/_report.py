"""`show_widget` report mode: a structured report drawn as a static card, with no script at all.

A report is data, not code: `{"blocks": [...]}` of five kinds (`text`, `metrics`, `table`,
`chart`, `links`) with fixed fields and limits, checked here field by field (unknown fields
are refused). The server renders it to a self-contained document (every value HTML-escaped,
a chart drawn as inline SVG from the numbers, links only `http(s)`), stored like a widget
under a `wgr_` ref. The canvas host serves a report with `Content-Security-Policy: sandbox
allow-popups allow-popups-to-escape-sandbox` and `script-src 'none'`, and the chat's frame
has the same sandbox: nothing in a report can run, and its links open in a new tab.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from typing import Any, Final, cast

from ...errors import ToolError
from ._page import BASE_CSS

__all__ = ["check_report", "report_height", "report_page"]

MAX_REPORT_BYTES: Final = 8_192
_FIELDS: Final = {
    "text": ({"type", "text"}, {"title"}),
    "metrics": ({"type", "items"}, set[str]()),
    "table": ({"type", "columns", "rows"}, {"title"}),
    "chart": ({"type", "points"}, {"title", "style"}),
    "links": ({"type", "items"}, {"title"}),
}
_ITEM_FIELDS: Final = {
    "metrics": ({"label", "value"}, {"detail"}),
    "chart": ({"label", "value"}, set[str]()),
    "links": ({"label", "url"}, {"detail"}),
}
_MAX_SAFE: Final = 2**53 - 1
_CSS: Final = """
.report { display: grid; gap: 12px; }
.report h2 { font-size: 14px; margin: 0 0 6px; }
.report p { margin: 0; white-space: pre-wrap; }
.report .metrics { display: grid; grid-template-columns: repeat(auto-fit, minmax(8rem, 1fr));
  gap: 8px; }
.report table { border-collapse: collapse; width: 100%; font-size: 13px; }
.report th, .report td { border: 1px solid var(--border); padding: 4px 8px; text-align: left; }
.report .table { overflow-x: auto; }
.report svg { display: block; width: 100%; height: auto; max-height: 200px; }
.report ul { margin: 0; padding-left: 1.2rem; }
"""


def _fail(where: str, problem: str) -> ToolError:
    return ToolError(f"`show_widget` `report` {where}: {problem}. Fix it and call again.")


def _string(value: object, where: str, low: int, high: int) -> str:
    if not isinstance(value, str) or not low <= len(value.strip()) <= high:
        raise _fail(where, f"needs a string of {low}–{high} characters, got {value!r:.60}")
    return value.strip()


def _list(value: object, where: str, low: int, high: int) -> list[object]:
    if not isinstance(value, list) or not low <= len(cast(list[object], value)) <= high:
        raise _fail(where, f"needs a list of {low}–{high} entries, got {value!r:.60}")
    return cast(list[object], value)


def _record(value: object, where: str, fields: tuple[set[str], set[str]]) -> dict[str, Any]:
    required, optional = fields
    if not isinstance(value, Mapping):
        raise _fail(where, f"needs an object, got {value!r:.60}")
    record = dict(cast(Mapping[str, Any], value))
    unknown, missing = sorted(set(record) - required - optional), sorted(required - set(record))
    if unknown or missing:
        raise _fail(where, f"has unknown fields {unknown!r} or lacks {missing!r}")
    return record


def check_report(report: object) -> dict[str, Any]:
    """The report, checked (`ToolError` names the first problem and where it is)."""
    record = _record(report, "", ({"blocks"}, set()))
    size = len(json.dumps(report, ensure_ascii=False).encode())
    if size > MAX_REPORT_BYTES:
        raise _fail("", f"is {size} bytes of JSON; the limit is {MAX_REPORT_BYTES}")
    blocks = _list(record["blocks"], "`blocks`", 1, 24)
    return {"blocks": [_block(block, f"block {n + 1}") for n, block in enumerate(blocks)]}


def _block(value: object, where: str) -> dict[str, Any]:
    fields: Mapping[str, object] = (
        cast(Mapping[str, object], value) if isinstance(value, Mapping) else {}
    )
    kind = fields.get("type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise _fail(where, f"needs `type` of {sorted(_FIELDS)!r}, got {kind!r}")
    block = _record(fields, where, _FIELDS[kind])
    if "title" in block:
        block["title"] = _string(block["title"], f"{where} `title`", 1, 120)
    if kind == "text":
        block["text"] = _string(block["text"], f"{where} `text`", 1, 4000)
    elif kind == "table":
        columns = _list(block["columns"], f"{where} `columns`", 1, 8)
        block["columns"] = [_string(c, f"{where} column", 1, 160) for c in columns]
        rows = _list(block["rows"], f"{where} `rows`", 0, 40)
        block["rows"] = [_row(r, f"{where} row {i + 1}", len(columns)) for i, r in enumerate(rows)]
    else:
        high = {"metrics": 8, "chart": 40, "links": 20}[kind]
        items = _list(block.get("items", block.get("points")), f"{where} items", 1, high)
        key = "points" if kind == "chart" else "items"
        block[key] = [_item(kind, item, f"{where} item {i + 1}") for i, item in enumerate(items)]
        if kind == "chart" and block.get("style", "bar") not in ("bar", "line"):
            raise _fail(where, f"`style` is `bar` or `line`, got {block['style']!r}")
    return block


def _row(value: object, where: str, width: int) -> list[str]:
    cells = _list(value, where, width, width)
    return [_string(cell, f"{where} cell", 0, 500) for cell in cells]


def _item(kind: str, value: object, where: str) -> dict[str, Any]:
    item = _record(value, where, _ITEM_FIELDS[kind])
    item["label"] = _string(item["label"], f"{where} `label`", 1, 160)
    if "detail" in item:
        item["detail"] = _string(item["detail"], f"{where} `detail`", 0, 240)
    if kind == "metrics":
        item["value"] = _string(item["value"], f"{where} `value`", 1, 80)
    elif kind == "chart":
        number = item["value"]
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise _fail(where, f"`value` needs a number, got {number!r:.60}")
        if not math.isfinite(number) or abs(number) > _MAX_SAFE:
            raise _fail(where, f"`value` needs a finite number within ±2^53, got {number!r}")
    else:
        url = _string(item["url"], f"{where} `url`", 1, 2048)
        if not url.lower().startswith(("http://", "https://")):
            raise _fail(where, f"`url` needs an http(s) address, got {url!r:.60}")
        item["url"] = url
    return item


def report_height(report: Mapping[str, Any]) -> int:
    """About how tall the report draws on a phone (px): its frame cannot measure it (no
    script), so this errs on the tall side; a taller report scrolls in its frame."""
    height = 32
    for block in cast(list[dict[str, Any]], report["blocks"]):
        height += 12 + (28 if "title" in block else 0)
        kind = block["type"]
        if kind == "text":
            height += 22 * (1 + len(block["text"]) // 45 + block["text"].count("\n"))
        elif kind == "metrics":
            height += 112 * math.ceil(len(block["items"]) / 2)
        elif kind == "table":
            height += 34 * (1 + len(block["rows"])) + 8
        elif kind == "chart":
            height += 200
        else:
            height += 30 * len(block["items"])
    return max(160, min(height, 1200))


def report_page(title: str, report: Mapping[str, Any]) -> str:
    """The report's static document (no script; every value escaped)."""
    blocks = "".join(_html(block) for block in cast(list[dict[str, Any]], report["blocks"]))
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{BASE_CSS}{_CSS}</style>\n</head>\n"
        f'<body>\n<main class="report">{blocks}</main>\n</body>\n</html>\n'
    )


def _html(block: Mapping[str, Any]) -> str:
    e = html.escape
    head = f"<h2>{e(block['title'])}</h2>" if "title" in block else ""
    kind = block["type"]
    if kind == "text":
        body = f"<p>{e(block['text'])}</p>"
    elif kind == "metrics":
        body = (
            '<div class="metrics">'
            + "".join(
                f'<div class="card"><div class="muted">{e(i["label"])}</div>'
                f'<div class="metric">{e(i["value"])}</div>'
                + (f'<div class="muted">{e(i["detail"])}</div>' if i.get("detail") else "")
                + "</div>"
                for i in block["items"]
            )
            + "</div>"
        )
    elif kind == "table":
        cols = "".join(f"<th>{e(c)}</th>" for c in block["columns"])
        rows = "".join(
            "<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in block["rows"]
        )
        table = f"<table><thead><tr>{cols}</tr></thead><tbody>{rows}</tbody></table>"
        body = f'<div class="table">{table}</div>'
    elif kind == "chart":
        body = _chart(block["points"], line=block.get("style") == "line")
    else:
        body = (
            "<ul>"
            + "".join(
                f'<li><a href="{e(i["url"])}" target="_blank" rel="noopener noreferrer">'
                f"{e(i['label'])}</a>"
                + (f' <span class="muted">{e(i["detail"])}</span>' if i.get("detail") else "")
                + "</li>"
                for i in block["items"]
            )
            + "</ul>"
        )
    return f"<section>{head}{body}</section>"


def _chart(points: list[dict[str, Any]], *, line: bool) -> str:
    """Bars (or a line) over the points, scaled to the largest magnitude, labels below."""
    width, height, step = 600, 160, 600 / len(points)
    values = [float(p["value"]) for p in points]
    high, low = max(0.0, *values), min(0.0, *values)
    span = (high - low) or 1.0
    zero = height * high / span  # where 0 is: bars grow up from it, or down for negatives

    def y(value: float) -> float:
        return zero - value / span * height

    labels = "".join(
        f'<text x="{(i + 0.5) * step:.1f}" y="{height + 20}" text-anchor="middle" font-size="18" '
        f'fill="currentColor">{html.escape(p["label"][:12])}</text>'
        for i, p in enumerate(points)
    )
    if line:
        path = " ".join(
            f"{(i + 0.5) * step:.1f},{y(float(p['value'])):.1f}" for i, p in enumerate(points)
        )
        marks = f'<polyline points="{path}" fill="none" stroke="var(--accent)" stroke-width="2"/>'
    else:
        marks = "".join(
            f'<rect x="{i * step + step * 0.15:.1f}" y="{min(y(float(p["value"])), zero):.1f}" '
            f'width="{step * 0.7:.1f}" height="{abs(float(p["value"])) / span * height:.1f}" '
            f'fill="var(--accent)"><title>{html.escape(p["label"])}: {float(p["value"]):g}'
            "</title></rect>"
            for i, p in enumerate(points)
        )
    box = f'viewBox="0 0 {width} {height + 28}" role="img" aria-label="chart"'
    return f"<svg {box}>{marks}{labels}</svg>"
