"""`python -m clawcell`: the `clawcell` command."""

from __future__ import annotations

from ._cli import main

raise SystemExit(main())
