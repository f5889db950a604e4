"""One rule for a model call cut by its output limit, whatever the adapter.

Each adapter reports the cut as `stop_reason="length"` (Chat Completions `finish_reason:
"length"`, Messages `max_tokens`, a Responses `incomplete` response for `max_output_tokens`).
The turn loop then:

* delivers a cut answer with `CUT_MARKER` after its text, in the streamed text, the reply and
  the transcript (whose `stopReason` stays `"length"`);
* runs none of the tool calls of a cut response (the last one is cut short, and its arguments
  may parse as something the model never meant), and answers each with `CUT_CALL`, so the
  model learns why and can try again shorter.
"""

from __future__ import annotations

from typing import Final

from ._model import ModelResponse

__all__ = ["CUT_CALL", "CUT_MARKER", "is_cut"]

CUT_MARKER: Final = "\n\n[cut off: the answer reached the model's output limit]"
"""Appended to an answer the output limit cut, so a reader sees it is incomplete."""

CUT_CALL: Final = (
    "not run: your response reached its output limit (stop reason `length`) before this "
    "call was complete, so no call of that response was run. Send the call again with "
    "shorter code, or split the work over several cells."
)
"""The result of each tool call of a response the output limit cut."""


def is_cut(response: ModelResponse) -> bool:
    """Whether the model's output limit ended this response."""
    return response.stop_reason == "length"
