"""What an agent turn reports as it runs: typed events with a camelCase wire form.

Every event is a frozen dataclass with a `type` string and `to_dict()`, the JSON a UI
consumes. A turn yields `turn_started`, then any number of `text_delta`, `cell_started`,
`cell_output` and `cell_finished`, then `reply` and `turn_finished`; or it ends with `error`.
Later features add event types (approvals), so consumers should ignore types they do not know.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from .._lazy import value_class

if TYPE_CHECKING:
    from ..approvals import ApprovalDecision

__all__ = [
    "AgentEvent",
    "ApprovalDecided",
    "ApprovalRequested",
    "CellFinished",
    "CellOutput",
    "CellStarted",
    "ErrorEvent",
    "ReplyEvent",
    "TextDelta",
    "TurnFinished",
    "TurnStarted",
    "TurnUsage",
]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@functools.cache
def _wire_fields(kind: type) -> tuple[tuple[str, str], ...]:
    """`(attribute, camelCase key)` of a dataclass's shown fields, worked out once per class
    (a streamed reply turns every token into an event)."""
    return tuple((f.name, _camel(f.name)) for f in dataclasses.fields(kind) if f.repr)


def _wire(value: object) -> Any:
    if isinstance(value, str | int | float | bool | None):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for name, key in _wire_fields(type(value)):
            item = getattr(value, name)
            out[key] = item if isinstance(item, str | int | float | None) else _wire(item)
        return out
    if isinstance(value, tuple | list):
        return [_wire(item) for item in cast("tuple[object, ...] | list[object]", value)]
    return value


class _Event:
    """Shared `to_dict` of events: fields in order, names in camelCase."""

    def to_dict(self) -> dict[str, Any]:
        """The event as camelCase JSON-shaped data."""
        return _wire(self)


@value_class
class TurnUsage(_Event):
    """What one turn consumed.

    Attributes:
        input_tokens: Prompt tokens over all model calls, when the SDK reported them.
        output_tokens: Completion tokens over all model calls, when the SDK reported them.
        model_turns: Model calls made.
        cells: `exec` and `wait` calls answered.
        tool_calls: Tool calls the cells made.
        wall_ms: Wall-clock time of the turn in milliseconds.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    model_turns: int = 0
    cells: int = 0
    tool_calls: int = 0
    wall_ms: float = 0.0


@value_class
class TurnStarted(_Event):
    """A user message was accepted and the turn began."""

    type: Literal["turn_started"] = field(default="turn_started", init=False)
    session_id: str
    turn_id: str
    text: str


@value_class
class TextDelta(_Event):
    """A piece of model text, as the model streams it."""

    type: Literal["text_delta"] = field(default="text_delta", init=False)
    turn_id: str
    text: str


@value_class
class CellStarted(_Event):
    """The model called `exec` (a new cell, with its code) or `wait` (with the `runId`).

    Attributes:
        call_id: The model's tool call id; later cell events carry it.
        tool: `"exec"` or `"wait"` (or the unknown name the model used).
        code: The cell's source for `exec`.
        title: The cell's title, when the model gave one.
        run_id: The run being continued, for `wait`.
    """

    type: Literal["cell_started"] = field(default="cell_started", init=False)
    turn_id: str
    call_id: str
    tool: str
    code: str | None = None
    title: str | None = None
    run_id: str | None = None


@value_class
class CellOutput(_Event):
    """One output item of a running cell, as the guest emits it (before the cell ends)."""

    type: Literal["cell_output"] = field(default="cell_output", init=False)
    turn_id: str
    call_id: str
    item: dict[str, Any]


@value_class
class CellFinished(_Event):
    """The cell's leg ended.

    Attributes:
        envelope: The result envelope, or `None` when the call was rejected outright.
        error: The rejection message sent back to the model (`InputError`), else `None`.
    """

    type: Literal["cell_finished"] = field(default="cell_finished", init=False)
    turn_id: str
    call_id: str
    envelope: dict[str, Any] | None = None
    error: str | None = None


@value_class
class ReplyEvent(_Event):
    """The final reply: channel payloads and the content blocks stored in the transcript.

    Attributes:
        stop_reason: `"stop"`, or `"length"` when the model's output limit cut the answer
            (its text then ends with a visible marker), or the API's own name for another end.
    """

    type: Literal["reply"] = field(default="reply", init=False)
    turn_id: str
    payloads: tuple[dict[str, Any], ...]
    content: tuple[dict[str, Any], ...]
    is_silent: bool = False
    stop_reason: str = "stop"


@value_class
class TurnFinished(_Event):
    """The turn ended: with a reply (`state="replied"`), or with a cell that waits only for
    approvals (`state="waiting_approval"`; `Agent.decide` continues it).
    """

    type: Literal["turn_finished"] = field(default="turn_finished", init=False)
    turn_id: str
    usage: TurnUsage
    state: Literal["replied", "waiting_approval"] = "replied"


@value_class
class ApprovalRequested(_Event):
    """A call of a cell waits for a person's decision (`Agent.decide`).

    Attributes:
        run_id: The parked run.
        approval: The `pendingApprovals` entry: `{id, tool, input, reason, requestedAt}`.
    """

    type: Literal["approval_requested"] = field(default="approval_requested", init=False)
    turn_id: str
    call_id: str
    run_id: str
    approval: dict[str, Any]


@value_class
class ApprovalDecided(_Event):
    """A decision was recorded (`Agent.decide`), or an approval expired.

    Attributes:
        decided_at: When, as ISO 8601 UTC.
        reason: Why it expired without a person (`superseded` when a new user message
            started a turn); empty for a person's decision.
    """

    type: Literal["approval_decided"] = field(default="approval_decided", init=False)
    session_id: str
    run_id: str
    approval_id: str
    decision: Literal["approve", "deny"]
    note: str = ""
    by: str = ""
    decided_at: str = ""
    reason: str = ""

    @classmethod
    def of(cls, session_id: str, record: ApprovalDecision) -> ApprovalDecided:
        """The event of a decision (or expiry) the audit trail recorded."""
        return cls(
            session_id=session_id,
            run_id=record.run_id,
            approval_id=record.approval_id,
            decision=record.decision,
            note=record.note,
            by=record.by,
            decided_at=record.to_json()["decidedAt"],
            reason=record.reason,
        )


@value_class
class ErrorEvent(_Event):
    """The turn stopped: a cap was hit or the model failed. The typed error follows it.

    Attributes:
        code: The error's code (`max_model_turns`, `max_turn_seconds`, `model_error`, ...).
        message: What happened and what to do.
        error: The typed error itself (not part of `to_dict()`).
    """

    type: Literal["error"] = field(default="error", init=False)
    turn_id: str
    code: str
    message: str
    error: BaseException | None = field(default=None, repr=False, compare=False)


AgentEvent: TypeAlias = (
    TurnStarted
    | TextDelta
    | CellStarted
    | CellOutput
    | CellFinished
    | ReplyEvent
    | TurnFinished
    | ErrorEvent
    | ApprovalRequested
    | ApprovalDecided
)
"""Any event `Agent.run` yields; new kinds may be added, so handle unknown `type`s."""
