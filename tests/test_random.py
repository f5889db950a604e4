"""Ids and seeds from blocks of OS randomness: each byte handed out once, fresh after fork."""

from __future__ import annotations

import os
import sys
import threading
import uuid

import pytest

from clawcell._random import random_bytes, random_token, random_uuid4_text


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
    text = random_uuid4_text()
    uid = uuid.UUID(text)
    assert uid.version == 4 and uid.variant == "specified in RFC 4122"
    assert str(uid) == text  # lower-case hex in the 8-4-4-4-12 groups
    assert random_uuid4_text() != text
    token = random_token(18)
    assert len(token) == 24 and set(token) <= _URL_SAFE
    assert random_token(18) != token


_URL_SAFE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@pytest.mark.parametrize("count", [1, 2, 3, 16, 18, 33])
def test_tokens_are_what_secrets_token_urlsafe_makes_of_the_same_bytes(
    count: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import secrets

    import clawcell._random as pool

    fixed = bytes(range(200, 200 - count, -1))

    def take(n: int) -> bytes:
        return fixed[:n]

    monkeypatch.setattr(pool, "random_bytes", take)
    monkeypatch.setattr(secrets, "token_bytes", take)
    assert pool.random_token(count) == secrets.token_urlsafe(count)


def test_uuid_text_sets_the_version_and_variant_bits_of_any_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import clawcell._random as pool

    for fill in (0x00, 0xFF, 0x5A):
        raw = bytes([fill]) * 16

        def take(n: int, raw: bytes = raw) -> bytes:
            return raw[:n]

        monkeypatch.setattr(pool, "random_bytes", take)
        assert pool.random_uuid4_text() == str(uuid.UUID(bytes=raw, version=4))


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
