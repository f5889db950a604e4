"""How to add an optional extra, worded once for every message that needs one."""

from __future__ import annotations

__all__ = ["install_hint"]


def install_hint(extra: str) -> str:
    """The commands that add the extra `extra`: from a built wheel, and in a checkout.

    >>> install_hint("ui")
    "`pip install 'clawcell[ui]'` (in a clawcell checkout: `.venv/bin/pip install -e '.[ui]'`)"
    """
    checkout = f"`.venv/bin/pip install -e '.[{extra}]'`"
    return f"`pip install 'clawcell[{extra}]'` (in a clawcell checkout: {checkout})"
