"""The step report: what one `step()` of the guest controller tells the host.

`step()` returns one string: a JSON header (`{"s": state, "q": queued, "o": [output…], "c":
[cancelled ids…], "e": error, "r": [[id, method]…]}`; `runtime.wire` names the keys and
states), then one line with the value's JSON text when the value is ready, then one line of
arguments per request. Values and arguments stay JSON *text*: the host sizes them against
its budgets before it parses anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NamedTuple

from .._jsonvalue import parse_json_text, scan_json

__all__ = ["StepResult", "parse_report"]


class StepResult(NamedTuple):
    """What one `step()` of the controller reported (immutable; a named tuple rather than a
    frozen dataclass because one is built on every bridge round trip, at half the cost)."""

    output: list[str]
    requests: list[list[Any]]
    """`[id, method, argumentsJsonText]` for each request admitted since the last step."""
    cancelled: list[str]
    state: int
    value_json: str | None
    error: str
    queued: int


_new_tuple: Final[Callable[[type[StepResult], tuple[Any, ...]], StepResult]] = tuple.__new__  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def parse_report(text: str) -> StepResult:
    """The step report of `text`: a JSON header, then (one line each) the value's JSON text when the
    value is ready and each request's arguments, which stay text (the host sizes them first).

    Raises:
        MemoryError: the header is not JSON (the guest could not build it).
    """
    # Each line is copied once; the JSON texts hold no raw newline, so splitting is exact.
    lines = text.split("\n")
    head = lines[0]
    raw: Any = None
    try:  # `parse_json_text(head)`, its usual case inline (every turn)
        raw, end = scan_json(head, 0)
    except (StopIteration, ValueError):
        end = -1
    if end != len(head):
        try:
            raw = parse_json_text(head)
        except ValueError as exc:
            raise MemoryError("the guest could not build its step report") from exc
    at = 1
    value_json: str | None = None
    if "v" in raw:
        value_json, at = lines[1], 2
    requests: list[list[Any]] = raw["r"]
    for request, args in zip(requests, lines[at:], strict=True):
        request.append(args)
    # `StepResult(...)` without the named tuple's Python `__new__` (a frame, every turn).
    output, cancelled, error = raw.get("o", []), raw.get("c", []), raw.get("e", "")
    fields = (output, requests, cancelled, raw["s"], value_json, error, raw["q"])
    return _new_tuple(StepResult, fields)
