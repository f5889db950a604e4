"""A loopback TLS listener that records the SNI name a client sends (self-signed certificate)."""

from __future__ import annotations

import contextlib
import datetime
import socket
import ssl
import threading
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "site.test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("site.test")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@dataclass(kw_only=True)
class TlsListener:
    """The port to connect to and the SNI names clients sent."""

    port: int = 0
    names: list[str | None] = field(default_factory=list[str | None])


@contextmanager
def tls_listener(directory: Path) -> Generator[TlsListener]:
    """Accept one TLS handshake on 127.0.0.1 and record its SNI (the handshake may then fail)."""
    cert, key = _self_signed(directory)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    state = TlsListener()

    def record(
        _socket: ssl.SSLObject | ssl.SSLSocket, name: str | None, _c: ssl.SSLContext
    ) -> None:
        state.names.append(name)

    context.sni_callback = record
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(60)  # a safety net so a broken test cannot hang the suite
    state.port = listener.getsockname()[1]

    def serve() -> None:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            try:
                context.wrap_socket(connection, server_side=True).close()
            except (ssl.SSLError, OSError):
                return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        with contextlib.suppress(OSError):  # wakes `accept()`: closing alone does not
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join()
