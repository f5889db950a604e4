"""`exec` and `process` through a `Catalog`: results, sessions, limits, confinement, closing."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from clawcell import Tool
from clawcell.catalog import Catalog
from clawcell.errors import ConfigurationError, ToolError
from clawcell.tools import ShellSettings, shell

DATA = Path(__file__).parents[1] / "data" / "openclaw_process_schemas.json"


def _tools(root: Path, **settings: Any) -> list[Tool]:
    return shell(root, settings=ShellSettings(approval="never", **settings))


async def _call(catalog: Catalog, name: str, arguments: dict[str, Any]) -> Any:
    return await catalog.call(name, arguments)


def run(tools: list[Tool], *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """Make the calls in order on one event loop, then close the tools."""
    catalog = Catalog(tools)

    async def main() -> list[Any]:
        return [await _call(catalog, name, arguments) for name, arguments in calls]

    try:
        return asyncio.run(main())
    finally:
        _close(tools)


def _close(tools: list[Tool]) -> None:
    for tool in tools:
        if tool.on_close is not None:
            tool.on_close()


def test_a_finished_command_returns_its_exit_code_output_and_duration(root: Path) -> None:
    [done] = run(_tools(root), ("exec", {"command": "echo out; echo err >&2; exit 3"}))
    assert done["status"] == "failed"
    assert (done["exitCode"], done["exitReason"]) == (3, "exited")
    assert (done["stdout"], done["stderr"]) == ("out\n", "err\n")
    assert done["message"] == "The command exited with status 3."
    assert done["durationMs"] >= 0


def test_output_is_kept_in_a_bounded_ring_with_truncation_metadata(root: Path) -> None:
    [done] = run(_tools(root, max_output_chars=100), ("exec", {"command": "seq 1 1000"}))
    full = "".join(f"{n}\n" for n in range(1, 1001))
    assert done["status"] == "completed"
    assert done["stdout"] == full[-100:]
    assert (done["stdoutChars"], done["stdoutTruncated"]) == (len(full), True)
    assert done["stderrTruncated"] is False


def test_a_background_command_is_polled_by_cursor_and_paged_by_log(root: Path) -> None:
    tools = _tools(root)
    catalog = Catalog(tools)

    async def main() -> tuple[Any, ...]:
        started = await catalog.call(
            "exec", {"command": "printf 'a\\nb\\n'; read go; printf 'c\\n'", "background": True}
        )
        sid = started["sessionId"]
        first = await catalog.call("process", {"action": "poll", "sessionId": sid})
        while first["aggregated"] != "a\nb\n":  # output arrives asynchronously
            await asyncio.sleep(0.02)
            more = await catalog.call("process", {"action": "poll", "sessionId": sid})
            first = {**more, "aggregated": first["aggregated"] + more["aggregated"]}
        wrote = await catalog.call("process", {"action": "write", "sessionId": sid, "data": "go\n"})
        done = await catalog.call(
            "process", {"action": "poll", "sessionId": sid, "timeout": 20_000}
        )
        log = await catalog.call("process", {"action": "log", "sessionId": sid, "offset": 1})
        again = await catalog.call("process", {"action": "poll", "sessionId": sid, "cursor": 0})
        return started, first, wrote, done, log, again

    try:
        started, first, wrote, done, log, again = asyncio.run(main())
    finally:
        _close(tools)
    assert started["status"] == "running"
    assert first["status"] == "running" and first["stdinWritable"] is True
    assert wrote == {"status": "running", "sessionId": started["sessionId"], "bytes": 3,
                     "stdinWritable": True}  # fmt: skip
    assert (done["status"], done["exitCode"], done["aggregated"]) == ("completed", 0, "c\n")
    assert (log["output"], log["offset"], log["total"], log["totalLines"]) == ("b\nc\n", 1, 3, 3)
    assert again["aggregated"] == "a\nb\nc\n"


def test_an_unknown_session_is_a_failed_result_not_an_exception(root: Path) -> None:
    started, wrote, done = run(
        _tools(root),
        ("exec", {"command": "tr a-z A-Z", "background": True}),
        ("process", {"action": "write", "sessionId": "?", "data": "x"}),
        ("process", {"action": "list"}),
    )
    assert wrote["status"] == "failed"  # an unknown session is a result, not an exception
    assert "No session '?'" in wrote["error"]
    assert done["sessions"][0]["status"] == "running"
    assert started["status"] == "running"


def test_write_acknowledges_bytes_and_the_command_answers(root: Path) -> None:
    tools = _tools(root)
    catalog = Catalog(tools)

    async def main() -> tuple[Any, Any]:
        sid = (await catalog.call("exec", {"command": "tr a-z A-Z", "yieldMs": 50}))["sessionId"]
        wrote = await catalog.call(
            "process", {"action": "write", "sessionId": sid, "data": "hello\n", "eof": True}
        )
        return wrote, await catalog.call(
            "process", {"action": "poll", "sessionId": sid, "timeout": 20_000}
        )

    try:
        wrote, done = asyncio.run(main())
    finally:
        _close(tools)
    assert (wrote["bytes"], wrote["stdinWritable"]) == (6, False)
    assert (done["status"], done["aggregated"]) == ("completed", "HELLO\n")


def test_input_is_written_to_stdin_and_closed(root: Path) -> None:
    [done] = run(_tools(root), ("exec", {"command": "wc -l", "input": "a\nb\nc\n"}))
    assert done["stdout"].strip() == "3"


@pytest.mark.parametrize(
    ("command", "settings", "reason", "signal"),
    [
        ("while :; do :; done", {"cpu_seconds": 1}, "cpu_limit", "SIGXCPU"),
        ("head -c 65536 /dev/zero > big", {"file_size_bytes": 4096}, "file_size_limit", "SIGXFSZ"),
        ("sleep 30", {"timeout_seconds": 0.5}, "timeout", "SIGKILL"),
    ],
    ids=["cpu", "file-size", "timeout"],
)
def test_a_command_over_its_limits_is_killed_with_a_clear_result(
    root: Path, command: str, settings: dict[str, Any], reason: str, signal: str
) -> None:
    [done] = run(_tools(root, **settings), ("exec", {"command": command}))
    assert (done["status"], done["exitReason"], done["exitSignal"]) == ("failed", reason, signal)
    assert done["message"].startswith("The command ")


def test_kill_stops_the_process_group_and_remove_forgets_it(root: Path) -> None:
    started, killed, polled, removed, gone = _kill_sequence(root)
    assert started["status"] == "running"
    assert killed == {"status": "completed", "sessionId": started["sessionId"], "wasRunning": True}
    assert (polled["status"], polled["exitReason"]) == ("failed", "killed")
    assert removed["wasRunning"] is False
    assert gone == {"status": "completed", "sessions": []}


def _kill_sequence(root: Path) -> list[Any]:
    tools = _tools(root)
    catalog = Catalog(tools)

    async def main() -> list[Any]:
        started = await catalog.call("exec", {"command": "sleep 60 & sleep 60", "background": True})
        sid = started["sessionId"]
        out = [started]
        for action in ("kill", "poll", "remove", "list"):
            out.append(await catalog.call("process", {"action": action, "sessionId": sid}))
        return out

    try:
        return asyncio.run(main())
    finally:
        _close(tools)


def test_closing_the_tools_kills_every_running_command(root: Path) -> None:
    tools = shell(root, settings=ShellSettings(approval="never", sandbox="off"))
    [started] = run(tools, ("exec", {"command": "sleep 60", "background": True}))
    with pytest.raises(ProcessLookupError):
        os.kill(started["pid"], 0)  # killed by `on_close` and reaped
    [listed, again] = run(tools, ("process", {"action": "list"}), ("exec", {"command": "true"}))
    assert [s["exitReason"] for s in listed["sessions"]] == ["killed"]
    assert again["status"] == "completed"  # the next `CodeMode` over these tools starts anew


def test_at_most_max_sessions_run_at_once(root: Path) -> None:
    tools = _tools(root, max_sessions=1)
    catalog = Catalog(tools)

    async def main() -> None:
        await catalog.call("exec", {"command": "sleep 30", "background": True})
        await catalog.call("exec", {"command": "true"})

    try:
        with pytest.raises(ToolError, match=r"1 commands are already running \(the most is 1\)"):
            asyncio.run(main())
    finally:
        _close(tools)


def test_the_environment_is_scrubbed_and_env_adds_to_it(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWCELL_TEST_SECRET", "s3cret")
    [done] = run(
        _tools(root),
        ("exec", {"command": 'echo "${CLAWCELL_TEST_SECRET:-unset} $GREETING $HOME"',
                  "env": {"GREETING": "hi"}}),
    )  # fmt: skip
    assert done["stdout"] == f"unset hi {root.resolve()}\n"


@pytest.mark.parametrize(
    ("arguments", "match"),
    [
        ({"command": "true", "workdir": "../"}, "contains `..`"),
        ({"command": "true", "workdir": "missing"}, "is not a directory of the workspace"),
        ({"command": "true", "env": {"LD_PRELOAD": "x.so"}}, "loader variable 'LD_PRELOAD'"),
        ({"command": "true", "env": {"A B": "x"}}, "not a valid variable name"),
        ({"command": "   "}, "`command` is empty"),
        ({"command": "true", "timeoutSeconds": 10_000}, "over the ceiling"),
    ],
    ids=["parent", "missing", "loader", "name", "empty", "ceiling"],
)
def test_bad_exec_input_is_refused_clearly(
    root: Path, arguments: dict[str, Any], match: str
) -> None:
    with pytest.raises(ToolError, match=match):
        run(_tools(root), ("exec", arguments))


def test_a_workdir_inside_the_workspace_is_the_commands_directory(root: Path) -> None:
    (root / "sub").mkdir()
    [done] = run(_tools(root), ("exec", {"command": "pwd", "workdir": "sub"}))
    assert done["stdout"] == f"{(root / 'sub').resolve()}\n"


def test_bad_settings_are_configuration_errors(root: Path) -> None:
    with pytest.raises(ConfigurationError, match="`max_sessions` must be a positive number"):
        ShellSettings(max_sessions=0)
    with pytest.raises(ConfigurationError, match="`sandbox` must be one of"):
        # a configuration file can hold any string; the constructor is where it is refused
        ShellSettings(sandbox="maybe")  # pyright: ignore[reportArgumentType]


def test_exec_is_never_replay_safe_and_the_process_contract_is_discriminated(root: Path) -> None:
    exec_tool, process = shell(root)
    assert not exec_tool.replay_safe and not process.replay_safe
    schema = process.output_schema or {}
    assert schema["x-openclaw-input-discriminator"]["inputProperty"] == "action"


def test_each_process_branch_carries_the_fields_the_original_declares(root: Path) -> None:
    original = json.loads(DATA.read_text())["process_output"]
    ours = shell(root)[1].output_schema or {}
    theirs_map = original["x-openclaw-input-discriminator"]["mapping"]
    ours_map = ours["x-openclaw-input-discriminator"]["mapping"]
    assert set(ours_map) <= set(theirs_map)
    for action, index in ours_map.items():
        their_branches = original["anyOf"][theirs_map[action]]["anyOf"]
        our_branches = ours["anyOf"][index]["anyOf"]
        failed, their_failed = our_branches[0], their_branches[0]
        assert failed["required"] == their_failed["required"] == ["status", "error"]
        assert their_failed["properties"].items() <= failed["properties"].items()
        ours_fields: set[str] = {key for b in our_branches for key in b["properties"]}
        for branch in their_branches:
            assert set(branch["required"]) - {"name"} <= ours_fields, (action, branch["required"])


def test_a_session_of_an_earlier_host_is_reported_lost_never_running(root: Path) -> None:
    [started] = run(_tools(root), ("exec", {"command": "sleep 30", "background": True}))
    restarted = _tools(root)  # a new host process has a new table of sessions
    [polled] = run(restarted, ("process", {"action": "poll", "sessionId": started["sessionId"]}))
    assert polled["status"] == "failed"
    assert (polled["effectStatus"], polled["sessionId"]) == ("unknown", started["sessionId"])
    assert "belonged to an earlier host process" in polled["error"]
