"""The seccomp filter of sandboxed commands: a classic BPF program, written out by hand.

Threat model: a sandboxed command runs in a user namespace with every capability dropped, but
the kernel still offers it system calls that reach past those walls or enlarge the attack
surface: making new namespaces (where it would hold every capability again), mounting,
opening files by handle, tracing other processes, loading kernel code or BPF programs, the
kernel keyring, performance counters, `io_uring` (whose operations bypass seccomp) and setting
the clock. This program refuses them with `EPERM` (`clone3` with `ENOSYS`, so that C libraries
fall back to `clone`, whose flags it can read). A call of another architecture's ABI than the
host's (x32 on x86-64, or a foreign `AUDIT_ARCH`) kills the process: its numbers mean other
calls, so the table would not hold for it.

Limits: the table names the calls of x86-64 and AArch64 (`tests/tools/shell/test_seccomp.py` checks
it against the kernel headers); elsewhere `program()` returns `None` and the sandbox runs
without a filter, saying so once. bubblewrap loads the program (`--seccomp FD`) just before
it executes the command, with `no_new_privs` set, so nothing in the command can lift it.
"""

from __future__ import annotations

import platform
import struct
from typing import Final

__all__ = ["BLOCKED", "CLONE_NAMESPACES", "program"]

BLOCKED: Final = (
    "acct", "add_key", "adjtimex", "bpf", "chroot", "clock_adjtime", "clock_settime",
    "delete_module", "finit_module", "fsconfig", "fsmount", "fsopen", "fspick", "init_module",
    "io_uring_enter", "io_uring_register", "io_uring_setup", "kcmp", "kexec_file_load",
    "kexec_load", "keyctl", "lookup_dcookie", "mount", "mount_setattr", "move_mount",
    "name_to_handle_at", "open_by_handle_at", "open_tree", "perf_event_open", "pidfd_getfd",
    "pivot_root", "process_vm_readv", "process_vm_writev", "ptrace", "quotactl", "quotactl_fd",
    "reboot", "request_key", "setns", "settimeofday", "swapoff", "swapon", "syslog", "umount2",
    "userfaultfd", "vhangup",
)  # fmt: skip
"""System calls refused outright with `EPERM`."""

CLONE_NAMESPACES: Final = 0x7E020080
"""`CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME`: `clone`
and `unshare` with any of these flags are refused; without them they work."""

# Numbers from the kernel's `asm/unistd_64.h` (x86-64) and `asm-generic/unistd.h` (AArch64).
_X86_64: Final = {
    "acct": 163, "add_key": 248, "adjtimex": 159, "bpf": 321, "chroot": 161,
    "clock_adjtime": 305, "clock_settime": 227, "clone": 56, "clone3": 435,
    "delete_module": 176, "finit_module": 313, "fsconfig": 431, "fsmount": 432, "fsopen": 430,
    "fspick": 433, "init_module": 175, "io_uring_enter": 426, "io_uring_register": 427,
    "io_uring_setup": 425, "kcmp": 312, "kexec_file_load": 320, "kexec_load": 246,
    "keyctl": 250, "lookup_dcookie": 212, "mount": 165, "mount_setattr": 442,
    "move_mount": 429, "name_to_handle_at": 303, "open_by_handle_at": 304, "open_tree": 428,
    "perf_event_open": 298, "pidfd_getfd": 438, "pivot_root": 155, "process_vm_readv": 310,
    "process_vm_writev": 311, "ptrace": 101, "quotactl": 179, "quotactl_fd": 443,
    "reboot": 169, "request_key": 249, "setns": 308, "settimeofday": 164, "swapoff": 168,
    "swapon": 167, "syslog": 103, "umount2": 166, "unshare": 272, "userfaultfd": 323,
    "vhangup": 153,
}  # fmt: skip
_AARCH64: Final = {
    "acct": 89, "add_key": 217, "adjtimex": 171, "bpf": 280, "chroot": 51,
    "clock_adjtime": 266, "clock_settime": 112, "clone": 220, "clone3": 435,
    "delete_module": 106, "finit_module": 273, "fsconfig": 431, "fsmount": 432, "fsopen": 430,
    "fspick": 433, "init_module": 105, "io_uring_enter": 426, "io_uring_register": 427,
    "io_uring_setup": 425, "kcmp": 272, "kexec_file_load": 294, "kexec_load": 104,
    "keyctl": 219, "lookup_dcookie": 18, "mount": 40, "mount_setattr": 442, "move_mount": 429,
    "name_to_handle_at": 264, "open_by_handle_at": 265, "open_tree": 428,
    "perf_event_open": 241, "pidfd_getfd": 438, "pivot_root": 41, "process_vm_readv": 270,
    "process_vm_writev": 271, "ptrace": 117, "quotactl": 60, "quotactl_fd": 443, "reboot": 142,
    "request_key": 218, "setns": 268, "settimeofday": 170, "swapoff": 225, "swapon": 224,
    "syslog": 116, "umount2": 39, "unshare": 97, "userfaultfd": 282, "vhangup": 58,
}  # fmt: skip
TABLES: Final = {"x86_64": (0xC000003E, _X86_64), "aarch64": (0xC00000B7, _AARCH64)}
"""`platform.machine()` → (`AUDIT_ARCH_*`, system call numbers)."""

_X32_BIT: Final = 0x40000000
_LD_W_ABS: Final = 0x20
_JEQ: Final = 0x15
_JGE: Final = 0x35
_JSET: Final = 0x45
_RET: Final = 0x06
_KILL_PROCESS: Final = 0x80000000
_ALLOW: Final = 0x7FFF0000
_ERRNO: Final = 0x00050000
_EPERM: Final = 1
_ENOSYS: Final = 38
_NR: Final = 0
_ARCH: Final = 4
_ARG0_LOW: Final = 16  # `args[0]`, low 32 bits (both architectures are little-endian)

Instruction = tuple[int, int, int, int]


def program(machine: str | None = None) -> bytes | None:
    """The filter as bubblewrap reads it (`struct sock_filter[]`), or `None` for a host
    architecture without a table."""
    found = TABLES.get(machine or platform.machine())
    if found is None:
        return None
    arch, numbers = found
    return b"".join(struct.pack("<HBBI", *i) for i in _instructions(arch, numbers))


def _instructions(arch: int, numbers: dict[str, int]) -> list[Instruction]:
    out: list[Instruction] = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ, 1, 0, arch),
        (_RET, 0, 0, _KILL_PROCESS),
        (_LD_W_ABS, 0, 0, _NR),
    ]
    if arch == TABLES["x86_64"][0]:
        out += [(_JGE, 0, 1, _X32_BIT), (_RET, 0, 0, _KILL_PROCESS)]
    for name in BLOCKED:
        out += [(_JEQ, 0, 1, numbers[name]), (_RET, 0, 0, _ERRNO | _EPERM)]
    out += [(_JEQ, 0, 1, numbers["clone3"]), (_RET, 0, 0, _ERRNO | _ENOSYS)]
    out += [
        (_JEQ, 1, 0, numbers["clone"]),
        (_JEQ, 0, 3, numbers["unshare"]),
        (_LD_W_ABS, 0, 0, _ARG0_LOW),
        (_JSET, 0, 1, CLONE_NAMESPACES),
        (_RET, 0, 0, _ERRNO | _EPERM),
        (_RET, 0, 0, _ALLOW),
    ]
    return out
