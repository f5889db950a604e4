"""Several `clawcell serve` worker processes on one PostgreSQL schema, any request to any
worker (loopback only): the history a turn sends its model, one turn per session, Stop sent to
another worker, the shared token from `${env:…}`, and a worker SIGKILLed mid-turn."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from clawcell.ui._security import Secrets
from tests.ui._worker_agent import DSN, LEASE, SCHEMA, TALK

TOKEN = "one-token-for-every-worker-0123456789"
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Worker:
    process: subprocess.Popen[str]
    url: str

    def client(self) -> httpx.Client:
        headers = {"authorization": f"Bearer {TOKEN}", "x-csrf-token": Secrets(token=TOKEN).csrf}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


@pytest.fixture
def workers(postgres_dsn: str, postgres_schema: str, tmp_path: Path) -> Generator[list[Worker]]:
    """Three `clawcell serve` workers on one schema, each on its own loopback port; the
    token comes from `${env:…}` in their shared config file; turn leases last 3 s."""
    config = tmp_path / "clawcell.toml"
    config.write_text(
        '[ui]\nagent = "tests.ui._worker_agent:make_agent"\nport = 0\n'
        'token = "${env:CLAWCELL_TEST_UI_TOKEN}"\n'
    )
    env = {**os.environ, DSN: postgres_dsn, SCHEMA: postgres_schema, LEASE: "3",
           "CLAWCELL_TEST_UI_TOKEN": TOKEN, "PYTHONPATH": str(ROOT)}  # fmt: skip
    started: list[Worker] = []
    try:
        for _ in range(3):
            process = subprocess.Popen(
                [sys.executable, "-m", "clawcell", "serve", "--config", str(config)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert process.stdout is not None
            line = process.stdout.readline()
            match = re.match(r"(http://[^/]+)/\?token=(.*)", line.strip())
            assert match is not None, line
            assert match.group(2) == TOKEN  # the variable's value, never its placeholder
            started.append(Worker(process, match.group(1)))
        yield started
    finally:
        for worker in started:
            if worker.process.poll() is None:
                worker.process.terminate()
        for worker in started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.process.wait(timeout=30)
            if worker.process.poll() is None:
                worker.process.kill()
                worker.process.wait()
            if worker.process.stdout is not None:
                worker.process.stdout.close()


def _events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    name = ""
    for line in lines:
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield name, json.loads(line.removeprefix("data: "))


def _turn(worker: Worker, session: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    with worker.client() as client:
        body = {"text": text}
        with client.stream("POST", f"/api/sessions/{session}/turns", json=body) as response:
            assert response.status_code == 200
            return list(_events(response.iter_lines()))


def _reply(events: list[tuple[str, dict[str, Any]]]) -> str:
    texts = [str(data["event"].get("content")) for name, data in events if name == "reply"]
    assert texts, events
    return texts[-1]


def test_turns_on_workers_a_b_a_each_send_the_model_every_earlier_turn(
    workers: list[Worker],
) -> None:
    a, b, _ = workers
    _turn(a, "s", "first")
    _turn(b, "s", "second")
    assert "saw: first | second | third" in _reply(_turn(a, "s", "third"))


def _live(worker: Worker, session: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """A page's live stream of the session on `worker`: `(name, data)` pairs, forever."""
    with (
        worker.client() as client,
        client.stream("GET", f"/api/sessions/{session}/live") as response,
    ):
        assert response.status_code == 200
        yield from _events(response.iter_lines())


def _kind(name: str, data: dict[str, Any]) -> str:
    """A live pair's kind: the `live` message's own type, else the SSE event name."""
    return str(data["event"]["type"]) if name == "live" else name


def test_stop_sent_to_another_worker_ends_the_turn_and_a_queued_message_follows_it(
    workers: list[Worker],
) -> None:
    a, b, c = workers
    with (
        a.client() as client,
        client.stream("POST", "/api/sessions/q/turns", json={"text": "hold on"}) as response,
    ):
        lines = response.iter_lines()
        for name, _ in _events(lines):
            if name == "cell_output":
                break
        with c.client() as other:  # the session's turn runs on A: C queues it, visibly
            queued = other.post("/api/sessions/q/turns", json={"text": "next"})
            assert queued.status_code == 202 and queued.json()["queued"]["text"] == "next"
            with b.client() as third:
                assert [m["text"] for m in third.get("/api/sessions/q/queue").json()["queue"]] == [
                    "next"
                ]
            live = _live(c, "q")
            assert _kind(*next(live)) == "queue"  # C's page follows the session from here on
            with b.client() as third:
                assert third.post("/api/sessions/q/stop").json() == {"stopped": True}
            names = [name for name, _ in _events(lines)]
            assert names[-2:] == ["turn_stopped", "done"]
    follow: list[tuple[str, dict[str, Any]]] = []
    ends = 0
    for name, data in live:  # on C: the stopped turn's end, then the queued one, relayed
        follow.append((name, data))
        ends += _kind(name, data) == "turn_end"
        if ends == 2:
            break
    assert "saw: hold on | next" in _reply(follow)
    with b.client() as client:
        history = client.get("/api/sessions/q/history").json()
    roles = [m["role"] for m in history]
    assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]
    assert history[3]["stopReason"] == "aborted"  # the first turn's end, before the second


