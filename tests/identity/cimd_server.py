"""Where a client publishes its client ID metadata document: a real HTTPS server on 127.0.0.1,
with a certificate authority made for the test run.

The server's fetcher trusts that authority through HEYAIRA_CIMD_CA_BUNDLE, the setting an
operator with an internal CA uses, and may fetch from 127.0.0.1 because
HEYAIRA_CIMD_PRIVATE_HOSTS names it. Each test publishes the documents (or answers) it needs
under paths of its own and reads back which requests arrived.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

# Host names the certificate covers besides 127.0.0.1 (tests/identity/test_cimd_fetch.py resolves
# one of them itself).
EXTRA_NAMES = ("localhost", "client-docs.test")


@dataclass(frozen=True)
class CertificateAuthority:
    bundle: Path  # the CA certificate, PEM: what HEYAIRA_CIMD_CA_BUNDLE names
    cert: Path  # the server's certificate and key
    key: Path


def make_ca(directory: Path) -> CertificateAuthority:
    """A CA and a server certificate for 127.0.0.1 (and EXTRA_NAMES) signed by it."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "HeyAira test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    names += [x509.DNSName(name) for name in EXTRA_NAMES]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca = CertificateAuthority(
        directory / "ca.pem", directory / "server.pem", directory / "server.key"
    )
    ca.bundle.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    ca.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    ca.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca


@dataclass
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunked: bool = False  # no Content-Length: the body ends when the connection closes


@dataclass
class DocumentServer:
    port: int
    ca: CertificateAuthority
    answers: dict[str, Answer] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)  # the paths asked for, in order

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.port}{path}"

    def publish(
        self,
        path: str,
        document: dict[str, Any] | None = None,
        *,
        cache_control: str = "max-age=3600",
        **answer: Any,
    ) -> str:
        """Serve `document` as JSON at `path` (or the raw answer given); returns its URL."""
        if document is not None:
            answer.setdefault("body", json.dumps(document).encode())
            headers = {"Content-Type": "application/json", "Cache-Control": cache_control}
            answer["headers"] = {**headers, **answer.get("headers", {})}
        self.answers[path] = Answer(**answer)
        return self.url(path)

    def document(self, path: str, redirect_uri: str, **fields: Any) -> str:
        """Publish a valid public client's document at `path`; returns its URL (= client_id)."""
        client_id = self.url(path, fields.pop("host", "127.0.0.1"))
        metadata = {
            "client_id": client_id,
            "client_name": "Docs Published Client",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            **fields,
        }
        self.publish(path, metadata)
        return client_id

    def fetched(self, path: str) -> int:
        return self.requests.count(path)


@contextmanager
def document_server(ca: CertificateAuthority) -> Iterator[DocumentServer]:
    """An HTTPS server on a free 127.0.0.1 port, serving what the test published."""
    holder: list[DocumentServer] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            server = holder[0]
            server.requests.append(self.path)
            answer = server.answers.get(self.path, Answer(404, {}, b"not here"))
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            if answer.chunked:
                self.send_header("Connection", "close")
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            # The fetcher may stop reading (what a size cap does).
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(answer.body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(ca.cert, ca.key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    holder.append(DocumentServer(port=httpd.server_address[1], ca=ca))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
