"""Job specifications: what `add`/`update` accept, and the JSON the tool answers with."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final, cast

from ...automations import check_schedule, next_after
from ...errors import ToolError
from ...store import JobRecord, JobRun

__all__ = [
    "DEFAULT_MAX_HISTORY",
    "job_json",
    "job_owner",
    "job_summary",
    "new_job",
    "run_json",
    "updated_job",
]

DEFAULT_MAX_HISTORY: Final = 50
MAX_HISTORY: Final = 1_000
_SPEC_KEYS: Final = (
    "name", "schedule", "payload", "enabled", "catchUp", "maxHistory", "declarationKey",
)  # fmt: skip
_PATCH_KEYS: Final = ("name", "schedule", "payload", "enabled", "catchUp", "maxHistory")


def _invalid(message: str) -> ToolError:
    return ToolError(message, code="invalid_job")


_UNSTORABLE: Final = re.compile("[\x00\ud800-\udfff]")


def _check_text(value: object, path: str) -> None:
    """Refuse a NUL or a lone surrogate anywhere in a job (no store keeps them alike)."""
    if isinstance(value, str):
        found = _UNSTORABLE.search(value)
        if found is not None:
            raise ToolError(
                f"`{path}` {value!r} holds the character {found.group()!r} (a NUL or a lone "
                "surrogate), which a job may not hold; remove it.",
                code="invalid_input",
            )
    elif isinstance(value, Mapping):
        for key, item in cast(Mapping[str, Any], value).items():
            _check_text(key, path)
            _check_text(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(cast(list[Any], value)):
            _check_text(item, f"{path}[{index}]")


def _check_keys(value: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise _invalid(f"Unknown key {unknown[0]!r} in `{where}`; known keys: {', '.join(known)}.")


def _payload(payload: object) -> dict[str, Any]:
    if not isinstance(payload, Mapping):
        raise _invalid(f"`payload` must be an object, got {payload!r}.")
    body = cast(Mapping[str, Any], payload)
    if body.get("kind") == "cell":
        _check_keys(body, ("kind", "code", "timeoutMs", "maxToolCalls"), "payload")
        if not isinstance(body.get("code"), str) or not body["code"].strip():
            raise _invalid("A cell payload needs `code`, the JavaScript to run.")
        for key in ("timeoutMs", "maxToolCalls"):
            value = body.get(key, 1)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise _invalid(f"`payload.{key}` must be a non-negative integer, got {value!r}.")
        return dict(body)
    if body.get("kind") == "agentTurn":
        _check_keys(body, ("kind", "prompt", "sessionId"), "payload")
        if not isinstance(body.get("prompt"), str) or not body["prompt"].strip():
            raise _invalid("An agentTurn payload needs `prompt`, the message to send.")
        return dict(body)
    raise _invalid(f"`payload.kind` must be 'cell' or 'agentTurn', got {body.get('kind')!r}.")


def _options(spec: dict[str, Any]) -> dict[str, Any]:
    if spec.get("catchUp", "one") not in ("one", "skip"):
        raise _invalid(f"`catchUp` must be 'one' or 'skip', got {spec['catchUp']!r}.")
    history = spec.get("maxHistory", DEFAULT_MAX_HISTORY)
    if not isinstance(history, int) or isinstance(history, bool) or not 1 <= history <= MAX_HISTORY:
        raise _invalid(f"`maxHistory` must be an integer in 1..{MAX_HISTORY}, got {history!r}.")
    if not isinstance(spec.get("name", ""), str):
        raise _invalid(f"`name` must be a string, got {spec['name']!r}.")
    return {
        "name": spec.get("name") or "",
        "schedule": check_schedule(cast(Mapping[str, Any], spec.get("schedule") or {})),
        "payload": _payload(spec.get("payload")),
        "catchUp": spec.get("catchUp", "one"),
        "maxHistory": history,
    }


def job_owner(job: JobRecord) -> str:
    """The session that owns `job` (jobs stored before owners existed: `"default"`)."""
    owner = job.spec.get("owner")
    return owner if isinstance(owner, str) else "default"


def _first(schedule: dict[str, Any], now: float) -> float:
    first = next_after(schedule, now, anchor=now)
    if first is None:
        raise ToolError(
            f"The schedule {schedule!r} has no occurrence between now and the end of the year "
            "9999; give a time in the future.",
            code="invalid_schedule",
        )
    return first


def new_job(job: object, now: float, *, owner: str = "default") -> JobRecord:
    """A new job from the `add` input's `job` object, owned by session `owner`.

    Raises:
        ToolError: `invalid_job` / `invalid_schedule`, naming the field.
    """
    if not isinstance(job, Mapping):
        raise _invalid(f"`job` must be an object, got {job!r}.")
    spec = dict(cast(Mapping[str, Any], job))
    _check_keys(spec, _SPEC_KEYS, "job")
    _check_text(spec, "job")
    enabled = spec.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _invalid(f"`enabled` must be true or false, got {enabled!r}.")
    key = spec.get("declarationKey")
    if key is not None and (not isinstance(key, str) or not key):
        raise _invalid(f"`declarationKey` must be a non-empty string, got {key!r}.")
    options: dict[str, Any] = {**_options(spec), "anchor": now, "owner": owner}
    first = _first(options["schedule"], now)
    return JobRecord(
        id=f"job_{uuid.uuid4().hex[:12]}",
        spec=options,
        enabled=enabled,
        next_due_at=first,
        declaration_key=key,
        created_at=now,
        updated_at=now,
    )


def updated_job(job: JobRecord, patch: object, now: float) -> JobRecord:
    """`job` with `patch` applied (a new schedule restarts its occurrences from now)."""
    if not isinstance(patch, Mapping):
        raise _invalid(f"`patch` must be an object, got {patch!r}.")
    changes = dict(cast(Mapping[str, Any], patch))
    _check_keys(changes, _PATCH_KEYS, "patch")
    _check_text(changes, "patch")
    enabled = changes.pop("enabled", job.enabled)
    if not isinstance(enabled, bool):
        raise _invalid(f"`enabled` must be true or false, got {enabled!r}.")
    spec: dict[str, Any] = {**_options({**job.spec, **changes}), "anchor": job.spec["anchor"],
                            "owner": job_owner(job)}  # fmt: skip
    next_due = job.next_due_at
    if "schedule" in changes:
        spec["anchor"] = now
        next_due = _first(spec["schedule"], now)
    return JobRecord(
        id=job.id,
        spec=spec,
        enabled=enabled,
        next_due_at=next_due,
        declaration_key=job.declaration_key,
        created_at=job.created_at,
        updated_at=now,
    )


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):  # stored before schedules were held to 9999
        return None


def job_json(job: JobRecord) -> dict[str, Any]:
    """The full job as `get`, `update`, `pause` and `resume` answer it."""
    spec = job.spec
    shown: dict[str, Any] = {
        "id": job.id,
        "name": spec["name"],
        "enabled": job.enabled,
        "schedule": spec["schedule"],
        "payload": spec["payload"],
        "catchUp": spec["catchUp"],
        "maxHistory": spec["maxHistory"],
        "createdAtMs": _ms(job.created_at),
        "updatedAtMs": _ms(job.updated_at),
        "nextRunAtMs": _ms(job.next_due_at),
    }
    if job.declaration_key is not None:
        shown["declarationKey"] = job.declaration_key
    return shown


def job_summary(job: JobRecord) -> dict[str, Any]:
    """One entry of `list`."""
    return {
        "id": job.id,
        "name": job.spec["name"],
        "enabled": job.enabled,
        "scheduleKind": job.spec["schedule"]["kind"],
        "nextRunAtMs": _ms(job.next_due_at),
        "nextRunAt": _iso(job.next_due_at),
    }


def run_json(run: JobRun) -> dict[str, Any]:
    """One entry of `runs`."""
    return {
        "runId": run.run_id,
        "jobId": run.job_id,
        "trigger": run.trigger,
        "status": run.status,
        "dueAtMs": _ms(run.due_at),
        "queuedAtMs": _ms(run.queued_at),
        "startedAtMs": _ms(run.started_at),
        "endedAtMs": _ms(run.ended_at),
        "envelopeStatus": run.envelope_status,
        "summary": run.summary,
        "error": run.error,
    }
