"""The Jobs panel: jobs listed with their schedule, next and last run; pause / resume / run
now through the `automations` tool, with CSRF, clear refusals, and nothing changed by bad
input."""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from starlette.testclient import TestClient

from clawcell import Tool
from clawcell.automations import PayloadRunner, Scheduler
from clawcell.store import MemoryStore, job_store_for
from clawcell.tools import automations
from clawcell.ui import UiSettings, create_app
from clawcell.ui._jobs_panel import schedule_words
from tests.ui._client import BASE, TOKEN, client, csrf
from tests.ui._fakes import Documents, FakeAgent


@dataclass(frozen=True, kw_only=True)
class Jobs:
    """A logged-in client over a UI whose Jobs panel acts through `tool`."""

    http: TestClient
    tool: Tool
    store: MemoryStore

    def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """Call `function` on the app's event loop (where the stores live)."""
        assert self.http.portal is not None, "use the client as a context manager"
        return self.http.portal.call(function, *args)

    def call(self, action: str, **params: Any) -> Any:
        return self.run(self.tool.execute, {"action": action, **params})

    def add(self, name: str, schedule: dict[str, Any], **extra: Any) -> str:
        job = {
            "name": name,
            "schedule": schedule,
            "payload": {"kind": "cell", "code": "return 6 * 7;"},
        }
        return str(self.call("add", job={**job, **extra})["id"])

    def act(self, job_id: str, action: str, *, token: bool = True) -> Any:
        headers = {"x-csrf-token": csrf(self.http)} if token else {}
        return self.http.post(f"/api/jobs/{job_id}/{action}", headers=headers)


@contextmanager
def _jobs(*, given: bool = True) -> Generator[Jobs]:
    store = MemoryStore()
    [tool] = automations(store)
    agent = FakeAgent(tools=[] if given else [tool])
    app = create_app(agent, UiSettings(token=TOKEN, canvas_port=8788), documents=Documents(),
                     automations=tool if given else None)  # fmt: skip
    with TestClient(app, base_url=BASE) as http:
        assert http.get(f"/?token={TOKEN}").status_code == 200
        yield Jobs(http=http, tool=tool, store=store)


HOURLY = {"kind": "every", "everyMs": 3_600_000}


def test_the_page_lists_each_job_with_schedule_next_and_last_run() -> None:
    with _jobs() as jobs:
        job_id = jobs.add(
            "nightly report", {"kind": "cron", "expr": "0 3 * * *", "tz": "Europe/Paris"}
        )
        jobs.add("heartbeat", {"kind": "every", "everyMs": 90_000}, enabled=False)
        page = jobs.http.get("/jobs").text
    assert '<a href="/jobs" aria-current="page">Jobs</a>' in page
    card = page[page.index(f'id="job-{job_id}"') :]
    assert '<h3 id="job-' in card and "nightly report" in card
    assert "<dd>cron 0 3 * * * (Europe/Paris)</dd>" in card
    assert re.search(
        r"<dt>Next run</dt><dd><time datetime=[^>]+>[^<]+ UTC</time> <span class=\"hint\">in \d+ ",
        card,
    )
    assert "never ran" in card
    assert "<dd>every 1 min 30 s</dd>" in page
    assert 'job-state-paused">paused<' in page
    assert "<strong>2</strong> jobs" in page and "<strong>1</strong> paused" in page


def test_pause_and_resume_change_the_job_and_redraw_its_card() -> None:
    with _jobs() as jobs:
        job_id = jobs.add("report", HOURLY)
        paused = jobs.act(job_id, "pause")
        assert paused.status_code == 200
        body = paused.json()
        assert body["job"]["enabled"] is False and body["message"].startswith("Paused report")
        assert 'data-action="resume">Resume</button>' in body["html"]
        assert jobs.call("get", jobId=job_id)["enabled"] is False
        resumed = jobs.act(job_id, "resume").json()
        assert resumed["job"]["enabled"] is True
        assert 'data-action="pause"' in resumed["html"]
        assert jobs.call("get", jobId=job_id)["enabled"] is True


