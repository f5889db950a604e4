"""One leg of one cell: drive the guest, dispatch over the bridge, settle.

The run stage (`clawcell._runs`) uses the names below; the modules are this stage's own.
"""

from __future__ import annotations

from ._bridge import Bridge, Reply
from ._cell import Cell
from ._outcome import LegOutcome, failed_outcome

__all__ = ["Bridge", "Cell", "LegOutcome", "Reply", "failed_outcome"]
