"""The model tool-result budget (spec `code-mode.md` §5, §6.2 step 7).

When `CodeMode(model_context_tokens=…)` is given, every envelope's rendered text must also fit
the share of the model's context one tool result may take; the ledger then searches the
largest smaller output budget that fits.
"""

from __future__ import annotations

from typing import Final

from .._jsjson import utf16_len
from .._lazy import value_class
from ..errors import ConfigurationError

__all__ = ["MODEL_BUDGET_MESSAGE", "ModelBudget"]

MODEL_BUDGET_MESSAGE: Final = (
    "Model tool-result budget cannot fit Code Mode status; use a larger model context."
)


@value_class
class ModelBudget:
    """The share of a model's context one tool result may take.

    Text size is measured in UTF-16 code units (JavaScript's `length`); the original weighs
    CJK characters more, which this port does not replicate (spec §5 allows `len`).
    """

    max_chars: int
    max_context_chars: int

    @classmethod
    def for_context(cls, context_tokens: int) -> ModelBudget:
        """The budget for a model with a context window of `context_tokens` tokens."""
        if context_tokens <= 0:
            raise ConfigurationError(
                f"`model_context_tokens` must be a positive integer, got {context_tokens!r}."
            )
        cap = (
            64_000 if context_tokens >= 200_000 else 32_000 if context_tokens >= 100_000 else 16_000
        )
        return cls(
            max_chars=min(int(context_tokens * 0.3) * 4, cap),
            max_context_chars=max(1024, context_tokens),
        )

    def accepts(self, text: str) -> bool:
        """Whether a rendered tool result of this text fits the budget."""
        size = utf16_len(text)
        return size <= self.max_chars and 2 * size <= self.max_context_chars
