"""Host-side bounds on the bridge requests a cell has made and the host has not answered.

Threat model: a hostile cell makes requests whose arguments are cheap in the guest but dear
on the host (`new Array(2e6).fill({})` is 6 MB of JSON and about 150 MB of Python objects),
or nests them deep enough to exhaust Python's recursion limit (D1, D9). The guest's own heap
limit bounds none of that, so the host admits each request's arguments before it parses
them:

* its estimated host cost must fit the cell's allowance (the program-data inbox size, as
  for replies) and the process's (`PROCESS_PENDING_BYTES`), counting every request of the
  cell and of the process still pending;
* its arguments may nest at most `MAX_ARGUMENT_DEPTH` levels, checked on the text before
  anything is parsed.

A refused request is answered at once with a plain error the cell can catch; nothing else
of the cell changes. The estimate counts text bytes plus a fixed cost per container and
per element (`HOST_BYTES_PER_NODE`), from counts of brackets and commas (C-speed, no
parse); array elements that are `null`, `true` or `false` cost only their slot. It
overestimates for text full of commas, never underestimates a structure.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Final

from .._jsonvalue import parse_json_text, scan_json

__all__ = [
    "DEPTH_MESSAGE",
    "MAX_ARGUMENT_DEPTH",
    "PROCESS_PENDING_BYTES",
    "RequestLedger",
    "host_cost",
]

MAX_ARGUMENT_DEPTH: Final = 128
PROCESS_PENDING_BYTES: Final = 512 * 1024 * 1024
HOST_BYTES_PER_NODE: Final = 64
HOST_BYTES_PER_SLOT: Final = 8
_SHARED_PATTERNS: Final = tuple(mark + word for mark in ",[" for word in ("null", "true", "false"))
_SHARED_FROM: Final = 64 * 1024
"""Arguments shorter than this are estimated without the shared-element discount (it only
matters for large arrays, and the extra scans cost every tool call)."""
_SHARED_TEXT: Final = 4  # text bytes of a shared element (at least) that parsing frees

DEPTH_MESSAGE: Final = (
    f"Code Mode bridge arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels. "
    "Flatten the value before passing it to the host."
)
_CELL_MESSAGE: Final = (
    "Code Mode pending-request budget exceeded: this request's arguments would hold about "
    "{cost} bytes on the host, and the cell's pending requests may hold {budget} bytes. "
    "Pass smaller arguments, or await pending calls before starting more."
)
_PROCESS_MESSAGE: Final = (
    "Code Mode host is busy: the pending requests of all cells in this process would hold "
    "more than {budget} bytes. Await pending calls or retry later with smaller arguments."
)


def host_cost(text: str) -> int:
    """Estimated host bytes of the parsed value of the JSON `text`.

    A `null`, `true` or `false` element of an array is a shared object on the host: it holds
    only its list slot (`HOST_BYTES_PER_SLOT`), and its text is gone once parsed, so a sparse
    array (`new Array(1e6)`, five bytes of JSON per hole) costs what it holds. Each such
    element is recognised by the `[` or `,` just before it, which `nodes` counted once, so a
    string full of `,null` text still costs at least its own length.
    """
    nodes = text.count("{") + text.count("[") + text.count(",")
    if len(text) < _SHARED_FROM:  # small arguments: the plain estimate, no further scans
        return len(text) + HOST_BYTES_PER_NODE * nodes
    shared = 0
    for pattern in _SHARED_PATTERNS:
        shared += text.count(pattern)
    element = HOST_BYTES_PER_NODE * (nodes - shared) + HOST_BYTES_PER_SLOT * shared
    return len(text) - _SHARED_TEXT * shared + element


_JSON_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_EMPTY_PAIR: Final = re.compile(r"\[\]|\{\}")
_SHALLOW_TEXT: Final = 2 * MAX_ARGUMENT_DEPTH
"""Text shorter than this cannot nest deeper than `MAX_ARGUMENT_DEPTH` (each level takes
an opening and a closing character), so its depth needs no check."""


class _Process:
    """The host bytes held by the pending requests of every cell of this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held = 0

    def forget(self, box: list[int]) -> None:
        """A ledger was dropped without releasing its requests (its cell was lost)."""
        with self.lock:
            self.held -= box[0]
            box[0] = 0


_process = _Process()


