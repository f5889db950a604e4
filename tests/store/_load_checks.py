"""`check_load`: what a cell-level scale-out load (`_load.py`) must have shown."""

from __future__ import annotations

import sqlite3

from ._load import LoadResult, expected_sum

__all__ = ["check_load"]


def check_load(result: LoadResult) -> list[str]:
    """Every way the load went wrong, as sentences (empty: it proved its properties)."""
    problems = list(result.problems)
    with sqlite3.connect(result.ledger) as conn:
        effects = {key: pid for key, pid in conn.execute("SELECT key, pid FROM effects")}
        attempts = conn.execute("SELECT key, pid, at FROM attempts ORDER BY at").fetchall()
        legs = conn.execute("SELECT run_id, pid, first, last FROM legs ORDER BY first").fetchall()
    problems += _check_values(result, effects)
    problems += _check_attempts(result, attempts)
    problems += _check_legs(legs)
    return problems


def _check_values(result: LoadResult, effects: dict[str, int]) -> list[str]:
    problems: list[str] = []
    for cell in range(result.plan.cells):
        value = result.values.get(cell)
        if value is None:
            problems.append(f"cell {cell} never completed")
            continue
        key = f"c{cell}.a{result.attempts.get(cell, 0)}"
        if value.get("cell") != cell or value.get("sum") != expected_sum(cell):
            problems.append(f"cell {cell} completed with the wrong value {value!r}")
        paid = value.get("paid")
        if paid == {"code": "tool_error", "effectStatus": "unknown"}:
            continue
        if paid != {"receipt": key, "by": effects.get(key)}:
            problems.append(f"cell {cell}: charge {paid!r} is neither in the ledger nor unknown")
    return problems


def _check_attempts(result: LoadResult, attempts: list[tuple[str, int, float]]) -> list[str]:
    """A `charge` is attempted again only after the worker of its last attempt died."""
    problems: list[str] = []
    last: dict[str, tuple[int, float]] = {}
    for key, pid, at in attempts:
        if key in last:
            before, before_at = last[key]
            dead_at = result.kills.get(before)
            if dead_at is None or dead_at > at:
                problems.append(
                    f"charge {key!r} was attempted again by pid {pid} at {at:.3f} while pid "
                    f"{before} (which attempted it at {before_at:.3f}) was alive"
                )
        last[key] = (pid, at)
    return problems


def _check_legs(legs: list[tuple[str, int, float, float]]) -> list[str]:
    """No two legs of one run overlap."""
    problems: list[str] = []
    previous: dict[str, tuple[int, float]] = {}
    for run_id, pid, first, last in legs:
        if run_id in previous and previous[run_id][1] > first:
            problems.append(
                f"run {run_id!r} ran in pid {pid} from {first:.3f} while pid "
                f"{previous[run_id][0]} ran it until {previous[run_id][1]:.3f}"
            )
        previous[run_id] = (pid, max(last, previous.get(run_id, (0, 0.0))[1]))
    return problems
