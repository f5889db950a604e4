"""Look at the server side of a loopback TCP connection served by this very process, and
hold a loopback port that refuses connections (`refusing_port`).

A listener whose socket is made without `IPPROTO_TCP` leaves Nagle's algorithm on for every
connection it accepts (asyncio only sets `TCP_NODELAY` on sockets whose `proto` says TCP), so
each response on a kept-alive connection waits for the client's delayed ACK (~40 ms on Linux).
The option is read on the accepted socket itself: a timing test could not tell it apart from
a loaded machine.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Generator
from pathlib import Path


def _open_descriptors() -> list[int]:
    fds = Path("/proc/self/fd")
    if fds.is_dir():
        return sorted(int(name) for name in os.listdir(fds))
    return list(range(3, 4096))


def _socket_of(fd: int) -> socket.socket | None:
    """A socket object on a duplicate of `fd`, or `None` when `fd` is no socket (or closed)."""
    try:
        copy = os.dup(fd)
    except OSError:  # closed since it was listed
        return None
    try:
        return socket.socket(fileno=copy)
    except OSError:
        os.close(copy)
        return None


def accepted_nodelay(client: socket.socket) -> bool:
    """Whether this process's end of `client`'s connection has `TCP_NODELAY` set.

    Raises:
        LookupError: no socket of this process is the other end of `client`.
    """
    wanted = (client.getpeername()[:2], client.getsockname()[:2])
    for fd in _open_descriptors():
        if (sock := _socket_of(fd)) is None:
            continue
        with sock:
            try:
                ends = (sock.getsockname()[:2], sock.getpeername()[:2])
            except (OSError, TypeError, IndexError):
                continue
            if ends == wanted:
                return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
    raise LookupError(f"no socket of this process is connected to {wanted[1]!r}")


def listening_ports() -> set[int]:
    """The TCP ports this process listens on."""
    ports: set[int] = set()
    for fd in _open_descriptors():
        if (sock := _socket_of(fd)) is None:
            continue
        with sock:
            if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.getsockopt(
                socket.SOL_SOCKET, socket.SO_ACCEPTCONN
            ):
                ports.add(sock.getsockname()[1])
    return ports


def answered_connection(host: str, port: int, request: bytes) -> socket.socket:
    """Send `request` on a new connection, wait for the start of an HTTP/1.1 response, and
    return the still-open client socket (the caller closes it)."""
    client = socket.create_connection((host, port), timeout=30)
    client.sendall(request)
    start = client.recv(65_536)
    if not start.startswith(b"HTTP/1.1 "):
        client.close()
        raise AssertionError(f"not an HTTP/1.1 response: {start[:80]!r}")
    return client


@contextlib.contextmanager
def refusing_port() -> Generator[int]:
    """A loopback TCP port that refuses connections while the block lasts: bound and not
    listening, so no other process (another xdist worker, a child's ephemeral port) can take
    it. A port that was merely free a moment ago may answer by the time it is dialled."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
