"""The model's call and its source, checked before a cell exists.

The run stage and `CodeMode` use the names below; the modules are this stage's own.
"""

from __future__ import annotations

from ._call import ExecArgs, read_call, read_exec_args, read_wait_args
from ._checks import check_source

__all__ = ["ExecArgs", "check_source", "read_call", "read_exec_args", "read_wait_args"]