def test_run_now_queues_a_run_that_a_worker_then_finishes() -> None:
    with _jobs() as jobs:
        job_id = jobs.add("answer", HOURLY)
        queued = jobs.act(job_id, "run").json()
        assert queued["result"]["enqueued"] is True
        assert queued["job"]["lastRun"]["status"] == "queued"
        assert 'class="run-status run-queued">queued<' in queued["html"]
        again = jobs.act(job_id, "run").json()
        assert again["message"] == "answer is already running; no second run was queued."
        scheduler = Scheduler(
            job_store_for(jobs.store), PayloadRunner(tools=[], session_store=jobs.store)
        )

        async def work() -> None:
            await scheduler.tick()
            await scheduler.drain()

        jobs.run(work)
        page = jobs.http.get("/jobs").text
        assert 'class="run-status run-ok">succeeded<' in page
        assert '<pre class="run-summary">42</pre>' in page
        listed = jobs.http.get("/api/jobs").json()
        assert listed["jobs"][0]["lastRun"]["status"] == "ok"


def test_an_unknown_job_is_a_404_naming_it_and_changes_nothing() -> None:
    with _jobs() as jobs:
        job_id = jobs.add("report", HOURLY)
        before = jobs.http.get("/api/jobs").json()
        response = jobs.act("job_000000000000", "pause")
        assert response.status_code == 404
        assert response.json() == {
            "error": "No automation job 'job_000000000000'; `list` shows the jobs.",
            "code": "not_found",
        }
        assert jobs.http.get("/api/jobs").json() == before
        assert jobs.call("get", jobId=job_id)["enabled"] is True


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/api/jobs/job_1/delete", 404, "no job action 'delete'; use one of pause, resume, run."),
        (
            "/api/jobs/a%20b/pause",
            400,
            "job id 'a b' is not allowed; job ids look like `job_1a2b3c4d5e6f`.",
        ),
    ],
)
def test_a_bad_action_or_id_is_refused(path: str, status: int, error: str) -> None:
    with _jobs() as jobs:
        jobs.add("report", HOURLY)
        before = jobs.http.get("/api/jobs").json()
        response = jobs.http.post(path, headers={"x-csrf-token": csrf(jobs.http)})
        assert (response.status_code, response.json()) == (status, {"error": error})
        assert jobs.http.get("/api/jobs").json() == before


def test_actions_need_the_csrf_token() -> None:
    with _jobs() as jobs:
        job_id = jobs.add("report", HOURLY)
        assert jobs.act(job_id, "pause", token=False).status_code == 403
        assert jobs.call("get", jobId=job_id)["enabled"] is True


def test_the_agents_own_automations_tool_is_used_when_none_is_given() -> None:
    with _jobs(given=False) as jobs:
        jobs.add("found on the agent", HOURLY)
        assert "found on the agent" in jobs.http.get("/jobs").text


def test_without_automations_the_panel_says_how_to_configure_them() -> None:
    test_client = client(FakeAgent())
    assert "Automations are not configured" in test_client.get("/jobs").text
    response = test_client.post(
        "/api/jobs/job_1/pause", headers={"x-csrf-token": csrf(test_client)}
    )
    assert response.status_code == 404
    assert "automations are not configured" in response.json()["error"]
    assert test_client.get("/api/jobs").status_code == 404


@pytest.mark.parametrize(
    ("schedule", "words"),
    [
        ({"kind": "every", "everyMs": 3_600_000}, "every 1 h"),
        ({"kind": "every", "everyMs": 90_500}, "every 1 min 30 s 500 ms"),
        ({"kind": "cron", "expr": "*/5 * * * *", "tz": "UTC"}, "cron */5 * * * * (UTC)"),
        ({"kind": "at", "at": "2026-12-24T18:00:00+01:00"}, "once at 2026-12-24 17:00:00 UTC"),
    ],
)
def test_schedules_read_as_words(schedule: dict[str, Any], words: str) -> None:
    assert schedule_words(schedule) == words
