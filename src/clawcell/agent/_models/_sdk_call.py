"""What the adapters share about calling a model SDK: which options its call takes, and the
backoff between the retries an adapter makes itself.

Options are checked against the signature of the SDK method the adapter will call, when the
model is built: an option that method cannot take (or one the adapter sets itself) would
otherwise fail every turn with a `TypeError` from inside the SDK. `stream=False` is an
adapter option, not an SDK one: the adapter then makes one plain request per model call.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final

from ...errors import ConfigurationError

__all__ = ["checked_options", "pause", "retry_delay", "streaming"]

INITIAL_RETRY_DELAY: Final = 0.5
"""Seconds before the first retry; it doubles each time (the SDKs' own schedule)."""
MAX_RETRY_DELAY: Final = 8.0
"""The longest wait between two retries."""


def streaming(adapter: str, options: dict[str, Any]) -> bool:
    """Pops the adapter's `stream` option: `True` (the default) or `False`."""
    stream = options.pop("stream", True)
    if not isinstance(stream, bool):
        raise ConfigurationError(
            f"`{adapter}(stream=...)` must be True or False, got {stream!r}: `stream=False` "
            "makes one non-streaming request per model call."
        )
    return stream


def checked_options(
    adapter: str, client: Any, call: str, options: Mapping[str, Any], *,
    reserved: Collection[str],
) -> dict[str, Any]:  # fmt: skip
    """`options` when the client's method `call` (`"messages.stream"`) takes every one of
    them and the adapter sets none of them itself; else a `ConfigurationError` naming the
    option. A client whose method has no readable signature (a test double) is not checked."""
    for name in options:
        if name in reserved:
            raise ConfigurationError(
                f"`{adapter}` sets `{name}` of `{call}` itself from the agent's request; "
                f"remove the `{name}=` option."
            )
    method: Any = client
    for part in call.split("."):
        method = getattr(method, part, None)
    accepted = None if method is None else _parameters(method)
    unknown = sorted(name for name in options if accepted is not None and name not in accepted)
    if unknown:
        raise ConfigurationError(
            f"`{adapter}` option {unknown[0]!r} is not a parameter of `{call}` in the installed "
            f"SDK (it takes {', '.join(sorted(accepted or ()))}); remove it, or send it in the "
            f"request body with `extra_body={{{unknown[0]!r}: ...}}` if your API takes it."
        )
    return dict(options)


def _parameters(method: Callable[..., Any]) -> set[str] | None:
    """The keyword parameters `method` takes; `None` when it takes any (or cannot be read)."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters if p.kind is not inspect.Parameter.POSITIONAL_ONLY}


def retry_delay(retries_done: int) -> float:
    """Seconds to wait before the next retry: 0.5 s doubling up to 8 s, less up to a quarter
    at random (the schedule the SDKs use before a stream starts)."""
    delay = min(INITIAL_RETRY_DELAY * 2.0 ** min(retries_done, 32), MAX_RETRY_DELAY)
    return delay * (1 - 0.25 * random.random())


async def pause(seconds: float) -> None:
    """Waits between two retries (tests replace it to record the delays)."""
    await asyncio.sleep(seconds)
