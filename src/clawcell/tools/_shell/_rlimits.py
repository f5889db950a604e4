"""`Rlimits`: the resource limits set in a command's process between fork and exec."""

from __future__ import annotations

import os
import resource
from collections.abc import Callable

from ..._lazy import value_class
from ...runtime import die_with_parent

__all__ = ["Rlimits"]


@value_class
class Rlimits:
    """Resource limits applied to a command (values already clamped to the hard limits)."""

    cpu_seconds: int
    address_space_bytes: int
    file_size_bytes: int
    max_processes: int
    write_bytes: int = 0
    """The workspace growth budget (`max_write_bytes`), checked by the watcher, not here."""

    def preexec(self, join: Callable[[], None] | None = None) -> Callable[[], None]:
        """The function run in the child between fork and exec (`join` first: a cgroup)."""
        pairs = [
            (resource.RLIMIT_CPU, self.cpu_seconds, self.cpu_seconds + 1),
            (resource.RLIMIT_AS, self.address_space_bytes, self.address_space_bytes),
            (resource.RLIMIT_FSIZE, self.file_size_bytes, self.file_size_bytes),
            (resource.RLIMIT_NPROC, self.max_processes, self.max_processes),
        ]
        limits = [(kind, *_clamped(kind, soft, hard)) for kind, soft, hard in pairs]
        host = os.getpid()

        def apply() -> None:
            if join is not None:
                join()
            for kind, soft, hard in limits:
                resource.setrlimit(kind, (soft, hard))
            die_with_parent(host)  # exits at once if the host died since the fork

        return apply


def _clamped(kind: int, soft: int, hard: int) -> tuple[int, int]:
    _, ceiling = resource.getrlimit(kind)
    if ceiling == resource.RLIM_INFINITY:
        return soft, hard
    return min(soft, ceiling), min(hard, ceiling)
