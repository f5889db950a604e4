"""The Jinja environment of the UI's server-rendered templates (autoescaped)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, cast

from jinja2 import Environment, FileSystemLoader, select_autoescape

from ..approvals import ApprovalAnswer

__all__ = ["STATIC_DIR", "TEMPLATES", "fragment", "render_template"]

STATIC_DIR: Final = Path(__file__).with_name("static")
TEMPLATES: Final = Environment(
    loader=FileSystemLoader(Path(__file__).with_name("templates")),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def _pretty(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _when(value: object) -> str:
    """An ISO 8601 time as `YYYY-MM-DD HH:MM:SS UTC` (anything else as it is)."""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    if moment.utcoffset() is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if moment.tzinfo else "")


TEMPLATES.filters["pretty"] = _pretty
TEMPLATES.filters["when"] = _when
# An approval card's note field stops where the answer's check would refuse it.
cast(dict[str, Any], TEMPLATES.globals)["max_note_chars"] = ApprovalAnswer.MAX_NOTE_CHARS


def render_template(name: str, **context: Any) -> str:
    """Render one template (or a `{% macro %}` file's fragment) to HTML text."""
    return TEMPLATES.get_template(name).render(**context)


def fragment(name: str, value: object = None, **context: Any) -> str:
    """One fragment of `_fragments.html` (`message`, `cell`, `output`, `result`, …)."""
    return render_template("_fragments.html", fragment=name, value=value, **context).strip()
