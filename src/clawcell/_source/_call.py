"""The arguments of a model's `exec` or `wait` call, read into types at the edge.

A call arrives two ways: typed, from `CodeMode.exec(code, title=…)`, or as the argument object
a model API delivered (`CodeMode.call_tool`), which `read_call` and `read_exec_args` read into
the same `ExecArgs`. From there on every layer passes that value through; `ExecArgs.problem`
judges it once, for both ways, with the exact protocol messages of the shipped release
(`release-differences.md` §2):

* Empty or blank `code` (and a blank `runId`) **raise** `InputError`: the recorded release
  rejects the tool call itself.
* Every other argument problem is a message, answered with a `failed` / `invalid_input`
  envelope: `language`/`typecheck`, `restartSafe` not a boolean, `code` and `command` that
  differ, a `title` that is not a string of at most 120 characters (the release's schema
  rejects those titles; its wording is not recorded), and `code` over `MAX_SOURCE_BYTES`
  (1 MiB of UTF-8; a cap of this port, the release sets none).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any, Literal, cast

from .._lazy import value_class
from ..errors import InputError

__all__ = [
    "LANGUAGE_MESSAGE",
    "MAX_SOURCE_BYTES",
    "ExecArgs",
    "argument_object",
    "read_call",
    "read_exec_args",
    "read_wait_args",
]

LANGUAGE_MESSAGE = (
    "Code Mode accepts JavaScript only. Remove language and typecheck; "
    "use API.read(...) for tool types."
)
EMPTY_CODE_MESSAGE = "code or command must be a non-empty string."
CODE_COMMAND_MISMATCH_MESSAGE = "code and command must match when both are provided."
RESTART_SAFE_MESSAGE = "restartSafe must be a boolean."
TITLE_MESSAGE = "title must be a string of at most 120 characters."
EMPTY_RUN_ID_MESSAGE = "runId must be a non-empty string."
MAX_TITLE_CHARS = 120
MAX_SOURCE_BYTES = 1024 * 1024
SOURCE_SIZE_MESSAGE = (
    "code is {size} bytes of UTF-8; Code Mode accepts at most {limit} bytes of JavaScript. "
    "Keep data out of the source: fetch it with a tool or keep it with results.save()."
)


@value_class
class ExecArgs:
    """The arguments of one `exec` call, as the caller gave them (`problem` judges them)."""

    code: str
    title: str | None = None
    restart_safe: bool = False
    refused: str | None = None
    """The message of a call refused for what its argument object holds besides these
    fields (`code` and `command` that differ, `language`); `code` is empty then."""

    @classmethod
    def refusal(cls, message: str) -> ExecArgs:
        """A call refused at the edge with `message` (an `invalid_input` envelope)."""
        return cls(code="", refused=message)

    def problem(self) -> str | None:
        """The message of the `failed` / `invalid_input` envelope these arguments get, or
        `None` when they may run.

        Raises:
            InputError: `code` is not a non-empty string (the call itself is rejected).
        """
        if self.refused is not None:
            return self.refused
        # The typed face is called from untyped code too: a value of the wrong type is
        # judged as the same value in a model's argument object would be.
        code = cast(object, self.code)
        if not isinstance(code, str) or not code.strip():
            raise InputError(EMPTY_CODE_MESSAGE)
        too_large = _source_size_problem(code)
        if too_large is not None:
            return too_large
        if not isinstance(cast(object, self.restart_safe), bool):
            return RESTART_SAFE_MESSAGE
        title = cast(object, self.title)
        if title is not None and (not isinstance(title, str) or len(title) > MAX_TITLE_CHARS):
            return TITLE_MESSAGE
        return None


def _non_blank(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    return value if isinstance(value, str) and value.strip() else None


def read_exec_args(args: Mapping[str, Any]) -> ExecArgs:
    """A model's `exec` argument object as `ExecArgs` (judged later by `ExecArgs.problem`).

    `command` is the release's other name for `code`; both may be given when they match.
    """
    code, command = _non_blank(args, "code"), _non_blank(args, "command")
    if code is not None and command is not None and code != command:
        return ExecArgs.refusal(CODE_COMMAND_MISMATCH_MESSAGE)
    source = code if code is not None else command
    if source is None:
        return ExecArgs(code="")  # blank: `problem` raises, after the run's open check
    if "language" in args or "typecheck" in args:
        return ExecArgs.refusal(LANGUAGE_MESSAGE)
    return ExecArgs(
        code=source, title=args.get("title"), restart_safe=args.get("restartSafe", False)
    )


def _source_size_problem(source: str) -> str | None:
    """The message for a source over `MAX_SOURCE_BYTES` (D3, D4: a 100 MB cell used to
    exhaust guest memory, and large ones blocked the event loop in the checks)."""
    if len(source) * 3 <= MAX_SOURCE_BYTES:  # at most 3 UTF-8 bytes per UTF-16 unit
        return None
    # An ASCII string's length is its UTF-8 size: a huge one is measured without a copy.
    size = len(source) if source.isascii() else len(source.encode("utf-8", "surrogatepass"))
    if size <= MAX_SOURCE_BYTES:
        return None
    return SOURCE_SIZE_MESSAGE.format(size=size, limit=MAX_SOURCE_BYTES)


def read_wait_args(args: Mapping[str, Any]) -> str:
    """Read the trimmed `runId` (or `run_id`) of a `wait` call.

    Raises:
        InputError: The id is missing, not a string or blank.
    """
    run_id = args.get("runId", args.get("run_id"))
    if not isinstance(run_id, str) or not run_id.strip():
        raise InputError(EMPTY_RUN_ID_MESSAGE)
    return run_id.strip()


def argument_object(name: str, arguments: object) -> Mapping[str, Any]:
    """The call's arguments as a mapping; JSON text of an object is accepted too.

    Raises:
        InputError: anything that is not an object (or the JSON text of one).
    """
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):  # not JSON: refused below with the example
            arguments = _parse(arguments)
    if isinstance(arguments, Mapping):
        return cast(Mapping[str, Any], arguments)
    example = '{"runId": "cm_…"}' if name == "wait" else '{"code": "return 1"}'
    raise InputError(
        f"{name} arguments must be a JSON object such as {example}, got {type(arguments).__name__}."
    )


def _parse(text: str) -> object:
    try:
        return json.loads(text)
    except RecursionError:
        return text  # nested past the parser's depth: certainly not an argument object


def read_call(name: str, arguments: object) -> tuple[Literal["exec", "wait"], Mapping[str, Any]]:
    """The tool a model called (`exec` or `wait`) and its argument object.

    Raises:
        InputError: arguments that are not an object, or a tool that is neither.
    """
    args = argument_object(name, arguments)
    if name == "exec":
        return "exec", args
    if name == "wait":
        return "wait", args
    raise InputError(f"unknown Code Mode tool {name!r}; the tools are `exec` and `wait`.")
