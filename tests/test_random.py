"""Ids and seeds from blocks of OS randomness: each byte handed out once, fresh after fork."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from clawcell._random import random_bytes, random_uuid4


def test_bytes_are_never_handed_out_twice_across_threads() -> None:
    taken: list[bytes] = []

    def take() -> None:
        taken.extend(random_bytes(16) for _ in range(2000))

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(taken) == 8000
    assert len(set(taken)) == 8000  # 16 random bytes repeat only if handed out twice
    assert all(len(chunk) == 16 for chunk in taken)


def test_large_requests_and_uuids_have_the_asked_shape() -> None:
    assert len(random_bytes(5000)) == 5000
    uid = random_uuid4()
    assert uid.version == 4 and uid.variant == "specified in RFC 4122"
    assert random_uuid4() != uid


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform != "linux", reason="needs fork")
def test_a_forked_child_does_not_reuse_its_parents_block() -> None:
    random_bytes(16)  # the parent holds a partly used block
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(write, random_bytes(16))
        os._exit(0)
    os.close(write)
    child = os.read(read, 16)
    os.close(read)
    os.waitpid(pid, 0)
    assert child != random_bytes(16)  # the parent's next bytes are not the child's
