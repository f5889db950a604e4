"""The SQL of the job stores, shared by SQLite and PostgreSQL (`?` placeholders; the
PostgreSQL store turns them into `%s`). Booleans are integers 0/1 in both."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final, LiteralString, cast

from ._job_store import LOST, JobRecord, JobRun

__all__ = [
    "ACTIVE",
    "CLAIM_OCCURRENCE",
    "CLAIM_QUEUED",
    "COUNT_RUNS",
    "DELETE_JOB",
    "DELETE_JOB_RUNS",
    "DUE",
    "EXPIRE",
    "EXPIRED",
    "FIND_JOB",
    "FINISH",
    "GET_JOB",
    "GET_RUN",
    "INSERT_RUN",
    "LIST_JOBS",
    "LIST_RUNS",
    "QUEUED",
    "RENEW",
    "SAVE_JOB",
    "TABLES",
    "TRIM",
    "finish_params",
    "job_params",
    "job_row",
    "lost_params",
    "lost_run",
    "run_params",
    "run_row",
]

TABLES: Final[tuple[LiteralString, ...]] = (
    """CREATE TABLE IF NOT EXISTS automation_jobs (
        id TEXT PRIMARY KEY,
        spec TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        next_due_at DOUBLE PRECISION,
        removed INTEGER NOT NULL,
        declaration_key TEXT UNIQUE,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS automation_runs (
        run_id TEXT PRIMARY KEY,
        job_id TEXT NOT NULL,
        run_trigger TEXT NOT NULL,
        status TEXT NOT NULL,
        due_at DOUBLE PRECISION,
        queued_at DOUBLE PRECISION NOT NULL,
        started_at DOUBLE PRECISION,
        ended_at DOUBLE PRECISION,
        worker TEXT,
        lease_expires_at DOUBLE PRECISION,
        envelope_status TEXT,
        summary TEXT,
        error TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS automation_runs_by_job ON automation_runs (job_id, queued_at)",
    "CREATE INDEX IF NOT EXISTS automation_runs_by_status ON automation_runs (status)",
)
_JOB_COLUMNS: Final = (
    "id, spec, enabled, next_due_at, removed, declaration_key, created_at, updated_at"
)
_RUN_COLUMNS: Final = (
    "run_id, job_id, run_trigger, status, due_at, queued_at, started_at, ended_at, worker, "
    "lease_expires_at, envelope_status, summary, error"
)
SAVE_JOB: Final = (
    f"INSERT INTO automation_jobs ({_JOB_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, enabled = excluded.enabled, "
    "next_due_at = excluded.next_due_at, removed = excluded.removed, "
    "declaration_key = excluded.declaration_key, updated_at = excluded.updated_at"
)
GET_JOB: Final = f"SELECT {_JOB_COLUMNS} FROM automation_jobs WHERE id = ?"
FIND_JOB: Final = f"SELECT {_JOB_COLUMNS} FROM automation_jobs WHERE declaration_key = ?"
LIST_JOBS: Final = (
    f"SELECT {_JOB_COLUMNS} FROM automation_jobs WHERE removed = 0 ORDER BY created_at, id"
)
DELETE_JOB: Final = "DELETE FROM automation_jobs WHERE id = ?"
DELETE_JOB_RUNS: Final = "DELETE FROM automation_runs WHERE job_id = ?"
DUE: Final = (
    f"SELECT {_JOB_COLUMNS} FROM automation_jobs WHERE enabled = 1 AND removed = 0 "
    "AND next_due_at IS NOT NULL AND next_due_at <= ? ORDER BY next_due_at, id"
)
CLAIM_OCCURRENCE: Final = (
    "UPDATE automation_jobs SET next_due_at = ? "
    "WHERE id = ? AND next_due_at = ? AND enabled = 1 AND removed = 0"
)
INSERT_RUN: Final = (
    f"INSERT INTO automation_runs ({_RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
QUEUED: Final = (
    f"SELECT {_RUN_COLUMNS} FROM automation_runs WHERE status = 'queued' ORDER BY queued_at, run_id"
)
CLAIM_QUEUED: Final = (
    "UPDATE automation_runs SET status = 'running', worker = ?, started_at = ?, "
    "lease_expires_at = ? WHERE run_id = ? AND status = 'queued'"
)
RENEW: Final = (
    "UPDATE automation_runs SET lease_expires_at = ? "
    "WHERE run_id = ? AND status = 'running' AND worker = ?"
)
FINISH: Final = (
    "UPDATE automation_runs SET status = ?, ended_at = ?, envelope_status = ?, summary = ?, "
    "error = ? WHERE run_id = ? AND status = 'running' AND worker = ?"
)
TRIM: Final = (
    "DELETE FROM automation_runs WHERE job_id = ? AND status NOT IN ('queued', 'running') "
    "AND run_id NOT IN (SELECT run_id FROM automation_runs WHERE job_id = ? "
    "AND status NOT IN ('queued', 'running') ORDER BY queued_at DESC, run_id DESC LIMIT ?)"
)
EXPIRED: Final = (
    f"SELECT {_RUN_COLUMNS} FROM automation_runs WHERE status = 'running' AND lease_expires_at < ?"
)
EXPIRE: Final = (
    "UPDATE automation_runs SET status = 'lost', ended_at = ?, error = ? "
    "WHERE run_id = ? AND status = 'running' AND lease_expires_at < ?"
)
GET_RUN: Final = f"SELECT {_RUN_COLUMNS} FROM automation_runs WHERE run_id = ?"
LIST_RUNS: Final = (
    f"SELECT {_RUN_COLUMNS} FROM automation_runs WHERE job_id = ? "
    "ORDER BY queued_at DESC, run_id DESC LIMIT ? OFFSET ?"
)
COUNT_RUNS: Final = "SELECT count(*) FROM automation_runs WHERE job_id = ?"
ACTIVE: Final = (
    "SELECT count(*) FROM automation_runs WHERE job_id = ? AND status IN ('queued', 'running')"
)


def job_params(job: JobRecord) -> tuple[Any, ...]:
    """The `SAVE_JOB` parameters of a job."""
    return (
        job.id,
        json.dumps(job.spec, separators=(",", ":")),
        int(job.enabled),
        job.next_due_at,
        int(job.removed),
        job.declaration_key,
        job.created_at,
        job.updated_at,
    )


def job_row(row: Sequence[Any]) -> JobRecord:
    """A job from a row of `_JOB_COLUMNS`."""
    return JobRecord(
        id=str(row[0]),
        spec=cast(dict[str, Any], json.loads(row[1])),
        enabled=bool(row[2]),
        next_due_at=None if row[3] is None else float(row[3]),
        removed=bool(row[4]),
        declaration_key=row[5],
        created_at=float(row[6]),
        updated_at=float(row[7]),
    )


def run_params(run: JobRun) -> tuple[Any, ...]:
    """The `INSERT_RUN` parameters of a run."""
    return (
        run.run_id, run.job_id, run.trigger, run.status, run.due_at, run.queued_at,
        run.started_at, run.ended_at, run.worker, run.lease_expires_at, run.envelope_status,
        run.summary, run.error,
    )  # fmt: skip


def finish_params(run: JobRun) -> tuple[Any, ...]:
    """The `FINISH` parameters of a run that ended."""
    return (
        run.status, run.ended_at, run.envelope_status, run.summary, run.error, run.run_id,
        run.worker,
    )  # fmt: skip


def run_row(row: Sequence[Any]) -> JobRun:
    """A run from a row of `_RUN_COLUMNS`."""
    return JobRun(
        run_id=str(row[0]),
        job_id=str(row[1]),
        trigger=row[2],
        status=row[3],
        due_at=row[4],
        queued_at=float(row[5]),
        started_at=row[6],
        ended_at=row[7],
        worker=row[8],
        lease_expires_at=row[9],
        envelope_status=row[10],
        summary=row[11],
        error=row[12],
    )


def lost_run(run: JobRun, now: float) -> JobRun:
    """`run` as `expire_runs` marked it."""
    return replace(run, status="lost", ended_at=now, error=LOST)


def lost_params(run: JobRun, now: float) -> tuple[Any, ...]:
    """The `EXPIRE` parameters of a run found lost at `now`."""
    return (now, LOST, run.run_id, now)
