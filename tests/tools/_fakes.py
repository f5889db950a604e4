"""Test doubles for the web tools: a scripted resolver and a controllable clock."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(kw_only=True)
class ScriptedResolver:
    """Answers each lookup of a name with the next scripted answer (the last one repeats)."""

    answers: dict[str, list[list[str]]]
    calls: list[str] = field(default_factory=list[str])

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        script = self.answers.get(host)
        if not script:
            raise OSError(f"[Errno -2] Name or service not known: {host!r}")
        return script.pop(0) if len(script) > 1 else script[0]


@dataclass(kw_only=True)
class Clock:
    """Monotonic seconds that move only when a test says so."""

    now: float = 1000.0

    def __call__(self) -> float:
        return self.now
