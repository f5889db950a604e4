"""The hand-written seccomp program: its numbers are the kernel's, and it decodes as meant."""

from __future__ import annotations

import itertools
import re
import struct
from pathlib import Path

import pytest

from clawcell.tools._shell._seccomp import BLOCKED, CLONE_NAMESPACES, TABLES, program

EPERM = (0x06, 0, 0, 0x00050001)  # return SECCOMP_RET_ERRNO | EPERM
HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}


def _header_numbers(path: Path) -> dict[str, int]:
    found = re.findall(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", path.read_text())
    return {name: int(number) for name, number in found}


@pytest.mark.parametrize("machine", sorted(TABLES))
def test_every_number_in_the_table_is_the_kernel_headers_number(machine: str) -> None:
    # `make test` installs the kernel headers (linux-libc-dev) with the C toolchain.
    header = _header_numbers(HEADERS[machine])
    _, table = TABLES[machine]
    assert {name: header[name] for name in table} == table
    assert set(table) == {*BLOCKED, "clone", "clone3", "unshare"}


def test_the_program_refuses_each_blocked_call_and_checks_clone_flags() -> None:
    code = program("x86_64")
    assert code is not None
    instructions = [struct.unpack("<HBBI", code[i : i + 8]) for i in range(0, len(code), 8)]
    _, table = TABLES["x86_64"]
    pairs = itertools.pairwise(instructions)
    refused = {k for (op, _, _, k), after in pairs if op == 0x15 and after == EPERM}
    assert refused == {table[name] for name in BLOCKED}
    assert (0x45, 0, 1, CLONE_NAMESPACES) in instructions
    assert instructions[-1] == (0x06, 0, 0, 0x7FFF0000)  # everything else is allowed


def test_an_architecture_without_a_table_has_no_program() -> None:
    assert program("riscv64") is None