def _until(live: Iterator[tuple[str, dict[str, Any]]], kind: str) -> list[str]:
    """The kinds of `live`'s pairs up to and including the first `kind`."""
    seen: list[str] = []
    for name, data in live:
        seen.append(_kind(name, data))
        if seen[-1] == kind:
            return seen
    raise AssertionError(f"the live stream ended before {kind!r}: {seen}")


def _mended(client: httpx.Client, session: str) -> list[dict[str, Any]]:
    """The session's history once the worker that ended a dead turn mended the transcript:
    it tells the pages first (`turn_end`) and then stores the partial reply, so a read right
    after `turn_end` may come before it. Bounded: a mend that never comes fails the test."""
    deadline = time.monotonic() + 30
    while True:
        history: list[dict[str, Any]] = client.get(f"/api/sessions/{session}/history").json()
        if any(m["role"] == "assistant" for m in history) or time.monotonic() > deadline:
            return history
        time.sleep(0.05)


def test_a_worker_killed_mid_cell_has_its_turn_ended_by_another_and_the_page_is_told(
    workers: list[Worker],
) -> None:
    a, b, c = workers
    with (
        a.client() as client,
        client.stream("POST", "/api/sessions/k/turns", json={"text": "hold still"}) as response,
    ):
        for name, _ in _events(response.iter_lines()):
            if name == "cell_output":
                break
        live = _live(b, "k")  # a page on B follows the turn A runs: its backlog, then live
        assert "cell_output" in _until(live, "cell_output")
        a.process.send_signal(signal.SIGKILL)
        a.process.wait()
    # Nobody sends anything: the sweep of B or C ends the turn once A's heartbeat lapsed.
    told: list[tuple[str, dict[str, Any]]] = []
    for name, data in live:
        told.append((name, data))
        if _kind(name, data) == "turn_end":
            break
    errors = [data for name, data in told if name == "error"]
    assert [e["event"]["code"] for e in errors] == ["worker_lost"]
    redrawn = [op for op in errors[0]["ops"] if op["op"] == "replace"]  # the held cell's card
    assert len(redrawn) == 1 and "status-failed" in redrawn[0]["html"]
    assert told[-1][1]["event"]["state"] == "interrupted"
    assert "saw: hold still | are you there" in _reply(_turn(b, "k", "are you there"))
    with c.client() as client:
        history = client.get("/api/sessions/k/history").json()
    assert [(m["role"], m.get("stopReason")) for m in history] == [
        ("user", None),
        ("assistant", "error"),  # the dead worker's turn, ended by another
        ("user", None),
        ("assistant", "stop"),
    ]
    assert "[interrupted: the worker running this turn stopped" in str(history[1]["content"])


def test_a_worker_killed_mid_reply_leaves_what_it_streamed_for_every_page_and_the_transcript(
    workers: list[Worker],
) -> None:
    a, b, c = workers
    with (
        a.client() as client,
        client.stream("POST", "/api/sessions/r/turns", json={"text": "talk to me"}) as response,
    ):
        for name, data in _events(response.iter_lines()):
            if name == "text_delta" and TALK.strip() in json.dumps(data):
                break
        with b.client() as other:  # a reload on B mid-reply: the page follows A's turn
            page = other.get("/?session=r").text
        match = re.search(r'data-live-turn="(t[^"]+)"', page)
        assert match is not None, page
        live = _live(c, "r")
        relayed: list[str] = []
        for name, data in live:  # C relays what A streamed so far
            relayed.append(json.dumps(data))
            if name == "text_delta" and TALK.strip() in relayed[-1]:
                break
        a.process.send_signal(signal.SIGKILL)
        a.process.wait()
    assert _until(live, "turn_end")[-2:] == ["done", "turn_end"]
    with b.client() as client:
        history = _mended(client, "r")
        assert [(m["role"], m.get("stopReason")) for m in history] == [
            ("user", None),
            ("assistant", "error"),
        ]
        assert TALK.strip() in str(history[1]["content"])  # the partial reply, kept
        assert client.get("/api/sessions/r/queue").json() == {"queue": []}
