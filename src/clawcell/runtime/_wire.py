"""The host↔guest wire: every name the host and `controller.js` must agree on, defined once.

The controller (a real JavaScript file beside this module) and the host talk through a few
calls and two JSON shapes:

* the host calls the controller's entry points (`HOST_ENTRY_POINTS`): `install(config)` once
  per image, `start(cell, seed)` once per cell, then `settle(batch)` and `step()` in turns;
* `step()` returns a *step report*, one JSON object whose keys are `REPORT_KEYS`: the cell
  state `s` (`CellState`), the queue length `q`, new output `o`, cancelled request ids `c`,
  the error `e`, `v` (present, as `0`, once the value is ready) and the admitted requests `r`
  as `[id, method]`. Lines of JSON text follow the report (JSON text never holds a raw
  newline): the value's first when `v` is present, then each request's arguments, so the host
  sizes them before it parses them (`_cell/_requests.py`) and a large value is copied, not
  re-escaped;
* a request's `method` is one of `BRIDGE_METHODS`, and its id is `bridge:<method>:<n>`;
* `settle(batch)` takes `[[id, ok, payload], …]`.

The cell's code is compiled under the file name `USER_FILE`, so stack frames read
`openclaw-code-mode:user.js:<line>:<col>` as in the original; the controller itself under
`CONTROLLER_FILE`. `GUEST_GLOBALS` are the globals the controller defines for cells.

`tests/runtime/test_wire.py` reads `controller.js` and fails when the two sides disagree; to add
a bridge method, add it here, in the controller's `request(...)` call and in the bridge.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "BRIDGE_METHODS",
    "CONTROLLER_FILE",
    "GUEST_GLOBALS",
    "HOST_ENTRY_POINTS",
    "REPORT_KEYS",
    "STATE_FAILED",
    "STATE_OVERFLOW",
    "STATE_RUNNING",
    "STATE_VALUE",
    "USER_FILE",
    "BridgeMethod",
    "CellState",
]

BridgeMethod = Literal[
    "callValue",
    "describe",
    "namespace",
    "search",
    "apiList",
    "apiRead",
    "resultSave",
    "resultLoad",
    "resultDelete",
    "store",
    "load",
    "sleep",
    "yield",
]
BRIDGE_METHODS: Final[frozenset[str]] = frozenset(get_args(BridgeMethod))

CellState = Literal[0, 1, 2, 3]
STATE_RUNNING: Final = 0
"""The cell has not settled yet."""
STATE_VALUE: Final = 1
"""The cell's promise fulfilled; the report carries `v`, the value's JSON text."""
STATE_FAILED: Final = 2
"""The cell's promise rejected; the report carries `e`, the error's text."""
STATE_OVERFLOW: Final = 3
"""A request overflowed the bridge queue; `e` is the overflow message."""

REPORT_KEYS: Final = frozenset({"s", "q", "o", "c", "v", "e", "r"})
HOST_ENTRY_POINTS: Final = ("install", "start", "step", "settle", "describeError")

USER_FILE: Final = "openclaw-code-mode:user.js"
CONTROLLER_FILE: Final = "clawcell:controller.js"

GUEST_GLOBALS: Final = frozenset(
    {
        "API",
        "MCP",
        "TextDecoder",
        "TextEncoder",
        "catalog",
        "clearTimeout",
        "console",
        "json",
        "load",
        "namespaces",
        "results",
        "setTimeout",
        "store",
        "text",
        "yield_control",
    }
)
