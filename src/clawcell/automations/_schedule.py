"""Schedules: a cron expression in an explicit time zone, a fixed interval, or one time.

```json
{"kind": "cron", "expr": "0 9 * * 1-5", "tz": "Europe/Paris"}
{"kind": "every", "everyMs": 60000}
{"kind": "at", "at": "2026-12-24T18:00:00+01:00"}
```

Cron expressions are parsed by `croniter` (`pip install 'clawcell[automations]'`) in the
given IANA zone, so "9 o'clock" follows daylight saving. Intervals count from the job's
anchor (its creation), so occurrences stay on the grid whatever the scheduler's latency.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .._lazy import install_hint
from ..errors import ToolError

__all__ = ["MIN_EVERY_MS", "check_schedule", "next_after"]

MIN_EVERY_MS: Final = 1_000
LAST_TIME: Final = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()
"""The latest occurrence a schedule may have (dates after it have no ISO form)."""
_MACROS: Final = frozenset(
    ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
)


def _invalid(message: str) -> ToolError:
    return ToolError(message, code="invalid_schedule")


def check_schedule(schedule: Mapping[str, Any]) -> dict[str, Any]:
    """A job's `schedule` object (one of the three shapes above), checked and normalized.

    Raises:
        ToolError: `invalid_schedule`, saying what is wrong and how to write it.
    """
    kind = schedule.get("kind")
    if kind == "cron":
        return _cron(schedule)
    if kind == "every":
        every = schedule.get("everyMs")
        if not isinstance(every, int) or isinstance(every, bool) or every < MIN_EVERY_MS:
            raise _invalid(
                f"`everyMs` must be an integer of at least {MIN_EVERY_MS}, got {every!r}."
            )
        return {"kind": "every", "everyMs": every}
    if kind == "at":
        at = schedule.get("at")
        _parse_time(at)
        return {"kind": "at", "at": at}
    raise _invalid(
        f"`schedule.kind` must be 'cron', 'every' or 'at', got {kind!r}; for example "
        "{kind: 'every', everyMs: 60000}."
    )


def _cron(schedule: Mapping[str, Any]) -> dict[str, Any]:
    expr, tz = schedule.get("expr"), schedule.get("tz")
    if not isinstance(tz, str) or not tz:
        raise _invalid(f"A cron schedule needs an explicit IANA time zone `tz`, got {tz!r}.")
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise _invalid(f"Unknown time zone {tz!r}; use an IANA name such as 'UTC'.") from exc
    croniter = _croniter()
    fields = expr.split() if isinstance(expr, str) else []
    if (
        not isinstance(expr, str)
        or not (len(fields) == 5 or (len(fields) == 1 and fields[0] in _MACROS))
        or not croniter.is_valid(expr)
    ):
        raise _invalid(
            f"Invalid cron expression {expr!r}; five fields (minute hour day month weekday), "
            "e.g. '0 9 * * 1-5' (a sixth field for seconds is not accepted)."
        )
    checked = {"kind": "cron", "expr": expr, "tz": tz}
    if next_after(checked, datetime.now(UTC).timestamp(), anchor=0.0) is None:
        raise _invalid(
            f"The cron expression {expr!r} never matches (such as a 30th of February); "
            "check its day and month fields."
        )
    return checked


def _croniter() -> Any:
    try:
        from croniter import croniter
    except ImportError as exc:
        raise ToolError(
            f"Cron schedules need croniter: {install_hint('automations')}.",
            code="invalid_schedule",
        ) from exc
    return croniter


def _parse_time(value: object) -> float:
    if not isinstance(value, str):
        raise _invalid(f"`at` must be an ISO 8601 time with an offset, got {value!r}.")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise _invalid(f"`at` {value!r} is not an ISO 8601 time.") from exc
    if parsed.tzinfo is None:
        raise _invalid(f"`at` {value!r} has no UTC offset; add one, e.g. '+00:00'.")
    return parsed.timestamp()


def next_after(schedule: Mapping[str, Any], after: float, *, anchor: float) -> float | None:
    """The first occurrence of a checked `schedule` strictly after `after` (seconds since the
    epoch), or `None` when there is none up to the year 9999 (an `at` in the past, a cron that
    never matches). An `every` schedule counts from `anchor`, the job's creation."""
    found = _next(schedule, after, anchor)
    return found if found is not None and found <= LAST_TIME else None


def _next(schedule: Mapping[str, Any], after: float, anchor: float) -> float | None:
    kind = schedule["kind"]
    if kind == "every":
        step = schedule["everyMs"] / 1000
        count = max(0, math.floor((after - anchor) / step) + 1)
        return anchor + count * step
    if kind == "at":
        at = _parse_time(schedule["at"])
        return at if at > after else None
    if after >= LAST_TIME:
        return None
    zone = ZoneInfo(schedule["tz"])
    start = datetime.fromtimestamp(after, zone)
    try:
        return float(_croniter()(schedule["expr"], start).get_next(float))
    except (ValueError, OverflowError):  # croniter's "no match" errors are `ValueError`s
        return None
