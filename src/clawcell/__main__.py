"""`python -m clawcell`: the `clawcell` command."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
