"""Which sessions a session's tools may see and send to (`SessionVisibility`)."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

from ..._lazy import value_class
from ...errors import ConfigurationError, ToolError

__all__ = ["SessionVisibility", "check_text"]

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def check_text(name: str, value: str, *, session_id: bool = False) -> str:
    """`value`, unless it holds a NUL or a lone surrogate (which no store keeps alike on every
    backend), or, for a session id, any control character (no session has one).

    Raises:
        ToolError: `invalid_input`, naming the field and the character.
    """
    found = (_CONTROL if session_id else _UNSTORABLE).search(value)
    if found is not None:
        kind = "session id" if session_id else "text"
        raise ToolError(
            f"`{name}` {value!r} holds the character {found.group()!r}, which a {kind} may "
            "not hold (NUL, lone surrogates"
            + (", control characters" if session_id else "")
            + "); remove it.",
            code="invalid_input",
        )
    return value


@value_class
class SessionVisibility:
    """Session-id patterns (`fnmatch`, case-sensitive) the session tools are held to.

    The default lets a session see and send to every session of its own agent (its store);
    `see=("self",)` confines it to itself. `"self"` stands for the calling session. The
    session tools enforce this on the host for every call; a model cannot widen it.

    Attributes:
        see: Sessions `sessions_list`, `sessions_history` and `sessions_search` may read.
        send: Sessions `sessions_send` may post to (never the caller itself: its own turn
            holds the session).
    """

    see: tuple[str, ...] = ("*",)
    send: tuple[str, ...] = ("*",)

    def __post_init__(self) -> None:
        for name in ("see", "send"):
            value: object = getattr(self, name)
            items: tuple[object, ...] = value if isinstance(value, tuple) else ()  # pyright: ignore[reportUnknownVariableType]
            if not isinstance(value, tuple) or not all(isinstance(p, str) for p in items):
                raise ConfigurationError(
                    f"`SessionVisibility.{name}` must be a tuple of patterns, got {value!r}."
                )

    def may_see(self, caller: str, target: str) -> bool:
        """Whether `caller` may read `target`."""
        return _matches(self.see, caller, target)

    def may_send(self, caller: str, target: str) -> bool:
        """Whether `caller` may post to `target`."""
        return target != caller and _matches(self.send, caller, target)

    def may_post(self, caller: str, target: str) -> bool:
        """Whether something `caller` set up to run later (an `agentTurn` automation) may
        post into `target`: its own session, or one `send` allows."""
        return target == caller or _matches(self.send, caller, target)

    def check_see(self, caller: str, target: str) -> None:
        """A `ToolError` (`session_not_visible`) unless `caller` may read `target`."""
        if not self.may_see(caller, target):
            raise ToolError(
                f"Session {target!r} is not visible to this session; ask the operator to "
                "widen `SessionVisibility.see`.",
                code="session_not_visible",
            )


def _matches(patterns: tuple[str, ...], caller: str, target: str) -> bool:
    return any(
        target == caller if pattern == "self" else fnmatchcase(target, pattern)
        for pattern in patterns
    )
