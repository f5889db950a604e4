"""Reports the peak RSS of the process that ran the hostile corpus (target: under 1 GiB)."""

from __future__ import annotations

import resource

import pytest


def peak_rss_mib() -> float:
    """The process's peak resident set size so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(f"hostile corpus: peak host RSS {peak_rss_mib():.0f} MiB")
