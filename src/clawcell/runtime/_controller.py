"""The guest controller (`controller.js`): its source, and loading it into a QuickJS instance.

The controller is the JavaScript half of the bridge (see `_wire`): evaluated once per
instance, its completion value is the private object whose entry points the host calls.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Final

from ._wire import HOST_ENTRY_POINTS

if TYPE_CHECKING:
    from ._wasm._instance import Instance

__all__ = ["controller_digest", "controller_source", "load_controller", "verify_raw_strings"]

_CONTROLLER_FILE: Final = b"clawcell:controller.js"
# (`os.path`, not `pathlib`: the modules a first cell loads leave out `pathlib`, whose import,
# with `urllib.parse` and `ipaddress`, cost 3.5% of a cold start; docs/benchmarks.md, "Cold
# start, stop 49: the import")
_CONTROLLER_PATH: Final = os.path.join(os.path.dirname(__file__), "controller.js")


def controller_source() -> str:
    """The text of `controller.js`."""
    with open(_CONTROLLER_PATH, encoding="utf-8") as file:
        return file.read()


def controller_digest() -> str:
    """The SHA-256 of `controller.js` (hex), from its bytes: what a stored guest image's name
    depends on. Hashing the bytes spares decoding the text and encoding it again (it is not
    ASCII: the slow path of both) where the controller is not evaluated at all."""
    with open(_CONTROLLER_PATH, "rb") as file:
        return hashlib.sha256(file.read()).hexdigest()


def load_controller(inst: Instance) -> tuple[int, int, int, int, int]:
    """Evaluate the controller; its entry points `install`, `start`, `step`, `settle` and
    `describeError`."""
    verify_raw_strings(inst)
    host = inst.eval(controller_source(), inst.put_cstring(_CONTROLLER_FILE))
    install, start, step, settle, describe = (inst.get_property(host, n) for n in HOST_ENTRY_POINTS)
    inst.gc()
    return install, start, step, settle, describe


_RAW_STRING_SAMPLES: Final = (
    "''",
    "'plain ascii'",
    "'caf\\u00e9'",
    "'\\u4e2d\\ud83e\\udd9e'",
    "'lone \\ud800'",
    "['a','b'].join('-') + 'c'.repeat(300)",
)


def verify_raw_strings(inst: Instance) -> None:
    """Enable the instance's direct string reader (`raw_strings`) only if it agrees with
    `JS_ToCStringLen2` on every sample."""
    from ._wasm._instance import TAG_STRING, value_tag  # the V8 executor never loads it

    inst.raw_strings = False
    for source in _RAW_STRING_SAMPLES:
        value = inst.eval(source)
        try:
            if value_tag(value) != TAG_STRING:
                return
            if inst.memory.flat_string(value & 0xFFFF_FFFF) != inst.to_string(value):
                return
        finally:
            inst.free_value(value)
    inst.raw_strings = True
