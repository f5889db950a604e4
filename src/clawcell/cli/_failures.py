"""How the command line reports failures: one line each, never a traceback.

`describe` words an exception as one line. `quiet_logging` makes the warnings clawcell logs
while a command runs (a background store sweep that failed, an MCP server that went away)
one line each too, each said once; `CLAWCELL_DEBUG=1` brings the tracebacks back.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Generator
from contextlib import contextmanager
from typing import Final, cast

from ..errors import ClawcellError

__all__ = ["DEBUG_VARIABLE", "debugging", "describe", "leaf", "quiet_logging"]

DEBUG_VARIABLE: Final = "CLAWCELL_DEBUG"
_BREAKS: Final = re.compile(r"\s*\n\s*")


def debugging() -> bool:
    """Whether `CLAWCELL_DEBUG` asks for tracebacks."""
    return os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")


def leaf(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups, else `exc` itself."""
    current: BaseException = exc
    while isinstance(current, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", current)
        if not group.exceptions:
            break
        current = group.exceptions[0]
    return cast(BaseException, current)


def describe(exc: BaseException) -> str:
    """`exc` as one line: a clawcell message as is, an `OSError` as `file: reason`."""
    exc = leaf(exc)
    if isinstance(exc, ClawcellError):
        text = exc.message
    elif isinstance(exc, OSError):
        reason = exc.strerror or str(exc) or type(exc).__name__
        text = f"{exc.filename}: {reason}" if exc.filename is not None else reason
    else:
        detail = str(exc)
        text = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return _BREAKS.sub(" ", text.strip())


class _OneLine(logging.Handler):
    """Writes `clawcell: <message>: <exception>` to the current stderr, each line once."""

    def __init__(self, debug: bool) -> None:
        super().__init__(logging.WARNING)
        self._debug = debug
        self._said: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = _BREAKS.sub(" ", record.getMessage().strip())
            if record.exc_info is not None and record.exc_info[1] is not None:
                line = f"{line}: {describe(record.exc_info[1])}"
            if line in self._said:
                return
            self._said.add(line)
            print(f"clawcell: {line}", file=sys.stderr, flush=True)
            if self._debug and record.exc_info is not None:
                print(logging.Formatter().formatException(record.exc_info), file=sys.stderr)
        except Exception:
            self.handleError(record)


@contextmanager
def quiet_logging(debug: bool) -> Generator[None]:
    """While the block runs, clawcell's log records go to stderr as single lines."""
    logger = logging.getLogger("clawcell")
    handler = _OneLine(debug)
    propagate, level = logger.propagate, logger.level
    logger.addHandler(handler)
    logger.propagate = False
    if logger.level == logging.NOTSET or logger.level > logging.WARNING:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
        logger.setLevel(level)
