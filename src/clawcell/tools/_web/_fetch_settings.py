"""The caps of `web_fetch`."""

from __future__ import annotations

from ..._lazy import value_class
from ...errors import ConfigurationError

__all__ = ["FetchSettings"]


@value_class
class FetchSettings:
    """Caps of one `web_fetch` call.

    Attributes:
        max_chars: Default and ceiling of the `maxChars` input.
        max_bytes: Most body bytes read; the rest is never downloaded.
        timeout_seconds: Wall-clock budget of the whole call (lookups, redirects and body).
        max_redirects: Most redirects followed.
        user_agent: The `User-Agent` header sent.
    """

    max_chars: int = 20_000
    max_bytes: int = 2 * 1024 * 1024
    timeout_seconds: float = 20.0
    max_redirects: int = 5
    user_agent: str = "clawcell-web-fetch/0.1 (+https://github.com/clawcell)"

    def __post_init__(self) -> None:
        for name in ("max_chars", "max_bytes", "timeout_seconds", "max_redirects"):
            value: object = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigurationError(f"Fetch setting `{name}` must be a number, got {value!r}.")
        if self.max_chars < 1 or self.max_bytes < 1 or self.timeout_seconds <= 0:
            raise ConfigurationError(
                "`max_chars`, `max_bytes` and `timeout_seconds` must be positive, got "
                f"{self.max_chars!r}, {self.max_bytes!r} and {self.timeout_seconds!r}."
            )
        if self.max_redirects < 0:
            raise ConfigurationError(f"`max_redirects` must be >= 0, got {self.max_redirects!r}.")
