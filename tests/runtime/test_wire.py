"""The host↔guest wire: `controller.js` and the Python side name the same things."""

from __future__ import annotations

import re
from pathlib import Path

import clawcell.runtime
from clawcell._cell._bridge import Bridge
from clawcell.runtime import wire

CONTROLLER = (Path(clawcell.runtime.__file__).parent / "controller.js").read_text("utf-8")


def _function(name: str) -> str:
    start = CONTROLLER.index(f"function {name}(")
    return CONTROLLER[start : CONTROLLER.index("\n  }\n", start)]


def test_every_bridge_method_the_controller_requests_is_on_the_wire_and_back() -> None:
    requested = set(re.findall(r'request\("(\w+)"', CONTROLLER))

    assert requested == wire.BRIDGE_METHODS


def test_the_bridge_serves_exactly_the_wire_methods_apart_from_yield() -> None:
    served = set(Bridge._NOW) | set(Bridge._LATER)  # pyright: ignore[reportPrivateUsage]

    assert served | {"yield"} == wire.BRIDGE_METHODS


def test_the_controller_defines_exactly_the_guest_globals() -> None:
    defined = set(re.findall(r'define\("(\w+)"', CONTROLLER))

    assert defined == wire.GUEST_GLOBALS


def test_the_step_report_uses_exactly_the_wire_keys() -> None:
    keys = set(re.findall(r"""[{,]\\?"(\w)\\?":""", _function("step").replace("'", "")))

    assert keys == wire.REPORT_KEYS


def test_the_cell_states_are_the_wire_states() -> None:
    assigned = {int(n) for n in re.findall(r"\bstate = (\d)", CONTROLLER)}
    step = _function("step")

    assert assigned == {wire.STATE_RUNNING, wire.STATE_VALUE, wire.STATE_FAILED}
    assert f"overflow !== null ? {wire.STATE_OVERFLOW} : state" in step
    for state, key in ((wire.STATE_VALUE, "v"), (wire.STATE_FAILED, "e")):
        assert f'if (status === {state}) text += \',"{key}":' in step


def test_the_entry_points_and_the_user_file_match() -> None:
    exported = re.search(r"return freeze\(\{ ([\w, ]+) \}\);\n\}\)\(\)", CONTROLLER)

    assert exported is not None
    assert tuple(exported.group(1).split(", ")) == wire.HOST_ENTRY_POINTS
    assert f'const USER_FILE = "{wire.USER_FILE}";' in CONTROLLER
