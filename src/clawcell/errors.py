"""The one error tree of clawcell.

Every exception clawcell raises on purpose derives from `ClawcellError` and carries a
machine-readable `code`. Foreign exceptions (wasmtime traps, jsonschema errors, MCP SDK
errors) are translated once, at the boundary where they occur.

```text
ClawcellError (Exception)                       code: varies
├── InputError (ValueError)                     code: "invalid_input"
│     a model-facing `exec`/`wait` call was rejected before it could run
├── ConfigurationError (ValueError)             code: "invalid_config"
│     a `Limits`, `Tool` or `CodeMode` argument is wrong
├── RuntimeUnavailableError (RuntimeError)      code: "runtime_unavailable"
│     the QuickJS WASI engine cannot be loaded or verified
├── ContractError (ValueError)                  code: "input_contract" | "output_contract"
│     a tool's input or output broke its declared JSON Schema        | "invalid_contract"
├── ToolError (RuntimeError)                    code: "tool_error"
│     raised by tools to fail with a message the guest sees verbatim
├── ApprovalDeniedError (PermissionError)       code: "approval_denied"
│     a nested call needed a person's approval and did not get it (denied or expired)
├── McpError (RuntimeError)                     code: "mcp_error"
│     an MCP server could not be reached, failed, timed out or answered malformed
├── SnapshotError (ValueError)                  code: "invalid_snapshot"
│     parked-cell bytes are corrupt or come from another build
├── StoreTypeError (TypeError)                  code: "store_type"
│     a `store`/`load` key is not a non-empty string of at most 256 characters
├── StoreRangeError (ValueError)                code: "store_range"
│     a stored value (256 KiB) or a session's total (1 MiB) is too large
├── StoreUnavailableError (RuntimeError)        code: "store_unavailable"
│     a session-store backend failed (an `sqlite3.Error`, translated at the boundary)
├── StaleRunError (RuntimeError)                code: "stale_run"
│     a parked-run write carried a fencing version another worker has moved past
├── ClosedError (RuntimeError)                  code: "closed"
│     an object that owns engine or OS resources was used after `close()`
├── ModelError (RuntimeError)                   code: "model_error"
│     a model API call failed (HTTP error after the SDK's retries, malformed stream)
└── TurnLimitError (RuntimeError)               code: "max_model_turns" | "max_turn_seconds"
      an agent turn reached its cap of model turns or wall-clock time | "session_busy"
      (or waited all of it for another worker's turn of its session)
```
"""

from __future__ import annotations

__all__ = [
    "ApprovalDeniedError",
    "ClawcellError",
    "ClosedError",
    "ConfigurationError",
    "ContractError",
    "InputError",
    "McpError",
    "ModelError",
    "RuntimeUnavailableError",
    "SnapshotError",
    "StaleRunError",
    "StoreRangeError",
    "StoreTypeError",
    "StoreUnavailableError",
    "ToolError",
    "TurnLimitError",
]


class ClawcellError(Exception):
    """Root of every error clawcell raises on purpose.

    Attributes:
        code: A stable, machine-readable error code such as `invalid_input`.
    """

    code: str = "clawcell_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        """The human-readable message, exactly as given."""
        return str(self.args[0]) if self.args else ""


class InputError(ClawcellError, ValueError):
    """A model-facing `exec` or `wait` call was rejected before anything ran.

    The message is the exact protocol string (for example
    `code mode run is unavailable or expired.`), so it can be shown to a model unchanged.
    """

    code = "invalid_input"


class ConfigurationError(ClawcellError, ValueError):
    """A configuration value given by the host program is invalid."""

    code = "invalid_config"


class RuntimeUnavailableError(ClawcellError, RuntimeError):
    """The QuickJS WASI engine cannot be loaded, verified or started."""

    code = "runtime_unavailable"


class ContractError(ClawcellError, ValueError):
    """A tool call broke a declared JSON Schema contract.

    `code` is `input_contract`, `output_contract` or `invalid_contract`.
    """

    code = "output_contract"


class ToolError(ClawcellError, RuntimeError):
    """Raised by a tool to fail; the guest sees the message and `code: "tool_error"`."""

    code = "tool_error"


class ApprovalDeniedError(ClawcellError, PermissionError):
    """A nested call needed a person's approval and did not get it.

    Cells see it as a catchable error with `code: "approval_denied"` and the person's note.
    """

    code = "approval_denied"


class McpError(ClawcellError, RuntimeError):
    """An MCP server could not be reached, failed, timed out or sent a malformed result.

    Cells see the message as a catchable error; the next call reconnects. Install the SDK with
    `pip install 'clawcell[mcp]'` when the message says it is missing.
    """

    code = "mcp_error"


class ClosedError(ClawcellError, RuntimeError):
    """An object that owns engine or OS resources was used after it was closed."""

    code = "closed"


class SnapshotError(ClawcellError, ValueError):
    """Snapshot bytes cannot be restored here: corrupt, or from another build or image."""

    code = "invalid_snapshot"


class StoreTypeError(ClawcellError, TypeError):
    """A `store`/`load` key is not a non-empty string of at most 256 characters."""

    code = "store_type"


class StoreRangeError(ClawcellError, ValueError):
    """A stored value or the session's total is larger than the store allows.

    The guest sees a `RangeError`; Python's nearest built-in is `ValueError`.
    """

    code = "store_range"


class StoreUnavailableError(ClawcellError, RuntimeError):
    """A session-store backend could not read or write (database locked, disk full...)."""

    code = "store_unavailable"


class ModelError(ClawcellError, RuntimeError):
    """A model API call failed: an HTTP error left after the SDK's own retries, a refused
    request, or a stream the adapter could not read.

    Attributes:
        status_code: The HTTP status of the failed response, when there was one (200 for an
            error event inside a stream).
        error_type: The API's own error type (`overloaded_error`, `rate_limit_error`, ...),
            when it named one.
    """

    code = "model_error"

    def __init__(
        self, message: str, *, status_code: int | None = None, error_type: str | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.error_type = error_type


class TurnLimitError(ClawcellError, RuntimeError):
    """An agent turn reached a cap: `code` is `max_model_turns` or `max_turn_seconds`."""

    code = "max_model_turns"


class StaleRunError(ClawcellError, RuntimeError):
    """A write to a parked run was refused: its lease or fencing version is no longer current.

    Another worker claimed the run after this one (its lease expired), or the run was taken,
    deleted or swept. The writer must stop working on the run and drop its copy.
    """

    code = "stale_run"
