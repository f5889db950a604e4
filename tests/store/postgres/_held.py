"""`HeldProxy`: a TCP proxy to PostgreSQL that, once told to, holds new connections unanswered.

A pool's connection attempt then stays in flight for as long as the test wants: the state in
which a psycopg pool's worker catches the `CancelledError` of an event loop that is ending
(it retries the connection later) and waits for its next job, so the loop never ends. The proxy
listens on port 0 of the loopback and hands out the port it got (never a port chosen free and
closed: another process may take it meanwhile).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from urllib.parse import urlsplit, urlunsplit


class HeldProxy:
    """Forwards connections to the server of `dsn` until `hold()`; later ones are held.

    Attributes:
        dsn: `dsn` with the proxy's address.
        holding: Set once a connection is being held.
    """

    def __init__(self, dsn: str) -> None:
        parts = urlsplit(dsn)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._listener = socket.create_server(("127.0.0.1", 0))
        port = self._listener.getsockname()[1]
        netloc = f"{parts.username}@127.0.0.1:{port}" if parts.username else f"127.0.0.1:{port}"
        self.dsn = urlunsplit(parts._replace(netloc=netloc))
        self.holding = threading.Event()
        self._hold = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> HeldProxy:
        self._accepting.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with contextlib.suppress(OSError):  # wakes the thread blocked in `accept()`
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for each in sockets:
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)
            each.close()
        self._accepting.join()

    def hold(self) -> None:
        """Hold every connection from now on (accepted, never answered)."""
        self._hold.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed by `__exit__`
                return
            with self._lock:
                self._sockets.append(client)
            if self._hold.is_set():
                self.holding.set()
                continue
            server = socket.create_connection(self._target)
            with self._lock:
                self._sockets.append(server)
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65_536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
