"""A run across legs: host, lifecycle, parked runs, leases, replay, decisions.

`CodeMode` (`clawcell._codemode`, `clawcell._config`) uses the names below; the modules are
this stage's own.
"""

from __future__ import annotations

from ._decisions import ApprovalDesk
from ._host import CellHost
from ._lifecycle import Lifecycle
from ._parked import RunHome

__all__ = ["ApprovalDesk", "CellHost", "Lifecycle", "RunHome"]
