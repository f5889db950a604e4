"""axe-core in the page: the WCAG 2.2 A/AA rules, the serious and critical violations.

`make test` fetches axe-core (pinned and hash-checked, `scripts/fetch-axe.py`) to
`build/vendor/axe.min.js`. It is evaluated over the DevTools protocol, which the page's
Content-Security-Policy does not govern (the page itself still runs no inline script).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE = Path(__file__).resolve().parents[3] / "build" / "vendor" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def serious_violations(page: Page) -> list[dict[str, Any]]:
    """Each serious or critical violation: its rule, impact and the elements it names."""
    assert AXE.is_file(), f"{AXE} is missing: run `python3 scripts/fetch-axe.py` (or make test)"
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        "(tags) => axe.run(document, { runOnly: { type: 'tag', values: tags } })", TAGS
    )
    return [
        {"rule": v["id"], "impact": v["impact"],
         "nodes": [(n["target"], n.get("failureSummary", "")) for n in v["nodes"]][:5]}
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]  # fmt: skip
