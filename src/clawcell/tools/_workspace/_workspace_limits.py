"""The size caps and result bounds of the workspace tools."""

from __future__ import annotations

from ..._lazy import value_class
from ...errors import ConfigurationError

__all__ = ["WorkspaceLimits"]


@value_class
class WorkspaceLimits:
    """Caps that keep one workspace call small and quick.

    Attributes:
        max_read_bytes: Largest file `read`, `edit`, `apply_patch` and `grep` will open.
        max_write_bytes: Largest content `write`, `edit` and `apply_patch` will store.
        read_max_chars: Default and ceiling of `read`'s `maxChars`.
        max_results: Default and ceiling of the `limit` of `list`, `grep` and `find`.
        max_scanned_files: Most files one `grep` or `find` walks before it stops.
    """

    max_read_bytes: int = 5 * 1024 * 1024
    max_write_bytes: int = 5 * 1024 * 1024
    read_max_chars: int = 50_000
    max_results: int = 200
    max_scanned_files: int = 20_000

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigurationError(
                    f"Workspace limit `{name}` must be a positive integer, got {value!r}."
                )
