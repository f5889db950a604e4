"""OpenTelemetry spans of agent turns, model calls, cells and the tool calls inside cells.

Spans: `clawcell.agent.turn` → `clawcell.model.call` and `clawcell.cell` → `clawcell.tool`
(a tool call is a child of the cell that made it). A cell span records the SHA-256 and size of
its code, never the source itself; a tool span records the tool's callable name and whether it
succeeded, never its arguments. Failures set the span status to ERROR with the envelope's or
the error's code in `clawcell.failure_code`.

Needs only `opentelemetry-api` (`pip install 'clawcell[otel]'`); without it, or without a
configured tracer provider, every span is a no-op. Parents are passed explicitly, never
through the current context, because a turn is an async generator that yields between spans.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

__all__ = ["Span", "Tracing", "code_attributes"]

AttributeValue = str | bool | int | float


class Span:
    """One span, or nothing when tracing is off."""

    def __init__(self, tracing: Tracing, span: Any | None) -> None:
        self._tracing = tracing
        self._span = span
        self._ended = False

    @property
    def otel_span(self) -> Any | None:
        """The OpenTelemetry span, or `None` when tracing is off."""
        return self._span

    def child(self, name: str, attributes: dict[str, AttributeValue] | None = None) -> Span:
        """A span whose parent is this one."""
        return self._tracing.start(name, attributes, parent=self)

    def set(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Set attributes; `None` values are left out."""
        if self._span is not None:
            for key, value in attributes.items():
                if value is not None:
                    self._span.set_attribute(key, value)

    @property
    def ended(self) -> bool:
        """Whether `end` was called."""
        return self._ended

    def end(self, *, failure_code: str | None = None, message: str | None = None) -> None:
        """End the span, marked as failed when `failure_code` is given; later calls do nothing."""
        if self._ended:
            return
        self._ended = True
        if self._span is None:
            return
        if failure_code is not None:
            self._span.set_attribute("clawcell.failure_code", failure_code)
            self._span.set_status(self._tracing.error_status(message or failure_code))
        self._span.end()


class Tracing:
    """Starts spans on a tracer from `tracer_provider` (or the global one).

    Args:
        tracer_provider: An OpenTelemetry `TracerProvider`; `None` uses the global provider.
        enabled: `False` turns every span into a no-op.
    """

    def __init__(self, tracer_provider: Any | None = None, *, enabled: bool = True) -> None:
        self._tracer: Any | None = None
        self._trace: Any | None = None
        if not enabled:
            return
        try:
            from opentelemetry import trace
        except ImportError:  # the `[otel]` extra is not installed: tracing is off
            return
        self._trace = trace
        self._tracer = trace.get_tracer("clawcell.agent", tracer_provider=tracer_provider)

    def start(
        self,
        name: str,
        attributes: dict[str, AttributeValue] | None = None,
        *,
        parent: Span | None = None,
    ) -> Span:
        """Start a span, a child of `parent` when given."""
        if self._tracer is None or self._trace is None:
            return Span(self, None)
        context = None
        if parent is not None and parent.otel_span is not None:
            context = self._trace.set_span_in_context(parent.otel_span)
        return Span(self, self._tracer.start_span(name, context=context, attributes=attributes))

    def error_status(self, message: str) -> Any:
        """An ERROR span status with `message`."""
        assert self._trace is not None  # only called for real spans
        return self._trace.Status(self._trace.StatusCode.ERROR, message)


def code_attributes(code: str) -> dict[str, AttributeValue]:
    """What a cell span says about its code: a hash and a size, not the source."""
    data = code.encode("utf-8", "surrogatepass")
    return {
        "clawcell.cell.code_sha256": hashlib.sha256(data).hexdigest(),
        "clawcell.cell.code_bytes": len(data),
    }