class RequestLedger:
    """The pending requests of one cell and the host bytes their arguments hold."""

    def __init__(self, cell_bytes: int) -> None:
        self._box = [0]
        self._cell_bytes = cell_bytes
        self._costs: dict[str, int] = {}

    def __del__(self) -> None:
        # A ledger dropped with bytes still held (its cell was lost) gives them back. A method,
        # not a `weakref.finalize`: that is two Python calls at every cell's start and end.
        if self._box[0]:
            _process.forget(self._box)

    @property
    def held(self) -> int:
        return self._box[0]

    def admit(self, request_id: str, text: str) -> list[Any] | str:
        """The parsed arguments of a request, or why it is refused (then nothing is held):
        `admit_all` of a report of one request."""
        admitted, refused = self.admit_all([[request_id, "", text]])
        return admitted[0][2] if admitted else refused[0][2]

    def admit_all(
        self, requests: list[list[Any]]
    ) -> tuple[list[tuple[str, str, list[Any]]], list[tuple[str, str, str]]]:
        """`admit` of each `[id, method, argumentsText]` of one step report, in order: the
        admitted ones as `(id, method, arguments)`, parsed, and the refused ones as `(id,
        method, why)`. The budgets are checked under one hold of the lock for the whole
        report (a batch of calls takes it once, not once a call), each request counted
        against what the ones before it took, as `admit` one by one would."""
        box, costs, cell_bytes = self._box, self._costs, self._cell_bytes
        verdicts: list[str | None] = []  # why a request is refused, or `None`
        with _process.lock:
            for request_id, _, text in requests:
                if len(text) < _SHARED_FROM:  # `host_cost`'s plain estimate, inline
                    nodes = text.count("{") + text.count("[") + text.count(",")
                    cost = len(text) + HOST_BYTES_PER_NODE * nodes
                else:
                    cost = host_cost(text)
                if box[0] + cost > cell_bytes:
                    verdicts.append(_CELL_MESSAGE.format(cost=cost, budget=cell_bytes))
                elif _process.held + cost > PROCESS_PENDING_BYTES:
                    verdicts.append(_PROCESS_MESSAGE.format(budget=PROCESS_PENDING_BYTES))
                else:
                    box[0] += cost
                    _process.held += cost
                    costs[request_id] = cost
                    verdicts.append(None)
        admitted: list[tuple[str, str, list[Any]]] = []
        refused: list[tuple[str, str, str]] = []
        for (request_id, method, text), verdict in zip(requests, verdicts, strict=True):
            if verdict is not None:
                refused.append((request_id, method, verdict))
                continue
            args: Any = DEPTH_MESSAGE
            if len(text) < _SHALLOW_TEXT:  # `_parse` of short text, inline (every call)
                try:
                    try:  # `parse_json_text(text)`, its usual case inline
                        args, end = scan_json(text, 0)
                    except StopIteration:
                        end = -1
                    if end != len(text):
                        args = parse_json_text(text)
                except RecursionError:  # only if the caller itself runs deep in the stack
                    args = DEPTH_MESSAGE
                else:
                    if not isinstance(args, list):
                        args = [args]
            else:
                args = _parse(text)
            if isinstance(args, str):
                self.release(request_id)
                refused.append((request_id, method, args))
            else:
                admitted.append((request_id, method, args))  # pyright: ignore[reportUnknownArgumentType]
        return admitted, refused

    def release(self, request_id: str) -> None:
        """The request was answered, cancelled or dropped."""
        with _process.lock:
            cost = self._costs.pop(request_id, 0)
            self._box[0] -= cost
            _process.held -= cost

    def release_many(self, request_ids: list[str]) -> None:
        """`release` of each of `request_ids`, under one hold of the lock."""
        costs = self._costs
        with _process.lock:
            freed = 0
            for request_id in request_ids:
                freed += costs.pop(request_id, 0)
            self._box[0] -= freed
            _process.held -= freed

    def release_all(self) -> None:
        with _process.lock:
            _process.held -= self._box[0]
            self._box[0] = 0
            self._costs.clear()


def _parse(text: str) -> list[Any] | str:
    # Depth is checked on the text, before parsing: a parse that recursed near the
    # interpreter's limit could run garbage-collector finalizers there, which then fail.
    deep = len(text) >= _SHALLOW_TEXT and text.count("[") + text.count("{") > MAX_ARGUMENT_DEPTH
    if deep and _nests_deeper_than(text, MAX_ARGUMENT_DEPTH - (not text.startswith("["))):
        return DEPTH_MESSAGE
    try:
        value = parse_json_text(text)
    except RecursionError:  # only if the caller itself runs deep in the stack
        return DEPTH_MESSAGE
    if isinstance(value, list):
        # Narrowed to `list[Unknown]`; annotated rather than `cast` (a call on every request).
        args: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return args
    return [value]


def _nests_deeper_than(text: str, limit: int) -> bool:
    """Whether the JSON `text` nests containers more than `limit` levels: strings and
    everything but brackets removed, then innermost pairs removed `limit` times (each pass
    C-speed; most texts are empty after a few)."""
    skeleton = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    for _ in range(limit):
        if not skeleton:
            return False
        skeleton = _EMPTY_PAIR.sub("", skeleton)
    return bool(skeleton)
