"""Run inside the shell sandbox by `tests/tools/shell/test_shell_privileges.py`: what may this
process do? Prints one JSON object. Argument: the system call numbers of the host (JSON)."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import sys
from collections.abc import Callable

NUMBERS: dict[str, int] = json.loads(sys.argv[1])
CLONE_NEWUSER = 0x10000000
libc = ctypes.CDLL(None, use_errno=True)


def call(name: str, *args: int) -> str:
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(NUMBERS[name]), *(ctypes.c_long(a) for a in args))
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]


def attempt(action: Callable[[], object]) -> str:
    try:
        action()
    except OSError as exc:
        return errno.errorcode[exc.errno or 0]
    return "ok"


def write(path: str) -> str:
    def action() -> None:
        with open(path, "w") as handle:
            handle.write("1\n")

    return attempt(action)


def fork() -> str:
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    return str(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))


with open("/proc/self/status") as lines:
    status = dict(line.rstrip("\n").split(":\t", 1) for line in lines)
calls: dict[str, tuple[int, ...]] = {
    "mount": (0, 0, 0, 0, 0),
    "umount2": (0, 0),
    "open_by_handle_at": (0, 0, 0),
    "name_to_handle_at": (0, 0, 0, 0, 0),
    "ptrace": (0, 0, 0, 0),
    "kexec_load": (0, 0, 0, 0),
    "bpf": (0, 0, 0),
    "keyctl": (0, 0, 0, 0, 0),
    "add_key": (0, 0, 0, 0, 0),
    "setns": (0, 0),
    "unshare": (CLONE_NEWUSER,),
    "perf_event_open": (0, 0, 0, 0, 0),
    "init_module": (0, 0, 0),
    "finit_module": (0, 0, 0),
    "io_uring_setup": (0, 0),
    "clone3": (0, 0),
}
print(
    json.dumps(
        {
            "uid": os.getuid(),
            "gid": os.getgid(),
            "CapEff": status["CapEff"],
            "CapBnd": status["CapBnd"],
            "CapPrm": status["CapPrm"],
            "Seccomp": status["Seccomp"],
            "NoNewPrivs": status["NoNewPrivs"],
            "calls": {name: call(name, *args) for name, args in calls.items()},
            "fork": fork(),
            "shadow": os.path.lexists("/etc/shadow"),
            "ssh": os.path.lexists("/etc/ssh"),
            "etc": sorted(os.listdir("/etc")),
            "writes": {
                path: write(path)
                for path in (
                    "/etc/clawcell-probe",
                    "/usr/clawcell-probe",
                    "/clawcell-probe",
                    "/dev/clawcell-probe",
                    "/proc/sys/kernel/hostname",
                    "/proc/sys/kernel/core_pattern",
                    "/proc/sys/vm/drop_caches",
                )
            },
        },
        sort_keys=True,
    )
)
