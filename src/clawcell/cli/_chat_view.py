"""How `clawcell chat` draws agent events in a terminal: plain text, no colours.

Everything drawn comes from the model, a cell or a command's output, so none of it may drive
the terminal: every control character but newline and tab (C0, DEL, C1 — `ESC`, `CSI`, `OSC`
and the rest: colours, cursor moves, title or clipboard writes, hyperlinks, a carriage
return that overwrites the line) is shown as a visible escape such as `\x1b`, in `_write`,
the one place text reaches the terminal.

```text
you> Which shipments are unpaid?
┌ exec · Unpaid shipments
│ js> const rows = await list_shipments();
│ out looking
└ completed ["b-202"]
b-202 is unpaid.
  (2 model turns · 1 cell · 2 tool calls · 0.4 s · 85 → 35 tokens)
```
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Final, TextIO

from ..agent import (
    AgentEvent,
    CellFinished,
    CellOutput,
    CellStarted,
    ReplyEvent,
    TextDelta,
    TurnFinished,
)

__all__ = ["ChatView", "terminal_safe"]

_SHOWN: Final = 400  # characters of a value or an error shown in the terminal
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """`text` with every control character but newline and tab made visible (`\\x1b`)."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


class ChatView:
    """Writes events to `out` as they come."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._midline = False

    def banner(self, model: str, tools: Sequence[str]) -> None:
        """The first lines: model and tools, and how to leave."""
        names = ", ".join(tools) if tools else "none"
        self._line(f"clawcell chat · model {model} · tools: {names} · /exit or Ctrl-D to leave")

    def prompt(self) -> None:
        """The input prompt."""
        self._end_line()
        self._write("you> ")

    def failure(self, message: str) -> None:
        """A turn that stopped with an error."""
        self._line(f"! {message}")

    def show(self, event: AgentEvent) -> None:
        """Draw one event."""
        if isinstance(event, TextDelta):
            self._write(event.text)
            self._midline = not event.text.endswith("\n")
        elif isinstance(event, CellStarted):
            self._cell_started(event)
        elif isinstance(event, CellOutput):
            self._line(f"│ out {_item_text(event.item)}")
        elif isinstance(event, CellFinished):
            self._line(f"└ {_outcome(event)}")
        elif isinstance(event, ReplyEvent):
            self._reply(event)
        elif isinstance(event, TurnFinished):
            self._usage(event)

    def _cell_started(self, event: CellStarted) -> None:
        title = f" · {event.title}" if event.title else ""
        self._line(f"┌ {event.tool}{title}")
        if event.code is not None:
            for code_line in event.code.splitlines():
                self._line(f"│ js> {code_line}")
        if event.run_id is not None:
            self._line(f"│ runId {event.run_id}")

    def _reply(self, event: ReplyEvent) -> None:
        for payload in event.payloads:
            for url in payload.get("mediaUrls", ()):
                self._line(f"  [media] {url}")
        for block in event.content:
            if block.get("type") == "canvas":
                preview: dict[str, Any] = block.get("preview") or {}
                self._line(f"  [canvas] {preview.get('title') or preview.get('viewId')}")

    def _usage(self, event: TurnFinished) -> None:
        usage = event.usage
        parts = [
            _count(usage.model_turns, "model turn"),
            _count(usage.cells, "cell"),
            _count(usage.tool_calls, "tool call"),
            f"{usage.wall_ms / 1000:.1f} s",
        ]
        if usage.input_tokens is not None and usage.output_tokens is not None:
            parts.append(f"{usage.input_tokens} → {usage.output_tokens} tokens")
        self._line(f"  ({' · '.join(parts)})")

    def _line(self, text: str) -> None:
        self._end_line()
        self._write(text + "\n")

    def _end_line(self) -> None:
        if self._midline:
            self._write("\n")
            self._midline = False

    def _write(self, text: str) -> None:
        self._out.write(terminal_safe(text))
        self._out.flush()


def _item_text(item: dict[str, Any]) -> str:
    if item.get("type") == "text":
        return str(item.get("text", ""))
    return _short(json.dumps(item.get("value"), ensure_ascii=False))


def _outcome(event: CellFinished) -> str:
    envelope = event.envelope
    if envelope is None:
        return f"rejected: {event.error}"
    status = envelope.get("status")
    if status == "completed":
        return f"completed {_short(json.dumps(envelope.get('value'), ensure_ascii=False))}"
    if status == "waiting":
        return f"waiting {envelope.get('runId')}"
    return f"failed ({envelope.get('code')}): {_short(str(envelope.get('error')))}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"
