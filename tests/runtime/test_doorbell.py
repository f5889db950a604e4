"""The doorbell a guest thread rings when a job the loop thread waits for finished."""

from __future__ import annotations

import threading

from clawcell.runtime._doorbell import Doorbell  # pyright: ignore[reportPrivateUsage]


def test_a_doorbell_wakes_a_waiting_thread_once_per_batch_of_rings() -> None:
    bell = Doorbell()
    assert not bell.wait(0.0)  # nothing rang
    bell.ring()
    bell.ring()
    assert bell.wait(0.0)  # rings while nobody waited wake the next wait
    assert not bell.wait(0.0)  # and only that one: nothing is left to read back
    ringer = threading.Timer(0.05, bell.ring)
    ringer.start()
    assert bell.wait(30.0)  # ends at the ring from the other thread, not after 30 s
    ringer.join()
